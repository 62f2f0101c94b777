"""Property-based fuzzing (hypothesis) of the payload parser, the merge and the whole dispatch.

In process (fast), so hypothesis can try hundreds of shapes per property; the
subprocess tests in ``test_hostile_input`` prove the same edge end to end.
"""

from __future__ import annotations

import json
import typing

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from omcm_core._runtime.merge import TEXT_CAP, merge
from omcm_core._runtime.payload import PayloadError, parse_event
from omcm_core.events import EVENTS, spec_for
from omcm_core.records import ELICITATION_ACTIONS, PERMISSIONS, Result
from omcm_core.testing import assert_valid_response

pytestmark = pytest.mark.slow

EVENT_NAMES = sorted(EVENTS) + ["DirectoryRemoved", "", "Bogus"]
ALL_FIELDS = sorted({f.name for spec in EVENTS.values() for f in attrs.fields(spec.record)} - {"extra", "succeeded"})
RANK = {"allow": 0, "ask": 1, "defer": 2, "deny": 3}

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
#: What a plugin may put in a rewrite: Python floats include infinity and NaN, which JSON has not.
answer_scalars = json_scalars | st.sampled_from([float("inf"), float("-inf"), float("nan")])
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
payloads = st.dictionaries(
    st.sampled_from(ALL_FIELDS + ["hook_event_name"]) | st.text(max_size=12),
    json_values,
    max_size=10,
).flatmap(
    lambda d: st.sampled_from(EVENT_NAMES + [None]).map(
        lambda name: {**d, "hook_event_name": name} if name is not None else d
    )
)


def _field_type_ok(value, annotation) -> bool:
    text = str(annotation)
    if value is None:
        return "Optional" in text or "None" in text or text == "typing.Any"
    if "bool" in text:
        return isinstance(value, bool)
    if "float" in text:
        return isinstance(value, float)
    if "dict" in text:
        return isinstance(value, dict)
    if "list" in text:
        return isinstance(value, list)
    if "str" in text:
        return isinstance(value, str)
    return True


def _check_record(payload, event_name, record) -> None:
    name = payload.get("hook_event_name", event_name)
    assert isinstance(record, spec_for(name).record) and record.hook_event_name == name
    if name not in EVENTS:  # the generic hook's record: the raw payload, common fields when well typed
        assert record.payload == payload and record.extra == {}
        return
    hints = typing.get_type_hints(type(record))
    for field in attrs.fields(type(record)):
        value = getattr(record, field.name)
        assert _field_type_ok(value, hints[field.name]), (field.name, value)
    # `extra` and `succeeded` are omcm's own fields, not protocol keys: a payload
    # key of either name is kept in `extra` like any other unknown key.
    modelled = {f.name for f in attrs.fields(type(record))} - {"extra", "succeeded"}
    assert set(record.extra) == set(payload) - modelled


def _raw_value_ok(value, annotation) -> bool:
    """Whether the parser must accept ``value`` (not None) for a field of this type."""
    text = str(annotation)
    if "Any" in text:
        return True
    if "bool" in text:
        return isinstance(value, bool)
    if "float" in text:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if "dict" in text:
        return isinstance(value, dict)
    if "list" in text:
        return isinstance(value, list)
    return isinstance(value, str)


def _must_reject(payload, argv_event) -> bool:
    """The parser's contract, said independently: which payloads are a PayloadError."""
    if not isinstance(payload, dict):
        return True
    name = payload.get("hook_event_name", argv_event)
    if not isinstance(name, str) or not name or (argv_event and name != argv_event):
        return True
    if name not in EVENTS:
        return False
    cls = EVENTS[name].record
    hints = typing.get_type_hints(cls)
    for field in attrs.fields(cls):
        if field.name in ("extra", "succeeded", "hook_event_name"):
            continue
        value = payload.get(field.name)
        if value is None:  # a null is a missing key
            if field.default is attrs.NOTHING:
                return True
        elif not _raw_value_ok(value, hints[field.name]):
            return True
    return False  # unknown keys never are a reason


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=payloads | json_values, argv_event=st.none() | st.sampled_from(EVENT_NAMES[:4]))
@example(payload={"extra": None, "succeeded": "yes"}, argv_event="PreCompact")  # found by hypothesis on 3.12
@example(payload={"hook_event_name": "PostToolUse", "extra": 1, "succeeded": False}, argv_event=None)
@example(payload={"hook_event_name": "SessionEnd", "from_the_future": 1}, argv_event=None)
@example(payload={"hook_event_name": "PostToolUse", "tool_name": "Bash", "duration_ms": 12}, argv_event=None)
def test_parse_event_returns_a_well_typed_record_or_raises_payload_error(payload, argv_event):
    try:
        record = parse_event(payload, argv_event)
    except PayloadError as exc:
        assert str(exc)  # a readable reason, never an empty message
        assert _must_reject(payload, argv_event), f"refused a valid payload: {exc}"
        return
    assert not _must_reject(payload, argv_event), "accepted an invalid payload"
    _check_record(payload, argv_event, record)


# -- merge ---------------------------------------------------------------------

# Long texts are built, not drawn: hypothesis cannot draw strings near the 10,000 cap.
long_texts = st.tuples(st.text(min_size=1, max_size=3), st.integers(2_000, 12_000)).map(lambda t: (t[0] * t[1])[: t[1]])
texts = st.none() | st.text(max_size=40) | long_texts
results = st.builds(
    Result,
    permission=st.none() | st.sampled_from(PERMISSIONS),
    reason=st.none() | st.text(max_size=30),
    block=st.none() | st.booleans(),
    additional_context=texts,
    system_message=texts,
    updated_input=st.none() | st.dictionaries(st.text(max_size=8), answer_scalars, max_size=3),
    halt=st.none() | st.booleans(),
    halt_reason=st.none() | st.text(max_size=30),
    updated_permissions=st.none() | st.lists(st.dictionaries(st.text(max_size=8), answer_scalars, max_size=2)),
    retry=st.none() | st.booleans(),
    watch_paths=st.none() | st.lists(st.text(max_size=12) | answer_scalars, max_size=3),
    worktree_path=st.none() | st.text(max_size=20),
    elicitation_action=st.none() | st.sampled_from(ELICITATION_ACTIONS),
    elicitation_content=st.none() | st.dictionaries(st.text(max_size=8), answer_scalars, max_size=2),
    display_content=texts,
)
answers = st.lists(st.tuples(st.text(min_size=1, max_size=10), results), max_size=6)


@settings(max_examples=800, deadline=None)
@given(event_name=st.sampled_from(EVENT_NAMES), answers=answers)
@example(event_name="PreToolUse", answers=[("a", Result(updated_input={"": float("inf")}))])  # issue 30
def test_merge_output_is_always_valid_for_the_event(event_name, answers):
    out = merge(event_name, answers)
    assert_valid_response(event_name, out)
    if out is None:
        return
    json.loads(json.dumps(out, allow_nan=False))
    specific = out.get("hookSpecificOutput", {})
    assert set(specific) != {"hookEventName"}, "an empty hookSpecificOutput was rendered"
    for text in (out.get("systemMessage"), out.get("stopReason"), specific.get("additionalContext")):
        assert text is None or (isinstance(text, str) and 0 < len(text) <= TEXT_CAP)


def _finite(value) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


@settings(max_examples=800, deadline=None)
@given(answers=answers)
def test_merge_permission_is_the_most_restrictive_and_deny_wins(answers):
    out = merge("PreToolUse", answers) or {}
    specific = out.get("hookSpecificOutput", {})
    asked = [r.permission for _, r in answers if r.permission]
    if not asked:
        assert "permissionDecision" not in specific
    else:
        assert specific["permissionDecision"] == max(asked, key=RANK.__getitem__)
        if "deny" in asked:
            assert specific["permissionDecision"] == "deny"
    if specific.get("permissionDecision") in ("deny", "defer"):
        assert "updatedInput" not in specific
    else:
        # The first rewrite JSON can carry wins (one holding infinity or NaN is no answer).
        first = next(
            (r.updated_input for _, r in answers if r.updated_input is not None and _finite(r.updated_input)), None
        )
        assert specific.get("updatedInput") == first
    stoppers = [r for _, r in answers if r.halt]
    assert (out.get("continue") is False) == bool(stoppers)
    blockers = [r for _, r in answers if r.block]
    assert "decision" not in out or blockers  # PreToolUse never blocks with decision


@settings(max_examples=300, deadline=None)
@given(event_name=st.sampled_from(EVENT_NAMES), answers=answers)
def test_merge_keeps_every_plugins_text_when_it_fits(event_name, answers):
    out = merge(event_name, answers) or {}
    context = out.get("hookSpecificOutput", {}).get("additionalContext", "")
    parts = [r.additional_context for _, r in answers if r.additional_context]
    if parts and spec_for(event_name).ride_along and not any(r.block for _, r in answers):
        parts += [r.reason for _, r in answers if r.reason]  # a Stop context continuation carries the notes
    if context and len("\n\n".join(parts)) <= TEXT_CAP:
        assert context == "\n\n".join(parts)


# -- the whole dispatch, in process ---------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    raw=st.binary(max_size=300) | payloads.map(lambda p: json.dumps(p).encode()),
    argv_event=st.none() | st.sampled_from(EVENT_NAMES[:3]),
)
def test_dispatch_never_raises_and_answers_validly(omcm_dispatch, raw, argv_event):
    from omcm_core import Result, hookimpl

    class Answering:
        @hookimpl
        def pre_tool(self, event):
            return Result(
                additional_context=f"saw {event.tool_name}", permission="ask", updated_input=dict(event.tool_input)
            )

        @hookimpl
        def post_tool(self, event):
            return Result(additional_context=str(event.tool_response)[:50], block=not event.succeeded)

        @hookimpl
        def user_prompt_submit(self, event):
            return Result(additional_context="prompt", system_message="hello")

    dispatch = omcm_dispatch(names={"answering": Answering()}, env={"OMCM_LOG_LEVEL": "error"})
    answer = dispatch(raw, argv_event)
    try:
        event_name = json.loads(raw).get("hook_event_name")
    except (ValueError, AttributeError):
        event_name = None
    if answer is not None:
        assert_valid_response(event_name, answer)
        assert dispatch.last_stdout.decode("ascii") == json.dumps(answer)


# -- session ids --------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(first=st.text(max_size=300), second=st.text(max_size=300))
def test_any_session_id_maps_to_one_distinct_folder_inside_sessions(first, second):
    from pathlib import Path

    from omcm_core.paths import session_dir

    home = Path("/omcm-home")
    for session_id in (first, second):
        folder = session_dir(home, session_id)
        if not session_id:
            assert folder == home
            continue
        assert folder.parent == home / "sessions", folder
        assert folder.name not in ("", ".", "..") and "/" not in folder.name and "\x00" not in folder.name
        assert len(folder.name.encode()) <= 255
    if first and second and first != second:
        assert session_dir(home, first) != session_dir(home, second), "two sessions would share a folder"
