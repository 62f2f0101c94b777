"""Files under an untrusted folder (the project): no read or write ever leaves the root.

A cloned repository can plant symlinks (``.claude/memory/memory.md -> ~/.ssh/id_ed25519``),
FIFOs (a read that never returns) or symlinked folders (``logs -> /etc``). These helpers
walk every component below ``root`` with O_NOFOLLOW through directory descriptors, so no
read or write ever leaves ``root``; a refused path raises UnsafePathError and logs why.
Files under OMCM_HOME (trusted) use :mod:`omcm_core.files`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omcm_core._confined_walk import (
    CLOEXEC,
    HAS_DIR_FD,
    NOFOLLOW,
    NONBLOCK,
    UnsafePathError,
    components,
    refuse,
    resolve_inside,
    walk,
)

# The same temporary-file fill and lock loop as the trusted writers, so both behave alike.
from omcm_core.files import _fill, _lock_fd

__all__ = [
    "UnsafePathError",
    "append_confined",
    "ensure_confined_dir",
    "list_confined",
    "lock_confined",
    "open_confined",
    "read_confined_bytes",
    "read_confined_text",
    "stat_confined",
    "unlink_confined",
    "write_confined_atomic",
]


def open_confined(
    root: Any,
    path: Any,
    flags: int = os.O_RDONLY,
    mode: int = 0o666,
    create_dirs: bool = False,
    *,
    single_link: bool = False,
) -> int:
    """``os.open`` for ``path`` under ``root`` that follows no symlink and opens only regular files.

    ``path`` is relative to ``root`` or absolute inside it. With ``create_dirs``
    missing folders are made (mode 0o777 less the umask). Files are created with
    ``mode`` less the caller's umask. Returns a descriptor; raises UnsafePathError
    (logged, naming the path) for a symlink, FIFO, device or a path out of ``root``.
    With ``single_link`` a file with more than one hard link is refused too: it
    may be another name for a file outside the project (a planted ``~/.netrc``),
    which no symlink check can see.
    """
    parts = components(root, path)
    if not HAS_DIR_FD:  # pragma: no cover
        fd = os.open(resolve_inside(root, path), flags, mode)
    else:
        dir_fd = walk(root, path, parts[:-1], create_dirs)
        try:
            fd = os.open(parts[-1], flags | NOFOLLOW | CLOEXEC | NONBLOCK, mode, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
                raise refuse(root, path, "is a symlink or not a regular file") from None
            raise
        finally:
            os.close(dir_fd)
    info = os.fstat(fd)
    why = "is not a regular file" if not stat.S_ISREG(info.st_mode) else None
    if why is None and single_link and info.st_nlink > 1:
        why = f"has {info.st_nlink} hard links (it may be another file)"
    if why is not None:
        os.close(fd)
        raise refuse(root, path, why)
    if HAS_DIR_FD:
        os.set_blocking(fd, True)  # opened non-blocking only so that a FIFO could not hang the open
    return fd


def read_confined_bytes(
    root: Any,
    path: Any,
    limit: int | None = None,
    *,
    max_bytes: int | None = None,
    single_link: bool = False,
) -> bytes:
    """The bytes of ``path`` under ``root`` (at most ``limit``); see open_confined for what is refused.

    ``limit`` cuts a long file; ``max_bytes`` refuses one (UnsafePathError, logged)
    whose size is over it, for callers to whom half a file is worth nothing (JSON).
    """
    with os.fdopen(open_confined(root, path, single_link=single_link), "rb") as fh:
        if max_bytes is not None:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise refuse(root, path, f"is {size} bytes, over the limit of {max_bytes}")
            limit = max_bytes if limit is None else min(limit, max_bytes)  # a file growing meanwhile
        return fh.read() if limit is None else fh.read(limit)


def read_confined_text(
    root: Any,
    path: Any,
    limit: int | None = None,
    *,
    max_bytes: int | None = None,
    single_link: bool = False,
) -> str:
    """UTF-8 text of ``path`` under ``root``, undecodable bytes replaced."""
    return read_confined_bytes(root, path, limit, max_bytes=max_bytes, single_link=single_link).decode(
        "utf-8", errors="replace"
    )


def stat_confined(root: Any, path: Any) -> os.stat_result | None:
    """The stat of a regular file ``path`` under ``root``; None when it does not exist."""
    try:
        fd = open_confined(root, path)
    except FileNotFoundError:
        return None
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def ensure_confined_dir(root: Any, path: Any, mode: int = 0o777) -> Path:
    """Create folder ``path`` under ``root`` (and missing parents, ``mode`` less the umask); refuse symlinks."""
    parts = components(root, path)
    if not HAS_DIR_FD:  # pragma: no cover
        full = resolve_inside(root, path)
        full.mkdir(mode=mode, parents=True, exist_ok=True)
        return full
    os.close(walk(root, path, parts, True, mode))
    return Path(os.path.abspath(root), *parts)


def list_confined(root: Any, path: Any) -> list[str]:
    """Names in folder ``path`` under ``root`` (sorted); [] when it does not exist."""
    parts = components(root, path)
    try:
        fd = walk(root, path, parts, False)
    except FileNotFoundError:
        return []
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


def write_confined_atomic(
    root: Any,
    path: Any,
    data: Any,
    mode: int = 0o666,
    durable: bool = True,
    *,
    keep_mode: bool = False,
) -> Path:
    """Replace ``path`` under ``root`` with ``data`` (bytes or str) atomically; folders are created.

    The file gets ``mode`` less the caller's umask (a project file is then as
    readable as the user's other files; pass 0o600 for private ones); with
    ``keep_mode`` a file that exists keeps its permission bits (a notes file the
    user made private stays private). An existing symlink or non-regular file at
    ``path`` is refused, never replaced or followed.
    """
    blob = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    parts = components(root, path)
    dir_fd = walk(root, path, parts[:-1], True)
    name = parts[-1]
    try:
        old_mode = None
        try:
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(existing.st_mode):
                raise refuse(root, path, "is a symlink or not a regular file")
            old_mode = stat.S_IMODE(existing.st_mode) if keep_mode else None
        except FileNotFoundError:
            pass
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, mode, dir_fd=dir_fd)
        try:
            _fill(fd, blob, durable, old_mode)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        if durable:
            with contextlib.suppress(OSError):
                os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return Path(os.path.abspath(root), *parts)


def append_confined(root: Any, path: Any, text: str, mode: int = 0o666) -> None:
    """Append ``text`` to ``path`` under ``root`` (created with folders if missing), no symlink followed."""
    fd = open_confined(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode, create_dirs=True)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(text)


def unlink_confined(root: Any, path: Any) -> None:
    """Remove ``path`` under ``root`` (a planted symlink itself, never its target); missing is fine."""
    parts = components(root, path)
    try:
        dir_fd = walk(root, path, parts[:-1], False)
    except FileNotFoundError:
        return
    try:
        os.unlink(parts[-1], dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def lock_confined(
    root: Any, path: Any, timeout: float = 5.0, mode: int = 0o666, create_dirs: bool = False
) -> Iterator[None]:
    """Hold an exclusive lock on lock file ``path`` under ``root``, like file_lock but confined.

    The lock file is created (``mode`` less the umask) through open_confined, so a
    planted symlink in its place is refused rather than creating a file outside.
    Without ``create_dirs`` a missing folder raises FileNotFoundError, so a caller
    can leave a project without ``.omc`` untouched. Raises TimeoutError after
    ``timeout`` seconds; the lock dies with the process.
    """
    fd = open_confined(root, path, os.O_RDWR | os.O_CREAT, mode, create_dirs)
    try:
        _lock_fd(fd, timeout, path)
        yield
    finally:
        os.close(fd)
