"""The ``tools/list`` answer of ``omcm mcp``, remembered so the next server starts without loading plugins.

Listing the tools means importing every plugin and the MCP SDK (about a
second of CPU); Claude Code holds the session's first model request until the
server has answered ``initialize`` and ``tools/list``. The answer changes only
when the installation, omcm's environment or its configuration does, so it is
kept in ``OMCM_HOME/cache/mcp-tools-<key>.json`` and trusted only while all of
these look as they did when it was written:

- the interpreter, omcm_core's version and folder, ``sys.path``, and for each
  path entry its mtime, inode, size and the distributions and ``.pth`` files in
  it (the plugin cache's rule: installing or removing anything changes them);
- every ``OMCM*`` environment variable and ``CLAUDE_PROJECT_DIR``, the folder
  the server runs in, and the configuration files (user and project);
- the size and mtime of each tool-offering plugin's source files.

The server checks its answer again once the plugins are loaded and tells the
client (``notifications/tools/list_changed``) if it was stale, so a change
this key misses costs one correction, never a wrong tool for the session.
Only the standard library is imported here: this runs before the answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs milliseconds before the first answer
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

FORMAT = 1
_DIST_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth")
_MAX_BYTES = 4 << 20


def _stat(path: str) -> list:
    try:
        st = os.stat(path)
    except OSError:
        return [path, -1, -1]
    return [path, st.st_mtime_ns, st.st_size]


def key(env: Mapping[str, str], cwd: str, home: Path) -> str:
    """A digest of everything the tool list depends on except the plugins' own sources (see ``checks``)."""
    import omcm_core

    digest = hashlib.sha256()
    wanted = sorted((k, v) for k, v in env.items() if k.startswith("OMCM") or k == "CLAUDE_PROJECT_DIR")
    head = [FORMAT, sys.executable, sys.version, omcm_core.__version__, omcm_core.__file__, sys.path, wanted, cwd]
    digest.update(repr(head).encode("utf-8", "surrogateescape"))
    project_files = {os.path.join(p, ".claude", "omcm.toml") for p in (cwd, env.get("CLAUDE_PROJECT_DIR")) if p}
    for config in [str(home / "config.toml"), *sorted(project_files)]:
        digest.update(repr(_stat(config)).encode("utf-8", "surrogateescape"))
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
            isdir = st.st_mode & 0o170000 == 0o040000
            names = sorted(n for n in os.listdir(entry or ".") if n.endswith(_DIST_SUFFIXES)) if isdir else []
        except OSError:
            digest.update(b"\0missing\0")
            continue
        # The project folder (`python -m omcm_core mcp` puts it first) changes all day: its names only.
        stamp = () if os.path.abspath(entry or ".") == os.path.abspath(cwd) else (st.st_mtime_ns, st.st_ino, st.st_size)
        digest.update(repr((stamp, names)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def path_for(home: Path, env: Mapping[str, str], cwd: str) -> Path:
    """One file per interpreter, search path and project: two projects' servers do not overwrite each other."""
    ident = repr((sys.executable, sys.path, env.get("CLAUDE_PROJECT_DIR") or cwd))
    return (
        home / "cache" / f"mcp-tools-{hashlib.sha256(ident.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}.json"
    )


def read(path: Path, current_key: str) -> list[dict] | None:
    """The remembered tool list if nothing it depends on changed, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(_MAX_BYTES))
        if data.get("format") != FORMAT or data.get("key") != current_key:
            return None
        if any(_stat(str(check[0])) != list(check) for check in data["checks"]):
            return None
        tools = data["tools"]
        if not isinstance(tools, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
        ):
            return None
        return tools
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None  # missing, unreadable or corrupt: list afresh and rewrite


def write(path: Path, current_key: str, tools: list[dict], checks: list[list]) -> None:
    """Replace the file atomically, owner-only; a failure only means the next start lists afresh."""
    from omcm_core.paths import write_private_json

    write_private_json(path, {"format": FORMAT, "key": current_key, "checks": checks, "tools": tools})


def source_checks(modules: list[Any]) -> list[list]:
    """Size and mtime of every source file and folder of the given plugin modules' top-level packages."""
    found: list[list] = []
    for module in modules:
        top = sys.modules.get(getattr(module, "__name__", "").split(".")[0]) or module
        filename = getattr(top, "__file__", None)
        if not filename:
            continue
        if os.path.basename(filename) != "__init__.py":
            found.append(_stat(filename))
            continue
        pending = [os.path.dirname(filename)]
        found.append(_stat(pending[0]))
        while pending and len(found) < 4000:
            try:
                scan = sorted(os.scandir(pending.pop()), key=lambda item: item.name)
            except OSError:
                continue
            for item in scan:
                if item.is_dir(follow_symlinks=False) and item.name != "__pycache__":
                    found.append(_stat(item.path))
                    pending.append(item.path)
                elif item.name.endswith(".py"):
                    found.append(_stat(item.path))
    return found
