"""The client believes only a whole answer from its own dispatcher; the dispatcher runs only wanted calls.

Each test here guards one slip that the rest of the suite let through
(issue 30): a socket folder of the right mode but another owner, a ``done``
answer cut short, an answer lost after ``accepted`` taken for "not run", a
request run after its deadline, a daemon leaving with calls in flight, and a
caller of another uid. The client tests run against every registered client
(the ``hook_client`` fixture).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from reliability_harness import FakeServer, log_entries, post_tool, run_hook, spawn_hook, sqlite_rows, start_daemon

from omcm_core._runtime import control, daemon, sessions, wire
from omcm_core.testing import pre_tool_payload

NOBODY = 65534
ATTACK = wire.ACCEPTED + wire.encode_done(
    0, json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}).encode(), b""
)


@pytest.fixture
def short_home():
    """An OMCM_HOME under /tmp, short enough for a plain socket path and reachable by another uid."""
    home = Path(tempfile.mkdtemp(prefix="omcm-v", dir="/tmp"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _plant(env: dict, reply: bytes, owner: int | None = None) -> FakeServer:
    """A fake dispatcher where the client looks for the real one, in a 0700 folder (of ``owner``)."""
    path = daemon.socket_path(env)
    folder = Path(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    server = FakeServer(path, reply)
    if owner is not None:
        os.chown(folder, owner, owner)
    return server


def _calls(home: Path, session: str) -> int:
    if not sqlite_rows(home / "omcm.db", "SELECT name FROM sqlite_master WHERE name = 'rel_counter'"):
        return 0  # the plugin never ran here
    rows = sqlite_rows(home / "omcm.db", "SELECT calls FROM rel_counter WHERE session_id = ?", (session,))
    return rows[0][0] if rows else 0


@pytest.mark.skipif(os.getuid() != 0, reason="planting a folder owned by another uid needs root")
def test_client_refuses_a_0700_socket_folder_owned_by_another_uid(rel_site, short_home, tmp_path, hook_client):
    env = rel_site.env(short_home, ["rel-answer"], OMCM_DAEMON="1", HOME=str(short_home))
    server = _plant(env, ATTACK, owner=NOBODY)
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    try:
        done = run_hook(raw, env, event="PreToolUse")
    finally:
        server.close()
    assert server.connections == 0
    cold = run_hook(raw, {**env, "OMCM_DAEMON": "0"}, event="PreToolUse")
    assert done.returncode == 0 and done.stdout == cold.stdout and b'"allow"' not in done.stdout
    reasons = [e["reason"] for e in log_entries(short_home) if e["event"] == "daemon_not_used"]
    assert reasons and f"owned by uid {NOBODY}" in reasons[0]


def test_a_cut_off_done_answer_is_not_accepted_as_whole(rel_site, short_home, tmp_path, hook_client):
    env = rel_site.env(short_home, ["rel-answer"], OMCM_DAEMON="1", HOME=str(short_home))
    whole = json.dumps({"systemMessage": "x" * 200}).encode()
    cut = wire.ACCEPTED + wire.encode_done(0, whole, b"")[: -len(whole) // 2]
    server = _plant(env, cut)
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    try:
        done = run_hook(raw, env, event="PreToolUse")
    finally:
        server.close()
    assert server.connections == 1
    # Accepted, so never run again here; half an answer is no answer: exit 0, nothing on stdout.
    assert done.returncode == 0 and done.stdout == b""
    assert [e["event"] for e in log_entries(short_home)].count("daemon_answer_lost") == 1


def test_an_answer_lost_after_accepted_is_never_run_again_in_process(rel_site, short_home, tmp_path, hook_client):
    env = rel_site.env(short_home, ["rel-counter"], OMCM_DAEMON="1", HOME=str(short_home))
    server = _plant(env, wire.ACCEPTED)  # then it closes: the call may have run there
    session = "lost-" + uuid.uuid4().hex[:8]
    try:
        done = run_hook(json.dumps(post_tool(session, cwd=str(tmp_path))).encode(), env, event="PostToolUse")
    finally:
        server.close()
    assert server.connections == 1 and done.returncode == 0 and done.stdout == b""
    assert _calls(short_home, session) == 0  # the fake dispatcher "ran" it; the client must not run it too
    assert [e["event"] for e in log_entries(short_home)].count("daemon_answer_lost") == 1
    cold = run_hook(json.dumps(post_tool(session, cwd=str(tmp_path))).encode(), {**env, "OMCM_DAEMON": "0"})
    assert cold.returncode == 0 and _calls(short_home, session) == 1  # the plugin does count a call it runs


def _late_request() -> bytes:
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"})).encode()
    env = {b"OMCM_LOAD_PLUGINS": b"no-such-plugin"}
    return wire.encode_request(wire.CALL, b"PreToolUse", env, raw, b"/", 0o022, time.monotonic() - 1.0)


def test_the_daemon_refuses_a_call_whose_accept_by_deadline_has_passed(tmp_path):
    warm = daemon.Daemon(str(tmp_path / "unused.sock"), sessions.Policy.from_env({}), 250)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        ours.sendall(_late_request())
        ours.shutdown(socket.SHUT_WR)
        warm._answer(theirs)
        theirs.shutdown(socket.SHUT_WR)
        ours.settimeout(5)
        reply = ours.recv(65536)
    assert reply == wire.encode_refusal("late") and warm.served == 0


def test_the_daemon_does_not_run_a_call_past_its_deadline_after_its_turn_came(tmp_path):
    # The second check: the caller's turn came (it waited in the queue), but too late.
    warm = daemon.Daemon(str(tmp_path / "unused.sock"), sessions.Policy.from_env({}), 250)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        assert warm._run(theirs, wire.Request(_late_request()), []) is None
        theirs.shutdown(socket.SHUT_WR)
        ours.settimeout(5)
        reply = ours.recv(65536)
    assert reply == wire.encode_refusal("late") and warm.served == 0


def test_the_daemon_finishes_a_call_in_flight_before_it_exits(rel_site, tmp_path, hook_client):
    home = tmp_path / "home"
    env = rel_site.env(
        home,
        ["rel-answer", "rel-hang"],
        OMCM_DAEMON="1",
        OMCM_DAEMON_IDLE_S="60",
        OMCM__CORE__PLUGIN_BUDGET_MS="8000",
        REL_HANG_S="3",
    )
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(tmp_path))).encode()
    cold = run_hook(raw, {**env, "OMCM_DAEMON": "0"}, event="PreToolUse")
    proc = start_daemon(env)
    try:
        call = spawn_hook(raw, env, event="PreToolUse")
        deadline = time.monotonic() + 20
        while not (control.details(env) or {}).get("sessions"):  # the daemon has read the call
            assert time.monotonic() < deadline, "the call never reached the daemon"
            time.sleep(0.05)
        time.sleep(0.5)  # well inside the plugin's 3 s: the call is running
        assert daemon.stop(env, timeout=20)
        out, _err = call.communicate(timeout=30)
    finally:
        daemon.stop(env)
        proc.wait(timeout=30)
    assert call.returncode == 0 and out == cold.stdout and b"rel-answer saw Bash" in out
    events = [e["event"] for e in log_entries(home)]
    assert "daemon_answer_lost" not in events and "daemon_not_used" not in events


_PEER_SCRIPT = """
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(20)
sock.connect(sys.argv[1])
data = b""
try:
    sock.sendall(sys.stdin.buffer.read())
    sock.shutdown(socket.SHUT_WR)
    while chunk := sock.recv(65536):
        data += chunk
except ConnectionError:
    pass  # shut out: what came before is the answer
sys.stdout.buffer.write(data)
"""


@pytest.mark.skipif(os.getuid() != 0, reason="connecting as another uid needs root")
def test_the_daemon_answers_nothing_to_a_caller_of_another_uid(rel_site, short_home, tmp_path):
    env = rel_site.env(short_home, ["rel-answer"], OMCM_DAEMON="1", OMCM_DAEMON_IDLE_S="60")
    proc = start_daemon(env)
    path = daemon.socket_path(env)
    raw = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd="/")).encode()
    request = wire.encode_request(
        wire.CALL, b"PreToolUse", wire.call_env({k.encode(): v.encode() for k, v in env.items()}), raw,
        b"/", 0o022, time.monotonic() + 20,
    )  # fmt: skip
    try:
        # Open the folder and socket to everyone, as a mistake or another bug might:
        # the daemon's own check of the caller's uid is all that is left.
        for where, mode in ((short_home, 0o755), (Path(path).parent, 0o755), (Path(path), 0o777)):
            where.chmod(mode)
        foreign = subprocess.run(
            ["/usr/bin/python3", "-I", "-S", "-c", _PEER_SCRIPT, path],
            input=request,
            capture_output=True,
            timeout=30,
            cwd="/",
            preexec_fn=lambda: (os.setgid(NOBODY), os.setuid(NOBODY)),
        )
    finally:
        daemon.stop(env)
        proc.wait(timeout=30)
    assert foreign.returncode == 0, foreign.stderr
    assert foreign.stdout == b""
    assert "daemon_foreign_peer" in [e["event"] for e in log_entries(short_home)]
