"""The merge is a pure function: table-tested against Claude Code's own rules."""

import pytest

from omcm_core._runtime.merge import TEXT_CAP, TRUNCATED, merge
from omcm_core.records import Result

R = Result
INF = float("inf")
NAN = float("nan")

CASES = [
    # (name, event, answers, expected)
    ("nothing to say", "PreToolUse", [], None),
    ("all None fields", "PreToolUse", [("a", R())], None),
    (
        "single allow",
        "PreToolUse",
        [("a", R(permission="allow"))],
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}},
    ),
    (
        "deny beats allow, reason of the denier only",
        "PreToolUse",
        [("a", R(permission="allow", reason="fine")), ("b", R(permission="deny", reason="no"))],
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no",
            }
        },
    ),
    (
        "defer beats ask",
        "PreToolUse",
        [("a", R(permission="ask")), ("b", R(permission="defer"))],
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}},
    ),
    (
        "ask beats allow, both ask reasons joined in order",
        "PreToolUse",
        [
            ("a", R(permission="ask", reason="r1")),
            ("b", R(permission="allow")),
            ("c", R(permission="ask", reason="r2")),
        ],
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "r1\nr2",
            }
        },
    ),
    (
        "context joined in given order",
        "PreToolUse",
        [("a", R(additional_context="first")), ("b", R(additional_context="second"))],
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "first\n\nsecond"}},
    ),
    (
        "first updated_input wins",
        "PreToolUse",
        [("a", R(permission="allow", updated_input={"x": 1})), ("b", R(updated_input={"x": 2}))],
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"x": 1},
            }
        },
    ),
    (
        "updated_input dropped on deny",
        "PreToolUse",
        [("a", R(updated_input={"x": 1})), ("b", R(permission="deny"))],
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}},
    ),
    (
        "continue false wins over allow",
        "PreToolUse",
        [("a", R(permission="allow")), ("b", R(halt=True, halt_reason="halt"))],
        {
            "continue": False,
            "stopReason": "halt",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"},
        },
    ),
    (
        "system messages joined",
        "PostToolUse",
        [("a", R(system_message="m1")), ("b", R(system_message="m2"))],
        {"systemMessage": "m1\n\nm2"},
    ),
    (
        "post tool block joins reasons",
        "PostToolUse",
        [("a", R(block=True, reason="bad")), ("b", R(block=True, reason="worse"))],
        {"decision": "block", "reason": "bad\nworse"},
    ),
    (
        "failure event takes context",
        "PostToolUseFailure",
        [("a", R(additional_context="hint"))],
        {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "hint"}},
    ),
    (
        "permission is not valid on PostToolUse",
        "PostToolUse",
        [("a", R(permission="deny", reason="x"))],
        None,
    ),
    (
        "session start context",
        "SessionStart",
        [("a", R(additional_context="memory"))],
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memory"}},
    ),
    (
        "session end renders nothing",
        "SessionEnd",
        [("a", R(additional_context="x", system_message="y", halt=True))],
        None,
    ),
    (
        "stop block needs a reason",
        "Stop",
        [("a", R(block=True))],
        {"decision": "block", "reason": "Blocked by an omcm plugin."},
    ),
    (
        "stop: context alone is a continuation (client 2.1.163+)",
        "Stop",
        [("a", R(additional_context="keep going"))],
        {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "keep going"}},
    ),
    (
        "subagent stop takes context too",
        "SubagentStop",
        [("a", R(additional_context="x"))],
        {"hookSpecificOutput": {"hookEventName": "SubagentStop", "additionalContext": "x"}},
    ),
    (
        "stop: a non-blocking reason rides along after the context continuation",
        "Stop",
        [
            ("a-notes", R(reason="remember X")),
            ("b", R(additional_context="keep going")),
            ("c", R(additional_context="tests fail")),
        ],
        {
            "hookSpecificOutput": {
                "hookEventName": "Stop",
                "additionalContext": "keep going\n\ntests fail\n\nremember X",
            }
        },
    ),
    (
        "stop: block and context together: the ride-along goes with the block reason only",
        "Stop",
        [("a", R(reason="remember X")), ("b", R(block=True, reason="go on")), ("c", R(additional_context="ctx"))],
        {
            "decision": "block",
            "reason": "go on\n\nremember X",
            "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "ctx"},
        },
    ),
    (
        "stop: a reason that rides along with context is capped with it",
        "Stop",
        [("a", R(additional_context="c" * 6000)), ("b", R(reason="r" * 6000))],
        {
            "hookSpecificOutput": {
                "hookEventName": "Stop",
                "additionalContext": ("c" * 6000 + "\n\n" + "r" * 6000)[: TEXT_CAP - len(TRUNCATED)] + TRUNCATED,
            }
        },
    ),
    (
        "stop: a non-blocking reason rides along after the block reasons",
        "Stop",
        [
            ("a-notes", R(reason="remember X")),
            ("b", R(block=True, reason="keep going")),
            ("c", R(block=True, reason="tests fail")),
        ],
        {"decision": "block", "reason": "keep going\ntests fail\n\nremember X"},
    ),
    (
        "subagent stop: rides along even after the default block reason",
        "SubagentStop",
        [("a", R(block=True)), ("b", R(reason="remember X"))],
        {"decision": "block", "reason": "Blocked by an omcm plugin.\n\nremember X"},
    ),
    ("stop: a non-blocking reason alone is dropped", "Stop", [("a", R(reason="remember X"))], None),
    (
        "post tool: a non-blocking reason does not ride along",
        "PostToolUse",
        [("a", R(reason="remember X")), ("b", R(block=True, reason="bad"))],
        {"decision": "block", "reason": "bad"},
    ),
    ("pre compact drops system message", "PreCompact", [("a", R(system_message="x"))], None),
    (
        "stop failure output is ignored by Claude Code",
        "StopFailure",
        [("a", R(block=True, reason="r", additional_context="x", system_message="y", halt=True))],
        None,
    ),
    (
        "user prompt block",
        "UserPromptSubmit",
        [
            (
                "a",
                R(block=True, reason="secret in prompt"),
            )
        ],
        {"decision": "block", "reason": "secret in prompt"},
    ),
    # --- the events of issue 27, each merged by its own rule from the one table ---
    (
        "PermissionRequest: deny wins, its reasons are the message",
        "PermissionRequest",
        [
            ("a", R(permission="allow", updated_input={"command": "ls"})),
            ("b", R(permission="deny", reason="not here")),
            ("c", R(permission="deny", reason="nor there")),
        ],
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "not here\nnor there"},
            }
        },
    ),
    (
        "PermissionRequest: allow carries the first rewrite and every allower's permission updates",
        "PermissionRequest",
        [
            ("a", R(permission="ask", updated_input={"command": "ignored"})),
            ("b", R(permission="allow", updated_input={"command": "npm run lint"}, updated_permissions=[{"x": 1}])),
            ("c", R(permission="allow", updated_input={"command": "later"}, updated_permissions=[{"y": 2}])),
        ],
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {
                    "behavior": "allow",
                    "updatedInput": {"command": "npm run lint"},
                    "updatedPermissions": [{"x": 1}, {"y": 2}],
                },
            }
        },
    ),
    ("PermissionRequest: ask or defer shows the dialog", "PermissionRequest", [("a", R(permission="ask"))], None),
    (
        "PermissionDenied: retry when asked and not vetoed",
        "PermissionDenied",
        [("a", R(retry=True)), ("b", R())],
        {"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": True}},
    ),
    (
        "PermissionDenied: one False vetoes a retry",
        "PermissionDenied",
        [("a", R(retry=True)), ("b", R(retry=False))],
        None,
    ),
    (
        "watchPaths of every plugin joined without repeats",
        "CwdChanged",
        [("a", R(watch_paths=["/p/.envrc", "/p/a"])), ("b", R(watch_paths=["/p/a", "/p/b"]))],
        {"hookSpecificOutput": {"hookEventName": "CwdChanged", "watchPaths": ["/p/.envrc", "/p/a", "/p/b"]}},
    ),
    (
        "WorktreeCreate: the first path wins",
        "WorktreeCreate",
        [("a", R(worktree_path="/w/one")), ("b", R(worktree_path="/w/two"))],
        {"hookSpecificOutput": {"hookEventName": "WorktreeCreate", "worktreePath": "/w/one"}},
    ),
    (
        "Elicitation: decline beats accept, no content then",
        "Elicitation",
        [("a", R(elicitation_action="accept", elicitation_content={"k": 1})), ("b", R(elicitation_action="decline"))],
        {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}},
    ),
    (
        "ElicitationResult: accept with the first accepter's content",
        "ElicitationResult",
        [("a", R(elicitation_action="accept", elicitation_content={"k": 1})), ("b", R(elicitation_content={"k": 2}))],
        {"hookSpecificOutput": {"hookEventName": "ElicitationResult", "action": "accept", "content": {"k": 1}}},
    ),
    (
        "PreModelSwitch takes allow/deny/ask: a defer is no answer",
        "PreModelSwitch",
        [("a", R(permission="defer")), ("b", R(permission="ask", reason="costly"))],
        {
            "hookSpecificOutput": {
                "hookEventName": "PreModelSwitch",
                "permissionDecision": "ask",
                "permissionDecisionReason": "costly",
            }
        },
    ),
    (
        "PreSkillShellCommand never takes a rewrite",
        "PreSkillShellCommand",
        [("a", R(permission="deny", reason="no curl")), ("b", R(updated_input={"command": "true"}))],
        {
            "hookSpecificOutput": {
                "hookEventName": "PreSkillShellCommand",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no curl",
            }
        },
    ),
    (
        "SubagentStart and PostToolBatch take context",
        "SubagentStart",
        [("a", R(additional_context="lessons"))],
        {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "lessons"}},
    ),
    (
        "PostToolBatch blocks",
        "PostToolBatch",
        [("a", R(block=True, reason="lint failed"))],
        {"decision": "block", "reason": "lint failed"},
    ),
    (
        "MessageDisplay: the first display rewrite wins",
        "MessageDisplay",
        [("a", R(display_content="one")), ("b", R(display_content="two"))],
        {"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": "one"}},
    ),
    (
        "TaskCompleted refuses with continue false",
        "TaskCompleted",
        [("a", R(halt=True, halt_reason="tests fail"))],
        {"continue": False, "stopReason": "tests fail"},
    ),
    (
        "an unknown event answers the common fields only",
        "SomethingNew",
        [("a", R(additional_context="x", system_message="hello", permission="deny"))],
        {"systemMessage": "hello"},
    ),
    # JSON has no infinity or NaN: a rewrite holding one is no answer (the next plugin's wins),
    # and dropped_fields names it for the log.
    (
        "a non-finite rewrite is skipped for the next plugin's",
        "PreToolUse",
        [("a", R(updated_input={"": INF})), ("b", R(updated_input={"command": "ls"}))],
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls"}}},
    ),
    ("a non-finite rewrite alone is no answer", "PreToolUse", [("a", R(updated_input={"x": [NAN]}))], None),
    (
        "non-finite permission updates and content are skipped",
        "PermissionRequest",
        [("a", R(permission="allow", updated_permissions=[{"n": -INF}], updated_input={"n": NAN}))],
        {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}},
    ),
]


@pytest.mark.parametrize("name,event,answers,expected", CASES, ids=[c[0] for c in CASES])
def test_merge_table(name, event, answers, expected):
    assert merge(event, answers) == expected


def test_text_is_capped_at_claude_codes_limit():
    out = merge("PreToolUse", [("a", R(additional_context="x" * 8000)), ("b", R(additional_context="y" * 8000))])
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) == TEXT_CAP
    assert text.startswith("x" * 8000) and text.endswith("[omcm: truncated]")


def test_merge_does_not_depend_on_anything_but_its_arguments():
    first = [
        ("b", R(permission="ask", additional_context="from b")),
        ("a", R(updated_input={"command": "ls"}, additional_context="from a")),
    ]
    second = [("c", R(permission="deny", reason="no"))]
    given = list(first)
    expected_first = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "updatedInput": {"command": "ls"},
            "additionalContext": "from b\n\nfrom a",  # the order given, not plugin-name order
        }
    }
    expected_second = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
    out = merge("PreToolUse", given)
    assert out == expected_first
    assert given == first  # the caller's list is left as it was
    out["hookSpecificOutput"]["updatedInput"]["command"] = "rm -rf /"  # the answer is the caller's to change
    assert first[1][1].updated_input == {"command": "ls"}
    # Nothing carries over from one call to the next.
    assert merge("PreToolUse", second) == expected_second
    assert merge("PreToolUse", first) == expected_first
    assert merge("PreToolUse", []) is None


def test_result_rejects_unknown_permission():
    with pytest.raises(ValueError):
        Result(permission="maybe")


def test_a_non_finite_rewrite_is_named_for_the_log_and_rejected_as_a_plugin_answer():
    from omcm_core._runtime.merge import dropped_fields, result_problem

    bad = R(updated_input={"": INF}, watch_paths=["/a"])
    assert dropped_fields("PreToolUse", bad) == ["updated_input", "watch_paths"]
    assert dropped_fields("SessionStart", R(watch_paths=["/a", NAN])) == ["watch_paths"]
    assert "not JSON" in result_problem(bad)
    assert result_problem(R(updated_input={"ok": 1.5})) is None
