"""Hostile stdin through real ``omcm hook`` processes never breaks the session.

Every case: exit 0; stdout empty or exactly one JSON object valid for the
event; never a traceback there; a clear log line for what was refused; nothing
written outside OMCM_HOME (the sandbox around it, the project and a fake HOME
are snapshotted before and after).
"""

from __future__ import annotations

import json
import typing

import attrs
import pytest
from reliability_harness import PLUGIN_SETS, log_entries, parse_stdout, post_tool, run_hook, snapshot

from omcm_core import records
from omcm_core.events import EVENTS

SESSION = "0f0e0d0c-0b0a-4908-8706-050403020100"
EVERY_GOOD_PLUGIN = sorted({name for names in PLUGIN_SETS.values() for name in names})


def _payload(event: str = "PostToolUse", /, **overrides) -> dict:
    base = post_tool(SESSION)
    if event != "PostToolUse":
        base = {k: base[k] for k in ("session_id", "transcript_path", "cwd")}
        base["hook_event_name"] = event
        if event in EVENTS and issubclass(EVENTS[event].record, records.ToolEvent):
            base.update(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_01")
        if event == "PostToolUseFailure":
            base["error"] = "Exit code 1\nboom"
    base.update(overrides)
    return base


def _dumps(value) -> bytes:
    return json.dumps(value).encode()


def _nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    return opener * depth + closer * depth


def _deep_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# Payloads omcm must refuse: one "bad_payload" error line, nothing on stdout.
REFUSED: dict[str, tuple[bytes, str | None]] = {
    "empty": (b"", None),
    "whitespace": (b" \n\t\n", None),
    "not-json": (b"hello, hook", None),
    "json-array": (b"[1, 2, 3]", None),
    "json-string": (b'"PreToolUse"', None),
    "json-number": (b"42", None),
    "json-null": (b"null", None),
    "invalid-utf8": (b'{"hook_event_name": "PostToolUse", "session_id": "\xff\xfe\xfa"}', None),
    "lone-surrogate-bytes": (b'{"hook_event_name": "Stop", "x": "\xed\xa0\x80"}', None),
    "nul-bytes": (b"\x00" * 64, None),
    "raw-nul-inside-string": (b'{"hook_event_name": "Stop", "session_id": "a\x00b"}', None),
    "utf8-bom": (b"\xef\xbb\xbf" + _dumps(_payload()), None),
    "truncated-object": (_dumps(_payload())[:-40], None),
    "truncated-after-brace": (b"{", None),
    "deep-arrays-50k": (('{"hook_event_name": "PostToolUse", "tool_input": ' + _nested(50_000) + "}").encode(), None),
    "deep-objects-30k": (
        ('{"hook_event_name": "PreToolUse", "tool_input": ' + _deep_objects(30_000) + "}").encode(),
        None,
    ),
    "missing-event": (_dumps({k: v for k, v in _payload().items() if k != "hook_event_name"}), None),
    "empty-event-name": (_dumps(_payload(hook_event_name="")), None),
    "event-name-number": (_dumps(_payload(hook_event_name=7)), None),
    "argv-disagrees": (_dumps(_payload("PreToolUse")), "PostToolUse"),
    "argv-disagrees-unknown": (_dumps(_payload("Stop")), "NotAnEvent"),
}

# Payloads omcm must accept: a valid answer (or nothing) and no error in the log.
ACCEPTED: dict[str, tuple[bytes, str | None]] = {
    "megabytes-of-tool-output": (_dumps(_payload(tool_response={"stdout": "x" * 8_000_000, "stderr": ""})), None),
    "megabytes-of-structured-output": (
        _dumps(_payload(tool_response=[{"line": i, "text": "y" * 40} for i in range(60_000)])),
        None,
    ),
    "megabytes-of-tool-input": (
        _dumps(_payload("PreToolUse", tool_input={"command": "echo " + "z" * 3_000_000})),
        None,
    ),
    "nesting-900-levels": (
        (
            '{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash", "tool_response": '
            + _nested(900)
            + "}"
        ).encode(),
        None,
    ),
    "unknown-keys": (_dumps(_payload(future_field={"a": [1, None, True]}, another=None)), None),
    "nul-escapes-in-fields": (_dumps(_payload(cwd="/tmp\u0000/x", transcript_path="\u0000")), None),
    "windows-cwd": (_dumps(_payload(cwd="C:\\Users\\dev\\project")), None),
    "relative-cwd": (_dumps(_payload(cwd="../../..")), None),
    "argv-agrees": (_dumps(_payload()), "PostToolUse"),
    "failure-event": (_dumps(_payload("PostToolUseFailure")), None),
    "prompt-with-controls": (_dumps(_payload("UserPromptSubmit", prompt="\u0000\u001b[31m\u202e" * 100)), None),
}

UNHANDLED = {
    "unknown-event": _dumps(_payload(hook_event_name="SomethingNew")),
    "known-unhandled-event": _dumps(_payload(hook_event_name="Notification", message="hi")),
}

ESCAPING_SESSION_IDS = [
    "../../../../escaped",
    "/etc/omcm-escape",
    "..",
    ".",
    "a/../../../b",
    "..\\..\\windows",
    "~/.ssh/authorized_keys",
    "sessions/../../x",
    "\u0000nul",
    "x" * 5000,
    "세션/../../..",
    " ",
]


def _run_checked(rel_site, rel_world, raw, event, plugins):
    home, root = rel_world["home"], rel_world["root"]
    env = rel_site.env(home, plugins, HOME=str(rel_world["user"]), CLAUDE_PROJECT_DIR=str(rel_world["project"]))
    before = snapshot(root, exclude=[home])
    proc = run_hook(raw, env, cwd=rel_world["project"], event=event)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert b"Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert snapshot(root, exclude=[home]) == before, "something was written outside OMCM_HOME"
    return proc


def _refused_once(home):
    entries = log_entries(home)
    assert len(entries) == 1, entries
    (entry,) = entries
    assert (entry["level"], entry["event"]) == ("error", "bad_payload"), entry
    assert entry["error"] and len(entry["error"]) <= 500
    return entry


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_payload_exits_zero_silently_with_one_log_line(rel_site, rel_world, case):
    raw, event = REFUSED[case]
    proc = _run_checked(rel_site, rel_world, raw, event, EVERY_GOOD_PLUGIN)
    assert proc.stdout == b""
    _refused_once(rel_world["home"])


@pytest.mark.slow
@pytest.mark.parametrize("plugin_set", sorted(PLUGIN_SETS))
@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_odd_payload_gets_a_valid_answer(rel_site, rel_world, case, plugin_set):
    raw, event = ACCEPTED[case]
    plugins = PLUGIN_SETS[plugin_set]
    proc = _run_checked(rel_site, rel_world, raw, event, plugins)
    event_name = json.loads(raw)["hook_event_name"]
    answer = parse_stdout(event_name, proc.stdout)
    if "rel-answer" in plugins:
        assert answer is not None and "rel-answer" in json.dumps(answer), "the well-behaved plugin was not heard"
    errors = [e for e in log_entries(rel_world["home"]) if e["level"] in ("error", "critical")]
    assert errors == []


@pytest.mark.parametrize("case", sorted(UNHANDLED))
def test_unhandled_event_is_logged_and_answered_with_nothing(rel_site, rel_world, case):
    proc = _run_checked(rel_site, rel_world, UNHANDLED[case], None, EVERY_GOOD_PLUGIN)
    assert proc.stdout == b""
    entries = log_entries(rel_world["home"])
    assert [(e["level"], e["event"]) for e in entries] == [("info", "event_not_handled")], entries


@pytest.mark.parametrize("session_id", ESCAPING_SESSION_IDS, ids=lambda s: repr(s[:30]))
def test_session_id_cannot_escape_omcm_home(rel_site, rel_world, session_id):
    raw = _dumps(_payload(session_id=session_id))
    proc = _run_checked(rel_site, rel_world, raw, None, ["rel-answer"])
    assert parse_stdout("PostToolUse", proc.stdout) is not None
    written = list((rel_world["home"] / "sessions").glob("*/rel-answer.json"))
    assert len(written) == 1, "the plugin's session file is not in its own folder under OMCM_HOME/sessions"
    assert written[0].parent.parent == rel_world["home"] / "sessions"
    assert len(written[0].parent.name) <= 120


# -- wrong types, field by field (derived from the records, so new fields are covered) --


def _wrong_value(annotation):
    text = str(annotation)
    if "bool" in text:
        return "yes"
    if "float" in text:
        return "fast"
    if "dict" in text:
        return ["not", "an", "object"]
    if "list" in text:
        return {"not": "an array"}
    if "str" in text:
        return 12345
    return None  # Any: every JSON value is acceptable


def _wrong_type_cases():
    cases = []
    seen_common = set()
    for event, cls in sorted((name, spec.record) for name, spec in EVENTS.items()):
        hints = typing.get_type_hints(cls)
        for field in attrs.fields(cls):
            if field.name in ("extra", "succeeded"):
                continue
            common = field.name in {f.name for f in attrs.fields(records.Event)} - {"hook_event_name"}
            if common and field.name in seen_common:
                continue  # fields every event shares are checked once
            wrong = _wrong_value(hints[field.name])
            if wrong is None:
                continue
            if common:
                seen_common.add(field.name)
            cases.append(pytest.param(event, field.name, wrong, id=f"{event}.{field.name}"))
    return cases


WRONG_TYPE_CASES = _wrong_type_cases()


def test_wrong_type_cases_cover_every_typed_field():
    covered = {case.values[1] for case in WRONG_TYPE_CASES}
    for cls in (spec.record for spec in EVENTS.values()):
        for field in attrs.fields(cls):
            # opaque JSON (any value is valid): tool_response, StopFailure's error_details, ...
            if str(typing.get_type_hints(cls)[field.name]) != "typing.Any" and field.name not in ("extra", "succeeded"):
                assert field.name in covered, f"{cls.__name__}.{field.name} has no wrong-type case"


@pytest.mark.parametrize(("event", "field", "wrong"), WRONG_TYPE_CASES)
def test_wrong_type_in_a_field_is_refused_with_the_field_named(rel_site, rel_world, event, field, wrong):
    raw = _dumps(_payload(event, **{field: wrong}))
    proc = _run_checked(rel_site, rel_world, raw, None, EVERY_GOOD_PLUGIN)
    assert proc.stdout == b""
    entry = _refused_once(rel_world["home"])
    assert field in entry["error"], entry
