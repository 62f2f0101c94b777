"""bin/omcm-hook, the Claude Code plugin route's launcher: which installed omcm it hands the event to.

Each place holds a small script that notes its own path, then runs this
checkout's real `omcm` with the same arguments: the hook is answered for real
and the note tells which place answered.
"""

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "bin" / "omcm-hook"
PAYLOAD = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")

PLUGINS = [e for e in entry_points(group="omcm")]

PLACES = {
    "OMCM_BIN": "custom/omcm",
    "PATH": "somewhere/bin/omcm",
    "pipx or uv": ".local/bin/omcm",
    "plain venv": ".local/share/omcm/venv/bin/omcm",
    "old venv": ".omcm/venv/bin/omcm",
}


def place(home: Path, where: str, note: Path) -> Path:
    exe = home / PLACES[where]
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f'#!/bin/sh\necho "$0" >> "{note}"\nexec "{sys.executable}" -m omcm_core "$@"\n')
    exe.chmod(0o755)
    return exe


def launch(home: Path, **env):
    base = {"HOME": str(home), "PATH": "/usr/bin:/bin", "OMCM_HOME": str(home / "data"), "OMCM_DAEMON": "0"}
    base["OMCM_TRACE_PLUGINS"] = "1"
    return subprocess.run(
        ["sh", str(LAUNCHER), "PreToolUse"], input=PAYLOAD, capture_output=True, text=True, env={**base, **env}
    )


@pytest.mark.parametrize("winner", list(PLACES))
def test_the_first_place_found_answers(tmp_path, winner):
    note = tmp_path / "note"
    order = list(PLACES)
    # The winner and every place after it hold an omcm; the ones before it do not.
    exes = {where: place(tmp_path, where, note) for where in order[order.index(winner) :]}
    env = {}
    if "OMCM_BIN" in exes:
        env["OMCM_BIN"] = str(exes["OMCM_BIN"])
    if "PATH" in exes:
        env["PATH"] = f"{exes['PATH'].parent}:/usr/bin:/bin"
    proc = launch(tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    assert note.read_text().splitlines() == [str(exes[winner])]
    if PLUGINS:  # tox's core-alone cell has no plugin to trace
        assert "omcm-trace " in proc.stderr  # the real dispatcher answered


def test_xdg_data_home_moves_the_plain_venv(tmp_path):
    note = tmp_path / "note"
    exe = tmp_path / "xdg" / "omcm" / "venv" / "bin" / "omcm"
    exe.parent.mkdir(parents=True)
    shutil.copy(place(tmp_path, "plain venv", note), exe)
    (tmp_path / PLACES["plain venv"]).unlink()
    proc = launch(tmp_path, XDG_DATA_HOME=str(tmp_path / "xdg"))
    assert proc.returncode == 0 and note.read_text().splitlines() == [str(exe)]


def test_no_omcm_anywhere_is_a_quiet_no_op(tmp_path):
    proc = launch(tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "omcm command is not installed" in proc.stderr
    assert not os.path.exists(tmp_path / "data")
