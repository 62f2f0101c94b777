"""The project is untrusted: planted symlinks, hard links and FIFOs are refused, never followed."""

import json
import os
from pathlib import Path

import pytest

from omcm_core.testing import post_tool_payload, run_hook, session_start_payload


def agent_answer(text):
    return post_tool_payload(
        "Agent", {"prompt": "p"}, {"status": "completed", "content": [{"type": "text", "text": text}]}
    )


def out_of(proc):
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout) if proc.stdout else None


def log_events(env):
    path = Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "id_ed25519"
    path.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret bytes\n## Priority Context\nsecret line\n")
    return path


def plant(project, secret, where):
    omc = project / ".omc"
    if where == ".omc":
        outside = secret.parent / "outside-dir"
        outside.mkdir()
        (outside / "notepad.md").write_text("## Priority Context\nsecret line\n")
        omc.symlink_to(outside)
        return outside / "notepad.md"
    omc.mkdir()
    if where == "notepad.md":
        (omc / "notepad.md").symlink_to(secret)
    elif where == "hard link":
        os.link(secret, omc / "notepad.md")
    elif where == "lock":
        (omc / "notepad.md").write_text("## Priority Context\nfine\n")
        (omc / ".notepad.lock").symlink_to(secret.parent / "created-by-the-lock")
    return secret


@pytest.mark.parametrize("where", [".omc", "notepad.md", "hard link"])
def test_a_planted_link_is_neither_read_nor_written(env, project, secret, where):
    target = plant(project, secret, where)
    before = target.read_bytes()
    out = out_of(run_hook(session_start_payload(source="compact"), env=env))
    assert out is None  # nothing of the target reaches Claude
    assert out_of(run_hook(agent_answer("<remember priority>overwrite</remember>"), env=env)) is None
    assert target.read_bytes() == before
    refused = [e for e in log_events(env) if e["event"] == "notepad_refused"]
    assert len(refused) >= 2 and all(e["level"] == "warning" and e["why"] for e in refused)
    if where == "hard link":
        assert all("2 hard links" in e["why"] for e in refused)


def test_a_planted_lock_symlink_creates_nothing_outside(env, project, secret):
    plant(project, secret, "lock")
    assert out_of(run_hook(agent_answer("<remember>x</remember>"), env=env)) is None
    assert not (secret.parent / "created-by-the-lock").exists()
    [why] = [e["why"] for e in log_events(env) if e["event"] == "notepad_refused"]
    assert why.startswith("refused .omc/.notepad.lock: is a symlink")


def test_a_fifo_does_not_hang_the_hook(env, project):
    (project / ".omc").mkdir()
    os.mkfifo(project / ".omc" / "notepad.md")
    proc = run_hook(session_start_payload(source="compact"), env=env, timeout=20)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert any(e["event"] == "notepad_refused" and "not a regular file" in e["why"] for e in log_events(env))


def test_omc_as_a_file_is_refused(env, project):
    (project / ".omc").write_text("not a folder")
    assert out_of(run_hook(agent_answer("<remember>x</remember>"), env=env)) is None
    assert (project / ".omc").read_text() == "not a folder"


def test_no_project_no_file_anywhere(tmp_path):
    env = {"OMCM_LOAD_PLUGINS": "notepad", "OMCM_HOME": str(tmp_path / "home")}
    payload = post_tool_payload(
        "Agent", {}, {"content": [{"type": "text", "text": "<remember>x</remember>"}]}, cwd="relative/dir"
    )
    proc = run_hook(payload, env=env, cwd=str(tmp_path))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert not list(tmp_path.rglob("notepad.md"))
