"""The search server: the same answers as a search in process, never a hang, never someone else's socket.

Real `omcm` processes on a real store; the server is the real one the CLI starts
(`python -m omcm_post_tool_observer.search_server`), detached. The store has no
vectors, so `--hybrid` runs the server's whole path without loading the model.
Planted servers are real sockets answered by a thread of this test.
"""

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import omcm_post_tool_observer
import pytest
from omcm_post_tool_observer import search_client

from omcm_core import local_socket
from omcm_core.testing import post_tool_payload

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
BOUND_S = 90  # how long a test waits for an event on a loaded machine (never a timing assertion)


@pytest.fixture
def home(omcm_dispatch, omcm_home, tmp_path):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    project = tmp_path / "project"
    project.mkdir()
    for i in range(6):
        payload = post_tool_payload("Bash", {"command": f"make t{i}"}, {"stdout": f"zorblax step {i} ok"})
        dispatch({**payload, "cwd": str(project)})
    yield omcm_home, project
    _stop_and_wait(omcm_home)


def _lock_free(home: Path) -> bool:
    lock = search_client.socket_path(home) + ".lock"
    if not os.path.exists(lock):
        return True
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _until(check, what: str):
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {BOUND_S} s: {what}")


def _stop_and_wait(home: Path) -> None:
    """No server left behind by a test (it is detached: it would outlive pytest)."""
    with contextlib.suppress(Exception):
        search_client.stop(home, wait=5)
    _until(lambda: _lock_free(home), "the search server left")


def omcm(home, *args, **extra):
    omcm_home, project = home
    env = {**os.environ, **ENV, "OMCM_HOME": str(omcm_home), "OMCM_DAEMON": "0", **extra}
    env.pop("CLAUDE_PROJECT_DIR", None)
    argv = [sys.executable, "-m", "omcm_core", *args]
    return subprocess.run(argv, capture_output=True, env=env, cwd=project, timeout=120)


def in_process(home, *args):
    """The search with no server, on the route of a first run (a command cache of its own: every plugin loaded)."""
    return omcm(home, *args, OMCM_SEARCH_SERVER="0", OMCM_TEST_FRESH_CACHE=uuid.uuid4().hex)


def _served(home) -> int:
    status = search_client.status(home[0])
    return -1 if status is None else status["served"]


def _server_running(home) -> bool:
    return search_client.status(home[0]) is not None


def _log(home) -> str:
    return "".join(p.read_text() for p in (home[0] / "logs").glob("*"))


def test_the_server_answers_as_a_search_in_process_byte_for_byte(home):
    first = omcm(home, "search", "--hybrid", "zorblax")  # answered here; starts the server
    assert first.returncode == 0 and first.stdout == in_process(home, "search", "--hybrid", "zorblax").stdout
    _until(lambda: _server_running(home), "the server listens")
    for argv in (["--hybrid", "zorblax"], ["--hybrid", "zorblax", "step", "--json"], ["--semantic", "zorblax"]):
        before = _served(home)
        proc = omcm(home, "search", *argv)
        assert _served(home) == before + 1, argv  # the server answered this one
        expected = in_process(home, "search", *argv)
        assert (proc.returncode, proc.stdout, proc.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    assert b"zorblax" in omcm(home, "search", "--hybrid", "zorblax").stdout


def test_the_server_leaves_when_idle(home):
    omcm(home, "search", "--hybrid", "zorblax", OMCM_SEARCH_SERVER_IDLE_S="1")
    _until(lambda: "search_server_listening" in _log(home), "the server started")
    _until(lambda: '"reason": "idle"' in _log(home), "the server left, idle")
    _until(lambda: _lock_free(home), "its lock is free")
    assert not os.path.exists(search_client.socket_path(home[0]))


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_the_server_leaves_when_its_store_is_deleted_or_replaced(home, how):
    omcm(home, "search", "--hybrid", "zorblax")
    _until(lambda: _server_running(home), "the server listens")
    db = home[0] / "omcm.db"
    if how == "deleted":
        for name in ("omcm.db", "omcm.db-wal", "omcm.db-shm"):
            (home[0] / name).unlink(missing_ok=True)
    else:
        copy = home[0] / "copy.db"
        copy.write_bytes(db.read_bytes())
        os.replace(copy, db)
    _until(lambda: '"reason": "store_gone"' in _log(home), "the server left with its store")
    _until(lambda: _lock_free(home), "its lock is free")
    assert not os.path.exists(search_client.socket_path(home[0]))


def test_uninstall_removes_the_socket_and_the_server_leaves(home, tmp_path):
    omcm(home, "search", "--hybrid", "zorblax")
    _until(lambda: _server_running(home), "the server listens")
    settings = tmp_path / "settings.json"
    assert omcm(home, "install", "--settings", str(settings)).returncode == 0
    proc = omcm(home, "uninstall", "--settings", str(settings))
    assert proc.returncode == 0, proc.stderr
    _until(lambda: '"reason": "socket_removed"' in _log(home), "the server left")
    _until(lambda: _lock_free(home), "its lock is free")


class Planted:
    """A server of ours in the socket's place: answers with `reply` (None: accepts and never answers)."""

    def __init__(self, path: str, reply: bytes | None) -> None:
        self.path, self.reply, self.connections = path, reply, 0
        listening = local_socket.listen(path)  # in a folder of ours, made loose or linked afterwards
        assert listening is not None
        self.sock = listening
        self.held: list = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            if self.reply is None:
                self.held.append(conn)  # never answers
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


FAKE = json.dumps({"ok": True, "hits": []}).encode()


def _fresh_run_folder(home: Path, mode: int) -> Path:
    run = home / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    os.chmod(run, mode)
    return run


@pytest.mark.parametrize("mode", [0o755, 0o777, 0o710])
def test_a_socket_in_a_folder_others_may_enter_is_refused(home, mode):
    omcm(home, "search", "--json")  # the command remembered, nothing started
    _fresh_run_folder(home[0], 0o700)
    planted = Planted(search_client.socket_path(home[0]), FAKE)
    os.chmod(home[0] / "run", mode)
    try:
        proc = omcm(home, "search", "--hybrid", "zorblax")
        assert proc.returncode == 0 and proc.stdout == in_process(home, "search", "--hybrid", "zorblax").stdout
        assert b"zorblax" in proc.stdout and planted.connections == 0
        assert os.stat(home[0] / "run").st_mode & 0o777 == mode  # nothing started there, nothing "repaired"
        assert "search_server_refused" in _log(home)
    finally:
        planted.close()


def test_a_run_folder_that_is_a_link_is_refused(home, tmp_path):
    omcm(home, "search", "--json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home[0] / "run").symlink_to(elsewhere)
    planted = Planted(str(elsewhere / Path(search_client.socket_path(home[0])).name), FAKE)  # seen through the link
    try:
        proc = omcm(home, "search", "--hybrid", "zorblax")
        assert proc.stdout == in_process(home, "search", "--hybrid", "zorblax").stdout and b"zorblax" in proc.stdout
        assert planted.connections == 0
    finally:
        planted.close()


@pytest.mark.parametrize(
    "reply",
    [
        None,
        b"not json",
        b'{"ok": true, "hits": [{"event_id": "x"}]}',
        json.dumps({"ok": True, "hits": [dict.fromkeys(search_client.HIT_TYPES, "text")]}).encode(),
        b'{"ok": false}',
        b"",
    ],
)
def test_a_hung_or_wrong_server_gets_an_answer_in_process_within_the_wait(home, reply):
    omcm(home, "search", "--json")
    _fresh_run_folder(home[0], 0o700)
    planted = Planted(search_client.socket_path(home[0]), reply)
    try:
        proc = omcm(home, "search", "--hybrid", "zorblax", OMCM_SEARCH_SERVER_WAIT_S="1")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == in_process(home, "search", "--hybrid", "zorblax").stdout and b"zorblax" in proc.stdout
        assert planted.connections == 1  # it was asked, and its silence or nonsense not believed
    finally:
        planted.close()


def test_a_dead_server_s_socket_gets_an_answer_in_process_and_a_new_server(home):
    omcm(home, "search", "--json")
    _fresh_run_folder(home[0], 0o700)
    dead = local_socket.listen(search_client.socket_path(home[0]))
    assert dead is not None
    dead.close()  # the file stays, nobody listens: connection refused
    proc = omcm(home, "search", "--hybrid", "zorblax")
    assert proc.stdout == in_process(home, "search", "--hybrid", "zorblax").stdout and b"zorblax" in proc.stdout
    _until(lambda: _server_running(home), "a new server listens")


def test_a_server_of_other_code_is_not_asked_to_answer(home):
    omcm(home, "search", "--hybrid", "zorblax")
    _until(lambda: _server_running(home), "the server listens")
    path = search_client.socket_path(home[0])
    request = {"op": "search", "code": "another version", "store": search_client.store_id(home[0] / "omcm.db")}
    request.update(mode="hybrid", text="zorblax", filters={}, limit=5)
    assert search_client.exchange(path, request, 30) == {"ok": False, "why": "other code"}
    # The server's own stamp: this pytest process has other folders on its path (and under xdist, others
    # than when run alone), so its code_stamp() is not the one an `omcm search` process computes.
    status = search_client.status(home[0])
    assert status is not None
    request.update(code=status["code"], store=[0, 0])
    assert search_client.exchange(path, request, 30) == {"ok": False, "why": "other store"}
    request.update(store=search_client.store_id(home[0] / "omcm.db"))
    assert search_client.exchange(path, request, 30)["ok"] is True


def test_stop_server_stops_it(home):
    omcm(home, "search", "--hybrid", "zorblax")
    _until(lambda: _server_running(home), "the server listens")
    assert omcm(home, "search", "--stop-server").stdout == b"search server stopped\n"
    _until(lambda: _lock_free(home), "the server left")
    assert omcm(home, "search", "--stop-server").stdout == b"no search server was running\n"


def test_many_first_searches_at_once_start_one_server(home):
    omcm(home, "search", "--json")
    env = {**os.environ, **ENV, "OMCM_HOME": str(home[0]), "OMCM_DAEMON": "0"}
    env.pop("CLAUDE_PROJECT_DIR", None)
    argv = [sys.executable, "-m", "omcm_core", "search", "--hybrid", "zorblax"]
    procs = [subprocess.Popen(argv, env=env, cwd=home[1], stdout=subprocess.PIPE) for _ in range(6)]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(o == outputs[0] and b"zorblax" in o for o in outputs)
    assert _log(home).count("search_server_started") == 1  # every command has exited: none will start one now
    _until(lambda: _server_running(home), "the server listens")


def test_the_server_leaves_when_a_folder_on_its_path_changes(home, tmp_path):
    # What an upgrade or an uninstall does to site-packages: a distribution appears or goes.
    site = tmp_path / "site"
    site.mkdir()
    omcm(home, "search", "--hybrid", "zorblax", PYTHONPATH=str(site))
    _until(lambda: _server_running(home), "the server listens")
    (site / "newly_installed-1.0.dist-info").mkdir()
    _until(lambda: '"reason": "code_changed"' in _log(home), "the server left")
    _until(lambda: _lock_free(home), "its lock is free")
