"""Crash-safe file writes, inter-process locks, and confined access to untrusted folders.

Plugins that keep files in the project (``<project>/.omc``, ``.claude/memory``) use the
``*_confined`` helpers: the project is untrusted input and may hold planted symlinks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt
else:
    import fcntl


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never half.

    Written to a temporary file in the same directory, then renamed over the
    target. A crash of the process leaves at most a stray ``.tmp`` file. With
    ``durable`` (the default) the data and the rename are also flushed to disk,
    so a power cut cannot leave an empty file; state that is cheap to rebuild
    (a counter) may skip the two fsyncs, which cost milliseconds on every call.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _fill(fd, data, durable, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and os.name == "posix":
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _fill(fd: int, data: bytes, durable: bool, mode: int | None = None) -> None:
    """Write ``data`` to the new temporary file ``fd`` (closed after, even on error), flushed to disk if ``durable``."""
    with os.fdopen(fd, "wb") as fh:
        if mode is not None and os.name == "posix":
            os.fchmod(fh.fileno(), mode)
        fh.write(data)
        fh.flush()
        if durable:
            os.fsync(fh.fileno())


def atomic_write_text(path: Path, text: str, mode: int = 0o600, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable)


def atomic_write_json(path: Path, value: Any, mode: int = 0o600, durable: bool = True) -> None:
    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n", mode, durable)


def move_aside(path: Path, why: str = "corrupt") -> Path | None:
    """Rename a damaged file to ``<name>.<why>-<timestamp>`` and return the new path."""
    target = path.with_name(f"{path.name}.{why}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    return target


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 5.0) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (created owner-only if missing).

    The lock dies with the process, so a crash never leaves a stale lock behind.
    Raises ``TimeoutError`` after ``timeout`` seconds.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        _lock_fd(fd, timeout, path)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _lock_fd(fd: int, timeout: float, path: Any) -> None:
    """Take an exclusive lock on open ``fd``, polling until ``timeout`` (then TimeoutError)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.name == "nt":  # pragma: no cover
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # Windows only
            else:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"could not lock {path} within {timeout}s") from None
            time.sleep(0.002)


# --- Files in an untrusted tree --------------------------------------------------------------
# A cloned repository can plant symlinks (``.claude/memory/memory.md -> ~/.ssh/id_ed25519``),
# FIFOs (a read that never returns) or symlinked folders (``logs -> /etc``). These helpers
# walk every component below ``root`` with O_NOFOLLOW through directory descriptors, so no
# read or write ever leaves ``root``; a refused path raises UnsafePathError and logs why.

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FD = os.open in os.supports_dir_fd and os.name == "posix"


class UnsafePathError(OSError):
    """A path under an untrusted root is a symlink, not a regular file/folder, or leaves the root."""


def _refuse(root: Any, path: Any, reason: str) -> UnsafePathError:
    from omcm_core.log import get_logger

    get_logger(component="files").warning("unsafe_path_refused", root=str(root), path=str(path), reason=reason)
    return UnsafePathError(f"refused {path}: {reason} (outside or not plain under {root})")


def _parts(root: Any, path: Any) -> list[str]:
    """``path`` (relative to ``root``, or absolute and lexically inside it) as checked components."""
    root_abs = os.path.abspath(root)
    given = os.fspath(path)
    if "\0" in root_abs or "\0" in given:  # from a payload's cwd: os.open would raise ValueError
        raise _refuse(root, path, "holds a NUL character")
    full = os.path.abspath(given if os.path.isabs(given) else os.path.join(root_abs, given))
    rel = os.path.relpath(full, root_abs)
    parts = Path(rel).parts
    if not parts or rel == "." or parts[0] == ".." or "\0" in rel:
        raise _refuse(root, path, "not inside the root")
    return list(parts)


def _open_dir(dir_fd: int, name: str, root: Any, path: Any, create: bool, mode: int) -> int:
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    try:
        os.mkdir(name, mode, dir_fd=dir_fd)
    except FileExistsError:  # a concurrent writer made it first
        pass
    return _open_dir(dir_fd, name, root, path, False, mode)


def _walk(root: Any, path: Any, parts: list[str], create: bool, mode: int = 0o777) -> int:
    """A descriptor of the folder ``root/parts...``, every component checked; caller closes it."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)  # the root itself is trusted
    try:
        for name in parts:
            try:
                new = _open_dir(fd, name, root, path, create, mode)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise _refuse(root, path, f"{name} is a symlink or not a folder") from None
                raise
            os.close(fd)
            fd = new
        return fd
    except BaseException:
        os.close(fd)
        raise


def _resolve_inside(root: Any, path: Any) -> Path:  # pragma: no cover - platforms without dir_fd
    full = Path(os.path.abspath(root), *_parts(root, path))
    probe = full
    while str(probe) != os.path.abspath(root):
        if probe.is_symlink():
            raise _refuse(root, path, f"{probe.name} is a symlink")
        probe = probe.parent
    return full


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
    parts = _parts(root, path)
    if not _DIR_FD:  # pragma: no cover
        fd = os.open(_resolve_inside(root, path), flags, mode)
    else:
        dir_fd = _walk(root, path, parts[:-1], create_dirs)
        try:
            fd = os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC | _NONBLOCK, mode, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
                raise _refuse(root, path, "is a symlink or not a regular file") from None
            raise
        finally:
            os.close(dir_fd)
    info = os.fstat(fd)
    why = "is not a regular file" if not stat.S_ISREG(info.st_mode) else None
    if why is None and single_link and info.st_nlink > 1:
        why = f"has {info.st_nlink} hard links (it may be another file)"
    if why is not None:
        os.close(fd)
        raise _refuse(root, path, why)
    if _DIR_FD:
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
                raise _refuse(root, path, f"is {size} bytes, over the limit of {max_bytes}")
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
    parts = _parts(root, path)
    if not _DIR_FD:  # pragma: no cover
        full = _resolve_inside(root, path)
        full.mkdir(mode=mode, parents=True, exist_ok=True)
        return full
    os.close(_walk(root, path, parts, True, mode))
    return Path(os.path.abspath(root), *parts)


def list_confined(root: Any, path: Any) -> list[str]:
    """Names in folder ``path`` under ``root`` (sorted); [] when it does not exist."""
    parts = _parts(root, path)
    try:
        fd = _walk(root, path, parts, False)
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
    parts = _parts(root, path)
    dir_fd = _walk(root, path, parts[:-1], True)
    name = parts[-1]
    try:
        old_mode = None
        try:
            existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(existing.st_mode):
                raise _refuse(root, path, "is a symlink or not a regular file")
            old_mode = stat.S_IMODE(existing.st_mode) if keep_mode else None
        except FileNotFoundError:
            pass
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dir_fd)
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
    parts = _parts(root, path)
    try:
        dir_fd = _walk(root, path, parts[:-1], False)
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
