"""Which files' change must restart the warm dispatcher, and whether they changed.

Every module of omcm's own packages and of the top-level package of every
loaded plugin (an editable third-party plugin named ``foo_guard`` too), the
source files of every plugin whose import failed (its author's fix must be
tried), and every folder on sys.path (a plugin installed or removed).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from omcm_core._runtime import dispatch


def _code_roots() -> set:
    """Top-level names of omcm's packages and of every loaded plugin's module."""
    roots = set()
    for manager in list(dispatch._managers.values()):
        for plugin in manager.pm.get_plugins():
            module = plugin.__name__ if isinstance(plugin, type(sys)) else getattr(plugin, "__module__", "") or ""
            roots.add(module.split(".")[0])
    return roots


def _failed_sources() -> list:
    """Source files of plugins whose import failed: not in sys.modules, yet their fix must restart us.

    An editable install's module lives outside site-packages: editing it changes no folder on sys.path.
    """
    found: list[str] = []
    for manager in list(dispatch._managers.values()):
        for info in list(manager.infos.values()):
            source = getattr(info, "source", "")
            if not source:
                continue
            if os.path.isdir(source):
                for folder, dirs, files in os.walk(source):
                    dirs[:] = [d for d in dirs if d != "__pycache__"]
                    found.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
                    if len(found) > 2000:
                        return found
            else:
                found.append(source)
    return found


def _fingerprint() -> tuple:
    """mtimes of everything whose change must restart the daemon."""
    stamps = []
    cwd = os.getcwd()
    for entry in sys.path:
        if entry in ("", cwd):
            continue  # -m puts the working directory first; it is not where plugins live
        with contextlib.suppress(OSError):
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
    for source in _failed_sources():
        with contextlib.suppress(OSError):
            stamps.append((source, os.stat(source).st_mtime_ns))
    roots = _code_roots()
    for name, module in list(sys.modules.items()):
        root = name.split(".")[0]
        path = getattr(module, "__file__", None)
        if (root.startswith("omcm") or root in roots) and path:
            with contextlib.suppress(OSError):
                stamps.append((path, os.stat(path).st_mtime_ns))
    return tuple(sorted(stamps))


class CodeWatch:
    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self.started_ns = time.time_ns()

    def start(self, started_ns: int) -> None:
        """Remember the files as of ``started_ns``: anything modified while loading counts as changed."""
        self.started_ns = started_ns
        self.known = {path: mtime for path, mtime in _fingerprint() if mtime < started_ns}

    def changed(self) -> list[str]:
        """Files changed since start-up; a module first imported now counts only if newer."""
        changed = []
        for path, mtime in _fingerprint():
            if path in self.known:
                if self.known[path] != mtime:
                    changed.append(path)
            elif mtime >= self.started_ns:
                changed.append(path)
            else:
                self.known[path] = mtime
        return changed
