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
import time
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


def plugin_root(tmp_path: Path, setup: str | None = None) -> Path:
    """A plugin folder as Claude Code's cache holds it: the launcher, the manifest, the set-up script."""
    root = tmp_path / "cache" / "omcm" / "omcm" / "0.1.0"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(LAUNCHER, root / "bin" / "omcm-hook")
    shutil.copytree(ROOT / ".claude-plugin", root / ".claude-plugin")
    if setup is None:
        shutil.copy2(ROOT / "bin" / "omcm_setup.py", root / "bin" / "omcm_setup.py")
    else:
        (root / "bin" / "omcm_setup.py").write_text(setup)
    return root


def want_stamp(root: Path) -> str:
    version = next(
        line for line in (root / ".claude-plugin" / "plugin.json").read_text().splitlines() if '"version"' in line
    )
    return f"{root} {version}".strip()


def python_only(tmp_path: Path) -> str:
    """A PATH with this Python as python3 and the system's tools, but no omcm (this venv's bin/ has one)."""
    tools = tmp_path / "python-only"
    if not tools.exists():
        tools.mkdir()
        (tools / "python3").symlink_to(sys.executable)
    return f"{tools}:/usr/bin:/bin"


def run_plugin(root: Path, data: Path, tmp_path: Path, event: str = "SessionStart", path: str = "/usr/bin:/bin"):
    env = {"HOME": str(tmp_path), "PATH": path, "OMCM_HOME": str(tmp_path / "omcm-home"), "OMCM_DAEMON": "0"}
    env |= {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data), "OMCM_TRACE_PLUGINS": "1"}
    payload = json.dumps(
        {"hook_event_name": event, "session_id": "s", "source": "startup", "cwd": str(tmp_path), "tool_name": "Bash"}
        | {"tool_input": {"command": "ls"}}
    )
    return subprocess.run(
        ["sh", str(root / "bin" / "omcm-hook"), event], input=payload, capture_output=True, text=True, env=env
    )


def test_the_plugins_own_environment_answers_once_built(tmp_path):
    import omcm_core

    root, data = plugin_root(tmp_path), tmp_path / "data"
    venv = data / "venv-1"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this environment's Python
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".omcm-fast-hook").write_text(str(Path(omcm_core.__file__).resolve().parent / "fast_hook.py") + "\n")
    (venv / ".omcm-stamp").write_text(want_stamp(root) + "\n")
    (venv / ".omcm-python").write_text(str(venv / "bin" / "python") + "\n")
    (data / "venv").symlink_to("venv-1")
    proc = run_plugin(root, data, tmp_path, "PreToolUse")
    assert proc.returncode == 0, proc.stderr
    if PLUGINS:
        assert "omcm-trace " in proc.stderr  # answered by the real dispatcher, through the fast form
    # The plugin was updated (another folder): the environment is stale, a rebuild starts.
    newer = plugin_root(
        tmp_path / "v2", setup="import sys, pathlib; pathlib.Path(sys.argv[2], 'built').write_text(sys.argv[3])"
    )
    proc = run_plugin(newer, data, tmp_path, path=python_only(tmp_path))
    assert proc.returncode == 0 and "setting up its Python environment" in json.loads(proc.stdout)["systemMessage"]


def test_the_first_call_starts_one_build_and_says_so_once(tmp_path):
    # The set-up script here notes its arguments and waits: the launcher is what is tested (the e2e suite builds for real).
    setup = (
        "import sys, time, pathlib; pathlib.Path(sys.argv[2], 'args').write_text(' '.join(sys.argv[1:])); time.sleep(3)"
    )
    root, data = plugin_root(tmp_path, setup), tmp_path / "data"
    first = run_plugin(root, data, tmp_path, path=python_only(tmp_path))
    assert first.returncode == 0, first.stderr
    assert str(data / "setup.log") in json.loads(first.stdout)["systemMessage"]
    second = run_plugin(root, data, tmp_path, path=python_only(tmp_path))  # the build is still running
    assert second.returncode == 0 and second.stdout == ""
    for _ in range(50):
        if (data / "args").exists():
            break
        time.sleep(0.1)
    assert (data / "args").read_text() == f"{root} {data} {want_stamp(root)}"


def test_without_python_the_plugin_says_why_at_session_start_and_never_blocks(tmp_path):
    root, data = plugin_root(tmp_path), tmp_path / "data"
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for name in ("sh", "cat", "mkdir", "rmdir", "find", "dirname"):
        if shutil.which(name):
            (empty / name).symlink_to(shutil.which(name))
    first = run_plugin(root, data, tmp_path, path=str(empty))
    assert first.returncode == 0 and "no python3.10" in (data / "setup.failed").read_text()
    again = run_plugin(root, data, tmp_path, path=str(empty))
    assert again.returncode == 0 and "could not set up" in json.loads(again.stdout)["systemMessage"]
    assert run_plugin(root, data, tmp_path, "PreToolUse", path=str(empty)).returncode == 0
