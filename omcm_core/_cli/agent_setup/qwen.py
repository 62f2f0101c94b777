"""``omcm install --agent qwen``: omcm's hooks (and ``omcm mcp``) in Qwen Code's own ``settings.json``.

Qwen Code 0.24 reads ``~/.qwen/settings.json`` (``$QWEN_HOME/settings.json``) in Claude Code's
format, names and units (seconds), so the Claude installer writes it (``install.install`` with
``agent="qwen"``: each command starts ``OMCM_AGENT=qwen``, the manifest records the agent and the
file's original bytes, so removal is exact). Only events Qwen Code fires are registered
(``agents.qwen.FIRES``), and no tool matcher: plugins declare Claude's tool names (``Bash``), which
would never match Qwen's ``run_shell_command``. ``omcm mcp`` goes in the same file's ``mcpServers``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning
from omcm_core._cli.invocation import Invocation

AGENT = "qwen"
PREFIX = f"OMCM_AGENT={AGENT} "
FIX = "omcm install --agent qwen"


def settings_file(env: Mapping[str, str]) -> Path:
    """The user's settings.json Qwen Code reads: ``$QWEN_HOME/settings.json``, else ``~/.qwen/settings.json``."""
    folder = env.get("QWEN_HOME")
    if folder:
        return Path(folder).expanduser() / "settings.json"
    return Path(env.get("HOME") or Path.home()) / ".qwen" / "settings.json"


def target(args: argparse.Namespace, inv: Invocation) -> Path:
    """The file ``install``/``uninstall`` change: ``--settings``, ``--scope project`` (the project's
    ``.qwen/settings.json``, which Qwen Code merges over the user's) or the user's file."""
    from omcm_core._cli.settings_file import InstallError

    if getattr(args, "settings", None):
        return Path(inv.cwd, args.settings)
    scope = getattr(args, "scope", "user")
    if scope == "local":
        raise InstallError("Qwen Code has no local settings file: use --scope project, or name one with --settings")
    if scope != "project":
        return settings_file(inv.env)
    project = Path(inv.cwd, getattr(args, "project_dir", None) or ".")
    if not project.is_dir():
        raise InstallError(f"--project-dir {project}: no such folder")
    if (project / ".qwen").is_symlink():  # an untrusted repository's .qwen -> ~/.ssh must not be written into
        raise InstallError(f"{project / '.qwen'} is a link; omcm writes only into a project's own .qwen folder")
    return project / ".qwen" / "settings.json"


def plan(hooks: set[str]) -> tuple[list[str], list[str]]:
    """(the events to register for ``hooks``, the events those hooks answer that Qwen Code never fires)."""
    from omcm_core.agents.qwen import FIRES
    from omcm_core.events import EVENTS

    wanted = [spec.name for spec in EVENTS.values() if spec.hook in hooks]
    return [e for e in wanted if e in FIRES], [e for e in wanted if e not in FIRES]


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    from omcm_core._cli import install as claude
    from omcm_core.config import CoreConfig

    events, lacking = plan(hooks)
    if not events:
        print("omcm: no installed plugin implements a hook Qwen Code fires; nothing to register.", file=sys.stderr)
        return 1
    guard = bool(inv.config.section("core", CoreConfig).fail_closed)
    try:
        path = target(args, inv)
        result = claude.install(inv.home, path, events, guard=guard, agent=AGENT)
        mcp = _mcp(inv.home, path, register=bool(inv.manager.implementations("mcp_tools")))
    except (claude.InstallError, OSError) as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    if result.get("already"):
        print(f"omcm is already installed for Qwen Code in {path}")
    for verb, key in (("installed", "added"), ("updated", "rewritten")):
        if result.get(key):
            print(f"omcm {verb} for Qwen Code in {path} for: {', '.join(a['event'] for a in result[key])}")
    if mcp:
        print(mcp)
    for note in notes(lacking, events):
        print(f"omcm: {note}", file=sys.stderr)
    return 0


def notes(lacking: list[str], events: list[str]) -> list[str]:
    """What the user should know after an install: events left out, and what needs which event."""
    out = []
    if lacking:
        out.append(f"left out, Qwen Code 0.24 has no such event: {', '.join(lacking)}")
    if "PreToolUse" in events and "PostToolUse" not in events:
        out.append(
            "Qwen Code drops PreToolUse context; omcm gives it to the model at the call's PostToolUse, "
            "which no enabled plugin registers, so that context is lost"
        )
    return out


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import install as claude

    try:
        path = target(args, inv)
        created = claude.created_paths(inv.home, path)  # ~/.qwen, when omcm made it
        if not _untouched(inv.home, path):  # untouched: the original bytes come back, without the MCP entry
            _mcp(inv.home, path, register=False)
        result = claude.uninstall(inv.home, path)
    except (claude.InstallError, OSError) as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {claude.uninstall_note(result)}")
    for gone in claude.remove_created(created):
        print(f"removed {gone} (omcm had created it; nothing is left in it)")
    return 0


def _manifest(home: Path, path: Path) -> tuple[Path, dict | None]:
    from omcm_core._cli.settings_file import _manifest_path, _through_links

    manifest_file = _manifest_path(home, _through_links(path))
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        return manifest_file, None
    return manifest_file, manifest if isinstance(manifest, dict) else None


def _untouched(home: Path, path: Path) -> bool:
    """The file is byte for byte what omcm last wrote (uninstall then restores the original bytes)."""
    _file, manifest = _manifest(home, path)
    try:
        current = Path(path).resolve().read_bytes()
    except OSError:
        return False
    return manifest is not None and hashlib.sha256(current).hexdigest() == manifest.get("installed_sha256")


def _mcp(home: Path, path: Path, register: bool) -> str | None:
    """``omcm mcp`` in (or out of) ``mcpServers``: only an entry omcm wrote is replaced or removed.

    The manifest's hash follows the write, so an uninstall with nothing else changed restores the
    original bytes exactly (they never held this entry).
    """
    from omcm_core._cli import mcp_registration as mcp
    from omcm_core._cli.settings_file import _detect_indent, _dump, _load, _through_links
    from omcm_core.files import atomic_write_bytes, atomic_write_json

    path = _through_links(path)
    if not path.exists():
        return None
    raw, data = _load(path)
    servers = data.get("mcpServers")
    current = servers.get(mcp.NAME) if isinstance(servers, dict) else None
    if current is not None and not mcp.ours(current):
        return f"kept your own MCP server {mcp.NAME!r} in {path}" if register else None
    if register:
        entry = {k: v for k, v in mcp.server_entry().items() if k != "type"}  # Qwen Code infers stdio
        if current == entry:
            return None
        if servers is not None and not isinstance(servers, dict):
            return f"{path}: 'mcpServers' is not an object; omcm mcp not registered"
        data.setdefault("mcpServers", {})[mcp.NAME] = entry
        message = f"omcm mcp registered with Qwen Code in {path}"
    else:
        if current is None or not isinstance(servers, dict):
            return None
        del servers[mcp.NAME]
        if not servers:
            del data["mcpServers"]
        message = f"omcm mcp removed from {path}"
    new = _dump(data, _detect_indent((raw or b"").decode("utf-8", "replace")) if raw else 2)
    atomic_write_bytes(path, new, path.stat().st_mode & 0o777)
    manifest_file, manifest = _manifest(home, path)
    if manifest is not None and register:
        manifest["installed_sha256"] = hashlib.sha256(new).hexdigest()
        atomic_write_json(manifest_file, manifest)
    return message


def registered(path: Path) -> list[tuple[str, str]]:
    """``(event, command)`` of every omcm hook in ``path``."""
    from omcm_core._cli.settings_file import installed_commands

    return installed_commands(path)


def installed(probe: Probe) -> bool:
    """omcm is registered with Qwen Code (its section then shows in a plain `omcm doctor`)."""
    return bool(registered(settings_file(probe.env)))


def doctor(probe: Probe) -> Iterable[Check]:
    path = settings_file(probe.env)
    shown = probe.tilde(path)
    found = registered(path)
    if not found:
        yield warning("qwen.registered", f"omcm is not registered in {shown}", fix=FIX)
        return
    events = sorted({event for event, _command in found})
    yield ok(
        "qwen.registered", f"{shown} runs omcm for {', '.join(events)}", data={"path": str(path), "events": events}
    )
    yield from _commands(found)
    hooks = {h for plugin in probe.manager.enabled() for h in plugin.hooks}
    wanted, lacking = plan(hooks)
    missing = [e for e in wanted if e not in events]
    if missing:
        yield error("qwen.missing", f"not registered for Qwen Code: {', '.join(missing)}", fix=FIX)
    if lacking:
        yield info("qwen.lacks", f"Qwen Code 0.24 fires no {', '.join(lacking)}: those hooks never run there")
    if "PreToolUse" in events and "PostToolUse" not in events:
        yield warning(
            "qwen.held_context",
            "PreToolUse context reaches Qwen Code's model only through the call's PostToolUse, "
            "which is not registered: it is lost",
            fix=FIX,
        )
    yield from _mcp_server(probe, path)
    yield from _plugins_doing_less(probe)


def _mcp_server(probe: Probe, path: Path) -> Iterator[Check]:
    """``omcm mcp`` in Qwen Code's ``mcpServers``: there when plugins give MCP tools, and still runnable."""
    import os

    from omcm_core._cli import mcp_registration as mcp
    from omcm_core._cli.settings_file import InstallError, _load

    try:
        _raw, data = _load(path)
    except InstallError as exc:
        yield error("qwen.settings", str(exc))
        return
    servers = data.get("mcpServers")
    entry = servers.get(mcp.NAME) if isinstance(servers, dict) else None
    if entry is None:
        if probe.manager.implementations("mcp_tools"):
            yield warning(
                "qwen.mcp", "omcm mcp is not registered: plugins' MCP tools are not offered in Qwen Code", fix=FIX
            )
    elif not mcp.ours(entry):
        yield info("qwen.mcp", f"mcpServers.{mcp.NAME} is a server of your own (omcm leaves it alone)")
    elif not os.path.exists(str(entry.get("command", ""))):
        yield error("qwen.mcp", f"omcm mcp is registered with a program that is gone ({entry.get('command')})", fix=FIX)
    else:
        yield ok("qwen.mcp", "omcm mcp is registered with Qwen Code")


def _commands(found: list[tuple[str, str]]) -> Iterator[Check]:
    """Commands that no longer run (a client gone) or that do not name Qwen Code (answers in Claude's form)."""
    import os

    from omcm_core._cli.repair import _client_paths

    gone = sorted({p for _e, command in found for p in _client_paths(command) if not os.path.exists(p)})
    if gone:
        yield error("qwen.stale", f"registered client is gone ({gone[0]}): omcm was upgraded or moved", fix=FIX)
    unnamed = sorted({event for event, command in found if not command.startswith(PREFIX)})
    if unnamed:
        yield warning(
            "qwen.unnamed",
            f"{', '.join(unnamed)} run omcm as for Claude Code (no OMCM_AGENT=qwen): no held context, "
            "and Qwen Code's empty-prompt ticks reach plugins",
            fix=f"omcm uninstall --agent qwen && {FIX}",
        )


def _plugins_doing_less(probe: Probe) -> Iterator[Check]:
    """Per-agent state: Qwen Code's session ids are namespaced (``qwen:<id>``), its transcript is its own."""
    from omcm_core.transcripts import AGENT_TRANSCRIPTS

    yield info("qwen.sessions", "sessions are kept apart from Claude Code's (ids stored as qwen:<id>)")
    yield info("qwen.transcript", AGENT_TRANSCRIPTS[AGENT])
