"""Context held for a later event, where an agent drops it at the event a plugin answered (``context_moves``).

Qwen Code (and Gemini CLI) pass no PreToolUse context to the model, but do pass
PostToolUse's: a PreToolUse ``additionalContext`` is written here, keyed by the
session and the tool call, and given back at that call's PostToolUse. One small
owner-only file per call under ``OMCM_HOME/held``, secrets masked, written atomically and taken
(read and removed) once; files older than an hour (a call that never finished)
are removed when the next one is held.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

#: Held text is already within ``[core] context_budget``; this bounds what a read may take.
MAX_CHARS = 20_000
STALE_S = 3600.0


def _path(home: Path, session_id: str, tool_use_id: str) -> Path:
    key = hashlib.sha256(f"{session_id}\0{tool_use_id}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return home / "held" / key


def hold(home: Path, session_id: str, tool_use_id: str, text: str) -> None:
    from omcm_core.redact import mask  # secrets are masked before they touch disk (the rules; no library import)

    text = mask(text[:MAX_CHARS], library=False)
    folder = home / "held"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _prune(folder)
    target = _path(home, session_id, tool_use_id)
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text[:MAX_CHARS])
    os.replace(temp, target)


def take(home: Path, session_id: str, tool_use_id: str) -> str | None:
    """The text held for this call (removed), or None."""
    target = _path(home, session_id, tool_use_id)
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        text = handle.read(MAX_CHARS)
    try:
        target.unlink()
    except OSError:
        pass
    return text or None


def _prune(folder: Path) -> None:
    cutoff = time.time() - STALE_S
    try:
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n > 1000:  # bounded: the rest go at a later call
                    break
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    pass
    except OSError:
        pass
