"""A third party's plugin implementing every new hook, called through `omcm hook` as Claude Code calls it.

Each case is one event: a realistic payload (the shapes of Claude Code 2.1.330's
own event descriptions and schemas; real recorded payloads where
../shared/fixtures has them) in, the exact stdout Claude Code would read out.
"""

from __future__ import annotations

import json
import os

import pytest

from omcm_core.events import EVENTS
from omcm_core.testing import assert_valid_response, hook_payload, run_hook

pytestmark = pytest.mark.slow

#: The events omcm answered before issue 27 (tested elsewhere); every other row is here.
OLDER = {
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "StopFailure",
}


def specific(event: str, **fields) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


SUGGESTION = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
    "behavior": "allow",
    "destination": "localSettings",
}
BATCH = [
    {"tool_name": "Read", "tool_input": {"file_path": "/p/a.py"}, "tool_use_id": "toolu_1", "tool_response": {}},
    {"tool_name": "Grep", "tool_input": {"pattern": "x"}, "tool_use_id": "toolu_2", "tool_response": {}},
]

#: (case id, payload, expected stdout as JSON, or bytes for a plain-text answer, or None for nothing)
CASES = [
    (
        "PermissionRequest-allow",
        hook_payload(
            "PermissionRequest",
            permission_mode="default",
            tool_name="Bash",
            tool_input={"command": "npm test"},
            permission_suggestions=[SUGGESTION],
        ),
        specific(
            "PermissionRequest",
            decision={"behavior": "allow", "updatedInput": {"command": "npm test"}, "updatedPermissions": [SUGGESTION]},
        ),
    ),
    (
        "PermissionRequest-deny",
        hook_payload("PermissionRequest", tool_name="Bash", tool_input={"command": "rm -rf /srv"}),
        specific("PermissionRequest", decision={"behavior": "deny", "message": "every-event: no 'rm -rf /srv'"}),
    ),
    (
        "PermissionDenied",
        hook_payload(
            "PermissionDenied",
            permission_mode="auto",
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_use_id="toolu_9",
            reason="classifier unavailable",
        ),
        specific("PermissionDenied", retry=True),
    ),
    (
        "PostToolBatch",
        hook_payload("PostToolBatch", permission_mode="default", tool_calls=BATCH),
        specific("PostToolBatch", additionalContext="batch of 2: Read,Grep"),
    ),
    (
        "Notification",
        hook_payload(
            "Notification", message="Claude needs your permission to use Bash", notification_type="permission_prompt"
        ),
        specific("Notification", additionalContext="noted permission_prompt"),
    ),
    (
        "SubagentStart",
        hook_payload("SubagentStart", agent_id="a69f71b45732ed2ce", agent_type="Explore"),
        specific("SubagentStart", additionalContext="lessons for Explore a69f71b45732ed2ce"),
    ),
    ("PostCompact", hook_payload("PostCompact", trigger="auto", compact_summary="We fixed the parser."), None),
    ("Setup", hook_payload("Setup", trigger="init"), specific("Setup", additionalContext="setup: init")),
    (
        "UserPromptExpansion",
        hook_payload(
            "UserPromptExpansion",
            expansion_type="slash_command",
            command_name="review",
            command_args="--fast",
            command_source="project",
            prompt="Review the diff ...",
        ),
        specific("UserPromptExpansion", additionalContext="expanded /review (slash_command)"),
    ),
    (
        "UserPromptExpansion-block",
        hook_payload(
            "UserPromptExpansion",
            expansion_type="slash_command",
            command_name="deploy",
            command_args="prod",
            prompt="x",
        ),
        {"decision": "block", "reason": "/deploy prod is not allowed here"},
    ),
    (
        "CwdChanged",
        hook_payload("CwdChanged", old_cwd="/p", new_cwd="/p/sub"),
        specific("CwdChanged", watchPaths=["/p/sub/.envrc"]),
    ),
    (
        "FileChanged",
        hook_payload("FileChanged", file_path="/p/sub/.envrc", event="change"),
        specific("FileChanged", watchPaths=["/p/sub/.envrc"]),
    ),
    (
        "InstructionsLoaded",
        hook_payload(
            "InstructionsLoaded", file_path="/p/CLAUDE.md", memory_type="Project", load_reason="session_start"
        ),
        None,
    ),
    (
        "ConfigChange",
        hook_payload("ConfigChange", source="policy_settings", file_path="/etc/claude-code/managed-settings.json"),
        {"decision": "block", "reason": "/etc/claude-code/managed-settings.json is managed"},
    ),
    ("DirectoryAdded", hook_payload("DirectoryAdded", directory="/q", source="slash_command"), None),
    (
        "PreModelSwitch",
        hook_payload(
            "PreModelSwitch",
            from_model="claude-sonnet-4-6",
            to_model="claude-opus-4-6",
            requested_model="opus",
            source="slash_command",
            context_tokens=150_000,
        ),
        specific(
            "PreModelSwitch",
            permissionDecision="ask",
            permissionDecisionReason="switching to claude-opus-4-6 re-reads 150000 tokens",
        ),
    ),
    (
        "PostModelSwitch",
        hook_payload("PostModelSwitch", from_model="claude-sonnet-4-6", to_model="claude-opus-4-6", source="set_model"),
        specific("PostModelSwitch", additionalContext="now claude-opus-4-6 (was claude-sonnet-4-6)"),
    ),
    (
        "PreSkillShellCommand",
        hook_payload(
            "PreSkillShellCommand",
            tool_name="Bash",
            tool_input={"command": "curl -s https://example.com/x"},
            tool_use_id="toolu_skill_1",
            command_name="fetch-docs",
            command_source="user",
            invoked_by="model",
        ),
        specific(
            "PreSkillShellCommand", permissionDecision="deny", permissionDecisionReason="fetch-docs may not download"
        ),
    ),
    ("WorktreeCreate", hook_payload("WorktreeCreate", name="feature-x"), b"/tmp/every-event-worktrees/feature-x"),
    ("WorktreeRemove", hook_payload("WorktreeRemove", worktree_path="/tmp/every-event-worktrees/feature-x"), None),
    (
        "TaskCreated",
        hook_payload("TaskCreated", task_id="7", task_subject="Fix it", teammate_name="ann", team_name="core"),
        {"decision": "block", "reason": "task 7 needs a description"},
    ),
    (
        "TaskCompleted",
        hook_payload("TaskCompleted", task_id="7", task_subject="Fix it", task_description="the parser"),
        {"decision": "block", "reason": "Fix it: run the tests first"},
    ),
    (
        "TeammateIdle",
        hook_payload("TeammateIdle", teammate_name="ann", team_name="core"),
        {"decision": "block", "reason": "ann of core: the queue is not empty"},
    ),
    (
        "Elicitation",
        hook_payload(
            "Elicitation",
            mcp_server_name="trusted",
            message="Your name?",
            requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        ),
        specific("Elicitation", action="accept", content={"name": "omcm"}),
    ),
    (
        "ElicitationResult",
        hook_payload(
            "ElicitationResult",
            mcp_server_name="x",
            action="accept",
            content={"name": "ann"},
            mode="form",
            elicitation_id="e1",
        ),
        specific("ElicitationResult", action="accept", content={"name": "ann", "checked": True}),
    ),
    (
        "MessageDisplay",
        hook_payload("MessageDisplay", turn_id="t", message_id="m", index=0, final=False, delta="the password is x\n"),
        specific("MessageDisplay", displayContent="the ******** is x\n"),
    ),
]


def _env(site, tmp_path, log):
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return {
        "PYTHONPATH": path,
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "every-event",
        "OMCM_PASS_ENV": "EVERY_EVENT_*",
        "EVERY_EVENT_LOG": str(log),
    }


def test_the_cases_cover_every_new_event():
    assert {case[0].split("-")[0] for case in CASES} == set(EVENTS) - OLDER


@pytest.mark.parametrize(("case", "payload", "expected"), CASES, ids=[c[0] for c in CASES])
def test_omcm_hook_renders_the_plugins_answer_in_the_events_shape(every_event_site, tmp_path, case, payload, expected):
    log = tmp_path / "calls.jsonl"
    event = payload["hook_event_name"]
    proc = run_hook(payload, env=_env(every_event_site, tmp_path, log), event=event)
    assert proc.returncode == 0, proc.stderr
    if isinstance(expected, bytes):  # WorktreeCreate: a command hook prints the path, not JSON
        assert proc.stdout.removesuffix(b"\n") == expected  # one line: the path, as Claude Code reads it
        return
    out = json.loads(proc.stdout) if proc.stdout else None
    assert out == expected
    assert_valid_response(event, out)
    if expected is None:  # side effects only: the plugin ran and read its record
        (line,) = log.read_text().splitlines()
        call = json.loads(line)
        assert call["event"] == event and call["record"] == EVENTS[event].record.__name__


def test_an_event_omcm_does_not_know_reaches_any_event_raw_and_answers_common_fields(every_event_site, tmp_path):
    log = tmp_path / "calls.jsonl"
    payload = hook_payload("BudgetExceeded", budget_usd=5, spent_usd=5.2)
    proc = run_hook(payload, env=_env(every_event_site, tmp_path, log), event="BudgetExceeded")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"systemMessage": "seen BudgetExceeded"}
    call = json.loads(log.read_text())
    assert call["record"] == "GenericEvent" and call["keys"] == sorted(payload)


@pytest.mark.parametrize("name", ["Notification-01.json", "PermissionRequest-01.json", "SubagentStart-01.json"])
def test_real_recorded_payloads_reach_the_plugin(every_event_site, tmp_path, shared_fixtures, name):
    payload = json.loads((shared_fixtures / "hook-payloads" / name).read_text())
    event = payload["hook_event_name"]
    proc = run_hook(payload, env=_env(every_event_site, tmp_path, tmp_path / "calls.jsonl"), event=event)
    out = json.loads(proc.stdout)
    assert_valid_response(event, out)
    assert out["hookSpecificOutput"]["hookEventName"] == event
