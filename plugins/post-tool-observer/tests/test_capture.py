"""Per-tool compression, truncation and metadata (seed 003 §3, §6)."""

from omcm_core.testing import event_from as parse_event
from omcm_post_tool_observer.capture import MARKER, observation, output_and_metadata, truncate


def test_more_than_100_lines_keeps_head_50_and_tail_50():
    text = "\n".join(f"line {i}" for i in range(300))
    out = truncate(text)
    head, tail = out.split(MARKER)
    assert head.split("\n") == [f"line {i}" for i in range(50)]
    assert tail.split("\n") == [f"line {i}" for i in range(250, 300)]


def test_nothing_exceeds_10_kb():
    assert len(truncate("x" * 50_000)) <= 10_000
    assert truncate("short") == "short"


def test_read_keeps_file_type_and_line_count():
    response = {"type": "text", "file": {"filePath": "/p/app.ts", "content": "a\nb\nc", "numLines": 3, "totalLines": 547}}
    out, meta = output_and_metadata("Read", {"file_path": "/p/app.ts"}, response, None)
    assert out == "a\nb\nc" and meta == {"filePath": "/p/app.ts", "fileType": "typescript", "lineCount": 547}


def test_bash_keeps_output_and_exit_code():
    out, meta = output_and_metadata("Bash", {"command": "npm test"}, {"stdout": "42 passed", "stderr": "warn"}, None)
    assert out == "42 passed\n[stderr]\nwarn" and meta == {"command": "npm test", "exitCode": 0}
    _, failed = output_and_metadata("Bash", {"command": "false"}, None, "Exit code 2\nboom")
    assert failed["exitCode"] == 2


def test_grep_and_glob_store_file_lists_only():
    response = {"mode": "files_with_matches", "filenames": ["/a.py", "/b.py"], "numFiles": 2, "content": "secret body"}
    out, meta = output_and_metadata("Grep", {"pattern": "async def"}, response, None)
    assert out == "/a.py\n/b.py" and meta == {"pattern": "async def", "matchCount": 2}


def test_webfetch_keeps_500_characters_and_status():
    out, meta = output_and_metadata("WebFetch", {"url": "https://x.test"}, {"result": "y" * 2000, "code": 200}, None)
    assert len(out) == 500 and meta == {"url": "https://x.test", "statusCode": 200}


def test_unknown_shapes_are_stored_not_dropped():
    out, _ = output_and_metadata("mcp__srv__thing", {}, {"weird": [1, {"deep": True}]}, None)
    assert '"deep": true' in out
    out, _ = output_and_metadata("LS", {"path": "/p"}, "- /p/\n  - a.py", None)
    assert "a.py" in out


def test_observation_masks_input_output_and_error():
    event = parse_event({
        "hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_name": "Bash",
        "tool_input": {"command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstu' https://api"},
        "error": "Exit code 1\nAKIAIOSFODNN7EXAMPLE rejected",
    })
    obs = observation(event, 12.0, 1, 3)
    text = repr(obs)
    assert "abcdefghijklmnopqrstu" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    assert obs["success"] is False and obs["durationMs"] == 12.0 and (obs["promptIndex"], obs["toolIndex"]) == (1, 3)
