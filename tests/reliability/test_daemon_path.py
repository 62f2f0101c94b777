"""The same promises through the warm dispatcher (the default path, ``OMCM_DAEMON=1``).

The daemon is long-lived, so a plugin that hangs leaves a thread behind in it
and a bad payload reaches a process that must keep serving. Answers through
the daemon must be byte-identical to in-process answers, bad plugins still
change nothing, hostile input still gets exit 0 and nothing on stdout, and
the daemon keeps serving afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from reliability_harness import log_entries, parse_stdout, run_hook

from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload

# Every client omcm can register (Python, native) runs these tests.
pytestmark = pytest.mark.usefixtures("hook_client")

GOOD = ["rel-answer", "rel-zz-late"]
BAD = ["rel-garbage", "rel-hang", "rel-print", "rel-raise"]
HOSTILE = [b"", b"not json", b"[1]", b"\xff\xfe", b"\x00" * 8, b'{"hook_event_name": "PreToolUse"', b"[" * 50_000]


@pytest.fixture
def rel_daemon(rel_site, tmp_path):
    """A warm dispatcher for a private home; stopped (and checked gone) afterwards."""
    home = tmp_path / "home"
    env = rel_site.env(
        home,
        GOOD,
        OMCM_DAEMON="1",
        OMCM_LOG_LEVEL="debug",
        OMCM__CORE__PLUGIN_BUDGET_MS="700",
        REL_HANG_S="5",
        REL_GARBAGE="object-input",
        OMCM_DAEMON_IDLE_S="60",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "daemon", "run"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while daemon.status(env) is None:
        assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    try:
        yield env, proc
    finally:
        daemon.stop(env)
        proc.wait(timeout=30)


def _served_by(home, pid: int) -> int:
    return sum(1 for e in log_entries(home) if e["event"] == "dispatched" and e.get("pid") == pid)


def test_daemon_answers_like_in_process_and_isolates_bad_plugins(rel_daemon, tmp_path):
    env, proc = rel_daemon
    home = tmp_path / "home"
    raw = json.dumps(
        {**pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path)), "tool_use_id": "toolu_d"}
    ).encode()
    in_process = run_hook(raw, {**env, "OMCM_DAEMON": "0"})
    baseline = parse_stdout("PreToolUse", in_process.stdout)
    assert baseline is not None
    for plugins in (GOOD, GOOD + BAD):
        served = _served_by(home, proc.pid)
        done = run_hook(raw, {**env, "OMCM_LOAD_PLUGINS": ",".join(plugins)})
        assert done.returncode == 0 and b"Traceback" not in done.stdout
        assert done.stdout == in_process.stdout
        assert _served_by(home, proc.pid) == served + 1, "the answer did not come from the daemon"
    # rel-hang overran and its thread still runs: that daemon retires rather than make
    # other calls share a process with it; the next call gets the same answer elsewhere.
    proc.wait(timeout=30)
    served = _served_by(home, proc.pid)
    done = run_hook(raw, {**env, "OMCM_LOAD_PLUGINS": ",".join(GOOD + BAD)})
    assert done.stdout == in_process.stdout and _served_by(home, proc.pid) == served
    assert any(e["event"] == "daemon_retiring_after_overrun" for e in log_entries(home))
    failed = {(e["plugin"], e["kind"]) for e in log_entries(home) if e["event"] == "plugin_failed"}
    assert failed == {("rel-garbage", "garbage"), ("rel-hang", "timeout"), ("rel-raise", "raised")}
    # Identical bytes would also come from a client that ignored the daemon's answer and
    # ran the plugins itself: only a process id proves whose answer it was. Two hook
    # processes answered by one process id were answered by the (new) daemon.
    # The new daemon may still be starting (on a loaded machine for several calls): those
    # calls run in process, each with its own pid. Call until two in a row share one, bounded.
    pids: list[str] = []
    deadline = time.monotonic() + 30
    while len(pids) < 2 or pids[-1] != pids[-2]:
        assert time.monotonic() < deadline, f"no daemon answered two calls in a row: {pids}"
        done = run_hook(raw, {**env, "OMCM_LOAD_PLUGINS": "rel-pid"})
        pids.append(parse_stdout("PreToolUse", done.stdout)["hookSpecificOutput"]["additionalContext"])
    assert pids[-1].startswith("rel-pid ") and pids[-1] != f"rel-pid {proc.pid}", pids


def test_daemon_survives_hostile_input(rel_daemon, tmp_path):
    env, proc = rel_daemon
    home = tmp_path / "home"
    for raw in HOSTILE:
        done = run_hook(raw, env)
        assert done.returncode == 0 and done.stdout == b"", raw[:40]
    refused = [e for e in log_entries(home) if e["event"] == "bad_payload"]
    assert len(refused) == len(HOSTILE)
    raw = json.dumps(pre_tool_payload("Read", {"file_path": "/x"}, cwd=str(tmp_path))).encode()
    served = _served_by(home, proc.pid)
    done = run_hook(raw, env)
    assert proc.poll() is None and parse_stdout("PreToolUse", done.stdout) is not None
    assert _served_by(home, proc.pid) == served + 1
