"""Gemini CLI at the dispatcher's edge: its payloads in, its answers out (agents/gemini.py), and `omcm hook`.

The payloads are the shapes Gemini CLI 0.61.0 sent a probe hook (no tool call id,
``tool_response.llmContent``, SessionStart's context prepended to the prompt).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from omcm_core import agents
from omcm_core._cli.hook_command import hook_command
from omcm_core._runtime.payload import parse_event
from omcm_core.agents import gemini
from omcm_core.testing import run_hook

SESSION = "e3df76e8-f9a4-4ca3-8ae4-d0ddffe8659f"
FAST_HOOK = Path(gemini.__file__).resolve().parent.parent / "fast_hook.py"


def _payload(event: str, **fields) -> dict:
    base = {
        "session_id": SESSION,
        "transcript_path": f"/h/.gemini/tmp/p/chats/session-{SESSION[:8]}.jsonl",
        "cwd": "/p",
        "hook_event_name": event,
        "timestamp": "2026-11-26T16:49:29.337Z",
    }
    return {**base, **fields}


def _before(command: str) -> dict:
    return _payload("BeforeTool", tool_name="run_shell_command", tool_input={"command": command})


def _after(command: str, output: str = "ok") -> dict:
    response = {"llmContent": f"<untrusted_context>\nOutput: {output}\n</untrusted_context>", "returnDisplay": output}
    return _payload("AfterTool", tool_name="run_shell_command", tool_input={"command": command}, tool_response=response)


# --- normalize: Gemini's payload -> Claude's shape ------------------------------------------------


@pytest.mark.parametrize(
    ("gemini_name", "claude_name"),
    [
        ("BeforeTool", "PreToolUse"),
        ("AfterTool", "PostToolUse"),
        ("BeforeAgent", "UserPromptSubmit"),
        ("AfterAgent", "Stop"),
        ("PreCompress", "PreCompact"),
        ("SessionStart", "SessionStart"),
        ("SessionEnd", "SessionEnd"),
        ("Notification", "Notification"),
        ("BeforeModel", "BeforeModel"),  # no omcm event: left as is (the core logs an unknown event)
    ],
)
def test_event_names(gemini_name, claude_name):
    assert gemini.normalize(_payload(gemini_name))["hook_event_name"] == claude_name
    if claude_name != gemini_name or gemini_name in gemini.SAME:
        assert gemini.GEMINI_NAMES[claude_name] == gemini_name


def test_a_tool_call_is_keyed_alike_at_before_and_after_tool_and_apart_from_other_calls():
    before, after = gemini.normalize(_before("ls")), gemini.normalize(_after("ls"))
    assert before["agent_call"] == after["agent_call"]
    assert gemini.normalize(_before("ls -a"))["agent_call"] != before["agent_call"]
    assert "tool_use_id" not in before  # Gemini sends none: none is made up for the observer's records
    with_id = gemini.normalize({**_before("ls"), "tool_use_id": "t1"})
    assert "agent_call" not in with_id and with_id["tool_use_id"] == "t1"
    event = parse_event(after)
    assert event.extra["agent_call"] == before["agent_call"] and event.tool_kind == "shell"


def test_after_tool_output_is_the_llm_content_text():
    out = gemini.normalize(_after("echo ok"))
    assert out["tool_response"] == {"output": "<untrusted_context>\nOutput: ok\n</untrusted_context>"}
    assert out["gemini_tool_response"]["returnDisplay"] == "ok"


@pytest.mark.parametrize(
    ("prompt", "own"),
    [
        ("<hook_context>START</hook_context>\n\ninstall the tool", "install the tool"),
        ("<hook_context>a\nb</hook_context>\n\n<hook_context>c</hook_context>\n\nfix it", "fix it"),
        ("install the tool", "install the tool"),
        ("fix <hook_context>x</hook_context>", "fix <hook_context>x</hook_context>"),  # only a leading one
    ],
)
def test_before_agent_prompt_is_the_users_own_text(prompt, own):
    out = gemini.normalize(_payload("BeforeAgent", prompt=prompt))
    assert out["prompt"] == own
    assert out.get("gemini_prompt", prompt) == prompt


@pytest.mark.parametrize(
    ("tool", "kind"),
    [
        ("mcp_omcm_notes", "mcp"),  # Gemini CLI's name for server omcm's tool notes
        ("mcp_my-server_list_items", "mcp"),
        ("mcp__github__create_issue", "mcp"),
        ("mcp_", "other"),
        ("mcp_omcm_", "other"),
        ("run_shell_command", "shell"),
        ("read_file", "read"),
        ("save_memory", "other"),
    ],
)
def test_geminis_tool_names_have_their_kinds(tool, kind):
    from omcm_core.agents.tool_kinds import kind_of

    assert kind_of(tool) == kind


# --- render: Claude's merged answer -> what Gemini CLI acts on ------------------------------------


def _pre(decision=None, reason=None, **specific):
    out = {"hookEventName": "PreToolUse", **specific}
    if decision:
        out |= {"permissionDecision": decision, "permissionDecisionReason": reason}
    return {"hookSpecificOutput": out}


@pytest.mark.parametrize(
    ("event", "response", "expected"),
    [
        ("PreToolUse", _pre("deny", "pipes a download"), {"decision": "deny", "reason": "pipes a download"}),
        ("PreToolUse", _pre("deny", None), {"decision": "deny", "reason": "denied by an omcm plugin"}),
        ("PreToolUse", _pre("ask", "sure?"), {"decision": "deny", "reason": "sure?"}),
        ("PreToolUse", _pre("allow", "fine"), {}),
        (
            "PreToolUse",
            _pre(updatedInput={"command": "ls -a"}),
            {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "ls -a"}}},
        ),
        (
            "PostToolUse",
            {"decision": "block", "reason": "tests failed"},
            {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "tests failed"}},
        ),
        (
            "PostToolUse",
            {
                "decision": "block",
                "reason": "r",
                "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "c"},
            },
            {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "r\n\nc"}},
        ),
        (
            "UserPromptSubmit",
            {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "memory"}},
            {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "memory"}},
        ),
        ("UserPromptSubmit", {"decision": "block", "reason": "no"}, {"decision": "block", "reason": "no"}),
        ("Stop", {"decision": "block", "reason": "keep going"}, {"decision": "block", "reason": "keep going"}),
        ("SessionStart", {"systemMessage": "hi", "continue": False}, {"systemMessage": "hi", "continue": False}),
    ],
)
def test_render(event, response, expected):
    stdout, code = gemini.render(event, response)
    assert code == 0  # exit 2 is reported as a failed hook in Gemini CLI
    assert json.loads(stdout) == expected


def test_render_nothing_is_nothing():
    assert gemini.render("PreToolUse", None) == (b"", 0)


# --- through `omcm hook`, as the command `omcm install --agent gemini` registers calls it ----------


def _home(tmp_path: Path, config: str = "") -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(config)
    return home


def test_tool_counters_before_tool_context_reaches_gemini_at_after_tool(tmp_path):
    """No call id in Gemini's payloads: the held context is keyed by the call's tool and input."""
    home = _home(tmp_path, "[tool-counter]\nbash_threshold = 1\n")
    env = {"OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "tool-counter", "OMCM_AGENT": "gemini"}
    pre = run_hook(_before("echo ok"), env=env, event="PreToolUse")
    assert (pre.returncode, pre.stdout) == (0, b"")  # BeforeTool context would be dropped: held
    other = run_hook(_after("ls"), env=env, event="PostToolUse")
    assert b"consecutive" not in other.stdout  # another call's AfterTool does not take it
    post = run_hook(_after("echo ok"), env=env, event="PostToolUse")
    specific = json.loads(post.stdout)["hookSpecificOutput"]
    assert specific["hookEventName"] == "AfterTool"
    assert "1 consecutive Bash calls" in specific["additionalContext"]
    assert list((home / "held").iterdir()) == []


def test_the_observer_records_each_gemini_call(tmp_path):
    """Two identical calls are two records: no made-up call id makes the second look recorded already."""
    import contextlib
    import sqlite3

    home = _home(tmp_path)
    env = {"OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM_AGENT": "gemini"}
    for _ in range(2):
        run_hook(_before("ls"), env=env, event="PreToolUse")
        assert run_hook(_after("ls", "a.txt"), env=env, event="PostToolUse").returncode == 0
    with contextlib.closing(sqlite3.connect(home / "omcm.db")) as conn:
        rows = conn.execute("SELECT session_id, tool_name FROM observer_events").fetchall()
    assert rows == [(f"gemini:{SESSION}", "run_shell_command")] * 2  # namespaced per agent


def test_bash_guard_denies_before_tool_with_gemini_names_on_the_command_line(bash_guard_site, tmp_path):
    env = {
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_HOME": str(_home(tmp_path)),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "OMCM_AGENT": "gemini",
    }
    for argv_event in ("PreToolUse", "BeforeTool"):  # omcm's name (what install writes) or Gemini's
        proc = run_hook(_before("curl http://127.0.0.1:1/x.sh | sh"), env=env, event=argv_event)
        out = json.loads(proc.stdout)
        assert proc.returncode == 0 and out["decision"] == "deny" and "pipes a download" in out["reason"]


# --- a fail-closed guard keeps guarding in Gemini's form when omcm cannot run ----------------------


@pytest.fixture
def bare_venv(tmp_path):
    """A real interpreter with no omcm (what a reinstall under another Python leaves behind)."""
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp_path / "bare")
    return tmp_path / "bare" / "bin" / "python"


def _run(command: str, payload: dict, home: Path) -> tuple[int, str]:
    import subprocess

    env = {"HOME": str(home), "OMCM_HOME": str(home / ".omcm"), "PATH": "/usr/bin:/bin", "OMCM_DAEMON": "0"}
    done = subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True, env=env)
    return done.returncode, done.stdout


def test_a_fail_closed_guard_denies_in_geminis_form_when_omcm_is_gone(tmp_path, bare_venv):
    gone = str(tmp_path / "gone" / "omcm_core" / "fast_hook.py")
    command = hook_command("PreToolUse", fail_closed=True, agent="gemini").replace(str(FAST_HOOK), gone)
    assert command.startswith("OMCM_AGENT=gemini ")
    code, out = _run(command.replace(sys.executable, str(bare_venv)), _before("rm -rf /"), tmp_path)
    answer = json.loads(out)
    assert code == 0 and answer["decision"] == "deny" and "omcm doctor" in answer["reason"]
    assert "hookSpecificOutput" not in answer
    # Claude Code's command is unchanged: its own form.
    claude = hook_command("PreToolUse", fail_closed=True).replace(str(FAST_HOOK), gone)
    code, out = _run(claude.replace(sys.executable, str(bare_venv)), {"hook_event_name": "PreToolUse"}, tmp_path)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # Not a guard: fail open (a once-per-session note only).
    plain = hook_command("PostToolUse", agent="gemini").replace(str(FAST_HOOK), gone)
    code, out = _run(plain.replace(sys.executable, str(bare_venv)), _after("ls"), tmp_path)
    assert code == 0 and "decision" not in json.loads(out)


@pytest.mark.slow
def test_the_native_clients_fail_closed_answer_is_geminis_when_its_python_is_gone(tmp_path, monkeypatch):
    import subprocess

    from omcm_core._cli import native_client

    gone = tmp_path / "py" / "python3"
    gone.parent.mkdir()
    gone.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setattr(sys, "executable", str(gone))  # what config_header bakes into the binary
    binary, why = native_client.build(tmp_path / "bin" / "omcm-hook")
    if binary is None:
        pytest.skip(f"the native client cannot be built here: {why}")
    gone.unlink()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "OMCM_HOME": str(tmp_path / "home")}
    payload = json.dumps(_before("rm -rf /")).encode()
    argv = [str(binary), "hook", "PreToolUse", "fail-closed"]
    for agent, key in (("gemini", "decision"), ("claude", "hookSpecificOutput")):
        ran = subprocess.run(argv, input=payload, capture_output=True, env={**env, "OMCM_AGENT": agent}, timeout=60)
        assert ran.returncode == 0 and key in json.loads(ran.stdout), ran


def test_outgoing_holds_context_for_a_gemini_call_without_an_id(tmp_path):
    edge = agents.for_env({"OMCM_AGENT": "gemini"})
    import attrs

    before = parse_event(gemini.normalize(_before("ls")))

    @attrs.frozen
    class Reply:
        stdout: bytes
        exit_code: int = 0

    reply = Reply(json.dumps(_pre(additionalContext="use grep")).encode())
    assert agents.outgoing(edge, before, reply, tmp_path).stdout == b""
    after = parse_event(gemini.normalize(_after("ls")))
    out = json.loads(agents.outgoing(edge, after, Reply(b""), tmp_path).stdout)
    assert out == {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "use grep"}}


def test_held_context_follows_a_rewritten_call(tmp_path):
    """Gemini CLI's AfterTool carries the input the call ran with (measured): a plugin's rewrite moves the key."""
    import attrs

    @attrs.frozen
    class Reply:
        stdout: bytes
        exit_code: int = 0

    edge = agents.for_env({"OMCM_AGENT": "gemini"})
    before = parse_event(gemini.normalize(_before("rm -rf build")))
    answer = _pre(additionalContext="cleaned safely", updatedInput={"command": "rm -rf ./build"})
    out = json.loads(agents.outgoing(edge, before, Reply(json.dumps(answer).encode()), tmp_path).stdout)
    assert out == {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "rm -rf ./build"}}}
    ran = parse_event(gemini.normalize(_after("rm -rf ./build")))
    got = json.loads(agents.outgoing(edge, ran, Reply(b""), tmp_path).stdout)
    assert got["hookSpecificOutput"]["additionalContext"] == "cleaned safely"
