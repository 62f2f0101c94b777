"""A Claude Code settings.json as ``omcm install`` reads it, and the manifest it keeps for each one."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from omcm_core.files import read_capped
from omcm_core.paths import ensure_private_dir


class InstallError(Exception):
    pass


def settings_path(scope: str, project: Path | None, env: Mapping[str, str] | None = None) -> Path:
    if scope == "user":
        # The invocation's HOME, not this process's: a command run for another environment
        # (a test, a wrapper) must not edit the caller's own ~/.claude/settings.json.
        home = (env or {}).get("HOME")
        return (Path(home) if home else Path.home()) / ".claude" / "settings.json"
    if project is None:
        raise InstallError("project scope needs a project directory (--project-dir or CLAUDE_PROJECT_DIR)")
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project / ".claude" / name


def _manifest_path(home: Path, settings: Path) -> Path:
    digest = hashlib.sha256(str(settings.resolve()).encode()).hexdigest()[:16]
    return ensure_private_dir(home / "installs") / f"{digest}.json"


def agent_of(home: Path, settings: Path) -> str:
    """The coding agent ``omcm install`` registered in ``settings`` for (its manifest's ``agent``; ``claude``)."""
    try:
        agent = json.loads(_manifest_path(home, _through_links(settings)).read_text()).get("agent")
    except (OSError, ValueError, AttributeError):
        return "claude"
    return agent if isinstance(agent, str) and agent else "claude"


def reinstall_argv(home: Path, settings: Path) -> list[str]:
    """``omcm`` arguments that register omcm again in ``settings``, for the agent it was registered for."""
    agent = agent_of(home, settings)
    return ["install", "--settings", str(settings), *(["--agent", agent] if agent != "claude" else [])]


def _through_links(settings: Path) -> Path:
    """The file to change: a symlinked settings.json (dotfiles) is written where it points, and stays a link."""
    return Path(os.path.realpath(settings))


def _recorded_for(home: Path, settings: Path) -> Path | None:
    """A manifest naming ``settings`` as given: older versions keyed it on a link's target, then replaced the link."""
    for manifest in (home / "installs").glob("*.json"):
        try:
            if json.loads(manifest.read_text())["settings"] == str(settings):
                return manifest
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _detect_indent(text: str) -> int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) != len(line):
            return len(line) - len(stripped)
    return 2


def _load(path: Path) -> tuple[bytes | None, dict]:
    if not path.exists():
        return None, {}
    try:
        raw = read_capped(path)  # a project's settings file may be a link to /dev/zero or a FIFO
    except ValueError as exc:
        raise InstallError(f"{exc}; omcm will not touch it") from None
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first, omcm will not touch it") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object; omcm will not touch it")
    return raw, data


def _dump(data: dict, indent: int) -> bytes:
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")


def installed_commands(settings: Path) -> list[tuple[str, str]]:
    """``(event, command)`` pairs in ``settings`` that run ``omcm hook``."""
    try:
        _raw, data = _load(settings)
    except InstallError:
        return []
    found = []
    hooks = data.get("hooks", {})
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                for h in group.get("hooks", []) if isinstance(group, dict) else []:
                    cmd = h.get("command", "") if isinstance(h, dict) else ""
                    if "omcm" in cmd and (" hook " in f"{cmd} " or "fast_hook.py" in cmd or "client.py" in cmd):
                        found.append((event, cmd))
    return found
