"""post-tool-observer records the failures no hook reported, read from the transcript."""

import json
import os
import subprocess
import sys

from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, run_hook

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
OLD = "2026-01-02T03:04:05.678Z"


def entry(kind, block):
    return {
        "type": kind,
        "sessionId": "s1",
        "cwd": "/srv",
        "timestamp": OLD,
        "message": {"role": kind, "content": [block]},
    }


def test_an_edit_refused_before_it_ran_is_recorded_masked_and_found_once(tmp_path):
    home = tmp_path / "home"
    env = {**ENV, "OMCM_HOME": str(home)}
    transcript = tmp_path / "s1.jsonl"
    secret = "ghp_" + "a1B2c3D4" * 5
    lines = [
        entry(
            "assistant",
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Edit",
                "input": {"file_path": "/srv/settings.py", "old_string": f"TOKEN = '{secret}'", "new_string": "x"},
            },
        ),
        entry(
            "user",
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "is_error": True,
                "content": "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
            },
        ),
        entry(
            "assistant", {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/srv/settings.py"}}
        ),
        entry("user", {"type": "tool_result", "tool_use_id": "t2", "content": "TOKEN = ..."}),
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = post_tool_payload(
        "Read",
        {"file_path": "/srv/settings.py"},
        {"type": "text"},
        session_id="s1",
        transcript_path=str(transcript),
        tool_use_id="t2",
    )
    for _ in range(2):  # a second call finds nothing new, and the same call reported twice is one record
        assert run_hook(read, env=env).returncode == 0
    recorded = Store(home).query(
        "SELECT tool_use_id, tool_name, success, payload_json FROM observer_events ORDER BY id"
    )
    assert sorted((r[0], r[1], r[2]) for r in recorded) == [("t1", "Edit", 0), ("t2", "Read", 1)]
    assert secret not in json.dumps(recorded)
    search = subprocess.run(
        [sys.executable, "-m", "omcm_core", "search", "settings", "--failures", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    (hit,) = json.loads(search.stdout)["results"]
    assert (hit["tool"], hit["success"], hit["file"]) == ("Edit", False, "/srv/settings.py")
    assert "File has not been read yet" in hit["error"] and secret not in hit["output"]
