"""The warm dispatcher: plugin manager, config code and store open, reached by a socket.

Started on demand by the hook client (``omcm daemon run``), one per
installation (interpreter folder and version, omcm_core's folder, PYTHONPATH,
OMCM_HOME), never two at once (an exclusive lock beside the socket, handed down
by the client that starts it), owner-only (socket in a 0700 folder, mode 0600,
peer uid checked on Linux). It exits after ``OMCM_DAEMON_IDLE_S`` seconds
without work (default 300), as soon as omcm's or a loaded plugin's code changes
on disk, and after a call in which a plugin overran its budget (its thread may
hold the GIL); before exiting it refuses every queued connection and finishes
the calls in flight, so no call is dropped (the protocol is in ``wire.py``).

Requests are answered one at a time by :func:`omcm_core._runtime.dispatch.handle`
under the caller's umask, working directory and environment subset
(``callstate.py``), exactly as in process. A caller that would wait more than
``OMCM_DAEMON_QUEUE_MS`` (default 250) for its turn, or past its deadline, is
told to answer in process instead, so one slow plugin never queues the session.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from pathlib import Path

from omcm_core._runtime import callstate, dispatch, wire
from omcm_core._runtime.client import socket_path, socket_problem
from omcm_core._runtime.codewatch import CodeWatch
from omcm_core.files import file_lock
from omcm_core.log import get_logger
from omcm_core.paths import ensure_private_dir

_log = get_logger(component="daemon")


def _overran() -> bool:
    """True if a plugin thread of the call just answered is still running (it overran its budget)."""
    for thread in threading.enumerate():
        if thread.name == "omcm-plugins":
            thread.join(0.05)  # a worker that finished may still be on its way out
            if thread.is_alive():
                return True
    return False


class Daemon:
    def __init__(self, path: str, idle_s: float, queue_ms: float) -> None:
        self.path = path
        self.idle_s = idle_s
        self.queue_s = queue_ms / 1000
        self.one_call_at_a_time = threading.Lock()
        self.last_activity = time.monotonic()
        self.stopping = threading.Event()
        self.code = CodeWatch()
        self.served = 0
        self.in_flight: set = set()
        self.keeper = dispatch.StoreKeeper()

    def serve(self, server: socket.socket) -> None:
        """Accept until idle or told to stop, then refuse the backlog and finish calls in flight."""
        server.settimeout(0.5)
        while not self.stopping.is_set():
            if not self.in_flight and time.monotonic() - self.last_activity > self.idle_s:
                _log.info("daemon_idle_exit", served=self.served)
                break
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            self._start(conn)
        self.stopping.set()
        self._drain(server)
        for thread in list(self.in_flight):
            thread.join()

    def _start(self, conn: socket.socket) -> None:
        thread = threading.Thread(target=self._serve_one, args=(conn,), daemon=True)
        self.in_flight.add(thread)  # not activity yet: a status probe must not keep us alive
        thread.start()

    def _drain(self, server: socket.socket) -> None:
        """Stop listening; every connection already queued gets an explicit refusal."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # new callers find no daemon and start a fresh one
        server.setblocking(False)
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                break
            with conn, contextlib.suppress(OSError):
                conn.sendall(wire.encode_refusal("stopping"))
        server.close()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._answer(conn)
        except Exception as exc:
            _log.error("daemon_request_failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.in_flight.discard(threading.current_thread())

    def _answer(self, conn: socket.socket) -> None:
        if not _same_user(conn):
            _log.error("daemon_foreign_peer")
            return
        data = bytearray()
        wire.receive(conn, data, time.monotonic() + 30)
        if not data:
            return  # a status probe: connected and left
        request = wire.Request(bytes(data))
        if request.verb == wire.STOP:
            self.stopping.set()
            conn.sendall(wire.encode_refusal("stopping"))
            return
        wait = min(self.queue_s, request.accept_by - time.monotonic())
        if wait <= 0 or not self.one_call_at_a_time.acquire(timeout=wait):
            conn.sendall(wire.encode_refusal("late" if wait <= 0 else "busy"))
            return
        try:
            reply = self._run(conn, request)
        finally:
            self.one_call_at_a_time.release()
        if reply is not None:
            conn.sendall(reply)

    def _run(self, conn: socket.socket, request: wire.Request) -> bytes | None:
        """Run one call if still wanted; the reply to send, or None if the caller had gone."""
        if self.stopping.is_set() or time.monotonic() > request.accept_by:
            conn.sendall(wire.encode_refusal("stopping" if self.stopping.is_set() else "late"))
            return None
        changed = self.code.changed()
        if changed:
            _log.info("daemon_code_changed_exit", served=self.served, changed=changed)
            self.stopping.set()
            conn.sendall(wire.encode_refusal("restarting: code changed"))
            return None
        try:
            conn.sendall(wire.ACCEPTED)  # from here on the client must not answer in process
        except OSError:
            return None  # the caller gave up and answers in process: do not run it here too
        with callstate.applied(request.umask, request.cwd, request.env):
            outcome = dispatch.handle(request.raw, request.event or None, request.env, keeper=self.keeper)
        self.served += 1
        self.last_activity = time.monotonic()
        if outcome.overran:
            # Its thread may still run (perhaps in C code holding the GIL): retire, so no
            # other session's call waits behind it; the next call starts a fresh dispatcher.
            _log.warning("daemon_retiring_after_overrun", served=self.served)
            self.stopping.set()
        return wire.encode_done(outcome.exit_code, outcome.stdout, outcome.stderr)


def _same_user(conn: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the 0700 folder and 0600 socket already keep others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


@contextlib.contextmanager
def _run_lock(path: str, env: dict):
    """The lock that makes this the only daemon here: handed down by the client that started us, or taken."""
    inherited = env.pop("OMCM_DAEMON_LOCK_FD", None)
    os.environ.pop("OMCM_DAEMON_LOCK_FD", None)
    if inherited and inherited.isdigit():
        try:
            os.fstat(int(inherited))
            yield
            return
        except OSError:
            pass  # not a descriptor after all (started by hand with the variable set)
    with file_lock(Path(path + ".lock"), timeout=0):
        yield


def _bind(path: str) -> socket.socket | None:
    """A listening socket at ``path``; None (logged) if the folder is unsafe or the path is taken."""
    problem = socket_problem(os.fsencode(path))
    if problem and not problem.endswith("is not a socket"):
        _log.error("daemon_socket_unsafe", reason=problem, socket=path)
        return None
    try:
        os.unlink(path)  # left by a daemon that was killed
    except FileNotFoundError:
        pass
    except OSError:  # a folder: repaired if it is an empty one of ours
        from omcm_core._runtime.starter import repair

        if not repair(path):
            return None
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        server.bind(path)
    finally:
        os.umask(old_umask)
    server.listen(64)
    return server


def run(env: dict | None = None) -> int:
    """Serve until idle or outdated. Returns at once if another daemon holds the lock."""
    env = dict(os.environ if env is None else env)
    path = socket_path(env)
    ensure_private_dir(Path(os.path.dirname(path)))
    try:
        with _run_lock(path, env):
            warm_start_ns = time.time_ns()
            dispatch.manager_for(env)
            from omcm_core import config, context, redact, store  # noqa: F401
            from omcm_core._runtime import breaker, merge, payload  # noqa: F401

            payload.converter()
            daemon = Daemon(
                path, float(env.get("OMCM_DAEMON_IDLE_S", "300")), float(env.get("OMCM_DAEMON_QUEUE_MS", "250"))
            )
            daemon.code.start(warm_start_ns)
            server = _bind(path)
            if server is None:
                return 1
            _log.info("daemon_started", pid=os.getpid(), socket=path)
            try:
                daemon.serve(server)
            finally:
                server.close()
                daemon.keeper.close()
    except TimeoutError:
        return 0  # another daemon is serving
    if _overran():
        os._exit(0)  # a plugin thread still runs, maybe holding the GIL: do not wait for it at exit
    return 0


def status(env: dict | None = None) -> str | None:
    """The socket path if a daemon answers there, else None."""
    path = socket_path(dict(os.environ if env is None else env))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return path
    except OSError:
        return None
    finally:
        sock.close()


def stop(env: dict | None = None, timeout: float = 5.0) -> bool:
    """Ask the daemon to exit and wait until it has; False if none was running."""
    from omcm_core._runtime.client import call_daemon

    env = dict(os.environ if env is None else env)
    path = socket_path(env)
    request = wire.encode_request(wire.STOP, b"", {}, b"", accept_by=time.monotonic() + timeout)
    try:
        call_daemon(os.fsencode(path), request, timeout, timeout)
    except wire.NotRun:
        pass  # "stopping": the answer we expect
    except OSError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with file_lock(Path(path + ".lock"), timeout=0):
                return True
        except TimeoutError:
            time.sleep(0.05)
    return False
