"""Upgrading from an earlier release keeps everything a user had: the history, a lesson, a note, a running loop.

The earlier release is a git revision of this repository (e5743f9: before
observations carried their project), installed with its plugins into a venv and
used through its registered hooks as Claude Code would. `omcm update` then
(after the new core, as `pipx install --force ./` installs it) brings this checkout's plugins; afterwards, in the project, `omcm search` finds the
calls recorded before, `omcm lessons` the lesson, the notepad the note, and the
ralph loop is still active, with the hooks registered for the new omcm.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RELEASE = "e5743f9"
pytestmark = pytest.mark.slow


def run(argv: list, ok: bool = True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=900, **kwargs)
    assert (proc.returncode == 0) == ok, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


def release_tree(dest: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", RELEASE], capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"revision {RELEASE} is not in this clone (a shallow checkout)")
    dest.mkdir()
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


PLUGINS = ("post-tool-observer", "pre-tool-guide", "notepad", "persistent-mode")


def checkout(dest: Path) -> Path:
    """This checkout's core and the plugins used here (what `git pull` brought)."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests")
    shutil.copytree(ROOT / "omcm_core", dest / "omcm_core", ignore=ignore)
    for plugin in PLUGINS:
        shutil.copytree(ROOT / "plugins" / plugin, dest / "plugins" / plugin, ignore=ignore)
    return dest


def test_an_update_from_the_previous_release_finds_everything(tmp_path):
    old, new = release_tree(tmp_path / "release"), tmp_path / "checkout"
    checkout(new)
    env_dir, home, project = tmp_path / "venv", tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, omcm = env_dir / "bin" / "python", env_dir / "bin" / "omcm"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("OMCM")}
    env.update(HOME=str(home), PATH=f"{env_dir / 'bin'}:/usr/bin:/bin", OMCM__POST_TOOL_OBSERVER__EMBEDDINGS="false")
    run([python, "-m", "pip", "install", "-q", old, *(old / "plugins" / p for p in PLUGINS)], env=env)
    run([omcm, "install"], cwd=project, env=env)
    settings = home / ".claude" / "settings.json"

    # A session in the project, through the registered commands, with the transcript where Claude Code keeps it.
    session = "old-session-1"
    transcripts = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
    transcripts.mkdir(parents=True)
    transcript = transcripts / f"{session}.jsonl"
    transcript.write_text(json.dumps({"type": "user", "cwd": str(project), "sessionId": session}) + "\n")
    call_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}

    def hook(event: str, **fields) -> dict | None:
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project)}
        payload.update(hook_event_name=event, **fields)
        command = json.loads(settings.read_text())["hooks"][event][0]["hooks"][0]["command"]  # as registered now
        proc = run(shlex.split(command), input=json.dumps(payload), env=call_env, cwd=project)
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    hook("SessionStart", source="startup")
    hook("UserPromptSubmit", prompt="/ralph-loop port the zorblax parser", permission_mode="default")
    bash = {"command": "make zorblax"}
    hook("PostToolUse", tool_name="Bash", tool_input=bash, tool_response={"stdout": "built zorblax"}, tool_use_id="t1")
    edit = {"file_path": str(project / "parser.py"), "old_string": "a", "new_string": "b"}
    hook("PostToolUseFailure", tool_name="Edit", tool_input=edit, error="String to replace not found in file.")
    run([omcm, "notepad", "add", "the zorblax port keeps the old API"], cwd=project, env=call_env)

    # The release has no `omcm update`: the new core comes first as people installed it (`pipx install --force
    # ./`), which leaves the old plugins; from then on `omcm update` brings the rest from where the core came.
    run([python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", new], env=env)
    out = run([omcm, "update"], cwd=project, env=env)
    assert str(new / "plugins" / "post-tool-observer") in out.stdout

    found = json.loads(run([omcm, "search", "zorblax", "--json"], cwd=project, env=call_env).stdout)["results"]
    assert any(h["command"] == "make zorblax" for h in found), found
    lessons = json.loads(run([omcm, "lessons", "--json"], cwd=project, env=call_env).stdout)["lessons"]
    assert any("String to replace not found" in lesson["error"] for lesson in lessons), lessons
    assert "keeps the old API" in run([omcm, "notepad", "show"], cwd=project, env=call_env).stdout
    status = run([omcm, "ralph", "status"], cwd=project, env=call_env).stdout
    assert "active" in status and "zorblax" in status
    # The registration names the new omcm's client (rewritten by the update), and it answers.
    commands = [
        h["command"]
        for groups in json.loads(settings.read_text())["hooks"].values()
        for g in groups
        for h in g["hooks"]
    ]
    assert commands and all(str(home / ".omcm" / "bin") in c or "fast_hook.py" in c for c in commands)
    stopped = hook(
        "Stop", stop_hook_active=False, last_assistant_message="Parsed half of it.", permission_mode="default"
    )
    assert stopped is not None and "Iteration 1/50" in stopped["reason"]  # the loop goes on, under the new omcm
