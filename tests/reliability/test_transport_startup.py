"""Start-up storms and odd states at the socket path.

Twenty cold calls at once start exactly one dispatcher (the first caller takes
the dispatcher's lock and hands it to the process it starts; the others see it
taken and answer in process without waiting). Something that is not a socket
at the socket path is repaired when it is an empty folder of ours, otherwise
logged and reported by doctor, and calls go on in process. ``python`` and
``python3`` of one installation find one dispatcher.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from reliability_harness import log_entries, parse_stdout, run_hook, spawn_hook

from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload

# Every client omcm can register (Python, native) runs these tests.
pytestmark = pytest.mark.usefixtures("hook_client")


def _daemon_pids(home: Path) -> set[int]:
    """Pids of `omcm daemon run` processes whose OMCM_HOME is ``home``."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if (
                b"daemon\0run" in cmdline
                and f"OMCM_HOME={home}\0".encode() in Path(f"/proc/{entry}/environ").read_bytes()
            ):
                found.add(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture
def short_home():
    """An OMCM_HOME short enough for the socket to live in it (not a folder shared by tests)."""
    home = Path(tempfile.mkdtemp(prefix="omcm-t", dir="/tmp"))
    yield home / "home"
    shutil.rmtree(home, ignore_errors=True)


def _wait_running(env, timeout=30.0):
    deadline = time.monotonic() + timeout
    while daemon.status(env) is None:
        assert time.monotonic() < deadline, "no daemon started"
        time.sleep(0.05)


def test_a_storm_of_cold_calls_starts_one_daemon(rel_site, tmp_path):
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-answer"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    seen: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(_daemon_pids(home))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        procs = [spawn_hook(raw, env) for _ in range(20)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        _wait_running(env)
        time.sleep(1.0)
    finally:
        stop.set()
        watcher.join()
        daemon.stop(env)
    assert all(parse_stdout("PreToolUse", out) is not None for out in outs)
    assert len(seen) == 1, f"{len(seen)} daemons started"


def test_an_empty_folder_at_the_socket_path_is_repaired(rel_site, tmp_path, short_home):
    home = short_home
    env = rel_site.env(home, ["rel-answer"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    path = Path(daemon.socket_path(env))
    path.parent.mkdir(mode=0o700, parents=True)
    path.mkdir()
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    try:
        cold = run_hook(raw, {**env, "OMCM_DAEMON": "0"})
        assert run_hook(raw, env).stdout == cold.stdout
        _wait_running(env)
        assert run_hook(raw, env).stdout == cold.stdout
    finally:
        daemon.stop(env)
    assert any(e["event"] == "daemon_socket_path_repaired" for e in log_entries(home))


def test_a_foreign_thing_at_the_socket_path_is_reported_and_calls_go_on(rel_site, tmp_path, short_home):
    home = short_home
    env = rel_site.env(home, ["rel-answer"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    path = Path(daemon.socket_path(env))
    path.parent.mkdir(mode=0o700, parents=True)
    (path / "keep").mkdir(parents=True)  # not empty: not ours to remove
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    cold = run_hook(raw, {**env, "OMCM_DAEMON": "0"})
    for _ in range(3):
        assert run_hook(raw, env).stdout == cold.stdout
    assert daemon.status(env) is None and _daemon_pids(home) == set()  # no start attempted per call
    assert [e["event"] for e in log_entries(home)].count("daemon_socket_path_blocked") == 3
    doctor = subprocess.run(
        [sys.executable, "-m", "omcm_core", "doctor", "--json"], env=env, capture_output=True, text=True
    )
    assert "is not a socket" in doctor.stdout, doctor.stdout[-2000:]


def test_python_and_python3_find_one_daemon(rel_site, tmp_path):
    bindir = Path(sys.executable).parent
    spellings = [str(bindir / name) for name in ("python", "python3") if (bindir / name).exists()]
    assert len(spellings) == 2
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-answer"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60", OMCM_LOG_LEVEL="debug")
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    try:
        for exe in spellings * 2:
            subprocess.run([exe, "-m", "omcm_core", "hook"], input=raw, env=env, capture_output=True, check=True)
            _wait_running(env)
        status = subprocess.run(
            [spellings[1], "-m", "omcm_core", "daemon", "status"], env=env, capture_output=True, text=True
        )
        assert status.returncode == 0 and "running at" in status.stdout
    finally:
        daemon.stop(env)
    started = [e for e in log_entries(home) if e["event"] == "daemon_started"]
    assert len(started) == 1
    assert (
        len({e["pid"] for e in log_entries(home) if e["event"] == "dispatched"} - {started[0]["pid"]}) == 1
    )  # only the first, in process
