"""The merge is a pure function: table-tested against Claude Code's own rules."""

import pytest

from omcm_core._runtime.merge import TEXT_CAP, merge
from omcm_core.records import Result

R = Result

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
        [("a", R(permission="ask", reason="r1")), ("b", R(permission="allow")), ("c", R(permission="ask", reason="r2"))],
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
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"x": 1}}},
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
    ("session end renders nothing", "SessionEnd", [("a", R(additional_context="x", system_message="y", halt=True))], None),
    (
        "stop block needs a reason",
        "Stop",
        [("a", R(block=True))],
        {"decision": "block", "reason": "Blocked by an omcm plugin."},
    ),
    ("stop takes no context", "Stop", [("a", R(additional_context="x"))], None),
    ("pre compact drops system message", "PreCompact", [("a", R(system_message="x"))], None),
    (
        "user prompt block",
        "UserPromptSubmit",
        [("a", R(block=True, reason="secret in prompt"), )],
        {"decision": "block", "reason": "secret in prompt"},
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
    answers = [("b", R(permission="ask")), ("a", R(permission="allow", additional_context="c"))]
    assert merge("PreToolUse", answers) == merge("PreToolUse", list(answers))


def test_result_rejects_unknown_permission():
    with pytest.raises(ValueError):
        Result(permission="maybe")
