"""Start work that must outlive the hook (SessionEnd's 1.5 s, embedding workers)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence


def spawn_detached(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None, pass_fds: Sequence[int] = ()
) -> int:
    """Start ``argv`` in its own session with no stdin/stdout; return its pid at once.

    The child is not waited for, inherits nothing of the hook's pipes (Claude
    Code would otherwise wait for it to close stdout) and survives the hook.
    """
    kwargs: dict = {}
    if os.name == "nt":  # pragma: no cover
        kwargs["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        close_fds=True,
        pass_fds=tuple(pass_fds),
        **kwargs,
    )
    return proc.pid


def omcm_argv(*args: str) -> list[str]:
    """Command line that runs ``omcm <args>`` with this interpreter."""
    return [sys.executable, "-m", "omcm_core", *args]
