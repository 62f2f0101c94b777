"""The hook client's slow path: say why the dispatcher was not used, start one if none runs.

Runs only when a call is answered in process; the start itself runs after the
answer is written (:func:`after_fallback` returns it). Starting is guarded twice: the
caller takes the dispatcher's own lock (``<socket>.lock``) without waiting and
hands it to the new process, so of twenty simultaneous cold calls exactly one
starts a dispatcher and the others do not wait for it; and the socket's folder
must be ours (see :func:`omcm_core._runtime.wire.socket_problem`).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from omcm_core import log
from omcm_core.paths import omcm_home

_log = log.get_logger(component="client")
#: The inherited descriptor that holds ``<socket>.lock`` for a dispatcher we start.
LOCK_FD_VAR = "OMCM_DAEMON_LOCK_FD"


def after_fallback(
    environ: Mapping[str, str], env: Mapping[str, str], why: str | None, start: bool, lost: str | None
) -> Callable[[], None] | None:
    """Log why the call is answered in process; return what starts a dispatcher, if one should start."""
    log.configure(omcm_home(env), env.get("OMCM_LOG_LEVEL"))
    if lost:
        _log.error("daemon_answer_lost", detail=lost)
        return None
    from omcm_core._runtime.wire import socket_path

    path = socket_path(environ)
    if why and why.endswith("is not a socket"):
        start = repair(path)
    elif why:
        # Refusals while busy are routine; anything else (an unsafe folder, a foreign peer) is not.
        level = _log.debug if why.startswith(("busy", "stopping", "late", "restarting")) else _log.warning
        level("daemon_not_used", reason=why, socket=path)
    if not start:
        return None

    def start_dispatcher() -> None:
        try:
            spawn(environ, path)
        except Exception as exc:  # the call is answered all the same
            _log.error("daemon_start_failed", error=f"{type(exc).__name__}: {exc}", socket=path)

    return start_dispatcher


def repair(path: str) -> bool:
    """Remove an empty folder of ours squatting on the socket path; True if the path is free now."""
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            os.rmdir(path)
            _log.warning("daemon_socket_path_repaired", socket=path, removed="empty folder")
            return True
    except OSError as exc:
        _log.error("daemon_socket_path_blocked", socket=path, error=str(exc))
        return False
    _log.error(
        "daemon_socket_path_blocked", socket=path, error="not a socket and not an empty folder of ours; remove it"
    )
    return False


def spawn(environ: Mapping[str, str], path: str) -> bool:
    """Start ``omcm daemon run`` unless one holds the lock; True if this call started it."""
    import fcntl

    from omcm_core._runtime.wire import socket_problem
    from omcm_core.paths import ensure_private_dir

    ensure_private_dir(Path(path).parent)
    problem = socket_problem(os.fsencode(path))
    if problem:
        _log.warning("daemon_not_started", reason=problem, socket=path)
        return False
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # one is running or starting: the next call will reach it
        env = {k: v for k, v in environ.items() if k.startswith("PYTHON")}
        env.update(_daemon_env(environ), **{LOCK_FD_VAR: str(fd)})
        _spawn_detached([sys.executable, "-m", "omcm_core", "daemon", "run"], env, fd)
        _log.debug("daemon_spawned", socket=path)
        return True
    finally:
        os.close(fd)  # the child's copy keeps the lock


def _spawn_detached(argv: list, env: dict, fd: int) -> None:
    """``background.spawn_detached`` without importing subprocess (the caller is still waited for).

    In its own session, stdin/stdout/stderr on /dev/null, from ``/`` so the
    daemon holds no project folder and its ``sys.path[0]`` is harmless, keeping
    only ``fd`` of our descriptors (Python opens the others close-on-exec).
    """
    if not hasattr(os, "posix_spawn"):  # pragma: no cover - not POSIX
        from omcm_core.background import spawn_detached

        spawn_detached(argv, env=env, cwd=os.path.abspath(os.sep), pass_fds=(fd,))
        return
    try:
        here: int | None = os.open(".", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # a working folder removed meanwhile: nothing to return to
        here = None
    os.set_inheritable(fd, True)
    actions: list[tuple] = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
    actions += [(os.POSIX_SPAWN_CLOSE, n) for n in _inheritable_fds() if n not in (0, 1, 2, fd)]
    try:
        os.chdir(os.sep)  # posix_spawn has no working-directory action; ours is restored below
        os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
    finally:
        if here is not None:
            os.fchdir(here)
            os.close(here)


def _inheritable_fds() -> list:
    """Descriptors a plugin opened inheritable in this process: the daemon must not keep them open."""
    try:
        numbers = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    found = []
    for number in numbers:
        try:
            if os.get_inheritable(number):
                found.append(number)
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return found


def _daemon_env(environ: Mapping[str, str]) -> dict:
    from omcm_core._runtime import wire

    subset = wire.call_env({os.fsencode(k): os.fsencode(v) for k, v in environ.items()})
    return {os.fsdecode(k): os.fsdecode(v) for k, v in subset.items()}
