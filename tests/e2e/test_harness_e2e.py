"""The harness itself: the fake API speaks the Messages protocol, the client's hook timings and compaction are readable."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import pytest
from claude_client import ClientUnavailable, install_client
from e2e_harness import TODO_WRITE_ENV
from fake_anthropic import COMPACTION_MARK, FakeAnthropic, bash, compact_after, text, tool_use

AGENT_TOOLS = [
    {"name": "Bash", "input_schema": {"type": "object"}},
    {"name": "Read", "input_schema": {"type": "object"}},
]


def _post(api, path, body):
    request = urllib.request.Request(
        api.base_url + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers.get("content-type"), reply.read().decode()


def _sse(raw):
    events = []
    for chunk in raw.strip().split("\n\n"):
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        events.append((name[7:], json.loads(data[6:])))
    return events


def test_fake_api_streams_scripted_turns_and_answers_side_requests_aside():
    call = bash("echo hi", id="toolu_fixed")
    with FakeAnthropic([[text("let me look"), call]], final_text="fine") as api:
        side = json.loads(_post(api, "/v1/messages", {"messages": [{"role": "user", "content": "a title"}]})[1])
        kind, raw = _post(
            api,
            "/v1/messages?beta=true",
            {"stream": True, "tools": AGENT_TOOLS, "messages": [{"role": "user", "content": "go"}]},
        )
        after = json.loads(
            _post(api, "/v1/messages", {"tools": AGENT_TOOLS, "messages": [{"role": "user", "content": "go"}]})[1]
        )
        counted = json.loads(_post(api, "/v1/messages/count_tokens", {"messages": []})[1])
        with pytest.raises(urllib.error.HTTPError) as missing:
            _post(api, "/v1/elsewhere", {})
        missing.value.close()
    assert side["content"] == [text("fine")] and side["stop_reason"] == "end_turn"
    assert kind == "text/event-stream"
    events = _sse(raw)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in events)
    assert events[0][1]["message"]["content"] == [] and events[0][1]["message"]["stop_reason"] is None
    assert events[4][1]["content_block"] == {**call, "input": {}}
    assert json.loads(events[5][1]["delta"]["partial_json"]) == call["input"]
    assert events[7][1]["delta"]["stop_reason"] == "tool_use"
    assert after["content"] == [text("fine")]  # the script is used up: the loop gets final_text
    assert counted["input_tokens"] >= 1
    assert missing.value.code == 404 and api.unknown_paths == ["POST /v1/elsewhere"]
    assert [r.main_loop for r in api.requests] == [False, True, True, False, False]
    assert api.turns_served == 1


def test_a_summary_request_is_answered_aside():
    summary_request = {
        "tools": AGENT_TOOLS,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": f"Your task is to {COMPACTION_MARK} so far."}]},
            {"role": "system", "content": "PreToolUse:Bash hook additional context: x"},
        ],
    }
    with FakeAnthropic([[text("scripted")]]) as api:
        answer = json.loads(_post(api, "/v1/messages", summary_request)[1])
    assert "<summary>" in answer["content"][0]["text"]
    assert api.turns_served == 0 and not api.requests[0].main_loop


@pytest.mark.e2e
def test_hook_durations_for_omcm_and_a_bare_hook(e2e):
    bare = f"{sys.executable} -S -c pass"
    e2e.add_hook("PreToolUse", bare)
    run = e2e.session([[bash("echo timed")], [text("ok")]], prompt="time the hooks")
    assert run.returncode == 0, run.explain()
    timings = run.hook_durations()
    pre = sorted((t.command == bare, t.name) for t in timings if t.event == "PreToolUse")
    assert pre == [(False, "PreToolUse:Bash"), (True, "PreToolUse:Bash")]
    assert all(t.status == 0 and t.ms > 0 for t in timings if t.event != "SessionEnd")
    # Every hook run the stream reports (SessionEnd aside), the debug log timed.
    streamed = sorted(e["hook_name"] for e in run.hook_events(subtype="hook_response"))
    timed = sorted(t.name for t in timings if t.event != "SessionEnd")
    assert [name for name in streamed if not name.startswith("SessionEnd")] == timed
    omcm = [t for t in timings if t.command != bare]  # the native client or the Python one, as omcm install chose
    assert all("fast_hook.py" in t.command or "omcm-hook-" in t.command for t in omcm)
    assert {t.event for t in omcm} == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    }


@pytest.mark.e2e
def test_manual_compact_on_resume(e2e):
    first = e2e.session([[bash("echo before-compaction")], [text("first part done")]], prompt="start")
    compacted = e2e.session(prompt="/compact", resume=first.session_id)
    assert compacted.returncode == 0, compacted.explain()
    assert [c["compact_metadata"]["trigger"] for c in compacted.compactions] == ["manual"]
    assert [e["hook_name"] for e in compacted.hook_events("SessionStart", subtype="hook_response")] == [
        "SessionStart:resume",
        "SessionStart:compact",
    ]
    assert compacted.main_requests == [] and len(compacted.requests) == 1  # only the summary request
    later = e2e.session([[text("continuing")]], prompt="go on", resume=first.session_id)
    assert "The user asked for a scripted test session" in later.main_requests[0].all_text()
    assert "echo before-compaction" not in json.dumps(later.main_requests[0].messages)


@pytest.mark.e2e
def test_automatic_compaction_mid_session(e2e):
    script = [[bash("echo one")], [bash("echo two")], compact_after([bash("echo three")]), [text("after")]]
    run = e2e.session(script, prompt="keep going")
    assert run.returncode == 0, run.explain()
    assert [c["compact_metadata"]["trigger"] for c in run.compactions] == ["auto"]
    assert run.turns_served == 4 and len(run.main_requests) == 4
    assert "SessionStart:compact" in [e["hook_name"] for e in run.hook_events("SessionStart", subtype="hook_response")]
    last = run.main_requests[-1]
    assert "The user asked for a scripted test session" in last.all_text()
    assert "echo one" not in json.dumps(last.messages)


@pytest.mark.e2e
def test_a_stop_hook_that_blocks_sends_the_loop_around_again(e2e_factory):
    # A bare hook, not omcm: shows how a Stop block reaches the model and how turns are counted.
    e2e = e2e_factory(install_hooks=False)
    marker = e2e.root / "blocked-once"
    hook = e2e.root / "stop_once.py"
    hook.write_text(
        "import json, pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.touch()\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'e2e: the tests are not run yet'}))\n"
    )
    e2e.add_hook("Stop", f"{sys.executable} -S {hook}")
    run = e2e.session([[text("all done, I think")], [text("now really done")]], prompt="finish")
    assert run.returncode == 0, run.explain()
    assert run.turns_served == 2 and len(run.main_requests) == 2
    assert "e2e: the tests are not run yet" in run.main_requests[1].all_text()
    assert run.result["result"] == "now really done"
    assert [e["hook_name"] for e in run.hook_events("Stop", subtype="hook_response")] == ["Stop", "Stop"]


@pytest.mark.e2e
def test_todowrite_is_offered_only_with_its_environment(e2e_factory):
    todo = tool_use(
        "TodoWrite", {"todos": [{"content": "step one", "status": "in_progress", "activeForm": "doing step one"}]}
    )
    plain = e2e_factory(name="plain").session([[todo], [text("ok")]], prompt="plan")
    assert "No such tool available: TodoWrite" in plain.tool_result(todo["id"])[0]
    todo = tool_use("TodoWrite", todo["input"])
    enabled = e2e_factory(name="todo", extra_env=TODO_WRITE_ENV).session([[todo], [text("ok")]], prompt="plan")
    assert enabled.tool_result(todo["id"]) == (
        "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
        "progress. Please proceed with the current tasks if applicable",
        False,
    )
    assert [e["hook_name"] for e in enabled.hook_events(subtype="hook_response") if "TodoWrite" in e["hook_name"]] == [
        "PreToolUse:TodoWrite",
        "PostToolUse:TodoWrite",
    ]


def test_install_without_npm_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("OMCM_E2E_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools-here"))
    with pytest.raises(ClientUnavailable, match="npm is not on PATH"):
        install_client("2.1.330")


@pytest.mark.e2e
def test_file_tool_calls_the_client_rejects_fire_no_hook(e2e):
    # What pre-tool-guide can learn from: in 2.1.330 these common Edit/Write failures
    # are caught before PreToolUse, so no hook (and no PostToolUseFailure) sees them.
    (e2e.project / "notes").write_text("a file, not a folder\n")
    (e2e.project / "app.py").write_text("x = 1\n")
    write = tool_use("Write", {"file_path": str(e2e.project / "notes" / "todo.txt"), "content": "one\n"})
    edit = tool_use("Edit", {"file_path": str(e2e.project / "app.py"), "old_string": "y = 9", "new_string": "y = 0"})
    run = e2e.session([[write], [edit], [bash("false")], [text("ok")]], prompt="try")
    assert run.tool_result(write["id"])[0].startswith("<tool_use_error>Error calling tool (Write): ENOTDIR")
    assert run.tool_result(edit["id"])[0].startswith("<tool_use_error>String to replace not found in file.")
    assert [e["hook_name"] for e in run.hook_events(subtype="hook_response") if "Tool" in e["hook_name"]] == [
        "PreToolUse:Bash",
        "PostToolUseFailure:Bash",
    ]
