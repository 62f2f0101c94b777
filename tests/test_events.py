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
    context_tail="tail",
    system_message="msg",
    updated_input={"x": 1},
    halt=True,
    halt_reason="done",
    updated_permissions=[{"type": "setMode", "mode": "acceptEdits", "destination": "session"}],
    retry=True,
    watch_paths=["/tmp/watched"],
    worktree_path="/tmp/wt",
    elicitation_action="accept",
    elicitation_content={"name": "x"},
    display_content="shown",
)
ALLOWING = attrs.evolve(EVERYTHING, permission="allow")


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_each_row_is_coherent(name):
    spec = EVENTS[name]
    assert spec.name == name
    assert hasattr(getattr(hookspecs, spec.hook), "omcm_spec"), f"{spec.hook} is not a hookspec"
    assert issubclass(spec.record, records.Event)
    assert isinstance(getattr(CoreConfig(), spec.budget), int), f"{spec.budget} is not a [core] budget"
    assert 0 < spec.timeout_s < 100  # seconds, as Claude Code reads them


#: hookSpecificOutput key -> the row flag that renders it.
SPECIFIC_KEYS = {
    "permissionDecision": "permission",
    "updatedInput": "rewrite",
    "decision": "decision",
    "additionalContext": "context",
    "retry": "retry",
    "watchPaths": "watch_paths",
    "worktreePath": "worktree_path",
    "action": "elicitation",
    "displayContent": "display",
}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_the_merge_renders_exactly_what_the_row_says(name):
    spec = EVENTS[name]
    out = merge(name, [("a", ALLOWING)]) or {}
    specific = out.get("hookSpecificOutput", {})
    for key, flag in SPECIFIC_KEYS.items():
        assert (key in specific) == getattr(spec, flag), f"{key} on {name}"
    assert ("decision" in out) == spec.block
    assert ("systemMessage" in out) == spec.system_message
    assert ("continue" in out) == spec.halt
    assert_valid_response(name, out)
    shown = {
        "permission": spec.permission or spec.decision,
        "updated_input": spec.rewrite or spec.decision,
        "updated_permissions": spec.decision,
        "block": spec.block,
        "additional_context": spec.context,
        "context_tail": spec.context,
        "system_message": spec.system_message,
        "halt": spec.halt,
        "retry": spec.retry,
        "watch_paths": spec.watch_paths,
        "worktree_path": spec.worktree_path,
        "elicitation_action": spec.elicitation,
        "elicitation_content": spec.elicitation,
        "display_content": spec.display,
    }
    assert set(dropped_fields(name, ALLOWING)) == {field for field, ok in shown.items() if not ok}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_the_payload_parser_builds_the_row_record(name):
    payload = {"hook_event_name": name, "session_id": "s"}
    if issubclass(EVENTS[name].record, records.ToolEvent):
        payload["tool_name"] = "Bash"
    assert type(parse_event(payload)) is EVENTS[name].record


def test_an_event_outside_the_table_goes_to_the_generic_hook_and_answers_common_fields_only():
    payload = {"hook_event_name": "BrandNewEvent", "session_id": "s", "cwd": 3, "novel": [1, 2]}
    event = parse_event(payload)
    assert type(event) is records.GenericEvent
    assert (event.hook_event_name, event.session_id, event.cwd, event.payload) == ("BrandNewEvent", "s", None, payload)
    out = merge("BrandNewEvent", [("a", EVERYTHING)])
    assert out == {"continue": False, "stopReason": "done", "systemMessage": "msg"}
    assert set(dropped_fields("BrandNewEvent", EVERYTHING)) == set(SHOWN_BY_ANY) - {"system_message", "halt"}


SHOWN_BY_ANY = [a.name for a in attrs.fields(records.Result) if a.name not in ("reason", "halt_reason")]


def test_every_client_event_has_a_row_and_a_hook_named_after_it():
    import re

    for name, spec in EVENTS.items():
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        assert spec.hook == snake or name in OLD_NAMES, f"{name}'s hook is {spec.hook}"


#: The hooks omcm named before issue 27; they keep their names.
OLD_NAMES = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"}


def test_install_registers_the_events_of_the_implemented_hooks_in_table_order():
    assert events_for_hooks({"post_tool", "pre_tool"}) == ["PreToolUse", "PostToolUse", "PostToolUseFailure"]
    assert events_for_hooks({"stop"}) == ["Stop", "SubagentStop"]
    assert events_for_hooks({"config_schema"}) == []


def test_an_event_newer_than_the_client_is_not_registered():
    assert events_for_hooks({"permission_request", "notification"}, "2.0.44") == ["Notification"]
    assert events_for_hooks({"permission_request", "notification"}, "2.0.45") == [
        "PermissionRequest",
        "Notification",
    ]
    assert events_for_hooks({"pre_skill_shell_command"}, "2.1.330") == []
    assert events_for_hooks({"pre_skill_shell_command"}, "2.1.332") == ["PreSkillShellCommand"]
    assert events_for_hooks({"pre_skill_shell_command"}, None) == []


def test_event_specs_are_frozen_records():
    spec = EVENTS["PreToolUse"]
    assert isinstance(spec, EventSpec)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        spec.timeout_s = 1


def test_the_plugin_manual_lists_every_event_with_its_hook_record_and_minimum_client():
    from pathlib import Path

    manual = (Path(__file__).parent.parent / "docs" / "writing-plugins.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in manual.splitlines() if line.startswith("| ")}
    for name, spec in EVENTS.items():
        row = rows.get(name)
        assert row is not None, f"{name} is missing from the event table in docs/writing-plugins.md"
        cells = [cell.strip() for cell in row.split("|")[1:-1]]
        assert cells[1] == f"`{spec.hook}`" and cells[2] == f"`{spec.record.__name__}`", row
        assert cells[4] == (spec.min_client or "any"), row
