"""No call is dropped, no call waits on a stuck dispatcher, no call runs twice.

The wire protocol (``omcm_core._runtime.wire``) makes the dispatcher say
``accepted`` before it runs a call; anything short of that (a reset while it
closes its socket, a refusal, a deadline passed) and the client answers in
process. A dispatcher that was stopped (SIGSTOP) or is frozen by a plugin
holding the GIL costs a call at most the verdict wait, and when it wakes it
refuses the calls whose client has moved on instead of running them again.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid

import pytest
from reliability_harness import log_entries, post_tool, run_hook, spawn_hook, sqlite_rows, start_daemon

from omcm_core._runtime import daemon
from omcm_core.testing import pre_tool_payload

# Every client omcm can register (Python, native) runs these tests.
pytestmark = pytest.mark.usefixtures("hook_client")


def _calls(home, session):
    rows = sqlite_rows(home / "omcm.db", "SELECT calls FROM rel_counter WHERE session_id = ?", (session,))
    return rows[0][0] if rows else 0


def test_calls_around_the_idle_limit_are_each_recorded_once(rel_site, tmp_path):
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-counter"], OMCM_DAEMON="1", OMCM_DAEMON_SESSION_IDLE_S="1", OMCM_DAEMON_LINGER_S="0")
    session = "idle-" + uuid.uuid4().hex[:8]
    try:
        for n in range(60):
            done = run_hook(json.dumps(post_tool(session, cwd=str(tmp_path))).encode(), env)
            assert done.returncode == 0 and done.stdout == b""
            time.sleep((0.8, 1.0, 1.2)[n % 3])  # just before, at and just after the idle exit
    finally:
        daemon.stop(env)
    assert _calls(home, session) == 60
    events = [e["event"] for e in log_entries(home)]
    assert "daemon_answer_lost" not in events and events.count("daemon_started") > 1  # it did exit while idle


def test_a_stopped_daemon_costs_the_verdict_wait_and_never_runs_a_call_twice(rel_site, tmp_path):
    home = tmp_path / "home"
    env = rel_site.env(home, ["rel-answer", "rel-counter"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    proc = start_daemon(env)
    pre = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    cold = run_hook(pre, {**env, "OMCM_DAEMON": "0"})
    session = "stopped-" + uuid.uuid4().hex[:8]
    try:
        os.kill(proc.pid, signal.SIGSTOP)
        # Claude Code gives PreToolUse 10 s; the answer must come well within, from the client itself.
        warm = run_hook(pre, env, timeout=10)
        assert warm.returncode == 0 and warm.stdout == cold.stdout
        assert run_hook(json.dumps(post_tool(session, cwd=str(tmp_path))).encode(), env, timeout=15).returncode == 0
        assert _calls(home, session) == 1
        os.kill(proc.pid, signal.SIGCONT)
        # Awake again, it finds both requests past their deadline and refuses them.
        run_hook(json.dumps(post_tool(session, cwd=str(tmp_path))).encode(), env, timeout=15)
        assert _calls(home, session) == 2
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        daemon.stop(env)
        proc.wait(timeout=30)


def test_a_plugin_holding_the_gil_does_not_delay_another_sessions_call(rel_site, tmp_path):
    home = tmp_path / "home"
    mark = tmp_path / "hog-finished"
    env = rel_site.env(
        home,
        ["rel-probe", "rel-answer"],
        OMCM_DAEMON="1",
        OMCM_DAEMON_IDLE_S="60",
        OMCM__CORE__PLUGIN_BUDGET_MS="500",
        REL_PROBE_MARK=str(mark),
    )
    proc = start_daemon(env)
    other = {**env, "OMCM_LOAD_PLUGINS": "rel-answer"}  # a session that does not even load the hog
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    cold = run_hook(raw, {**other, "OMCM_DAEMON": "0"})
    try:
        run_hook(raw, other)  # warm the daemon's manager for that selection
        hog = spawn_hook(raw, {**env, "REL_PROBE_GIL_S": "8"})
        time.sleep(1.5)  # the hog's call is accepted and holds the GIL
        done = run_hook(raw, other)
        assert not mark.exists(), "the other session waited for the hog to finish"
        assert done.returncode == 0 and done.stdout == cold.stdout
        hog.communicate(timeout=30)
        proc.wait(timeout=30)  # the daemon retired after the overrun
    finally:
        daemon.stop(env)
        if proc.poll() is None:
            proc.kill()
    assert mark.exists()
    assert any(e["event"] == "daemon_retiring_after_overrun" for e in log_entries(home))
