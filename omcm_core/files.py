"""Crash-safe file writes and inter-process locks, for files under OMCM_HOME.

Files under the project (untrusted input) go through :mod:`omcm_core.confined` instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
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
    fd, tmp = temporary_beside(path)
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


def temporary_beside(path: Path) -> tuple[int, str]:
    """A new file ``.NAME.<random>.tmp`` beside ``path``, opened for writing, owner-only: (fd, its path).

    What ``tempfile.mkstemp`` does (a random name, ``O_EXCL``, never through a
    link), without importing tempfile: it brings shutil and random, ~4 ms of
    every cold hook that writes state and of every ``omcm search``.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue  # another writer drew the same name: draw again, as mkstemp does
    raise FileExistsError(f"no free temporary name beside {path}")


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


#: The most a settings or MCP file of a client (JSON the user or a project wrote) may hold for omcm to read it.
MAX_CONFIG_BYTES = 64 << 20


def read_capped(path: Path, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (links followed: dotfiles), refused (ValueError) past ``limit``.

    A project can plant its ``.mcp.json`` or ``.claude/settings.json`` as a link to ``/dev/zero`` or a
    FIFO: without the check and the bound, reading it would never end.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is over {limit >> 20} MB")
    return data


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
