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

from omcm_core.files import atomic_write_bytes

NAME = "omcm"


def server_entry() -> dict[str, Any]:
    """How Claude Code starts the server: this installation's ``omcm`` script, else its Python."""
    script = Path(sys.executable).with_name("omcm")
    if not script.exists():
        found = shutil.which("omcm")
        script = Path(found) if found else script
    if script.exists():
        return {"type": "stdio", "command": str(script), "args": ["mcp"]}
    return {"type": "stdio", "command": sys.executable, "args": ["-m", "omcm_core", "mcp"]}


def ours(entry: Any) -> bool:
    """An entry omcm wrote: it runs ``omcm mcp`` (through the script or ``python -m omcm_core``)."""
    if not isinstance(entry, Mapping):
        return False
    args = entry.get("args")
    command = str(entry.get("command", ""))
    return args == ["mcp"] and Path(command).name == "omcm" or args == ["-m", "omcm_core", "mcp"]


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
    raw = path.read_bytes()
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
