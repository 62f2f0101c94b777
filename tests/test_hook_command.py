"""`omcm hook` end to end, as Claude Code runs it: a real process fed real JSON."""

import json

import pytest

from omcm_core.testing import assert_valid_response, pre_tool_payload, run_hook


@pytest.mark.slow
def test_every_real_payload_gives_nothing_or_valid_json_with_all_plugins(shared_fixtures, tmp_path):
    env = {"OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(tmp_path / "project")}
    (tmp_path / "project").mkdir()
    files = sorted((shared_fixtures / "hook-payloads").glob("*.json"))
    assert len(files) >= 100
    for path in files:
        payload = json.loads(path.read_text(encoding="utf-8"))
        proc = run_hook(path.read_bytes(), env=env)
        assert proc.returncode == 0, (path.name, proc.stderr[-2000:])
        out = proc.stdout.decode()
        assert out.count("\n") <= 1 and "Traceback" not in out, path.name
        assert_valid_response(payload["hook_event_name"], json.loads(out) if out.strip() else None)


def test_argv_event_that_disagrees_is_ignored(tmp_path):
    proc = run_hook(pre_tool_payload("Read"), env={"OMCM_HOME": str(tmp_path)}, event="PostToolUse")
    assert proc.returncode == 0 and proc.stdout == b""
    assert "does not match" in (tmp_path / "logs" / "omcm.jsonl").read_text()


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1,2]", b"\xff\xfe", b'{"hook_event_name": "PreToolUse"'])
def test_bad_input_exits_zero_silently_with_a_log_line(tmp_path, raw):
    proc = run_hook(raw, env={"OMCM_HOME": str(tmp_path)})
    assert proc.returncode == 0
    assert proc.stdout == b""
    lines = [json.loads(line) for line in (tmp_path / "logs" / "omcm.jsonl").read_text().splitlines()]
    assert [entry["event"] for entry in lines] == ["bad_payload"]


def test_python_dash_m_and_console_script_agree(tmp_path):
    pytest.importorskip("omcm_tool_counter", reason="tool-counter gives the answer compared (tox cell core: alone)")
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "omcm"
    payload = json.dumps(pre_tool_payload("Bash", {"command": "ls"})).encode()
    # A real plugin that answers this very call (tool-counter at a threshold of one Bash call),
    # each route with a fresh home so neither sees the other's count.
    env = {
        "OMCM_LOAD_PLUGINS": "tool-counter",
        "OMCM__TOOL_COUNTER__BASH_THRESHOLD": "1",
        "OMCM_DAEMON": "0",
        "LANG": "en_US.UTF-8",
    }
    a = run_hook(payload, env={**env, "OMCM_HOME": str(tmp_path / "a")})
    b = subprocess.run(
        [str(script), "hook"],
        input=payload,
        capture_output=True,
        env={**__import__("os").environ, **env, "OMCM_HOME": str(tmp_path / "b")},
    )
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout)
    assert a.returncode == 0 and "Bash" in json.loads(a.stdout)["hookSpecificOutput"]["additionalContext"]
