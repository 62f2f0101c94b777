"""``omcm daemon status`` and ``omcm daemon stop``: talk to the warm dispatcher from outside."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from omcm_core._runtime import wire
from omcm_core._runtime.wire import socket_path
from omcm_core.files import file_lock

#: Asks the daemon what keeps it alive; it answers ``accepted`` then ``done 0`` with a JSON object.
DETAILS = b"details"


def status(env: dict | None = None) -> str | None:
    """The socket path if a daemon answers there, else None."""
    path = socket_path(dict(os.environ if env is None else env))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        wire.connect(sock, os.fsencode(path))
        return path
    except OSError:
        return None
    finally:
        sock.close()


def details(env: dict | None = None, timeout: float = 5.0) -> dict | None:
    """What the running daemon reports about itself (pid, sessions, memory...), or None if none answers."""
    import json

    from omcm_core._runtime.client import call_daemon

    path = socket_path(dict(os.environ if env is None else env))
    request = wire.encode_request(DETAILS, b"", {}, b"", accept_by=time.monotonic() + timeout)
    try:
        _code, out, _err = call_daemon(os.fsencode(path), request, timeout, timeout)
        return json.loads(out)
    except (OSError, ValueError, wire.NotRun, wire.Lost):
        return None  # none running, or one from before this request existed


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
