"""``omcm hook``: read stdin, answer on stdout, exit. Imports almost nothing.

The dispatch itself happens in :func:`omcm_core.dispatch.handle`, in this
process or (see ``omcm_core.daemon``) in a warm dispatcher.
"""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence


def run(args: Sequence[str], raw: bytes, env: Optional[dict] = None):
    """Answer one payload; returns a ``dispatch.Outcome``."""
    from omcm_core import dispatch

    argv_event = args[0] if args else None
    return dispatch.handle(raw, argv_event, env)


def main(args: Sequence[str]) -> int:
    """Entry of ``omcm hook [EVENT]``: never returns normally (exits fast)."""
    real_stdout = os.dup(1)
    # From here on anything a plugin prints (even from C or a child process)
    # goes to stderr: stdout carries only our one JSON object.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    code = 0
    try:
        try:
            raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        except (OSError, ValueError):
            raw = b""
        outcome = run(args, raw)
        if outcome.stderr:
            os.write(2, outcome.stderr)
        if outcome.stdout:
            os.write(real_stdout, outcome.stdout + b"\n")
        code = outcome.exit_code
    except BaseException:  # pragma: no cover - dispatch.handle already catches
        code = 0
    try:
        sys.stderr.flush()
    except Exception:
        pass
    # Skip interpreter teardown: a plugin thread that overran must not hold us.
    os._exit(code)
