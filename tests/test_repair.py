"""An upgrade repairs itself: the next hook call's dispatcher notices a stale registration and redoes it, detached.

The registration is made by `omcm install` and then aged the way upgrades age it:
the client it names moved away (a reinstall under another Python, a new tool
environment), or the native client was built from an older source. The hook
call is the registered command itself, run as Claude Code runs it, with the
warm dispatcher on; it answers at once, and the registration is redone behind it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import omcm_core
from omcm_core._cli import native_client
from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload

pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks")


@pytest.fixture
def user(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMCM_", "CLAUDE_"))}
    env.update(HOME=str(home), OMCM_HOME=str(home / ".omcm"), OMCM_LOAD_PLUGINS="tool-counter")
    yield home, env
    daemon.stop(env)


def omcm(env, *argv):
    proc = subprocess.run([sys.executable, "-m", "omcm_core", *map(str, argv)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def commands(settings: Path) -> list[str]:
    hooks = json.loads(settings.read_text())["hooks"]
    return [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]


def fire(command: str, env: dict) -> subprocess.CompletedProcess:
    payload = json.dumps(pre_tool_payload("Bash", {"command": "ls"}))
    proc = subprocess.run(shlex.split(command), input=payload, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr  # answered, never blocked
    return proc


def wait_until(predicate, timeout_s: float = 120) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


def test_a_registration_naming_a_client_that_moved_away_is_redone(user, tmp_path):
    home, env = user
    env = {**env, "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}", "OMCM_NATIVE_CLIENT": "0"}
    omcm(env, "install")
    settings = home / ".claude" / "settings.json"
    here = str(Path(omcm_core.__file__).resolve().parent / "fast_hook.py")
    # What a reinstall elsewhere leaves: settings and manifest naming the previous installation's fast_hook.py.
    old = tmp_path / "old-venv" / "omcm_core" / "fast_hook.py"
    for file in [settings, *(home / ".omcm" / "installs").glob("*.json")]:
        file.write_text(file.read_text().replace(json.dumps(here)[1:-1], str(old)))
    assert all(str(old) in c for c in commands(settings))
    fire(commands(settings)[0], env)  # the old path is gone: HOOK_CODE finds this omcm, whose dispatcher starts
    assert wait_until(lambda: all(here in c for c in commands(settings))), commands(settings)
    log = (home / ".omcm" / "logs" / "omcm.jsonl").read_text()
    assert "registration_repair_started" in log and "a registered client is gone" in log


def test_a_native_client_built_from_an_older_source_is_rebuilt(user):
    home, env = user
    if native_client.compiler(env) is None or shutil.which("cc") is None:
        pytest.skip("no C compiler here")
    omcm(env, "install")
    settings = home / ".claude" / "settings.json"
    binary = native_client.binary_path(home / ".omcm")
    assert all(str(binary) in c for c in commands(settings))
    state_file = home / ".omcm" / "bin" / native_client.STATE
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({**state, "fingerprint": "built-from-an-older-omcm_hook.c"}))
    assert native_client.outdated(home / ".omcm")
    fire(commands(settings)[0], env)
    assert wait_until(lambda: not native_client.outdated(home / ".omcm")), state_file.read_text()
    assert binary.is_file() and all(str(binary) in c for c in commands(settings))
