"""``omcm install --agent gemini``: omcm's hooks (and ``omcm mcp``) in Gemini CLI's own settings.json.

Gemini CLI 0.61 reads ``hooks`` from ``~/.gemini/settings.json`` (``--scope
project``: the project's ``.gemini/settings.json``) under its own event names,
timeouts in milliseconds, each handler a shell command. omcm registers, per event
an enabled plugin answers and Gemini CLI has (``agents/gemini.py``'s table), the
command ``omcm install`` writes for Claude Code with ``OMCM_AGENT=gemini`` in
front; the command names omcm's event (``PreToolUse``), which the dispatcher and
the inline fallback both know, so a ``[core] fail_closed`` guard keeps denying,
in Gemini's form, when omcm cannot run. Every handler is named ``omcm``
(``/hooks disable omcm`` in Gemini CLI turns them all off). No tool matcher:
plugins declare Claude Code's tool names, and a guard must never miss a call.

What it measured and handles (docs/agents.md):

- Hooks run only in folders Gemini CLI trusts (it processes no settings hooks,
  user ones included, in an untrusted folder; a headless run there exits), and
  not at all with ``hooksConfig.enabled: false``. omcm does not trust folders or
  flip that switch for the user: install warns, ``omcm doctor --agent gemini`` says so.
- ``PreCompress`` fires before every model request, compressing or not, so
  PreCompact is not registered (a process per request for a hook meant for a
  rare moment); reported at install.
- The manifest is ``omcm install``'s (``OMCM_HOME/installs/``, with ``"agent":
  "gemini"``): uninstall removes exactly what was added and restores the file's
  bytes when nothing else changed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from omcm_core._cli.doctor.records import Check, Probe
from omcm_core._cli.invocation import Invocation

AGENT = "gemini"
#: Every handler omcm adds is called this in Gemini CLI (its /hooks panel, ``hooksConfig.disabled``).
HANDLER_NAME = "omcm"
#: omcm events an enabled plugin may answer that are not registered with Gemini CLI, and why.
NOT_REGISTERED = {
    "PreCompact": "Gemini CLI 0.61 fires PreCompress before every model request, compressing or not",
}


def settings_file(args: argparse.Namespace, inv: Invocation) -> Path:
    from omcm_core._cli.install import InstallError

    if getattr(args, "settings", None):
        return Path(inv.cwd, args.settings)
    scope = getattr(args, "scope", "user")
    if scope == "user":
        return Path(inv.env.get("HOME") or Path.home()) / ".gemini" / "settings.json"
    if scope == "local":
        raise InstallError("Gemini CLI has no local settings file: use --scope user (the default) or --scope project")
    project = Path(inv.cwd, getattr(args, "project_dir", None) or inv.cwd)
    if not project.is_dir():
        raise InstallError(f"--project-dir {project}: no such folder")
    if (project / ".gemini").is_symlink():  # an untrusted repository's .gemini -> ~/.ssh must not be written
        raise InstallError(f"{project / '.gemini'} is a link; omcm writes only into a project's own .gemini folder")
    return project / ".gemini" / "settings.json"


def plan(hooks: set[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(omcm event, Gemini event)`` to register for plugins implementing ``hooks``; ``(event, why)`` left out."""
    from omcm_core.agents.gemini import GEMINI_NAMES
    from omcm_core.events import EVENTS

    wanted = [spec.name for spec in EVENTS.values() if spec.hook in hooks]
    pairs, skipped = [], []
    for name in wanted:
        if name in NOT_REGISTERED:
            skipped.append((name, NOT_REGISTERED[name]))
        elif name == "PostToolUseFailure" and "PostToolUse" in wanted:
            continue  # AfterTool fires for a failed call too
        elif name in GEMINI_NAMES:
            pairs.append((name, GEMINI_NAMES[name]))
        else:
            skipped.append((name, "Gemini CLI has no such event"))
    if ("PreToolUse", "BeforeTool") in pairs and ("PostToolUse", "AfterTool") not in pairs:
        # Gemini CLI drops BeforeTool context: AfterTool is where omcm hands it to the model.
        pairs.insert(pairs.index(("PreToolUse", "BeforeTool")) + 1, ("PostToolUse", "AfterTool"))
    return pairs, skipped


def handler(event: str, base: list[str] | None, guard: bool) -> dict[str, Any]:
    """One Gemini CLI hook handler running ``omcm hook EVENT`` (omcm's event name) as Gemini's agent."""
    from omcm_core._cli.hook_command import hook_entry

    entry = hook_entry(event, base, guard, agent=AGENT)
    return {
        "name": HANDLER_NAME,
        "type": "command",
        "command": entry["command"],
        "timeout": int(entry["timeout"] * 1000),
    }


def mcp_entry() -> dict[str, Any]:
    """``omcm mcp`` as Gemini CLI's ``mcpServers`` takes it (no ``type``: it knows stdio by ``command``)."""
    from omcm_core._cli.mcp_registration import server_entry

    return {k: v for k, v in server_entry().items() if k != "type"}


def write(home: Path, settings: Path, handlers: dict[str, dict], mcp: dict | None) -> dict[str, Any]:
    """Add ``handlers`` (Gemini event -> handler) and the ``omcm`` MCP server to ``settings``; idempotent.

    A handler omcm added before (its manifest) whose command changed (omcm moved) is
    rewritten in place. Returns what was added, rewritten, and whether the MCP server was.
    """
    from omcm_core._cli import install as common
    from omcm_core._cli.mcp_registration import ours
    from omcm_core.files import atomic_write_bytes, atomic_write_json

    settings = common._through_links(settings)
    original, data = common._load(settings)
    manifest_file = common._manifest_path(home, settings)
    previous = json.loads(manifest_file.read_text()) if manifest_file.exists() else None
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise common.InstallError(f"{settings}: 'hooks' is not an object; omcm will not touch it")
    added = list(previous["added"]) if previous else []
    ours_now = {(a["event"], a["command"]) for a in added}
    new, rewritten = [], []
    for event, entry in handlers.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise common.InstallError(f"{settings}: hooks.{event} is not a list; omcm will not touch it")
        found = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if isinstance(h, dict)]
        if any(h == entry for h in found):
            continue
        old = next((h for h in found if (event, h.get("command")) in ours_now), None)
        if old is not None:
            record = next(a for a in added if a["event"] == event and a["command"] == old["command"])
            old.clear()
            old.update(entry)
            record["command"] = entry["command"]
            rewritten.append(record)
            continue
        if any(h.get("command") == entry["command"] for h in found):
            continue  # the user's own copy of our exact command
        groups.append({"hooks": [entry]})
        new.append({"event": event, "command": entry["command"]})
    added += new
    mcp_added = bool(previous and previous.get("mcp"))
    mcp_kept = None
    if mcp is not None:
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise common.InstallError(f"{settings}: 'mcpServers' is not an object; omcm will not touch it")
        current = servers.get("omcm")
        if current is not None and not ours(current):
            mcp_kept = "a server named 'omcm' that omcm did not write is there: kept"
        elif current != mcp:
            servers["omcm"] = mcp
            mcp_added = True
            (rewritten if current else new).append({"event": "mcpServers", "command": "omcm"})
        if not servers:
            del data["mcpServers"]
    if not new and not rewritten:
        return {"settings": str(settings), "added": [], "already": True, "mcp_kept": mcp_kept}
    indent = common._detect_indent(original.decode("utf-8", "replace")) if original else 2
    created = list(previous.get("created", [])) if previous else []
    if not settings.parent.exists():  # .gemini made for this: uninstall removes it again if empty
        created.append(str(settings.parent))
    settings.parent.mkdir(parents=True, exist_ok=True)
    mode = settings.stat().st_mode & 0o777 if settings.exists() else 0o600
    new_bytes = common._dump(data, indent)
    manifest = {
        "settings": str(settings),
        "agent": AGENT,
        "original": base64.b64encode(original).decode() if original is not None else None,
        "installed_sha256": hashlib.sha256(new_bytes).hexdigest(),
        "added": added,
        "mcp": mcp_added,
    }
    if previous:  # the bytes from before the very first install
        manifest["original"] = previous["original"]
    if created:
        manifest["created"] = created
    atomic_write_json(manifest_file, manifest)
    atomic_write_bytes(settings, new_bytes, mode)
    return {"settings": str(settings), "added": new, "rewritten": rewritten, "mcp_kept": mcp_kept}


def remove(home: Path, settings: Path) -> dict[str, Any]:
    """Remove exactly what :func:`write` added (the MCP server too); the original bytes when nothing else changed."""
    from omcm_core._cli import install as common
    from omcm_core._cli.mcp_registration import ours
    from omcm_core.files import atomic_write_bytes

    real = common._through_links(settings)
    manifest_file = common._manifest_path(home, real)
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        manifest = None
    if manifest and manifest.get("mcp") and real.exists():
        current = real.read_bytes()
        if hashlib.sha256(current).hexdigest() != manifest["installed_sha256"]:  # edited since: remove ours only
            _raw, data = common._load(real)
            servers = data.get("mcpServers")
            if isinstance(servers, dict) and ours(servers.get("omcm")):
                del servers["omcm"]
                original = base64.b64decode(manifest["original"]) if manifest["original"] else b""
                if not servers and b'"mcpServers"' not in original:
                    del data["mcpServers"]
                indent = common._detect_indent(current.decode("utf-8", "replace"))
                atomic_write_bytes(real, common._dump(data, indent), real.stat().st_mode & 0o777)
    return common.uninstall(home, settings)


def install(args: argparse.Namespace, inv: Invocation, hooks: set[str]) -> int:
    from omcm_core._cli import install as common
    from omcm_core._cli import native_client
    from omcm_core.config import CoreConfig

    try:
        path = settings_file(args, inv)
        pairs, skipped = plan(hooks)
        if not pairs:
            print("omcm: no installed plugin implements a hook Gemini CLI has; nothing to register.", file=sys.stderr)
            return 1
        guard = bool(inv.config.section("core", CoreConfig).fail_closed)
        common.compile_client()
        base = native_client.prepare(inv.home, common._through_links(path), inv.env)
        handlers = {gemini: handler(event, base, guard) for event, gemini in pairs}
        mcp = mcp_entry() if inv.manager.implementations("mcp_tools") else None
        result = write(inv.home, path, handlers, mcp)
    except common.InstallError as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    if result.get("already"):
        print(f"omcm is already installed for Gemini CLI in {path}")
    for verb, key in (("installed", "added"), ("updated", "rewritten")):
        events = [a["event"] for a in result.get(key, []) if a["event"] != "mcpServers"]
        if events:
            print(f"omcm {verb} for Gemini CLI in {path} for: {', '.join(events)}")
        if len(events) != len(result.get(key, [])):
            print(f"omcm's MCP server (omcm mcp) {'registered' if key == 'added' else 'updated'} in {path}")
    for event, why in skipped:
        print(f"omcm: {event} not registered with Gemini CLI: {why}", file=sys.stderr)
    if result.get("mcp_kept"):
        print(f"omcm: MCP server not registered: {result['mcp_kept']}", file=sys.stderr)
    for note in notes(path):
        print(f"omcm: {note}", file=sys.stderr)
    return 0


def section(data: dict, key: str) -> dict:
    """``data[key]`` when it is an object, else an empty one (a hand-edited file may hold anything)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def notes(settings: Path) -> list[str]:
    """What keeps Gemini CLI from running the hooks just registered (its switches, read from ``settings``)."""
    from omcm_core._cli import install as common

    try:
        _raw, data = common._load(settings)
    except common.InstallError:
        return []
    config = section(data, "hooksConfig")
    out = []
    if config.get("enabled") is False:
        out.append(f"hooksConfig.enabled is false in {settings}: Gemini CLI runs no hooks until you set it true")
    disabled = config.get("disabled")
    if isinstance(disabled, list) and HANDLER_NAME in disabled:
        out.append(f'hooksConfig.disabled lists "{HANDLER_NAME}" in {settings}: omcm\'s hooks are turned off there')
    out.append(
        "Gemini CLI runs hooks only in folders it trusts (in another folder omcm's guards do not run); "
        "`omcm doctor --agent gemini` checks this project"
    )
    return out


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import install as common

    try:
        path = settings_file(args, inv)
        created = common.created_paths(inv.home, path)
        result = remove(inv.home, path)
    except common.InstallError as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {common.uninstall_note(result)}")
    for gone in common.remove_created(created):
        print(f"removed {gone} (omcm had created it; nothing is left in it)")
    return 0


def manifests(home: Path) -> list[dict]:
    """The manifests of omcm's Gemini CLI registrations (each names its settings file)."""
    found = []
    for manifest in sorted((home / "installs").glob("*.json")):
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("agent") == AGENT and isinstance(data.get("settings"), str):
            found.append(data)
    return found


def installed(probe: Probe) -> bool:
    """omcm is registered with Gemini CLI (its section then shows in a plain ``omcm doctor``)."""
    return any(Path(m["settings"]).exists() for m in manifests(probe.home))


def doctor(probe: Probe) -> Iterable[Check]:
    from omcm_core._cli.agent_setup import gemini_doctor

    return gemini_doctor.checks(probe)
