"""The event table is the one place event facts live; everything else follows it."""

import attrs
import pytest

from omcm_core import hookspecs, records
from omcm_core._runtime.merge import dropped_fields, merge
from omcm_core._runtime.payload import parse_event
from omcm_core.config import CoreConfig
from omcm_core.events import EVENTS, EventSpec, events_for_hooks
from omcm_core.testing import assert_valid_response

EVERYTHING = records.Result(
    permission="ask",
    reason="why",
    block=True,
    additional_context="ctx",
    system_message="msg",
    updated_input={"x": 1},
    halt=True,
    halt_reason="done",
)


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_each_row_is_coherent(name):
    spec = EVENTS[name]
    assert spec.name == name
    assert hasattr(getattr(hookspecs, spec.hook), "omcm_spec"), f"{spec.hook} is not a hookspec"
    assert issubclass(spec.record, records.Event)
    assert isinstance(getattr(CoreConfig(), spec.budget), int), f"{spec.budget} is not a [core] budget"
    assert 0 < spec.timeout_s < 100  # seconds, as Claude Code reads them


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_the_merge_renders_exactly_what_the_row_says(name):
    spec = EVENTS[name]
    out = merge(name, [("a", EVERYTHING)]) or {}
    specific = out.get("hookSpecificOutput", {})
    assert ("permissionDecision" in specific) == spec.permission
    assert ("additionalContext" in specific) == spec.context
    assert ("decision" in out) == spec.block
    assert ("systemMessage" in out) == spec.system_message
    assert ("continue" in out) == spec.halt
    assert_valid_response(name, out)
    shown = {"permission": spec.permission, "block": spec.block, "additional_context": spec.context}
    shown |= {"system_message": spec.system_message, "halt": spec.halt, "updated_input": spec.permission}
    assert set(dropped_fields(name, EVERYTHING)) == {field for field, ok in shown.items() if not ok}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_the_payload_parser_builds_the_row_record(name):
    payload = {"hook_event_name": name, "session_id": "s"}
    if issubclass(EVENTS[name].record, records.ToolEvent):
        payload["tool_name"] = "Bash"
    assert type(parse_event(payload)) is EVENTS[name].record


def test_an_event_outside_the_table_is_not_answered():
    assert parse_event({"hook_event_name": "Notification", "message": "hi"}) is None
    assert merge("Notification", [("a", EVERYTHING)]) is None


def test_install_registers_the_events_of_the_implemented_hooks_in_table_order():
    assert events_for_hooks({"post_tool", "pre_tool"}) == ["PreToolUse", "PostToolUse", "PostToolUseFailure"]
    assert events_for_hooks({"stop"}) == ["Stop", "SubagentStop"]
    assert events_for_hooks({"config_schema"}) == []


def test_event_specs_are_frozen_records():
    spec = EVENTS["PreToolUse"]
    assert isinstance(spec, EventSpec)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        spec.timeout_s = 1
