"""Which installed plugin implements which hook, remembered between in-process calls.

Finding the ``omcm`` entry points (``importlib.metadata`` reads every
distribution's metadata) and importing every plugin costs more than the rest
of a cold call. The answer changes only when the installation does, so the
in-process path keeps it in ``OMCM_HOME/cache/plugins-<key>.json`` and then
imports only the plugins that implement the event's hook.

The file is trusted only while the installation looks exactly as it did when
it was written; otherwise everything is discovered afresh and the file
rewritten:

- the interpreter, omcm_core's version and folder, and ``sys.path``;
- for each ``sys.path`` entry its mtime, inode and size, and the names of the
  distributions (``*.dist-info``, ``*.egg-info``, ``*.egg-link``) and ``.pth``
  files in it: installing, upgrading or removing anything changes these;
- for each plugin the size and mtime of its distribution's
  ``entry_points.txt`` and of every source file and folder of its top-level
  package (an edited editable install may add or remove a hook).

A plugin whose hooks are not known (not selected when the file was written,
failed to import, refused) is imported on every call, as before. A file that
cannot be read or parsed is ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import frozen

from omcm_core._runtime.digest import sha256

#: Bumped when the file's layout changes: an older file is then simply stale.
FORMAT = 1
_MAX_FILES = 2000  # per plugin package, as Manager.code_id
_DIST_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth")


@frozen
class Entry:
    """One ``omcm`` entry point: what is needed to load it without importlib.metadata."""

    name: str
    distribution: str
    version: str
    value: str  # "module" or "module:attr.path"
    hooks: tuple | None = None  # None: not known, import it whatever the hook
    checks: tuple = ()  # (path, mtime_ns, size) that must still hold

    def load(self) -> Any:
        """What ``EntryPoint.load`` returns for this value."""
        import importlib

        module_name, _, attrs_path = self.value.partition("[")[0].strip().partition(":")
        obj: Any = importlib.import_module(module_name.strip())
        for attr in filter(None, attrs_path.strip().split(".")):
            obj = getattr(obj, attr)
        return obj


def _stat(path: str) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, st.st_mtime_ns, st.st_size)


def installation_key() -> str:
    """A digest of everything on ``sys.path`` that decides which distributions are installed."""
    import omcm_core

    digest = sha256()
    head = [FORMAT, sys.executable, sys.version, omcm_core.__version__, omcm_core.__file__, sys.path]
    digest.update(repr(head).encode("utf-8", "surrogateescape"))
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith(_DIST_SUFFIXES)) if _isdir(st) else []
        except OSError:
            digest.update(b"\0missing\0")
            continue
        digest.update(repr((st.st_mtime_ns, st.st_ino, st.st_size, names)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _isdir(st: os.stat_result) -> bool:
    return st.st_mode & 0o170000 == 0o040000


def cache_path(home: Path) -> Path:
    """One file per interpreter and search path: two virtual environments may share OMCM_HOME."""
    ident = repr((sys.executable, sys.path)).encode("utf-8", "surrogateescape")
    return home / "cache" / f"plugins-{sha256(ident).hexdigest()[:16]}.json"


def read(home: Path) -> list[Entry] | None:
    """The cached entries if the installation is unchanged since they were written, else None."""
    try:
        fd = os.open(cache_path(home), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(4 << 20))
        if data.get("format") != FORMAT or data.get("key") != installation_key():
            return None
        entries = [_entry(item) for item in data["plugins"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # missing, unreadable or corrupt: discover afresh and rewrite
    for entry in entries:
        if any(_stat(check[0]) != check for check in entry.checks):
            return None
    return entries


def _entry(item: dict) -> Entry:
    hooks = item["hooks"]
    return Entry(
        name=str(item["name"]),
        distribution=str(item["distribution"]),
        version=str(item["version"]),
        value=str(item["value"]),
        hooks=None if hooks is None else tuple(str(h) for h in hooks),
        checks=tuple((str(p), int(m), int(s)) for p, m, s in item["checks"]),
    )


def write(home: Path, key: str, entries: Iterable[Entry]) -> None:
    """Replace the cache file atomically (owner-only); failures are not the call's problem."""
    from omcm_core.paths import write_private_json

    write_private_json(cache_path(home), {"format": FORMAT, "key": key, "plugins": [_item(e) for e in entries]})


def _item(entry: Entry) -> dict:
    return {
        "name": entry.name,
        "distribution": entry.distribution,
        "version": entry.version,
        "value": entry.value,
        "hooks": None if entry.hooks is None else list(entry.hooks),
        "checks": [list(check) for check in entry.checks],
    }


def code_checks(value: str, dist_files: Iterable[str] = ()) -> tuple:
    """Stats of the distribution's metadata files and of the plugin's top-level package's sources.

    Empty when the plugin's source cannot be found: such an entry is then
    written without hooks, so it is imported on every call.
    """
    top = value.partition(":")[0].strip().split(".")[0]
    module = sys.modules.get(top)
    filename = getattr(module, "__file__", None)
    if not filename:
        return ()
    checks = [_stat(path) for path in dist_files]
    if os.path.basename(filename) == "__init__.py":
        checks += _tree(os.path.dirname(filename))
    else:
        checks.append(_stat(filename))
    return tuple(checks)


def _tree(folder: str) -> list:
    found = [_stat(folder)]
    pending = [folder]
    while pending and len(found) < _MAX_FILES:
        try:
            scan = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for item in sorted(scan, key=lambda i: i.name):
            if item.is_dir(follow_symlinks=False) and item.name != "__pycache__":
                found.append(_stat(item.path))
                pending.append(item.path)
            elif item.name.endswith(".py"):
                found.append(_stat(item.path))
    return found
