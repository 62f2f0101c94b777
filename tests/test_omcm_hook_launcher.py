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


def built_env(data: Path, root: Path, name: str = "venv-1", stamp: str | None = None) -> Path:
    """An environment as bin/omcm_setup.py leaves it, whose Python is this one (with this checkout's omcm)."""
    import omcm_core

    venv = data / name
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".omcm-fast-hook").write_text(str(Path(omcm_core.__file__).resolve().parent / "fast_hook.py") + "\n")
    (venv / ".omcm-stamp").write_text((want_stamp(root) if stamp is None else stamp) + "\n")
    (venv / ".omcm-python").write_text(str(venv / "bin" / "python") + "\n")
    if not (data / "venv").exists():
        (data / "venv").symlink_to(name)
    return venv


#: A set-up script that notes its arguments, then waits for a file: a build still under way.
SLOW_SETUP = (
    "import sys, time, pathlib\n"
    "data = pathlib.Path(sys.argv[2])\n"
    "(data / 'args').write_text(' '.join(sys.argv[1:]))\n"
    "for _ in range(300):\n"
    "    if (data / 'finish').exists(): break\n"
    "    time.sleep(0.1)\n"
)


def wait_for(path: Path, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.read_text()


def test_the_plugins_own_environment_answers_once_built(tmp_path):
    root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, root)
    proc = run_plugin(root, data, tmp_path, "PreToolUse")
    assert proc.returncode == 0, proc.stderr
    if PLUGINS:
        assert "omcm-trace " in proc.stderr  # answered by the real dispatcher, through the fast form
    assert not (data / ".building").exists()  # up to date: no build


def test_after_an_update_the_previous_environment_answers_while_the_new_one_builds(tmp_path):
    old_root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, old_root)
    newer = plugin_root(tmp_path / "v2", setup=SLOW_SETUP)  # the plugin was updated (another folder)
    try:
        for event in ("SessionStart", "PreToolUse", "PreToolUse"):
            proc = run_plugin(newer, data, tmp_path, event, path=python_only(tmp_path))
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.strip() == "" or "setting up" not in proc.stdout  # nothing to announce: it works
            if PLUGINS:
                assert "omcm-trace " in proc.stderr  # the previous environment answered
        # One build was started, for the new folder and version.
        assert wait_for(data / "args") == f"{newer} {data} {want_stamp(newer)}"
        assert (data / ".building").is_dir()
    finally:
        (data / "finish").write_text("")


def test_an_environment_whose_python_is_gone_is_rebuilt(tmp_path):
    root, data = plugin_root(tmp_path, setup=SLOW_SETUP), tmp_path / "data"
    venv = built_env(data, root)
    (venv / "bin" / "python").unlink()  # the system Python it was made from was removed
    try:
        assert run_plugin(root, data, tmp_path, "PreToolUse", path=python_only(tmp_path)).returncode == 0
        assert wait_for(data / "args") == f"{root} {data} {want_stamp(root)}"
    finally:
        (data / "finish").write_text("")


def test_a_source_changed_in_place_is_noticed_at_session_start(tmp_path):
    root, data = plugin_root(tmp_path, setup=SLOW_SETUP), tmp_path / "data"
    venv = built_env(data, root)
    (root / "omcm_core").mkdir()
    (root / "omcm_core" / "events.py").write_text("# as built\n")
    os.utime(venv / ".omcm-stamp", (time.time() + 5, time.time() + 5))  # built after the sources were copied
    try:
        assert run_plugin(root, data, tmp_path, "SessionStart", path=python_only(tmp_path)).returncode == 0
        time.sleep(0.3)
        assert not (data / "args").exists()  # nothing newer than the build: no check
        (root / "omcm_core" / "events.py").write_text("# a git pull, same version\n")
        os.utime(root / "omcm_core" / "events.py", (time.time() + 10, time.time() + 10))
        # Only SessionStart looks (a `find`, too dear for every call)...
        assert run_plugin(root, data, tmp_path, "PreToolUse", path=python_only(tmp_path)).returncode == 0
        time.sleep(0.3)
        assert not (data / "args").exists()
        # ...and starts the check, while the current environment answers.
        proc = run_plugin(root, data, tmp_path, "SessionStart", path=python_only(tmp_path))
        assert proc.returncode == 0, proc.stderr
        if PLUGINS:
            assert "omcm-trace " in proc.stderr
        assert wait_for(data / "args") == f"{root} {data} {want_stamp(root)}"
    finally:
        (data / "finish").write_text("")


def test_unchanged_sources_are_not_rebuilt_and_changed_ones_are(tmp_path):
    sys.path.insert(0, str(ROOT / "bin"))
    try:
        import omcm_setup
    finally:
        sys.path.remove(str(ROOT / "bin"))
    root = tmp_path / "root"
    for name in ("omcm_core", "plugins/notepad"):
        shutil.copytree(ROOT / name, root / name, ignore=omcm_setup.JUNK)
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    data = tmp_path / "data"
    venv = built_env(data, root, stamp="ROOT v")
    (venv / ".omcm-sources").write_text(omcm_setup.sources_hash(root) + "\n")
    (root / "omcm_core" / "__pycache__").mkdir(exist_ok=True)
    (root / "omcm_core" / "__pycache__" / "junk.pyc").write_bytes(b"not a source")  # ignored, as the copy is
    before = time.time()
    assert omcm_setup.main([str(root), str(data), "ROOT v"]) == 0
    assert sorted(p.name for p in data.glob("venv-*")) == ["venv-1"]  # nothing built
    assert (venv / ".omcm-stamp").stat().st_mtime >= before - 1  # checked: the next SessionStart looks no further
    assert data.stat().st_mode & 0o777 == 0o700  # made private (it was 0755)
    assert not omcm_setup.unchanged(root, data, "ROOT v2", time.time())  # another version
    old = omcm_setup.sources_hash(root)
    (root / "plugins" / "notepad" / "pyproject.toml").write_text("changed")
    assert omcm_setup.sources_hash(root) != old
    assert not omcm_setup.unchanged(root, data, "ROOT v", time.time())
    (root / "plugins" / "notepad" / "pyproject.toml").unlink()
    assert omcm_setup.sources_hash(root) != old  # a removed file counts too
    (venv / ".omcm-sources").write_text(omcm_setup.sources_hash(root) + "\n")
    assert omcm_setup.unchanged(root, data, "ROOT v", time.time())
    (venv / "bin" / "python").unlink()  # its Python is gone: same sources, still rebuilt
    assert not omcm_setup.unchanged(root, data, "ROOT v", time.time())


def test_the_environment_runs_only_from_a_folder_of_ours(tmp_path):
    root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, root)
    data.chmod(0o777)  # another user could have put anything there
    proc = run_plugin(root, data, tmp_path, "SessionStart")
    assert proc.returncode == 0 and "omcm-trace" not in proc.stderr
    assert "writable by other users" in json.loads(proc.stdout)["systemMessage"]
    data.chmod(0o700)
    (data / "venv-1" / "bin").chmod(0o777)  # an environment built under a loose umask
    proc = run_plugin(root, data, tmp_path, "SessionStart")
    assert proc.returncode == 0 and "omcm-trace" not in proc.stderr
    (data / "venv-1" / "bin").chmod(0o755)
    proc = run_plugin(root, data, tmp_path, "SessionStart")
    assert proc.returncode == 0 and (not PLUGINS or "omcm-trace " in proc.stderr)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a folder another user owns")
def test_an_environment_another_user_owns_is_never_run(tmp_path):
    root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, root)
    os.chown(data, 4242, 4242)
    for event in ("SessionStart", "PreToolUse"):
        proc = run_plugin(root, data, tmp_path, event)
        assert proc.returncode == 0 and "omcm-trace" not in proc.stderr
    assert "not owned by you" in json.loads(run_plugin(root, data, tmp_path).stdout)["systemMessage"]
    os.chown(data, 0, 0)
    os.chown(data / "venv-1", 4242, 4242)  # the environment itself
    assert "omcm-trace" not in run_plugin(root, data, tmp_path, "PreToolUse").stderr


def test_a_first_install_says_once_that_omcm_is_ready(tmp_path):
    root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, root)
    (data / "ready.notice").write_text("omcm is ready: its hooks work from now on (set up in 24 s).\n")
    ended = run_plugin(root, data, tmp_path, "SessionEnd")  # the client shows no systemMessage there
    assert ended.returncode == 0 and "omcm is ready" not in ended.stdout and (data / "ready.notice").exists()
    first = run_plugin(root, data, tmp_path, "SessionStart")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["systemMessage"].startswith("omcm is ready")
    if PLUGINS:
        assert "omcm-trace " in first.stderr  # the hook was answered as well
    again = run_plugin(root, data, tmp_path, "SessionStart")
    assert "omcm is ready" not in again.stdout and not (data / "ready.notice").exists()


def test_the_first_call_starts_one_build_and_says_so_once(tmp_path):
    # The set-up script here notes its arguments and waits: the launcher is what is tested (the e2e suite builds for real).
    setup = (
        "import sys, time, pathlib; pathlib.Path(sys.argv[2], 'args').write_text(' '.join(sys.argv[1:])); time.sleep(3)"
    )
    root, data = plugin_root(tmp_path, setup), tmp_path / "data"
    first = run_plugin(root, data, tmp_path, path=python_only(tmp_path))
    assert first.returncode == 0, first.stderr
    assert str(data / "setup.log") in json.loads(first.stdout)["systemMessage"]
    assert data.stat().st_mode & 0o777 == 0o700  # private whatever the umask
    second = run_plugin(root, data, tmp_path, "PreToolUse", path=python_only(tmp_path))  # the build is running
    assert second.returncode == 0 and second.stdout == "" and second.stderr == ""  # said once, then quiet
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


def test_a_failed_update_keeps_the_previous_environment_and_says_so_once(tmp_path):
    sys.path.insert(0, str(ROOT / "bin"))
    try:
        import omcm_setup
    finally:
        sys.path.remove(str(ROOT / "bin"))
    old_root, data = plugin_root(tmp_path), tmp_path / "data"
    built_env(data, old_root)
    newer = plugin_root(tmp_path / "v2")
    (newer / "omcm_core").mkdir()
    (newer / "omcm_core" / "gone.py").symlink_to(tmp_path / "nowhere")  # the copy of the sources fails
    assert omcm_setup.main([str(newer), str(data), want_stamp(newer)]) == 1
    assert (data / "setup.failed").read_text().splitlines()[0] == want_stamp(newer)
    assert os.path.realpath(data / "venv") == str(data / "venv-1")  # untouched
    first = run_plugin(newer, data, tmp_path, "SessionStart", path=python_only(tmp_path))
    assert first.returncode == 0, first.stderr
    assert "could not update" in json.loads(first.stdout)["systemMessage"]
    if PLUGINS:
        assert "omcm-trace " in first.stderr  # the previous version answered
    again = run_plugin(newer, data, tmp_path, "PreToolUse", path=python_only(tmp_path))
    assert again.returncode == 0 and "could not update" not in again.stdout
    assert not (data / ".building").exists()  # no retry until setup.failed is removed
