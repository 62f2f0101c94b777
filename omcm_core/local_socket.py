"""A plugin's own background server, reached the way the warm dispatcher is: owner-only, one at a time.

The dispatcher's helpers (``omcm_core._runtime``: wire, listener, starter) behind
a public name, so a plugin that keeps something expensive loaded between
commands (post-tool-observer's search server) uses the same checked rules
instead of a copy:

- the socket lives in ``OMCM_HOME/run/``, a real folder of ours with mode 0700
  (:func:`unsafe` says why one must not be used); a path longer than an AF_UNIX
  address holds is reached through the folder's descriptor (:func:`connect`);
- :func:`listen` binds it 0600 (removing one left by a killed server);
- :func:`peer_uid` is the other end's uid (Linux), to refuse other users;
- :func:`spawn_with_lock` starts the server detached (own session, ``/``,
  stdio on /dev/null, the hook's environment subset) holding ``<socket>.lock``,
  so of many simultaneous starters one starts it; the server takes the lock
  over with :func:`hold_lock`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path
    from socket import socket


def socket_path(home: Path | str, name: str) -> str:
    """``OMCM_HOME/run/<name>-<key>.sock``, one per installation (interpreter, omcm's folder) and home."""
    from omcm_core._runtime import wire

    home_abs = os.path.abspath(os.path.expanduser(str(home)))
    key = wire.installation() + b"\0" + os.fsencode(home_abs)
    return os.path.join(home_abs, "run", f"{name}-{wire._fnv1a(key):016x}.sock")


def unsafe(path: str) -> str | None:
    """Why the socket at ``path`` must not be used (its folder not a 0700 folder of ours, not a socket), or None."""
    from omcm_core._runtime.wire import socket_problem

    problem = socket_problem(os.fsencode(path))
    return None if problem is None else str(problem)


def connect(sock, path: str) -> None:
    """``sock.connect(path)`` for a path of any length."""
    from omcm_core._runtime import wire

    wire.connect(sock, os.fsencode(path))


def peer_uid(sock) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED), or -1 where unknown."""
    from omcm_core._runtime import wire

    return int(wire.peer_uid(sock))


def peer_is_us(sock) -> bool:
    uid = peer_uid(sock)
    return uid == os.getuid() or (uid == -1 and sys.platform != "linux")


def listen(path: str) -> socket | None:
    """A listening socket at ``path`` (0600, in the checked folder); None (logged) if unsafe or taken."""
    from omcm_core._runtime import listener

    return listener.bind(path)


def hold_lock(path: str, env: dict) -> AbstractContextManager[None]:
    """Context manager: the lock beside ``path``, handed down by :func:`spawn_with_lock` or taken (TimeoutError: taken)."""
    from omcm_core._runtime import listener

    return listener.run_lock(path, env)


def spawn_with_lock(argv: list[str], path: str, env: Mapping[str, str], extra_env: Mapping[str, str]) -> bool:
    """Start ``argv`` detached holding ``<path>.lock`` unless someone holds it; True if this call started it."""
    import fcntl
    from pathlib import Path

    from omcm_core._runtime import starter
    from omcm_core.paths import ensure_private_dir

    ensure_private_dir(Path(path).parent)
    if unsafe(path):
        return False
    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # one is running or starting
        child = {k: v for k, v in env.items() if k.startswith("PYTHON")}
        child.update(starter._daemon_env(env), **extra_env)
        child[starter.LOCK_FD_VAR] = str(fd)
        starter._spawn_detached(argv, child, fd)
        return True
    finally:
        os.close(fd)  # the child's copy keeps the lock
