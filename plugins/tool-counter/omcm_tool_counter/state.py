"""The per-session counter file, read and written under a lock.

``OMCM_HOME/sessions/<id>/tool-counters.json`` (``OMCM_HOME/tool-counters.json``
without a session id). Parallel tool calls run parallel dispatchers, so the
whole read-count-write happens under an exclusive lock on a file beside the
state, and the state is replaced atomically.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from omcm_core.files import atomic_write_json, file_lock, move_aside
from omcm_tool_counter.counter import Counters, Step

STATE_FILE = "tool-counters.json"
LOCK_FILE = ".tool-counters.lock"


def update(folder: Path, change: Callable[[Counters], Step], log) -> Step:
    """Apply ``change`` to the stored counters atomically; returns its Step."""
    path = folder / STATE_FILE
    with file_lock(folder / LOCK_FILE):
        counters = load(path, log)
        result = change(counters)
        # Not fsynced: a counter lost to a power cut only restarts a run; every tool call waits for this.
        atomic_write_json(path, result.counters.to_json(), durable=False)
    return result


def load(path: Path, log) -> Counters:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Counters()
    try:
        return Counters.from_json(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:
        moved = move_aside(path)
        log.error("counter_state_corrupt", path=str(path), moved_to=str(moved), error=str(exc)[:200])
        return Counters()


def remove(folder: Path) -> None:
    """Forget a session's counters; remove its folder only if nothing else lives there."""
    for name in (STATE_FILE, LOCK_FILE):
        try:
            os.unlink(folder / name)
        except FileNotFoundError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass  # other plugins' files are there, or it is OMCM_HOME itself


def age_out(sessions: Path, max_age_days: float, now: float | None = None) -> int:
    """Remove counter files not touched for ``max_age_days``; returns how many."""
    if not sessions.is_dir():
        return 0
    cutoff = (now or time.time()) - max_age_days * 86400
    removed = 0
    for folder in sessions.iterdir():
        state = folder / STATE_FILE
        try:
            if state.stat().st_mtime < cutoff:
                remove(folder)
                removed += 1
        except OSError:
            continue
    return removed
