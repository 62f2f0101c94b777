"""The hook client's slow path: say why the dispatcher was not used, start one if none runs.

Runs only when a call is answered in process. Starting is guarded twice: the
caller takes the dispatcher's own lock (``<socket>.lock``) without waiting and
hands it to the new process, so of twenty simultaneous cold calls exactly one
starts a dispatcher and the others do not wait for it; and the socket's folder
must be ours (see :func:`omcm_core._runtime.client.socket_problem`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from omcm_core import log
from omcm_core.paths import omcm_home

_log = log.get_logger(component="client")
#: The inherited descriptor that holds ``<socket>.lock`` for a dispatcher we start.
LOCK_FD_VAR = "OMCM_DAEMON_LOCK_FD"


def after_fallback(
    environ: Mapping[str, str], env: Mapping[str, str], why: str | None, start: bool, lost: str | None
) -> None:
    log.configure(omcm_home(env), env.get("OMCM_LOG_LEVEL"))
    if lost:
        _log.error("daemon_answer_lost", detail=lost)
        return
    from omcm_core._runtime.client import socket_path

    path = socket_path(environ)
    if why and why.endswith("is not a socket"):
        start = repair(path)
    elif why:
        # Refusals while busy are routine; anything else (an unsafe folder, a foreign peer) is not.
        level = _log.debug if why.startswith(("busy", "stopping", "late", "restarting")) else _log.warning
        level("daemon_not_used", reason=why, socket=path)
    if start:
        try:
            spawn(environ, path)
        except Exception as exc:  # the call is answered in process all the same
            _log.error("daemon_start_failed", error=f"{type(exc).__name__}: {exc}", socket=path)


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

    from omcm_core._runtime.client import socket_problem
    from omcm_core.background import omcm_argv, spawn_detached
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
        # From / so the daemon holds no project folder and its sys.path[0] is harmless.
        spawn_detached(omcm_argv("daemon", "run"), env=env, cwd=os.path.abspath(os.sep), pass_fds=(fd,))
        _log.debug("daemon_spawned", socket=path)
        return True
    finally:
        os.close(fd)  # the child's copy keeps the lock


def _daemon_env(environ: Mapping[str, str]) -> dict:
    from omcm_core._runtime import wire

    subset = wire.call_env({os.fsencode(k): os.fsencode(v) for k, v in environ.items()})
    return {os.fsdecode(k): os.fsdecode(v) for k, v in subset.items()}
