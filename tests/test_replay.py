"""Replaying real transcripts yields the hook payloads Claude Code would have sent."""

import json

from omcm_core._runtime.payload import parse_event
from omcm_core.transcripts import failed_results, replay_transcript

# From fixtures/SOURCES.md: tool_use/tool_result pairs and error results per transcript.
EXPECTED = {
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": (167, 23),
    "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": (21, 3),
    "55604662-cf2a-4331-851a-ec234028f8ca.jsonl": (2, 2),
    "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl": (16, 0),
    "a4a31c95-8dfb-4105-8052-c74bd6fb249c.jsonl": (53, 4),
    "agent-a2898e3.jsonl": (33, 8),
    "agent-afc096d.jsonl": (48, 2),
}


def test_pairs_and_failures_match_the_documented_counts(shared_fixtures):
    files = {p.name: p for p in (shared_fixtures / "transcripts").rglob("*.jsonl")}
    assert set(files) == set(EXPECTED)
    total_failures = 0
    for name, (pairs, failures) in EXPECTED.items():
        payloads = list(replay_transcript(files[name]))
        pre = [p for p in payloads if p["hook_event_name"] == "PreToolUse"]
        post = [p for p in payloads if p["hook_event_name"] != "PreToolUse"]
        assert (len(pre), len(post), failed_results(files[name])) == (pairs, pairs, failures), name
        total_failures += failures
    assert total_failures == 42


def test_each_result_follows_its_call_and_parses_as_an_event(shared_fixtures):
    path = shared_fixtures / "transcripts" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    seen = set()
    for payload in replay_transcript(path):
        event = parse_event(json.loads(json.dumps(payload)))
        assert event.session_id == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
        if payload["hook_event_name"] == "PreToolUse":
            seen.add(payload["tool_use_id"])
        else:
            assert payload["tool_use_id"] in seen
            if payload["hook_event_name"] == "PostToolUseFailure":
                assert event.succeeded is False and event.error
            else:
                assert event.tool_response is not None


def test_bash_failure_text_is_the_tool_result(shared_fixtures):
    path = (
        shared_fixtures / "transcripts" / "6c2214d7-b87e-4432-8e41-22ba294ea584" / "subagents" / "agent-afc096d.jsonl"
    )
    errors = [p["error"] for p in replay_transcript(path) if p["hook_event_name"] == "PostToolUseFailure"]
    assert any(e.startswith("Exit code 127") and "tree" in e for e in errors)


def test_damaged_lines_are_skipped(tmp_path):
    path = tmp_path / "t.jsonl"
    use = {
        "type": "assistant",
        "sessionId": "s",
        "cwd": "/p",
        "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/a"}}]},
    }
    result = {
        "type": "user",
        "sessionId": "s",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
        "toolUseResult": {"type": "text"},
    }
    path.write_text("{broken\n" + json.dumps(use) + "\n[1]\n" + json.dumps(result) + "\n")
    names = [p["hook_event_name"] for p in replay_transcript(path)]
    assert names == ["PreToolUse", "PostToolUse"]
