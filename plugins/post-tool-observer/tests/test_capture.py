"""Per-tool compression, truncation and metadata of the stored observation."""

from omcm_post_tool_observer.capture import MARKER, observation, output_and_metadata, truncate

from omcm_core.testing import event_from as parse_event


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
    response = {
        "type": "text",
        "file": {"filePath": "/p/app.ts", "content": "a\nb\nc", "numLines": 3, "totalLines": 547},
    }
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
    event = parse_event(
        {
            "hook_event_name": "PostToolUseFailure",
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": {"command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstu' https://api"},
            "error": "Exit code 1\nAKIAIOSFODNN7EXAMPLE rejected",
        }
    )
    obs = observation(event, 12.0, 1, 3)
    text = repr(obs)
    assert "abcdefghijklmnopqrstu" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    assert obs["success"] is False and obs["durationMs"] == 12.0 and (obs["promptIndex"], obs["toolIndex"]) == (1, 3)


def _bash(output: str, tool_input=None) -> dict:
    return parse_event(
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": tool_input or {"command": "cat key"},
            "tool_response": {"stdout": output, "stderr": ""},
        }
    )


def test_a_private_key_whose_begin_line_is_cut_away_is_still_masked():
    # 300 lines: the key starts at line 200, so the head/tail cut keeps 30 body lines but not BEGIN.
    body = [f"MIIEow{i:04d}" + "Q" * 54 for i in range(80)]
    lines = [f"log {i}" for i in range(200)] + [
        "-----BEGIN RSA PRIVATE KEY-----",
        *body,
        "-----END RSA PRIVATE KEY-----",
    ]
    lines += [f"tail {i}" for i in range(300 - len(lines))]
    obs = observation(_bash("\n".join(lines)), 1.0, 1, 1)
    assert not any(line in obs["toolOutput"] for line in body)
    assert "log 0" in obs["toolOutput"] and "tail" in obs["toolOutput"]


def test_a_token_straddling_the_10_kb_cut_leaves_no_prefix():
    token = "ghp_" + "Abc123XyZ9" * 4
    half = (10_000 - len(MARKER)) // 2
    text = "x" * (half - 15) + " " + token + " " + "y" * 12_000  # the cut falls 14 characters into the token
    obs = observation(_bash(text), 1.0, 1, 1)
    assert token[:10] not in obs["toolOutput"] and len(obs["toolOutput"]) <= 10_000


def test_structured_input_is_masked_by_key_name():
    event = parse_event(
        {
            "hook_event_name": "PostToolUse",
            "session_id": "s",
            "tool_name": "mcp__db__connect",
            "tool_input": {
                "host": "db.internal",
                "password": "plain-hunter2",
                "api_key": "plainkey77",
                "options": {"token": "t0k3nvalue"},
            },
            "tool_response": {"ok": True},
        }
    )
    obs = observation(event, 1.0, 1, 1)
    text = repr(obs)
    assert "plain-hunter2" not in text and "plainkey77" not in text and "t0k3nvalue" not in text
    assert obs["toolInput"]["host"] == "db.internal" and obs["toolInput"]["password"] == "[REDACTED]"


def test_command_line_passwords_are_masked_in_input_and_metadata():
    command = "mysql -u root -pS3cretPw42 prod && curl -u admin:S3cretPw43 https://x && sshpass -p S3cretPw44 ssh h"
    obs = observation(_bash("ok", {"command": command}), 1.0, 1, 1)
    text = repr(obs)
    assert not any(f"S3cretPw4{i}" in text for i in (2, 3, 4))
