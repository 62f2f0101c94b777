"""Every file access of the notepad plugin: confined to the project, never through a symlink.

The project folder is untrusted: a cloned repository can ship ``.omc`` or
``.omc/notepad.md`` as a symlink to ``~/.ssh/id_ed25519`` (read: its text would
be injected into Claude's context) or to ``~/.bashrc`` (write: replaced by
notes). So each step is taken from an open directory descriptor with
``O_NOFOLLOW``: the project folder itself (the root Claude Code names), then
``.omc`` (must be a real directory), then ``notepad.md`` (must be a regular
file with one link). Anything else is refused with a log line and the plugin
acts as if there were no notepad. Writes go to a temporary file in ``.omc`` and
are renamed over ``notepad.md`` (a rename never follows a symlink), under an
exclusive lock on ``.omc/.notepad.lock``, so parallel hooks never lose an entry.

New files get mode 0666 minus the process umask (the caller's umask, or the
warm dispatcher's, which inherits the umask of the client that started it); a
rewritten notepad keeps the mode it had.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Iterator, Optional

FOLDER = ".omc"
FILENAME = "notepad.md"
LOCK = ".notepad.lock"
#: Refuse to read a notepad bigger than this (the cap is 8 KB; this is only a guard).
MAX_READ = 1 << 20

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """The notepad cannot be used safely; the message says why (it is logged)."""


def relative_path() -> str:
    return f"{FOLDER}/{FILENAME}"


def _open_dir(name: str, parent_fd: Optional[int], create: bool) -> Optional[int]:
    """An O_NOFOLLOW descriptor of directory ``name`` under ``parent_fd``; None if missing."""
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise Refused(f"{FOLDER} is a symlink or not a directory") from None
        raise
    with contextlib.suppress(FileExistsError):  # a parallel hook made it first
        os.mkdir(name, 0o777, dir_fd=parent_fd)  # the umask decides the mode
    return _open_dir(name, parent_fd, create=False)


@contextlib.contextmanager
def folder(project: Path, create: bool) -> Iterator[Optional[int]]:
    """The descriptor of ``<project>/.omc`` (None when missing and not ``create``)."""
    if os.open not in os.supports_dir_fd or not _NOFOLLOW:
        # Windows: no descriptor-relative opens, so no safe way yet.
        raise Refused("this platform cannot open files without following links")
    root = os.open(str(project), os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        fd = _open_dir(FOLDER, root, create)
    finally:
        os.close(root)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _read_fd(fd: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"{relative_path()} is not a regular file")
    if info.st_nlink > 1:
        raise Refused(f"{relative_path()} has {info.st_nlink} hard links (it may be another file)")
    if info.st_size > MAX_READ:
        raise Refused(f"{relative_path()} is {info.st_size} bytes; refusing to read more than {MAX_READ}")
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_in(dir_fd: int) -> tuple[Optional[bytes], Optional[int]]:
    """``(bytes, mode)`` of notepad.md in ``dir_fd``, or ``(None, None)`` when it does not exist."""
    try:
        # O_NONBLOCK: a planted FIFO must not hang the hook.
        fd = os.open(FILENAME, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise Refused(f"{relative_path()} is a symlink") from None
        raise
    try:
        return _read_fd(fd), stat.S_IMODE(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def read(project: Path) -> Optional[bytes]:
    """The notepad's bytes, or None when there is none. Raises :class:`Refused`."""
    with folder(project, create=False) as dir_fd:
        if dir_fd is None:
            return None
        return read_in(dir_fd)[0]


def write_in(dir_fd: int, data: bytes, mode: Optional[int]) -> None:
    """Replace notepad.md atomically: readers see the old or the new file, never half."""
    tmp = f".{FILENAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=dir_fd)
    try:
        if mode is not None and os.name == "posix":
            os.fchmod(fd, mode)  # keep the mode the user gave the file
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.rename(tmp, FILENAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


@contextlib.contextmanager
def locked(dir_fd: int, timeout: float) -> Iterator[None]:
    """An exclusive lock on ``.omc/.notepad.lock`` (O_NOFOLLOW; dies with the process)."""
    import fcntl

    try:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise Refused(f"{FOLDER}/{LOCK} is a symlink") from None
        raise
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"could not lock {FOLDER}/{LOCK} within {timeout}s") from None
                time.sleep(0.002)
        yield
    finally:
        os.close(fd)


def update(project: Path, change, timeout: float, create: bool = True) -> object:
    """Read, ``change(bytes_or_None) -> (new_bytes_or_None, answer)``, write; returns answer.

    The whole cycle runs under the lock; ``new_bytes`` None means "leave it".
    Without ``create`` a project with no ``.omc`` is left as it is (no lock file).
    Raises :class:`Refused` or ``TimeoutError``.
    """
    with folder(project, create=create) as dir_fd:
        if dir_fd is None:
            return change(None)[1]
        with locked(dir_fd, timeout):
            data, mode = read_in(dir_fd)
            new, answer = change(data)
            if new is not None and new != data:
                write_in(dir_fd, new, mode)
    return answer
