"""Where the memory lives and the token arithmetic (about four bytes per token)."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from omcm_core.confined import UnsafePathError, append_confined, stat_confined

MEMORY_FILE = "memory.md"
INDEX_FILE = "memory-index.json"
LOCK_FILE = ".rotation.lock"
ARCHIVE_PREFIX = "memory_"
SUMMARY_SUFFIX = ".summary.json"
TRIGGER = "[MEMORY_KEEPER_ROTATE]"
BYTES_PER_TOKEN = 4


def memory_dir(project: Path) -> Path:
    return project / ".claude" / "memory"


def root(folder: Path) -> Path:
    """The project a memory folder belongs to: every file access stays confined to it.

    The project is untrusted (a cloned repository can plant symlinks), so reads
    and writes go through the helpers of omcm_core.confined with this root.
    """
    return folder.parent.parent


def estimate_tokens(text: str) -> int:
    """UTF-8 bytes / 4, rounded up (Korean text counts its 3-byte characters)."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def tokens_of_file(path: Path) -> int:
    """Tokens of a file in the memory folder; 0 when missing or refused (a symlink, a FIFO)."""
    try:
        found = stat_confined(root(path.parent), path)
    except UnsafePathError:
        return 0
    return math.ceil(found.st_size / BYTES_PER_TOKEN) if found else 0


def tail_by_tokens(content: str, target: int) -> str:
    """Whole lines from the end of ``content`` within ``target`` tokens."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens, start = 0, len(lines)
    for i in range(len(lines) - 1, -1, -1):
        cost = estimate_tokens(lines[i] + "\n")
        if tokens + cost > target:
            break
        tokens += cost
        start = i
    kept = lines[start:]
    return "\n".join(kept) + "\n" if kept else ""


def archive_name(folder: Path, stamp: str | None = None) -> str:
    """``memory_YYYYMMDD_HHMMSS.md``, never an existing name (a suffix is added)."""
    stamp = stamp or time.strftime("%Y%m%d_%H%M%S")
    name = f"{ARCHIVE_PREFIX}{stamp}.md"
    n = 2
    while os.path.lexists(folder / name):
        name = f"{ARCHIVE_PREFIX}{stamp}_{n}.md"
        n += 1
    return name


def summary_name(archive: str) -> str:
    return archive[: -len(".md")] + SUMMARY_SUFFIX


def error_log(folder: Path, name: str, message: str) -> None:
    """Append a line to logs/rotation-error.log or logs/summary-error.log."""
    try:
        append_confined(root(folder), folder / "logs" / name, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n")
    except OSError:
        pass
