"""Rotation: archive the whole memory.md, keep a tail as the new one.

Order of writes, each atomic, so that a process killed at any point loses no
line of the original memory.md:

1. take ``.rotation.lock`` (O_EXCL; a lock older than 60 s or of a dead process is stale);
2. write the archive ``memory_YYYYMMDD_HHMMSS.md`` (temp file, fsync, rename;
   never over an existing archive);
3. replace memory.md with the carried-over tail (temp file, fsync, rename) —
   plus anything appended to memory.md since step 2 started;
4. record the archive in memory-index.json (a crash before this is repaired by
   ``index.reconcile`` on the next check).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from omcm_core.confined import (
    open_confined,
    read_confined_bytes,
    read_confined_text,
    unlink_confined,
    write_confined_atomic,
)
from omcm_memory_rotation import index, layout

if TYPE_CHECKING:
    from omcm_memory_rotation.settings import Settings

STALE_S = 60
#: The largest memory.md rotated, whatever the settings (a project may raise threshold_tokens):
#: a 2 GB sparse file planted in a repository was read whole (10 GB RSS) and archived non-sparse.
MAX_MEMORY_BYTES = 16 * 1024 * 1024


def _crash_point(name: str) -> None:
    # Tests set OMCM_MEMORY_ROTATION_CRASH_AT to die exactly here, as SIGKILL would.
    if os.environ.get("OMCM_MEMORY_ROTATION_CRASH_AT") == name:
        os._exit(137)


def acquire(folder: Path) -> bool:
    path = folder / layout.LOCK_FILE
    for _ in range(2):
        try:
            fd = open_confined(layout.root(folder), path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            if not _stale(path):
                return False
            unlink_confined(layout.root(folder), path)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.getpid()} {time.time()}\n")
        return True
    return False


def _stale(path: Path) -> bool:
    try:
        pid_text, started = read_confined_text(layout.root(path.parent), path, limit=200).split()[:2]
        if time.time() - float(started) > STALE_S:
            return True
        os.kill(int(pid_text), 0)
        return False
    except ProcessLookupError:
        return True  # its process is gone
    except (OSError, ValueError):
        try:
            return time.time() - path.stat().st_mtime > STALE_S
        except FileNotFoundError:
            return True


def release(folder: Path) -> None:
    unlink_confined(layout.root(folder), folder / layout.LOCK_FILE)


def too_large(folder: Path, log) -> bool:
    """memory.md is over :data:`MAX_MEMORY_BYTES`: refused (logged), neither read nor archived."""
    size = layout.tokens_of_file(folder / layout.MEMORY_FILE) * layout.BYTES_PER_TOKEN
    if size <= MAX_MEMORY_BYTES:
        return False
    log.error(
        "memory_too_large",
        bytes=size,
        limit=MAX_MEMORY_BYTES,
        fix="memory.md is far over any rotation threshold: trim it by hand",
    )
    return True


def check_and_rotate(folder: Path, settings: Settings, log) -> str | None:
    """Rotate when memory.md holds ``threshold_tokens`` or more; returns the archive name."""
    memory = folder / layout.MEMORY_FILE
    top = layout.root(folder)
    if not settings.enabled or layout.tokens_of_file(memory) < max(settings.threshold_tokens, 1):
        return None
    if too_large(folder, log):
        return None
    if not acquire(folder):
        log.info("rotation_skipped_locked")
        return None
    try:
        # Re-read under the lock, bounded (it may have grown since); a hard link can point anywhere.
        original = read_confined_bytes(top, memory, max_bytes=MAX_MEMORY_BYTES, single_link=True)
        tokens = -(-len(original) // layout.BYTES_PER_TOKEN)
        if tokens < max(settings.threshold_tokens, 1):
            return None
        archive = layout.archive_name(folder)
        _crash_point("before-archive")
        write_confined_atomic(top, folder / archive, original)
        _crash_point("after-archive")
        carry = layout.tail_by_tokens(original.decode("utf-8", errors="replace"), settings.carryover_tokens)
        current = read_confined_bytes(top, memory, max_bytes=MAX_MEMORY_BYTES * 2, single_link=True)
        if current != original:
            if not current.startswith(original):
                # memory.md was rewritten meanwhile: keep it whole, drop our archive, try later.
                unlink_confined(top, folder / archive)
                log.warning("rotation_aborted_memory_changed")
                return None
            carry += current[len(original) :].decode("utf-8", errors="replace")  # appended meanwhile
        write_confined_atomic(top, memory, carry.encode("utf-8"))
        _crash_point("after-carryover")
        index.add_archive(folder, archive, tokens, log)
        _crash_point("after-index")
        log.info("rotated", archive=archive, tokens=tokens, carried_bytes=len(carry.encode("utf-8")))
        return archive
    except OSError as exc:
        layout.error_log(folder, "rotation-error.log", f"rotation failed: {type(exc).__name__}: {exc}")
        log.error("rotation_failed", error=str(exc))
        return None
    finally:
        release(folder)
