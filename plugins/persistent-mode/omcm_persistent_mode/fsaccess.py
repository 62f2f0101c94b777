"""Every file this plugin touches goes through here.

The project folder is untrusted: ``.omc``, ``.omc/ralph`` or a state file may be
a planted symlink pointing anywhere. Project files go through the confined
helpers of ``omcm_core.confined``: every component below the project is opened
with ``O_NOFOLLOW`` relative to its parent's descriptor, only regular files with
one link are read (a hard link may be another name for a file outside), and
anything else raises ``UnsafePathError`` (the caller logs it and carries on
without state). Writes go to a temporary file renamed over the target.

The transcript is read from its end only (``tail_lines``), non-blocking and
only if it is a regular file, so a huge file, a FIFO or a device stays cheap.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omcm_core.confined import (
    ensure_confined_dir,
    list_confined,
    read_confined_bytes,
    write_confined_atomic,
)
from omcm_core.files import atomic_write_json, file_lock

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
MAX_STATE_BYTES = 1_000_000


def read_json(project: Path, parts: Sequence[str]) -> Any | None:
    """The JSON value in ``project/parts``, or None when it does not exist. Raises UnsafePathError, ValueError."""
    try:
        raw = read_confined_bytes(project, Path(*parts), max_bytes=MAX_STATE_BYTES, single_link=True)
    except FileNotFoundError:
        return None
    return json.loads(raw.decode("utf-8"))


def write_json(project: Path, parts: Sequence[str], value: Any, private: bool = True) -> None:
    """Replace ``project/parts`` atomically, creating the folders. Raises UnsafePathError.

    ``private=False`` is for a file the user reads and edits as any project file (the PRD).
    """
    *folder, _ = parts
    # .omc is shared with other plugins and follows the umask as theirs do; our own folder and state stay private.
    ensure_confined_dir(project, folder[0])
    if len(folder) > 1:
        ensure_confined_dir(project, Path(*folder), 0o700)
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    write_confined_atomic(project, Path(*parts), text, mode=0o600 if private else 0o666)


def list_names(project: Path, parts: Sequence[str]) -> list:
    """File names in ``project/parts`` (empty when missing). Raises UnsafePathError."""
    return list_confined(project, Path(*parts))


def tail_lines(path: str | None, limit: int) -> list:
    """The complete lines in the last ``limit`` bytes of a regular file; [] when unreadable."""
    if not path:
        return []
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            return []
        start = max(0, info.st_size - limit)
        fh.seek(start)
        data = fh.read(limit)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line was cut by the seek
    return [line for line in lines if line.strip()]


# OMCM_HOME: trusted, owner-only; the per-session state of this plugin.


def home_state_lock(folder: Path):
    return file_lock(folder / ".persistent-mode.lock")


def read_home_json(folder: Path, name: str) -> Any | None:
    try:
        raw = (folder / name).read_bytes()
    except FileNotFoundError:
        return None
    return json.loads(raw.decode("utf-8"))


def write_home_json(folder: Path, name: str, value: Any) -> None:
    # Not fsynced: losing a counter to a power cut only restarts a count.
    atomic_write_json(folder / name, value, durable=False)


def remove_home(folder: Path, names: Sequence[str]) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()


#: Session folders looked at per SessionEnd: the cleanup stays cheap however many sessions there were.
MAX_PRUNED_PER_CALL = 500


def prune_home_states(sessions: Path, name: str, days: float, keep: str) -> int:
    """Remove ``sessions/*/name`` (and its lock) not touched for ``days``, except session ``keep``'s."""
    import time

    cutoff = time.time() - days * 86400
    removed = 0
    try:
        entries = os.scandir(sessions)
    except OSError:
        return 0
    with entries:
        for index, entry in enumerate(entries):
            if index >= MAX_PRUNED_PER_CALL:
                break
            if entry.name == keep or not entry.is_dir(follow_symlinks=False):
                continue
            target = Path(entry.path) / name
            try:
                if target.lstat().st_mtime >= cutoff:
                    continue
            except OSError:
                continue
            remove_home(Path(entry.path), [name, ".persistent-mode.lock"])
            removed += 1
    return removed
