"""memory-index.json: the rotation ledger, written atomically, rebuilt from disk when damaged."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from omcm_core.confined import (
    UnsafePathError,
    ensure_confined_dir,
    list_confined,
    open_confined,
    read_confined_text,
    write_confined_atomic,
)
from omcm_core.files import file_lock, move_aside
from omcm_memory_rotation.layout import ARCHIVE_PREFIX, INDEX_FILE, MEMORY_FILE, root, summary_name

_ARCHIVE = re.compile(r"^memory_\d{8}_\d{6}(_\d+)?\.md$")


def empty() -> dict[str, Any]:
    return {
        "version": 1,
        "current": MEMORY_FILE,
        "rotatedFiles": [],
        "stats": {"totalRotations": 0, "lastRotation": None},
    }


def write(folder: Path, data: dict) -> None:
    write_confined_atomic(root(folder), folder / INDEX_FILE, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def ensure_structure(folder: Path) -> None:
    """The memory folder with its sessions/ and logs/ and an empty index, made if missing.

    Raises UnsafePathError (logged) when any of them is a planted symlink.
    """
    for sub in (folder, folder / "sessions", folder / "logs"):
        ensure_confined_dir(root(folder), sub)
    if not os.path.lexists(folder / INDEX_FILE):
        write(folder, empty())


def _valid(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("rotatedFiles"), list)
        and all(isinstance(e, dict) and isinstance(e.get("file"), str) for e in data["rotatedFiles"])
        and isinstance(data.get("stats"), dict)
    )


def read(folder: Path, log) -> dict:
    """The index; a missing one is empty, a damaged one is moved aside and rebuilt from the archives."""
    path = folder / INDEX_FILE
    try:
        data = json.loads(read_confined_text(root(folder), path))
        if _valid(data):
            return data
        raise ValueError("not an index")
    except FileNotFoundError:
        return empty()
    except (ValueError, UnicodeDecodeError, UnsafePathError) as exc:  # damaged, or a planted symlink
        moved = move_aside(path)
        log.error("memory_index_corrupt_rebuilt", path=str(path), moved_to=str(moved), error=str(exc)[:200])
        rebuilt = rebuild(folder)
        write(folder, rebuilt)
        return rebuilt


def rebuild(folder: Path) -> dict:
    data = empty()
    for name in list_confined(root(folder), folder):
        if _ARCHIVE.match(name):
            try:
                data["rotatedFiles"].append(_entry(folder, name))
            except OSError:  # a planted symlink named like an archive: refused and logged, not indexed
                continue
    data["stats"]["totalRotations"] = len(data["rotatedFiles"])
    if data["rotatedFiles"]:
        data["stats"]["lastRotation"] = data["rotatedFiles"][-1]["rotatedAt"]
    return data


def _entry(folder: Path, archive: str, tokens: int = 0) -> dict:
    with os.fdopen(open_confined(root(folder), folder / archive), "rb") as fh:
        stat = os.fstat(fh.fileno())
        content = fh.read().decode("utf-8", errors="replace")
    dates = re.findall(r"^## (\d{4}-\d{2}-\d{2})", content, re.M)
    entry = {
        "file": archive,
        "rotatedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stat.st_mtime)),
        "tokens": tokens or -(-stat.st_size // 4),
        "bytes": stat.st_size,
        "lines": content.count("\n"),
        "summary": summary_name(archive),
        "summaryGenerated": os.path.lexists(folder / summary_name(archive)),
    }
    if dates:
        entry["dateRange"] = {"first": min(dates), "last": max(dates)}
    return entry


def add_archive(folder: Path, archive: str, tokens: int, log) -> None:
    """Record a new archive (under the index lock, so two writers never lose an entry)."""
    with file_lock(folder / ".index.lock"):
        data = read(folder, log)
        if not any(e["file"] == archive for e in data["rotatedFiles"]):
            data["rotatedFiles"].append(_entry(folder, archive, tokens))
        data["stats"]["totalRotations"] = len(data["rotatedFiles"])
        data["stats"]["lastRotation"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        write(folder, data)


def reconcile(folder: Path, log) -> dict:
    """Add archives that exist on disk but not in the index (a crash between the two writes)."""
    data = read(folder, log)
    known = {e["file"] for e in data["rotatedFiles"]}
    missing = [n for n in list_confined(root(folder), folder) if _ARCHIVE.match(n) and n not in known]
    for name in missing:
        try:
            add_archive(folder, name, 0, log)
        except OSError:  # a planted symlink named like an archive: refused and logged, not indexed
            continue
    return read(folder, log) if missing else data


def mark_summarized(folder: Path, archive: str, log) -> bool:
    with file_lock(folder / ".index.lock"):
        data = read(folder, log)
        for entry in data["rotatedFiles"]:
            if entry["file"] == archive:
                entry["summaryGenerated"] = True
                write(folder, data)
                return True
    return False


def pending(data: dict) -> list[str]:
    return [e["file"] for e in data["rotatedFiles"] if not e.get("summaryGenerated")]


__all__ = [
    "ARCHIVE_PREFIX",
    "empty",
    "ensure_structure",
    "read",
    "write",
    "rebuild",
    "add_archive",
    "reconcile",
    "mark_summarized",
    "pending",
]
