"""detect-secrets as masking's second pass: what it adds, and that PreToolUse never pays for importing it."""

import ast
import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core import _redact_library
from omcm_core.redact import mask, mask_structured
from omcm_core.store import Store

CLIENT_DIR = Path(__file__).resolve().parents[1] / "omcm_core" / "_runtime"
NOT_A_BUDGET_TEST = {"OMCM__CORE__PLUGIN_BUDGET_MS": "60000"}


def _hex(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _mailchimp(seed: int = 1) -> str:
    """A shape only the library knows (omcm's own rules have no Mailchimp rule)."""
    return _hex(32, seed) + "-us" + str(10 + seed % 9)


def test_the_library_masks_what_the_rules_do_not_know():
    key = _mailchimp()
    text = f"mailchimp key {key} for the newsletter"
    assert key in mask(text, library=False)
    masked = mask(text)
    assert key not in masked and masked.startswith("mailchimp key ") and masked.endswith(" for the newsletter")
    assert key not in json.dumps(mask_structured({"note": text}))


def test_a_broken_library_leaves_omcm_rules_in_charge(monkeypatch):
    class Broken:
        def analyze_string(self, line):
            raise RuntimeError("a detector's bug")

    monkeypatch.setitem(_redact_library._state, "detectors", [Broken()])
    token = "gh" + "p_" + "".join(random.Random(3).choice(string.ascii_letters) for _ in range(36))
    assert mask(f"token {token} and {_mailchimp()}").startswith("token [REDACTED:github-token] and ")


def _cold_call(env: dict, payload: dict) -> dict:
    """What fast_hook.py does, in process (OMCM_DAEMON=0): the answer and the modules imported."""
    code = (
        "import sys; del sys.path[0]; sys.path.insert(0, sys.argv[1]); import client; del sys.path[0];"
        "code, out, err = client.answer([], sys.stdin.buffer.read()); client.run_later();"
        "sys.stderr.write(repr({'out': out, 'modules': sorted(sys.modules)}))"
    )
    environ = {k: v for k, v in os.environ.items() if k not in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS")}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, str(CLIENT_DIR)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**environ, "OMCM_DAEMON": "0", "OMCM_LOG_LEVEL": "debug", **NOT_A_BUDGET_TEST, **env},
        check=True,
    )
    return ast.literal_eval(proc.stderr.decode().strip().splitlines()[-1])


def _transcript(path: Path, secret: str) -> None:
    """A failed Edit no hook reported, whose input and error hold ``secret``: the guide learns it on PreToolUse."""
    use = {
        "type": "assistant",
        "sessionId": "s1",
        "cwd": str(path.parent),
        "timestamp": "2026-01-02T03:04:05.678Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "a.py", "x": secret}}],
        },
    }
    result = {
        "type": "user",
        "sessionId": "s1",
        "cwd": str(path.parent),
        "timestamp": "2026-01-02T03:04:05.678Z",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": f"String not found {secret}"}
            ],
        },
    }
    path.write_text(json.dumps(use) + "\n" + json.dumps(result) + "\n")


@pytest.mark.slow
def test_a_cold_pre_tool_call_records_without_importing_the_library(tmp_path):
    home, transcript = tmp_path / "home", tmp_path / "t.jsonl"
    token = "gh" + "p_" + "".join(random.Random(5).choice(string.ascii_letters) for _ in range(36))
    _transcript(transcript, f"token {token}")
    payload = {
        "session_id": "s1",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "t2",
    }
    result = _cold_call({"OMCM_HOME": str(home)}, payload)
    assert "omcm_core.redact" in result["modules"], "nothing was masked: the test lost its point"
    assert not [m for m in result["modules"] if m.split(".")[0] in ("detect_secrets", "requests", "yaml")]
    store = Store(home)
    try:
        rows = store.query("SELECT input, result FROM transcript_calls")
    finally:
        store.close()
    assert rows and token not in json.dumps(rows) and "[REDACTED:github-token]" in json.dumps(rows)


@pytest.mark.slow
def test_a_cold_post_tool_call_masks_with_the_library(tmp_path):
    home, key = tmp_path / "home", _mailchimp(7)
    payload = {
        "session_id": "s1",
        "transcript_path": str(tmp_path / "none.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"echo {key}"},
        "tool_response": {"stdout": f"{key}\n", "stderr": "", "interrupted": False},
        "tool_use_id": "t3",
    }
    result = _cold_call({"OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": "post-tool-observer"}, payload)
    assert "detect_secrets" in result["modules"]
    data = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert b"echo [REDACTED:library]" in data and key.encode() not in data
