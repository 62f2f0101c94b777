"""Parsing real and edge-case payloads into event records."""

import json

import pytest

from omcm_core._runtime.payload import PayloadError, parse_event
from omcm_core.events import EVENTS
from omcm_core.records import PostToolEvent, PreToolEvent, SessionEndEvent, SessionStartEvent, UserPromptEvent


def test_every_real_payload_parses(shared_fixtures):
    files = sorted((shared_fixtures / "hook-payloads").glob("*.json"))
    assert len(files) >= 100
    parsed = 0
    for path in files:
        payload = json.loads(path.read_text(encoding="utf-8"))
        event = parse_event(payload)
        if payload["hook_event_name"] not in EVENTS:
            assert event is None
            continue
        parsed += 1
        assert event.hook_event_name == payload["hook_event_name"]
        assert event.session_id == payload["session_id"]
        # Unknown keys are kept, known ones are not duplicated into extra.
        assert "session_id" not in event.extra
        for key, value in payload.items():
            if not hasattr(event, key):
                assert event.extra[key] == value
    assert parsed > 80


# A PostToolUse payload as Claude Code records it, plus keys a newer Claude Code
# might add: none of the recorded payloads has a key omcm does not model.
NEWER_CLAUDE_CODE = {
    "session_id": "e791a149-a17b-4b24-b2d4-90d3c14e1a95",
    "transcript_path": "/home/u/.claude/projects/-home-u-p/e791a149-a17b-4b24-b2d4-90d3c14e1a95.jsonl",
    "cwd": "/home/u/p",
    "permission_mode": "bypassPermissions",
    "hook_event_name": "PostToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls", "description": "List files"},
    "tool_response": {"stdout": "a", "stderr": "", "interrupted": False, "isImage": False},
    "tool_use_id": "toolu_018NHcrsCh3jEFicWLoFQy2f",
    "sandbox": {"enabled": True, "profile": ["net", "fs"]},
    "retry_count": 0,
    "extra": "a key named like omcm's own field",
}


def test_unknown_keys_are_kept_in_extra_verbatim():
    event = parse_event(NEWER_CLAUDE_CODE)
    assert isinstance(event, PostToolEvent) and event.tool_name == "Bash" and event.succeeded is True
    assert event.extra == {
        "sandbox": {"enabled": True, "profile": ["net", "fs"]},
        "retry_count": 0,
        "extra": "a key named like omcm's own field",
    }


def test_unknown_key_added_to_every_real_payload_is_kept(shared_fixtures):
    for path in sorted((shared_fixtures / "hook-payloads").glob("*.json")):
        payload = {**json.loads(path.read_text(encoding="utf-8")), "from_the_future": [1, {"x": None}]}
        event = parse_event(payload)
        if event is not None:
            assert event.extra == {"from_the_future": [1, {"x": None}]}, path.name


def test_old_shape_without_tool_use_id_and_permission_mode(shared_fixtures):
    payload = json.loads((shared_fixtures / "hook-payloads" / "PreToolUse-20.json").read_text())
    assert "tool_use_id" not in payload and "permission_mode" not in payload
    event = parse_event(payload)
    assert isinstance(event, PreToolEvent)
    assert event.tool_use_id is None and event.permission_mode is None
    assert event.tool_name == "Bash"


def test_windows_paths_survive(shared_fixtures):
    payload = json.loads((shared_fixtures / "hook-payloads" / "PostToolUseFailure-01.json").read_text())
    event = parse_event(payload)
    assert isinstance(event, PostToolEvent)
    assert event.cwd.startswith("C:\\Users")
    assert event.succeeded is False and event.error.startswith("Exit code 1")


def test_post_tool_use_succeeded_and_response_kept():
    event = parse_event(
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "tool_name": "LS",
            "tool_input": {},
            "tool_response": "a\nb",
        }
    )
    assert event.succeeded is True and event.tool_response == "a\nb"


@pytest.mark.parametrize(
    "payload,message",
    [
        ([], "must be a JSON object"),
        ({}, "no hook_event_name"),
        ({"hook_event_name": "PreToolUse", "session_id": 5, "tool_name": "Read"}, "session_id"),
        ({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": [1]}, "tool_input"),
        ({"hook_event_name": "PreToolUse"}, "tool_name"),
        ({"hook_event_name": "PostToolUse", "tool_name": "Bash", "duration_ms": "slow"}, "duration_ms"),
        ({"hook_event_name": "Stop", "stop_hook_active": "yes"}, "stop_hook_active"),
    ],
)
def test_bad_payloads_name_the_field(payload, message):
    with pytest.raises(PayloadError) as err:
        parse_event(payload)
    assert message in str(err.value)


def test_argv_event_must_agree():
    with pytest.raises(PayloadError, match="does not match"):
        parse_event({"hook_event_name": "PreToolUse", "tool_name": "Read"}, "PostToolUse")


def test_unknown_events_are_not_an_error_and_reach_the_generic_hook_raw():
    future = {"hook_event_name": "SomethingFromTheFuture", "session_id": "s", "odd": {"a": 1}}
    event = parse_event(future)
    assert event.hook_event_name == "SomethingFromTheFuture" and event.payload == future and event.session_id == "s"
    note = parse_event({"hook_event_name": "Notification", "message": "hi", "notification_type": "idle_prompt"})
    assert (note.message, note.notification_type) == ("hi", "idle_prompt")


def test_session_records():
    start = parse_event({"hook_event_name": "SessionStart", "source": "compact", "model": "m"})
    end = parse_event({"hook_event_name": "SessionEnd", "reason": "clear"})
    assert isinstance(start, SessionStartEvent) and start.source == "compact" and start.model == "m"
    assert isinstance(end, SessionEndEvent) and end.reason == "clear"


@pytest.mark.parametrize(
    "prompt, notification",
    [
        ("<task-notification>\n<task-id>a1</task-id>\n<result>Use ultrawork.</result>\n</task-notification>", True),
        ("  \n<task-notification>x", True),
        ("please explain <task-notification> tags", False),
        ("<task-notifications>", False),
        ("ultrawork: fix it", False),
        ("", False),
        (None, False),
    ],
)
def test_a_task_notification_is_not_the_users_prompt(prompt, notification):
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s"}
    event = parse_event(payload if prompt is None else {**payload, "prompt": prompt})
    assert isinstance(event, UserPromptEvent) and event.is_task_notification is notification


def test_records_are_frozen():
    event = parse_event({"hook_event_name": "SessionEnd", "reason": "clear"})
    with pytest.raises(AttributeError):
        event.reason = "other"


def test_stop_failure_record():
    event = parse_event(
        {
            "hook_event_name": "StopFailure",
            "session_id": "s",
            "error": "rate_limit",
            "error_details": {"status": 429},
            "last_assistant_message": "partial",
        }
    )
    assert (event.error, event.error_details, event.last_assistant_message) == (
        "rate_limit",
        {"status": 429},
        "partial",
    )
    assert EVENTS["StopFailure"].hook == "stop_failure" and event.extra == {}


def _both_ways(payload):
    """(plain, cattrs) records for ``payload``; plain is None when it defers to cattrs."""
    import attrs

    from omcm_core._runtime import payload as module
    from omcm_core.events import spec_for

    cls = spec_for(payload["hook_event_name"]).record
    known = {a.name for a in attrs.fields(cls)} - {"extra", "succeeded"}
    data = {k: v for k, v in payload.items() if k in known and v is not None}
    data["extra"] = {}
    try:
        strict = module.converter().structure(data, cls)
    except Exception:
        strict = None
    return module._plain_structure(data, cls), strict


def test_records_built_without_cattrs_equal_cattrs_ones(shared_fixtures):
    """The cold path builds a fitting payload's record itself: it must be exactly what cattrs builds."""
    payloads = [json.loads(p.read_text()) for p in sorted((shared_fixtures / "hook-payloads").glob("*.json"))]
    payloads = [p for p in payloads if isinstance(p, dict) and p.get("hook_event_name")]
    built = 0
    for payload in payloads:
        if parse_event(payload) is None:
            continue  # an event omcm does not handle
        plain, strict = _both_ways(payload)
        assert plain == strict and type(plain) is type(strict), payload["hook_event_name"]
        built += plain is not None
    assert built >= len(payloads) // 2


@pytest.mark.parametrize(
    "payload",
    [
        {"hook_event_name": "PostToolUse", "tool_name": "Bash", "duration_ms": 7},  # int -> float
        {"hook_event_name": "PostToolUse", "tool_name": "Bash", "duration_ms": True},
        {"hook_event_name": "PostToolUse", "tool_name": "Bash", "is_interrupt": 0},
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": "x"},
        {"hook_event_name": "PreToolUse", "tool_name": 3},
        {"hook_event_name": "PreToolUse"},
        {"hook_event_name": "Stop", "effort": {"level": "high"}, "stop_hook_active": False},
        {"hook_event_name": "StopFailure", "error_details": [1, {"a": None}]},
    ],
)
def test_plain_records_agree_with_cattrs_at_the_edges(payload):
    plain, strict = _both_ways(payload)
    assert plain == strict  # equal records, or both refuse (cattrs then words the error)
    assert repr(plain) == repr(strict)  # 7 became 7.0 both ways
