"""Codex CLI at the dispatcher's edge: its payloads in, its answer contract out (measured with Codex 0.171.0).

Codex reports a PreToolUse hook as failed, and runs the tool anyway with the
hook's context lost, when the answer carries ``permissionDecision`` ``allow``,
``ask`` or ``defer``, ``updatedInput``, ``continue: false`` or ``suppressOutput``
(each tried in the real CLI against a fake model): the render below keeps every
answer inside what Codex takes, and a guard's intent (ask, rewrite, halt) as a deny.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest
from attrs import frozen

from omcm_core.agents import codex
from omcm_core.agents.tool_kinds import reads_files, run_kind
from omcm_core.testing import post_tool_payload, pre_tool_payload, run_hook

PRE = "PreToolUse"


def _pre(**specific):
    return {"hookSpecificOutput": {"hookEventName": PRE, **specific}}


def _deny(reason):
    return _pre(permissionDecision="deny", permissionDecisionReason=reason)


@pytest.mark.parametrize(
    ("event", "response", "expected"),
    [
        (PRE, None, None),
        (PRE, _deny("no"), _deny("no")),
        (PRE, _pre(permissionDecision="deny"), _deny(codex.DEFAULT_DENY)),
        (PRE, _pre(additionalContext="ctx"), _pre(additionalContext="ctx")),
        (PRE, _pre(permissionDecision="allow", permissionDecisionReason="fine"), None),
        (PRE, _pre(permissionDecision="allow", additionalContext="ctx"), _pre(additionalContext="ctx")),
        (PRE, _pre(permissionDecision="defer"), None),
        (
            PRE,
            _pre(permissionDecision="ask", permissionDecisionReason="force push?"),
            _deny("needs your confirmation, which Codex cannot ask for here: force push?"),
        ),
        (
            PRE,
            _pre(permissionDecision="allow", updatedInput={"command": "ls -la"}),
            _deny("an omcm plugin would change this call's input, which Codex cannot do."),
        ),
        (PRE, {"continue": False, "stopReason": "loop over"}, _deny("loop over")),
        (PRE, {"continue": True, "systemMessage": "hi"}, {"systemMessage": "hi"}),
        (PRE, {"suppressOutput": True}, None),
        (
            PRE,
            {"systemMessage": "m", **_deny("no")},
            {"systemMessage": "m", **_deny("no")},
        ),
        # Other events: Claude's form as is (context, Stop's block, PostToolUse's block all work in Codex).
        ("Stop", {"decision": "block", "reason": "go on"}, {"decision": "block", "reason": "go on"}),
        (
            "PostToolUse",
            {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "c"}},
            {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "c"}},
        ),
    ],
)
def test_render(event, response, expected):
    stdout, code = codex.render(event, response)
    assert code == 0
    assert (json.loads(stdout) if stdout else None) == expected


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("cat README.md", True),
        ("cat -n src/a.py src/b.py", True),
        ("head -n 40 src/a.py", True),
        ("head -40 src/a.py", True),
        ("tail -n 5 log.txt", True),
        ("sed -n '1,120p' src/a.py", True),
        ("sed -n 5p a.py", True),
        ("sed -n '200,$p' a.py", False),  # conservative: any `$` is refused, quoted or not
        ("nl -ba src/a.py | sed -n '1,80p'", True),
        ("/bin/cat a", True),
        ("cat", False),  # reads no file
        ("sed -i 's/a/b/' a.py", False),
        ("sed -n '1,5w /tmp/x' a.py", False),  # w writes a file
        ("sed -n -e 1p a.py", False),
        ("sed 1p a.py", False),
        ("cat a > b", False),
        ("cat a; rm -rf /", False),
        ("cat a && make", False),
        ("cat $(ls)", False),
        ("cat `ls`", False),
        ("cat a | sh", False),
        ("cat a || true", False),
        ("ls", False),
        ("grep -n x a.py", False),
        ("cat 'unterminated", False),
        ("", False),
        (None, False),
        ("cat " + "a" * 5000, False),
    ],
)
def test_reads_files(command, reads):
    assert reads_files(command) is reads


@frozen
class _Event:
    tool_kind: str
    tool_input: dict
    extra: dict


@pytest.mark.parametrize(
    ("kind", "command", "agent", "expected"),
    [
        ("shell", "cat a.py", "codex", "read"),
        ("shell", "cat a.py", None, "shell"),  # Claude Code has Read: its `cat` stays a shell call
        ("shell", "cat a.py", "qwen", "shell"),
        ("shell", "make", "codex", "shell"),
        ("read", None, "codex", "read"),
        ("edit", None, "codex", "edit"),
    ],
)
def test_run_kind_counts_codex_file_prints_as_reads(kind, command, agent, expected):
    event = _Event(kind, {"command": command} if command else {}, {"agent": agent} if agent else {})
    assert run_kind(event) == expected


# --- through `omcm hook`, as Codex calls it --------------------------------------------------------------


def test_tool_counter_counts_codexs_cat_as_reads(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[tool-counter]\nread_threshold = 2\nbash_threshold = 99\n")
    env = {"OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "tool-counter", "OMCM_AGENT": "codex"}
    answers = []
    for command in ("cat a.py", "sed -n '1,80p' b.py"):
        payload = pre_tool_payload("Bash", {"command": command})
        proc = run_hook(payload, env=env, event=PRE)
        assert proc.returncode == 0, proc.stderr
        answers.append(json.loads(proc.stdout) if proc.stdout else None)
    assert answers[0] is None
    assert "2 consecutive Read calls" in answers[1]["hookSpecificOutput"]["additionalContext"], answers[1]
    claude = {**env, "OMCM_AGENT": "claude", "OMCM_HOME": str(tmp_path / "claude")}
    (tmp_path / "claude").mkdir(mode=0o700)
    (tmp_path / "claude" / "config.toml").write_text((home / "config.toml").read_text())
    for command in ("cat a.py", "cat b.py"):
        proc = run_hook(pre_tool_payload("Bash", {"command": command}), env=claude, event=PRE)
        assert b"Read calls" not in proc.stdout  # under Claude Code a `cat` is a Bash call, as before


def test_a_string_tool_response_reaches_the_observer_as_output(tmp_path):
    env = {"OMCM_HOME": str(tmp_path / "home"), "OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM_AGENT": "codex"}
    payload = post_tool_payload("Bash", {"command": "echo hi"}, tool_response="hi\n")
    proc = run_hook(payload, env=env, event="PostToolUse")
    assert proc.returncode == 0, proc.stderr
    with contextlib.closing(sqlite3.connect(tmp_path / "home" / "omcm.db")) as db:
        rows = db.execute("SELECT tool_name, command, output FROM observer_events").fetchall()
    assert rows == [("Bash", "echo hi", "hi\n")], rows
