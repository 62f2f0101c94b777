"""Every file this plugin touches goes through here.

The project folder is untrusted: ``.omc`` or ``.omc/ralph`` may be a planted
symlink pointing anywhere. Below the project root every directory is opened
relative to its parent's descriptor with ``O_NOFOLLOW``, and every file likewise,
so no symlink is ever followed out of the project; a symlink is refused with
:class:`Unsafe` (the caller logs it and carries on without state). Writes go to a
temporary file in the same directory and are renamed over the target.

The transcript is read from its end only (``tail_lines``), non-blocking and
only if it is a regular file, so a huge file, a FIFO or a device stays cheap.

When omcm-core gains a shared helper for project paths, only this module changes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from omcm_core.files import atomic_write_json, file_lock

OMC = ".omc"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FD = os.open in os.supports_dir_fd and _NOFOLLOW != 0
MAX_STATE_BYTES = 1_000_000


class Unsafe(Exception):
    """A path below the project is a symlink or not what it should be."""


@contextlib.contextmanager
def _open_dir(project: Path, parts: Sequence[str], create: bool) -> Iterator[int]:
    """A descriptor of ``project/parts...``, every component below the project opened without following links."""
    if not _DIR_FD:  # pragma: no cover - platforms without openat: check the resolved path instead
        folder = project.joinpath(*parts)
        if create:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if any(project.joinpath(*parts[: i + 1]).is_symlink() for i in range(len(parts))):
            raise Unsafe(str(folder))
        if project.resolve() not in folder.resolve().parents:
            raise Unsafe(str(folder))
        fd = os.open(folder, os.O_RDONLY)
    else:
        fd = os.open(project, os.O_RDONLY | _DIRECTORY)
        try:
            for part in parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o700, dir_fd=fd)
                try:
                    child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise Unsafe(f"{project.joinpath(*parts)} is a symlink or not a directory") from None
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
    try:
        yield fd
    finally:
        os.close(fd)


def read_json(project: Path, parts: Sequence[str]) -> Optional[Any]:
    """The JSON value in ``project/parts``, or None when it does not exist. Raises Unsafe, ValueError."""
    *folder, name = parts
    try:
        with _open_dir(project, folder, create=False) as dir_fd:
            try:
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise Unsafe(f"{project.joinpath(*parts)} is a symlink") from None
                raise
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise Unsafe(f"{project.joinpath(*parts)} is not a regular file")
        raw = fh.read(MAX_STATE_BYTES + 1)
    if len(raw) > MAX_STATE_BYTES:
        raise ValueError(f"{project.joinpath(*parts)} is over {MAX_STATE_BYTES} bytes")
    return json.loads(raw.decode("utf-8"))


def write_json(project: Path, parts: Sequence[str], value: Any) -> None:
    """Replace ``project/parts`` atomically, creating the folders (owner-only). Raises Unsafe."""
    *folder, name = parts
    data = (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    with _open_dir(project, folder, create=True) as dir_fd:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            # rename replaces a planted symlink at the target itself, never what it points to
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def list_names(project: Path, parts: Sequence[str]) -> list:
    """File names in ``project/parts`` (empty when missing). Raises Unsafe."""
    try:
        with _open_dir(project, parts, create=False) as dir_fd:
            return sorted(os.listdir(dir_fd) if _DIR_FD else os.listdir(project.joinpath(*parts)))
    except FileNotFoundError:
        return []


def tail_lines(path: Optional[str], limit: int) -> list:
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


def read_home_json(folder: Path, name: str) -> Optional[Any]:
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
