"""Register ``omcm mcp`` with Claude Code as the MCP server "omcm", next to the hooks.

Claude Code reads MCP servers from its own files, not settings.json: the user's
``~/.claude.json`` (``mcpServers``, user scope; ``projects.<dir>.mcpServers``,
local scope) and a project's ``.mcp.json`` (project scope, which the user
approves once in the client). omcm adds one entry named "omcm" and removes it
only while it is still the one omcm wrote (a user's own "omcm" server is kept).
Writes are atomic and keep the file's other keys and mode.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omcm_core.files import atomic_write_bytes, read_capped

NAME = "omcm"


#: How the server starts when no ``omcm`` script is found: ``python -c``, never ``-m``. Claude Code starts a
#: user-scope server in every project's folder, and ``-m`` puts that folder first on ``sys.path``: a cloned
#: repository's own ``omcm_core/`` would run as the user. ``-c`` puts ``""`` (the folder) there too, so the
#: code drops it before importing anything; the hooks do the same (``install.HOOK_CODE``).
MCP_CODE = "import sys;sys.path[:]=[p for p in sys.path if p not in('','.')];from omcm_core._cli.cli import main;sys.exit(main())"
#: What earlier versions wrote (recognised, so ``omcm install`` replaces it and ``uninstall`` removes it).
_LEGACY_ARGS = ["-m", "omcm_core", "mcp"]


def server_entry() -> dict[str, Any]:
    """How Claude Code starts the server: this installation's ``omcm`` script, else its Python (:data:`MCP_CODE`)."""
    script = Path(sys.executable).with_name("omcm")
    if not script.exists():
        found = shutil.which("omcm")
        script = Path(found) if found else script
    if script.exists():  # a console script's sys.path[0] is its own bin folder, never the project
        return {"type": "stdio", "command": str(script), "args": ["mcp"]}
    return python_entry()


def python_entry() -> dict[str, Any]:
    """The entry that runs ``omcm mcp`` with this Python, the project's folder off ``sys.path``."""
    return {"type": "stdio", "command": sys.executable, "args": ["-c", MCP_CODE, "mcp"]}


def ours(entry: Any) -> bool:
    """An entry omcm wrote: it runs ``omcm mcp`` (through the script, :data:`MCP_CODE` or an old ``-m``)."""
    if not isinstance(entry, Mapping):
        return False
    args = entry.get("args")
    command = str(entry.get("command", ""))
    if args == ["mcp"] and Path(command).name == "omcm":
        return True
    return args == _LEGACY_ARGS or (
        isinstance(args, list) and len(args) == 3 and args[0] == "-c" and args[1] == MCP_CODE and args[2] == "mcp"
    )


def unsafe(entry: Any) -> bool:
    """An entry omcm wrote with ``-m``: it runs a project's own ``omcm_core`` (``omcm install`` replaces it)."""
    return isinstance(entry, Mapping) and entry.get("args") == _LEGACY_ARGS


def place(scope: str, project: Path | None, env: Mapping[str, str]) -> tuple[Path, tuple[str, ...]]:
    """The file and the key path of its ``mcpServers`` object for ``scope``."""
    home = Path(env.get("HOME") or Path.home())
    if scope == "project" and project is not None:
        return project / ".mcp.json", ("mcpServers",)
    if scope == "local" and project is not None:
        return home / ".claude.json", ("projects", str(project), "mcpServers")
    return home / ".claude.json", ("mcpServers",)


def scope_of_settings(settings: Path, env: Mapping[str, str]) -> tuple[str, Path | None]:
    """The scope an explicit ``--settings`` file stands for (its folder tells)."""
    home = Path(env.get("HOME") or Path.home())
    if settings.parent == home / ".claude":
        return "user", None
    if settings.parent.name == ".claude":
        return ("local" if settings.name == "settings.local.json" else "project"), settings.parent.parent
    return "user", None


def _load(path: Path) -> dict:
    if not path.exists():
        return {}
    raw = read_capped(path)  # a project's .mcp.json may be a link to /dev/zero (ValueError: left alone)
    if not raw.strip():
        return {}
    data = json.loads(raw.decode("utf-8"))  # a file we cannot parse is left alone (ValueError)
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def _servers(data: dict, keys: tuple[str, ...], create: bool) -> dict | None:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        if key not in node:
            if not create:
                return None
            node[key] = {}
        node = node[key]
    return node if isinstance(node, dict) else None


def _write(path: Path, data: dict) -> None:
    target = path.resolve() if path.is_symlink() else path  # dotfiles: write through the link, keep it a link
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), mode)


def register(scope: str, project: Path | None, env: Mapping[str, str]) -> str:
    """Add (or update) the "omcm" server; a sentence saying what happened."""
    path, keys = place(scope, project, env)
    try:
        data = _load(path)
    except (OSError, ValueError) as exc:
        return f"MCP server not registered: {path} unreadable ({exc})"
    servers = _servers(data, keys, create=True)
    if servers is None:
        return f"MCP server not registered: {path} has an unexpected shape"
    current, wanted = servers.get(NAME), server_entry()
    if current == wanted:
        return f"MCP server {NAME!r} already registered in {path}"
    if current is not None and not ours(current):
        return f"MCP server not registered: {path} already has a server named {NAME!r} that omcm did not write"
    servers[NAME] = wanted
    _write(path, data)
    return f"MCP server {NAME!r} registered in {path}" + (
        " (approve it once in Claude Code)" if scope == "project" else ""
    )


def unregister(scope: str, project: Path | None, env: Mapping[str, str]) -> str | None:
    """Remove the "omcm" server omcm wrote; a sentence, or None when there was none."""
    path, keys = place(scope, project, env)
    try:
        data = _load(path)
    except (OSError, ValueError):
        return None
    servers = _servers(data, keys, create=False)
    if servers is None or not ours(servers.get(NAME)):
        return None
    del servers[NAME]
    _write(path, data)
    return f"MCP server {NAME!r} removed from {path}"


def registered(env: Mapping[str, str], project: Path | None) -> list[str]:
    """Where an omcm MCP server is registered (for ``omcm doctor``)."""
    found = []
    for scope in ("user", "local", "project"):
        path, keys = place(scope, project, env)
        try:
            servers = _servers(_load(path), keys, create=False)
        except (OSError, ValueError):
            continue
        if servers is not None and ours(servers.get(NAME)):
            found.append(f"{scope} ({path})")
    return found
