"""The warm dispatcher lives as long as the Claude Code sessions that use it, and not much longer.

A stand-in for Claude Code is a real long-lived process that runs each hook
through ``sh -c`` as its child, as Claude Code does; the settings are tiny
(idle 1 s, linger 1 s) so that what keeps the daemon is visibly the session.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import omcm_core
from omcm_core._runtime import control, daemon, sessions
from omcm_core.testing import pre_tool_payload

pytestmark = pytest.mark.slow

FAST_HOOK = Path(omcm_core.__file__).resolve().parent / "fast_hook.py"
SESSION = "11111111-2222-4333-8444-555555555555"
# One payload a line on stdin; each runs `sh -c '<registered command> EVENT'`; its stdout comes back a line.
CLAUDE = r"""
import json, shlex, subprocess, sys
for line in sys.stdin:
    event, payload = line.split(" ", 1)
    command = shlex.join(json.loads(sys.argv[1]) + [event])
    done = subprocess.run(["sh", "-c", command], input=payload.encode(), capture_output=True)
    print(json.dumps({"code": done.returncode, "out": done.stdout.decode()}), flush=True)
"""


class Claude:
    """A long-lived process whose children are the hook calls of one session."""

    def __init__(self, env: dict, client: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CLAUDE, json.dumps(client)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **env},
            text=True,
        )

    def hook(self, event: str, **fields) -> dict:
        payload = {"session_id": SESSION, "hook_event_name": event, "cwd": "/", **fields}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{event} {json.dumps(payload)}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=10)  # reaps it and closes both pipes


@pytest.fixture
def env(tmp_path, bash_guard_site):
    env = {
        "OMCM_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard",
        "OMCM_DAEMON": "1",
        "OMCM_DAEMON_IDLE_S": "1",
        "OMCM_DAEMON_LINGER_S": "1",
        "OMCM_DAEMON_SESSION_IDLE_S": "600",
    }
    yield env
    daemon.stop({**os.environ, **env})


def _running(env) -> bool:
    return daemon.status({**os.environ, **env}) is not None


def _wait(env, running: bool, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _running(env) == running:
            return True
        time.sleep(0.1)
    return False


def _log(env) -> list[dict]:
    path = Path(env["OMCM_HOME"]) / "logs" / "omcm.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def claude(env, hook_client):
    # The registered command of either client: python -S fast_hook.py, or the native one.
    client = hook_client if hook_client[0] != sys.executable else [sys.executable, "-S", str(FAST_HOOK)]
    claude = Claude(env, client)
    claude.hook("SessionStart", source="startup")  # no daemon yet: answered in process, starts one
    assert _wait(env, running=True), "the first call did not start a daemon"
    deny = claude.hook("PreToolUse", **pre_tool_payload("Bash", {"command": "rm -rf /"}, session_id=SESSION))
    assert json.loads(deny["out"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    yield claude
    claude.close()


def test_daemon_stays_while_the_session_lives_and_leaves_after_session_end(env, claude):
    # Four times the plain idle limit, and longer than idle plus linger: only the session keeps it.
    time.sleep(4)
    assert _running(env)
    # It knows the session and, through `sh -c`, the stand-in as its client.
    info = control.details({**os.environ, **env})
    assert info is not None
    assert [(s["session_id"], s["client_pid"]) for s in info["sessions"]] == [(SESSION, claude.proc.pid)]
    assert claude.hook("SessionEnd", reason="logout") == {"code": 0, "out": ""}
    assert _wait(env, running=False)
    assert claude.proc.poll() is None  # the session ended; its client did not have to exit
    assert "daemon_idle_exit" in [e["event"] for e in _log(env)]


def test_daemon_leaves_when_the_client_dies_without_session_end(env, claude):
    claude.proc.send_signal(signal.SIGKILL)
    claude.proc.wait(timeout=10)
    # The session may idle for 600 s, yet the daemon sees its client is gone.
    assert _wait(env, running=False)
    gone = [e for e in _log(env) if e["event"] == "daemon_session_gone"]
    assert [(e["session_id"], e["why"]) for e in gone] == [(SESSION, "client_gone")]


def test_a_call_without_a_session_keeps_the_plain_idle_limit(env):
    proc = subprocess.run(
        [sys.executable, "-S", str(FAST_HOOK), "PreToolUse"],
        input=json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}).encode(),
        env={**os.environ, **env},
        capture_output=True,
    )
    assert proc.returncode == 0
    assert _wait(env, running=True)
    assert _wait(env, running=False)


def test_owner_is_the_first_ancestor_that_is_not_a_shell():
    # sh -> sh -> python: the hook process's owner is this test process, as Claude Code would be.
    code = "import os, sys; sys.stdout.write(str(os.getpid())); sys.stdout.flush(); sys.stdin.read()"
    inner = f"{sys.executable} -c '{code}'"
    child = subprocess.Popen(["sh", "-c", f'sh -c "{inner}"; true'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        hook_pid = int(os.read(child.stdout.fileno(), 32).decode() or 0)
        owner = sessions.owner_of(hook_pid)
        assert owner is not None and owner.pid == os.getpid()
        assert sessions.alive(owner)
    finally:
        child.communicate(b"", timeout=10)
    assert sessions.process(child.pid) is None  # reaped: gone
