"""The warm dispatcher's socket: bound owner-only, one daemon per socket, callers of our uid only."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from pathlib import Path

from omcm_core._runtime import wire
from omcm_core._runtime.wire import socket_problem
from omcm_core.files import file_lock
from omcm_core.log import get_logger

_log = get_logger(component="daemon")


def peer_pid(conn: socket.socket) -> int | None:
    """The caller's pid (0 when unknown); None if it runs as another user."""
    if not hasattr(socket, "SO_PEERCRED"):
        return 0  # the 0700 folder and 0600 socket already keep others out
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid if uid == os.getuid() else None


@contextlib.contextmanager
def run_lock(path: str, env: dict):
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


def bind(path: str) -> socket.socket | None:
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
        wire.bind(server, os.fsencode(path))
    finally:
        os.umask(old_umask)
    server.listen(64)
    return server
