"""Where the memory lives, its settings, and the token arithmetic (about four bytes per token)."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from attrs import frozen

from omcm_core.confined import UnsafePathError, append_confined, read_confined_text, stat_confined

MEMORY_FILE = "memory.md"
INDEX_FILE = "memory-index.json"
LOCK_FILE = ".rotation.lock"
ARCHIVE_PREFIX = "memory_"
SUMMARY_SUFFIX = ".summary.json"
TRIGGER = "[MEMORY_KEEPER_ROTATE]"
BYTES_PER_TOKEN = 4
MARGIN = 0.95  # limits are taken 5% low: the four-bytes-per-token estimate is rough


@frozen
class Settings:
    """config.json, project first, then the global one, then these defaults (limits already less the margin)."""

    save_interval: int = 5
    enabled: bool = True
    threshold_tokens: int = 23_750  # 25,000 x 0.95
    carryover_tokens: int = 2_375  # 2,500 x 0.95


def memory_dir(project: Path) -> Path:
    return project / ".claude" / "memory"


def root(folder: Path) -> Path:
    """The project a memory folder belongs to: every file access stays confined to it.

    The project is untrusted (a cloned repository can plant symlinks), so reads
    and writes go through the helpers of omcm_core.confined with this root.
    """
    return folder.parent.parent


def load_settings(project: Path, home: Path, log) -> Settings:
    for base, path in (
        (project, memory_dir(project) / "config.json"),
        (home, home / "memory-rotation" / "config.json"),
    ):
        try:
            text = read_confined_text(base, path, limit=1_000_000)
        except FileNotFoundError:
            continue
        except OSError as exc:  # a symlinked or unreadable config: the defaults, said once in the log
            log.error("memory_config_unreadable", path=str(path), error=str(exc))
            continue
        try:
            return _parse(json.loads(text))
        except (ValueError, TypeError, KeyError) as exc:
            log.error("memory_config_invalid", path=str(path), error=str(exc))
    return Settings()


# A threshold of 1 token rotated an empty memory.md on every check: out-of-range
# values are refused (the defaults apply, with a log line naming the value).
RANGES = {"saveInterval": (1, 10_000), "thresholdTokens": (100, 10_000_000), "carryoverTokens": (1, 10_000_000)}


def _parse(data: Any) -> Settings:
    if not isinstance(data, dict):
        raise ValueError("config.json must hold an object")
    rotation = data.get("memoryRotation", {})
    if not isinstance(rotation, dict):
        raise ValueError("memoryRotation must be an object")
    interval = data.get("saveInterval", 5)
    threshold = rotation.get("thresholdTokens", 25_000)
    carryover = rotation.get("carryoverTokens", 2_500)
    for name, value in (("saveInterval", interval), ("thresholdTokens", threshold), ("carryoverTokens", carryover)):
        low, high = RANGES[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name} must be an integer from {low:,} to {high:,}, got {value!r}")
    if carryover >= threshold:
        raise ValueError(f"carryoverTokens ({carryover}) must be below thresholdTokens ({threshold})")
    return Settings(
        save_interval=interval,
        enabled=bool(rotation.get("enabled", True)),
        threshold_tokens=int(threshold * MARGIN),
        carryover_tokens=int(carryover * MARGIN),
    )


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
