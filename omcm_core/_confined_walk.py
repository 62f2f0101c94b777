"""Walking a path under an untrusted root one component at a time, following no symlink.

The primitive under :mod:`omcm_core.confined` (the public helpers): every folder
below ``root`` is opened with O_NOFOLLOW relative to its parent's descriptor, so
nothing is checked and then opened differently.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
HAS_DIR_FD = os.open in os.supports_dir_fd and os.name == "posix"


class UnsafePathError(OSError):
    """A path under an untrusted root is a symlink, not a regular file/folder, or leaves the root."""


def refuse(root: Any, path: Any, reason: str) -> UnsafePathError:
    from omcm_core.log import get_logger

    get_logger(component="files").warning("unsafe_path_refused", root=str(root), path=str(path), reason=reason)
    return UnsafePathError(f"refused {path}: {reason} (outside or not plain under {root})")


def components(root: Any, path: Any) -> list[str]:
    """``path`` (relative to ``root``, or absolute and lexically inside it) as checked components."""
    root_abs = os.path.abspath(root)
    given = os.fspath(path)
    if "\0" in root_abs or "\0" in given:  # from a payload's cwd: os.open would raise ValueError
        raise refuse(root, path, "holds a NUL character")
    full = os.path.abspath(given if os.path.isabs(given) else os.path.join(root_abs, given))
    rel = os.path.relpath(full, root_abs)
    parts = Path(rel).parts
    if not parts or rel == "." or parts[0] == ".." or "\0" in rel:
        raise refuse(root, path, "not inside the root")
    return list(parts)


def _open_dir(dir_fd: int, name: str, root: Any, path: Any, create: bool, mode: int) -> int:
    flags = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC
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


def walk(root: Any, path: Any, parts: list[str], create: bool, mode: int = 0o777) -> int:
    """A descriptor of the folder ``root/parts...``, every component checked; caller closes it."""
    fd = os.open(root, os.O_RDONLY | DIRECTORY | CLOEXEC)  # the root itself is trusted
    try:
        for name in parts:
            try:
                new = _open_dir(fd, name, root, path, create, mode)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise refuse(root, path, f"{name} is a symlink or not a folder") from None
                raise
            os.close(fd)
            fd = new
        return fd
    except BaseException:
        os.close(fd)
        raise


def resolve_inside(root: Any, path: Any) -> Path:  # pragma: no cover - platforms without dir_fd
    full = Path(os.path.abspath(root), *components(root, path))
    probe = full
    while str(probe) != os.path.abspath(root):
        if probe.is_symlink():
            raise refuse(root, path, f"{probe.name} is a symlink")
        probe = probe.parent
    return full
