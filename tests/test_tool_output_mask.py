"""[core] mask_tool_output (issue 34 item 6): the output Claude sees is masked, through real `omcm hook`."""

import json

import pytest

from omcm_core.testing import post_tool_payload, run_hook
from omcm_core.tool_output_mask import client_version

TOKEN = "gh" + "p_" + "Zr8kQ2mV9xLp4Tn7Wc1bYd5Hs3Jf6aB0cD9e"


def _transcript(tmp_path, version: str | None):
    path = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": "hi"}}]
    if version:
        lines[0]["version"] = version
    # A tool's output cannot pose as the client: its "version" sits inside a string or an object.
    lines.append({"type": "user", "toolUseResult": {"version": "9.9.9"}, "version": version} if version else {})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return str(path)


def _call(tmp_path, transcript, enabled: str | None, project: str | None = None):
    env = {"OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(tmp_path / "project")}
    (tmp_path / "project").mkdir(exist_ok=True)
    if enabled is not None:
        (tmp_path / "home").mkdir(exist_ok=True)
        (tmp_path / "home" / "config.toml").write_text(f"[core]\nmask_tool_output = {enabled}\n")
    if project is not None:
        (tmp_path / "project" / ".claude").mkdir(exist_ok=True)
        (tmp_path / "project" / ".claude" / "omcm.toml").write_text(f"[core]\nmask_tool_output = {project}\n")
    response = {"stdout": f"token: {TOKEN}\nok", "stderr": "", "interrupted": False, "isImage": False}
    payload = post_tool_payload(
        "Bash", {"command": "cat .env"}, response, transcript_path=transcript, cwd=str(tmp_path / "project")
    )
    proc = run_hook(json.dumps(payload).encode(), env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.decode()
    return json.loads(out) if out.strip() else None


def test_on_the_output_claude_sees_is_masked_in_its_own_shape(tmp_path):
    answer = _call(tmp_path, _transcript(tmp_path, "2.1.330"), "true")
    updated = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert set(updated) == {"stdout", "stderr", "interrupted", "isImage"}
    assert TOKEN not in json.dumps(answer) and updated["stdout"] == "token: [REDACTED:github-token]\nok"


def test_off_by_default(tmp_path):
    answer = _call(tmp_path, _transcript(tmp_path, "2.1.330"), None)
    assert "updatedToolOutput" not in json.dumps(answer)


@pytest.mark.parametrize("version", ["2.1.120", None])
def test_an_old_or_unknown_client_gets_no_field(tmp_path, version):
    answer = _call(tmp_path, _transcript(tmp_path, version), "true")
    assert "updatedToolOutput" not in json.dumps(answer)


def test_a_project_may_switch_it_on_but_never_off(tmp_path):
    on = _call(tmp_path / "a", _transcript(_mk(tmp_path / "a"), "2.1.330"), "false", project="true")
    assert "updatedToolOutput" in json.dumps(on)
    off = _call(tmp_path / "b", _transcript(_mk(tmp_path / "b"), "2.1.330"), "true", project="false")
    assert "updatedToolOutput" in json.dumps(off)


def test_nothing_to_mask_sends_nothing(tmp_path):
    transcript = _transcript(tmp_path, "2.1.330")
    env = {"OMCM_HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[core]\nmask_tool_output = true\n")
    payload = post_tool_payload(
        "Bash", {"command": "ls"}, {"stdout": "a.txt", "stderr": ""}, transcript_path=transcript
    )
    proc = run_hook(json.dumps(payload).encode(), env=env)
    assert "updatedToolOutput" not in proc.stdout.decode()


def test_the_version_is_the_clients_not_a_tools(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"type": "user", "version": "2.1.100"})
        + "\n"
        + json.dumps(
            {"type": "user", "message": {"content": '{"version": "2.1.999"}'}, "toolUseResult": {"version": "3"}}
        )
        + "\n"
    )
    assert client_version(str(path)) == (2, 1, 100)
    assert client_version(str(tmp_path / "missing.jsonl")) is None


def _mk(path):
    path.mkdir(parents=True, exist_ok=True)
    return path
