"""The warm dispatcher: plugin manager, config code and store open, reached by a socket.

Started on demand by the hook client (``omcm daemon run``), one per
installation (interpreter, PYTHONPATH, OMCM_HOME), never two at once (an
exclusive lock beside the socket), owner-only (socket in a 0700 folder, mode
0600, peer uid checked on Linux). It exits after ``OMCM_DAEMON_IDLE_S``
seconds without work (default 300), and as soon as the installed plugins or
omcm's own code change on disk, so the next call starts a fresh one.

Requests are answered one at a time by :func:`omcm_core._runtime.dispatch.handle` with
the caller's environment, exactly as in process. A caller that would wait more
than ``OMCM_DAEMON_QUEUE_MS`` (default 250) for its turn is told to answer in
process instead, so one slow plugin never queues the whole session.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Optional

from omcm_core._runtime import dispatch
from omcm_core._runtime.client import ACCEPTED, PROTOCOL, socket_path
from omcm_core.files import file_lock
from omcm_core.log import get_logger
from omcm_core.paths import ensure_private_dir

_log = get_logger(component="daemon")


def _fingerprint() -> tuple:
    """mtimes of everything whose change must restart the daemon."""
    stamps = []
    cwd = os.getcwd()
    for entry in sys.path:
        if entry in ("", cwd):
            continue  # -m puts the working directory first; it is not where plugins live
        with contextlib.suppress(OSError):
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
    for name, module in list(sys.modules.items()):
        if name.split(".")[0].startswith("omcm") and getattr(module, "__file__", None):
            with contextlib.suppress(OSError):
                stamps.append((module.__file__, os.stat(module.__file__).st_mtime_ns))
    return tuple(sorted(stamps))


def parse_request(data: bytes) -> tuple[str, dict, bytes]:
    fields = data.split(b"\n", 4)
    if len(fields) != 5 or fields[0] != PROTOCOL:
        raise ValueError("not an omcm request")
    argv_event = fields[1].decode()
    env_len, raw_len = int(fields[2]), int(fields[3])
    body = fields[4]
    env_block, raw = body[:env_len], body[env_len : env_len + raw_len]
    env = {}
    for item in env_block.split(b"\0") if env_block else ():
        key, _, value = item.decode("utf-8", "surrogateescape").partition("=")
        env[key] = value
    return argv_event, env, raw


def encode_reply(outcome: dispatch.Outcome) -> bytes:
    head = b"\n".join([PROTOCOL, str(outcome.exit_code).encode(), str(len(outcome.stdout)).encode(), str(len(outcome.stderr)).encode()])
    return head + b"\n\n" + outcome.stdout + outcome.stderr


FALLBACK_REPLY = PROTOCOL + b"\nfallback\n\n"
STOP = "__omcm_stop__"


class Daemon:
    def __init__(self, path: str, idle_s: float, queue_ms: float) -> None:
        self.path = path
        self.idle_s = idle_s
        self.queue_s = queue_ms / 1000
        self.work = threading.Lock()
        self.last_activity = time.monotonic()
        self.stopping = threading.Event()
        self.fingerprint: dict[str, int] = {}
        self.started_ns = time.time_ns()
        self.served = 0
        self.keeper = dispatch.StoreKeeper()

    def _changed(self) -> list[str]:
        """Files changed since start-up; a module first imported now counts only if newer."""
        known = self.fingerprint
        changed = []
        for path, mtime in _fingerprint():
            if path in known:
                if known[path] != mtime:
                    changed.append(path)
            elif mtime >= self.started_ns:
                changed.append(path)
            else:
                known[path] = mtime
        return changed

    def serve(self, server: socket.socket) -> None:
        server.settimeout(0.5)
        while not self.stopping.is_set():
            if time.monotonic() - self.last_activity > self.idle_s:
                _log.info("daemon_idle_exit", served=self.served)
                return
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not _same_user(conn):
                    _log.error("daemon_foreign_peer")
                    return
                conn.settimeout(30)
                chunks = []
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
                if not chunks:
                    return  # a status probe: connected and left
                if not self.work.acquire(timeout=self.queue_s):
                    conn.sendall(FALLBACK_REPLY)
                    return
                try:
                    argv_event, env, raw = parse_request(b"".join(chunks))
                    if argv_event == STOP:
                        self.stopping.set()
                        conn.sendall(FALLBACK_REPLY)
                        return
                    changed = self._changed()
                    if changed:
                        _log.info("daemon_code_changed_exit", served=self.served, changed=changed)
                        conn.sendall(FALLBACK_REPLY)
                        self.stopping.set()
                        return
                    conn.sendall(ACCEPTED)  # from here on the client must not answer in process
                    outcome = dispatch.handle(raw, argv_event or None, env, keeper=self.keeper)
                    self.served += 1
                    self.last_activity = time.monotonic()
                finally:
                    self.work.release()
                conn.sendall(encode_reply(outcome))
        except Exception as exc:
            _log.error("daemon_request_failed", error=f"{type(exc).__name__}: {exc}")


def _same_user(conn: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the 0700 folder and 0600 socket already keep others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def run(env: Optional[dict] = None) -> int:
    """Serve until idle or outdated. Returns at once if another daemon holds the lock."""
    env = dict(os.environ if env is None else env)
    path = socket_path(env)
    ensure_private_dir(Path(os.path.dirname(path)))
    try:
        with file_lock(Path(path + ".lock"), timeout=0):
            warm_start_ns = time.time_ns()
            dispatch.manager_for(env)
            from omcm_core import config, context, redact, store  # noqa: F401
            from omcm_core._runtime import breaker, merge, payload  # noqa: F401

            payload.converter()
            daemon = Daemon(path, float(env.get("OMCM_DAEMON_IDLE_S", "300")), float(env.get("OMCM_DAEMON_QUEUE_MS", "250")))
            daemon.started_ns = warm_start_ns
            # Anything modified while we were loading shows up as changed on the first request.
            daemon.fingerprint = {path: mtime for path, mtime in _fingerprint() if mtime < warm_start_ns}
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # left by a daemon that was killed
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old_umask = os.umask(0o177)
            try:
                server.bind(path)
            finally:
                os.umask(old_umask)
            server.listen(64)
            _log.info("daemon_started", pid=os.getpid(), socket=path)
            try:
                daemon.serve(server)
            finally:
                server.close()
                daemon.keeper.close()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
    except TimeoutError:
        return 0  # another daemon is serving
    return 0


def status(env: Optional[dict] = None) -> Optional[str]:
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


def stop(env: Optional[dict] = None, timeout: float = 5.0) -> bool:
    """Ask the daemon to exit and wait until it has; False if none was running."""
    from omcm_core._runtime.client import ask_daemon

    env = dict(os.environ if env is None else env)
    path = socket_path(env)
    try:
        ask_daemon(path, STOP, {}, b"", timeout=timeout)
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
