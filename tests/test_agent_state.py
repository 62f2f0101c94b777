"""Per-agent state (issue 37 item 4): session ids namespaced at the edge, Qwen Code's transcripts read.

Sessions through real `omcm hook` processes; the transcript lines are shaped as Qwen Code 0.24.4
writes them in ``~/.qwen/projects/<project>/chats/<session>.jsonl`` (the real CLI's file is read in
tests/e2e/test_qwen_e2e.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omcm_core import agents, transcript_tail
from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, pre_tool_payload, run_hook
from omcm_core.transcripts import claude_entry, replay_transcript

SID = "0f3c2a8e-5b7d-4c1e-9a6f-2d8b4e7c1a90"
OLD = "2026-01-02T03:04:05.678Z"


def qwen_line(kind: str, role: str, *parts: dict, **extra) -> dict:
    """One line of a Qwen Code chat file."""
    return {
        "uuid": f"u-{len(parts)}-{kind}",
        "sessionId": SID,
        "timestamp": OLD,
        "type": kind,
        "cwd": "/p",
        "version": "0.24.4",
        "message": {"role": role, "parts": list(parts)},
        **extra,
    }


def call(call_id: str, name: str, **args) -> dict:
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


def answer(call_id: str, name: str, **response) -> dict:
    return {"functionResponse": {"id": call_id, "name": name, "response": response}}


def qwen_session(*todos: tuple[str, str]) -> list[dict]:
    """A prompt, a shell call that ran, one that a hook denied, a todo list, the model's last words."""
    lines = [
        qwen_line("user", "user", {"text": "install the tool"}),
        qwen_line("system", "system", subtype="ui_telemetry"),
        qwen_line(
            "assistant",
            "model",
            {"text": "thinking", "thought": True},
            call("call_1", "run_shell_command", command="echo ok"),
        ),
        qwen_line("tool_result", "user", answer("call_1", "run_shell_command", output="Output: ok")),
        qwen_line("assistant", "model", call("call_2", "run_shell_command", command="curl x | sh")),
        qwen_line("tool_result", "user", answer("call_2", "run_shell_command", error="bash-guard: denied")),
    ]
    if todos:
        items = [{"id": str(n), "content": c, "status": s} for n, (c, s) in enumerate(todos)]
        lines.append(qwen_line("assistant", "model", call("call_3", "todo_write", todos=items)))
        lines.append(qwen_line("tool_result", "user", answer("call_3", "todo_write", output="Todos updated")))
    lines.append(qwen_line("assistant", "model", {"text": "The tool is installed and the docs are next on my list."}))
    return lines


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# --- the conversion, table-tested ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "kind", "blocks"),
    [
        (qwen_line("user", "user", {"text": "hi"}), "user", [{"type": "text", "text": "hi"}]),
        (
            qwen_line("assistant", "model", {"text": "t", "thought": True}, call("c1", "read_file", path="a")),
            "assistant",
            [{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}}],
        ),
        (
            qwen_line("tool_result", "user", answer("c1", "read_file", output="body")),
            "user",
            [{"type": "tool_result", "tool_use_id": "c1", "content": "body", "is_error": False}],
        ),
        (
            qwen_line("tool_result", "user", answer("c2", "edit", error="no match")),
            "user",
            [{"type": "tool_result", "tool_use_id": "c2", "content": "no match", "is_error": True}],
        ),
        (
            qwen_line("tool_result", "user", answer("c3", "x", data=[1])),
            "user",
            [{"type": "tool_result", "tool_use_id": "c3", "content": '{"data": [1]}', "is_error": False}],
        ),
        (qwen_line("system", "system", subtype="ui_telemetry"), "system", []),
    ],
)
def test_a_qwen_line_in_claudes_shape(line, kind, blocks):
    out = claude_entry(line)
    assert out["type"] == kind and out["message"]["content"] == blocks
    assert out["sessionId"] == f"qwen:{SID}"  # as the edge names the session
    assert claude_entry(out) == out  # converted once


@pytest.mark.parametrize(
    "line",
    [
        {"type": "user", "message": {"role": "user", "content": "hi"}},  # Claude Code's own
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}},
        {"type": "summary", "summary": "s"},
        {"type": "user", "message": {"role": "user", "parts": "not a list"}},
        {"type": "user", "message": "text"},
    ],
)
def test_other_lines_are_left_as_they_are(line):
    assert claude_entry(line) is line


# --- item 4a: a session of another agent never shares a Claude session's state -------------------


def test_the_edge_namespaces_session_ids_per_agent():
    out = agents.namespaced("qwen", {"session_id": "abc", "hook_event_name": "Stop"})
    assert out["session_id"] == "qwen:abc" and out["agent_session_id"] == "abc"
    assert agents.namespaced("qwen", {"hook_event_name": "Stop"}) == {"hook_event_name": "Stop"}
    raw, _event = agents.incoming(agents.for_env({"OMCM_AGENT": "codex"}), b'{"session_id": "abc"}', "Stop")
    assert json.loads(raw)["session_id"] == "codex:abc"
    claude = b'{"session_id": "abc"}'
    assert agents.incoming(agents.for_env({}), claude, "Stop") == (claude, "Stop")  # Claude Code: untouched


def test_a_qwen_session_never_resumes_a_claude_sessions_ralph_loop(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "persistent-mode",
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM__CORE__PLUGIN_BUDGET_MS": "30000",
    }
    base = {"session_id": SID, "transcript_path": str(tmp_path / "none.jsonl"), "cwd": str(project)}
    started = run_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "/ralph-loop build a todo API"}, env)
    assert "ralph loop" in started.stdout.decode()
    stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."}
    qwen = run_hook(stop, {**env, "OMCM_AGENT": "qwen"})
    assert (qwen.returncode, qwen.stdout) == (0, b"")  # the same raw id under Qwen Code: not that loop
    claude = run_hook(stop, env)
    assert json.loads(claude.stdout)["decision"] == "block"  # the Claude session's loop goes on


def test_tool_counters_counters_are_per_agent(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[tool-counter]\nbash_threshold = 3\n")
    env = {"OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "tool-counter"}
    outs = []
    for n, agent in enumerate(["claude", "claude", "qwen"]):
        tool = "run_shell_command" if agent == "qwen" else "Bash"
        call = {"session_id": SID, "tool_use_id": f"t{n}"}
        pre = run_hook({**pre_tool_payload(tool, {"command": f"ls {n}"}), **call}, {**env, "OMCM_AGENT": agent})
        post = {**post_tool_payload(tool, {"command": f"ls {n}"}, {"llmContent": "x"}), **call}
        outs.append(pre.stdout + run_hook(post, {**env, "OMCM_AGENT": agent}).stdout)
    assert outs == [b"", b"", b""]  # Qwen's first call is its session's first, not Claude's third
    again = run_hook({**pre_tool_payload("Bash", {"command": "ls"}), "session_id": SID, "tool_use_id": "t3"}, env)
    assert "3 consecutive Bash calls" in again.stdout.decode()  # Claude's session counts on: 3


# --- item 4b: Qwen Code's transcript, read by every reader plugins use ---------------------------


def test_replay_reads_a_qwen_transcript(tmp_path):
    path = write(tmp_path / f"{SID}.jsonl", qwen_session())
    payloads = list(replay_transcript(path))
    assert [(p["hook_event_name"], p["tool_name"]) for p in payloads] == [
        ("PreToolUse", "run_shell_command"),
        ("PostToolUse", "run_shell_command"),
        ("PreToolUse", "run_shell_command"),
        ("PostToolUseFailure", "run_shell_command"),
    ]
    assert payloads[1]["tool_response"] == "Output: ok" and payloads[3]["error"] == "bash-guard: denied"
    assert {p["session_id"] for p in payloads} == {f"qwen:{SID}"}


def test_unreported_tool_calls_are_read_from_a_qwen_transcript(tmp_path):
    path = write(tmp_path / f"{SID}.jsonl", qwen_session())
    store = Store(tmp_path / "home")
    try:
        calls = transcript_tail.unreported_calls(store, "guide", [str(path)], settled=True)
    finally:
        store.close()
    assert [(c.tool_use_id, c.tool_name, c.is_error) for c in calls] == [
        ("call_1", "run_shell_command", False),
        ("call_2", "run_shell_command", True),
    ]
    assert calls[1].result == "bash-guard: denied" and calls[1].session_id == f"qwen:{SID}"


def test_memory_l1_reads_a_qwen_transcript(tmp_path):
    pytest.importorskip("omcm_memory_rotation")
    from omcm_memory_rotation.l1 import messages

    path = write(tmp_path / f"{SID}.jsonl", qwen_session())
    got = [(m["role"], m["content"]) for m in messages(path)]
    assert got == [
        ("user", "install the tool"),
        ("assistant", "The tool is installed and the docs are next on my list."),
    ]


def test_persistent_mode_continues_a_qwen_sessions_todo_list(tmp_path):
    """Qwen Code's todo_write takes Claude's TodoWrite input: the Stop is blocked while todos are open."""
    project = tmp_path / "project"
    project.mkdir()
    todos = [("Install the tool", "completed"), ("Write the docs", "pending")]
    path = write(tmp_path / f"{SID}.jsonl", qwen_session(*todos))
    env = {
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "persistent-mode",
        "CLAUDE_PROJECT_DIR": str(project),
        "OMCM__CORE__PLUGIN_BUDGET_MS": "30000",
        "OMCM_AGENT": "qwen",
    }
    stop = {
        "session_id": SID,
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "The tool is installed and the docs are next on my list.",
    }
    out = json.loads(run_hook(stop, env).stdout)
    assert out["decision"] == "block" and "Next task: Write the docs" in out["reason"]


def codex_item(payload: dict) -> dict:
    """One ``response_item`` line of a Codex CLI rollout file."""
    return {"timestamp": OLD, "ordinal": 1, "type": "response_item", "payload": payload}


def codex_session() -> list[dict]:
    """A Codex rollout: metadata, injected context, a prompt, a failing and a passing shell call, the answer."""
    return [
        {"timestamp": OLD, "type": "session_meta", "payload": {"id": SID, "cwd": "/p", "cli_version": "0.171.0"}},
        codex_item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
        codex_item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}
                ],
            }
        ),
        codex_item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        codex_item({"type": "reasoning", "summary": []}),
        codex_item(
            {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "exit 3"}', "call_id": "c1"}
        ),
        codex_item(
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": "Chunk ID: 1\nProcess exited with code 3\nOutput:\n",
            }
        ),
        codex_item({"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}', "call_id": "c2"}),
        codex_item(
            {"type": "function_call_output", "call_id": "c2", "output": "Process exited with code 0\nOutput:\na\n"}
        ),
        codex_item({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c3"}),
        codex_item({"type": "custom_tool_call_output", "call_id": "c3", "output": "Done"}),
        codex_item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "All done here, finally."}],
            }
        ),
        {
            "timestamp": OLD,
            "type": "event_msg",
            "payload": {"type": "task_complete", "last_agent_message": "All done."},
        },
    ]


def test_replay_and_unreported_calls_read_a_codex_rollout(tmp_path):
    path = write(tmp_path / "rollout-2026-11-26T16-56-32.jsonl", codex_session())
    payloads = list(replay_transcript(path))
    assert [(p["hook_event_name"], p["tool_name"]) for p in payloads] == [
        ("PreToolUse", "Bash"),  # as Codex's hooks name its shell: one call to the readers
        ("PostToolUseFailure", "Bash"),
        ("PreToolUse", "Bash"),
        ("PostToolUse", "Bash"),
        ("PreToolUse", "apply_patch"),
        ("PostToolUse", "apply_patch"),
    ]
    assert payloads[0]["tool_input"] == {"command": "exit 3"} and payloads[4]["tool_input"] == {
        "input": "*** Begin Patch"
    }
    store = Store(tmp_path / "home")
    try:
        calls = transcript_tail.unreported_calls(store, "guide", [str(path)], settled=True)
    finally:
        store.close()
    assert [(c.tool_use_id, c.is_error) for c in calls] == [("c1", True), ("c2", False), ("c3", False)]


def test_memory_l1_reads_a_codex_rollout_without_its_injected_context(tmp_path):
    pytest.importorskip("omcm_memory_rotation")
    from omcm_memory_rotation.l1 import messages

    path = write(tmp_path / "rollout.jsonl", codex_session())
    assert [(m["role"], m["content"]) for m in messages(path)] == [
        ("user", "go"),
        ("assistant", "All done here, finally."),
    ]


def gemini_session() -> list[dict]:
    """A Gemini CLI 0.61 chat file: header, ``$set`` updates, a model message appended again with its calls."""
    call = {"id": "run_shell_command__call_1", "name": "run_shell_command", "args": {"command": "curl x | sh"}}
    denied = answer("run_shell_command__call_1", "run_shell_command", error="Tool execution blocked: bash-guard")
    return [
        {"sessionId": SID, "projectHash": "ab", "startTime": OLD, "kind": "main"},
        {
            "$set": {
                "messages": [
                    {"id": "m0", "type": "user", "content": [{"text": "<session_context>\nx\n</session_context>"}]}
                ]
            }
        },
        {"id": "m1", "timestamp": OLD, "type": "user", "content": [{"text": "install the tool"}]},
        {"$set": {"lastUpdated": OLD}},
        {"id": "m2", "timestamp": OLD, "type": "gemini", "content": "", "thoughts": [], "model": "gemini-3.8-flash"},
        {"id": "m2", "timestamp": OLD, "type": "gemini", "content": "", "toolCalls": [{**call, "result": [denied]}]},
        {"id": "m3", "timestamp": OLD, "type": "user", "content": [denied]},
        {"id": "m4", "timestamp": OLD, "type": "gemini", "content": "The tool was not installed: the guard said no."},
    ]


def test_every_reader_reads_a_gemini_chat_file(tmp_path):
    pytest.importorskip("omcm_memory_rotation")
    from omcm_memory_rotation.l1 import messages

    path = write(tmp_path / "session-2026-11-26T17-10-d29d57d7.jsonl", gemini_session())
    payloads = list(replay_transcript(path))
    assert [(p["hook_event_name"], p["tool_name"]) for p in payloads] == [
        ("PreToolUse", "run_shell_command"),
        ("PostToolUseFailure", "run_shell_command"),
    ]
    assert payloads[1]["error"] == "Tool execution blocked: bash-guard"
    store = Store(tmp_path / "home")
    try:
        calls = transcript_tail.unreported_calls(store, "guide", [str(path)], settled=True)
    finally:
        store.close()
    assert [(c.tool_use_id, c.is_error) for c in calls] == [("run_shell_command__call_1", True)]
    assert [(m["role"], m["content"]) for m in messages(path)] == [
        ("user", "install the tool"),
        ("assistant", "The tool was not installed: the guard said no."),
    ]


def test_a_transcript_no_reader_knows_gives_nothing_and_no_error(tmp_path):
    """A chat file as one JSON document (older Gemini CLI), not lines: every reader finds nothing, none fails."""
    chat = {"sessionId": SID, "messages": [{"type": "user", "content": [{"text": "hi"}]}]}
    path = tmp_path / "session-2026-11-26.json"
    path.write_text(json.dumps(chat, indent=2))
    assert list(replay_transcript(path)) == []
    store = Store(tmp_path / "home")
    try:
        assert transcript_tail.unreported_calls(store, "guide", [str(path)], settled=True) == []
    finally:
        store.close()
    proc = run_hook(
        {**pre_tool_payload("run_shell_command", {"command": "ls"}), "transcript_path": str(path)},
        {"OMCM_HOME": str(tmp_path / "h"), "OMCM_LOAD_PLUGINS": "pre-tool-guide", "OMCM_AGENT": "qwen"},
    )
    assert proc.returncode == 0  # strict run_hook: no plugin failed
