"""The harness itself: the fake API speaks the Messages protocol, the client's hook timings and compaction are readable."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import pytest
from fake_anthropic import COMPACTION_MARK, FakeAnthropic, bash, compact_after, text

AGENT_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}, {"name": "Read", "input_schema": {"type": "object"}}]


def _post(api, path, body):
    request = urllib.request.Request(api.base_url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
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
        kind, raw = _post(api, "/v1/messages?beta=true", {"stream": True, "tools": AGENT_TOOLS, "messages": [{"role": "user", "content": "go"}]})
        after = json.loads(_post(api, "/v1/messages", {"tools": AGENT_TOOLS, "messages": [{"role": "user", "content": "go"}]})[1])
        counted = json.loads(_post(api, "/v1/messages/count_tokens", {"messages": []})[1])
        with pytest.raises(urllib.error.HTTPError) as missing:
            _post(api, "/v1/elsewhere", {})
        missing.value.close()
    assert side["content"] == [text("fine")] and side["stop_reason"] == "end_turn"
    assert kind == "text/event-stream"
    events = _sse(raw)
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
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
    summary_request = {"tools": AGENT_TOOLS, "messages": [
        {"role": "user", "content": [{"type": "text", "text": f"Your task is to {COMPACTION_MARK} so far."}]},
        {"role": "system", "content": "PreToolUse:Bash hook additional context: x"}]}
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
    assert {t.event for t in timings if "fast_hook.py" in t.command} == {
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SessionEnd"}


@pytest.mark.e2e
def test_manual_compact_on_resume(e2e):
    first = e2e.session([[bash("echo before-compaction")], [text("first part done")]], prompt="start")
    compacted = e2e.session(prompt="/compact", resume=first.session_id)
    assert compacted.returncode == 0, compacted.explain()
    assert [c["compact_metadata"]["trigger"] for c in compacted.compactions] == ["manual"]
    assert [e["hook_name"] for e in compacted.hook_events("SessionStart", subtype="hook_response")] == [
        "SessionStart:resume", "SessionStart:compact"]
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
