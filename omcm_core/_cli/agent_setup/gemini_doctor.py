"""``omcm doctor --agent gemini``: whether Gemini CLI runs omcm's hooks, and what it does with their answers."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.agent_setup.gemini import section
from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning

FIX = "omcm install --agent gemini"


def _files(probe: Probe) -> list[Path]:
    """Gemini settings files omcm registered in (its manifests), and the user's own, where they exist."""
    from omcm_core._cli.agent_setup.gemini import manifests

    user = Path(probe.env.get("HOME") or Path.home()) / ".gemini" / "settings.json"
    paths = [Path(m["settings"]) for m in manifests(probe.home)] + [user]
    out: list[Path] = []
    for path in paths:
        if path.exists() and path.resolve() not in {p.resolve() for p in out}:
            out.append(path)
    return out


def _load(path: Path) -> dict | None:
    from omcm_core._cli.settings_file import InstallError, _load

    try:
        return _load(path)[1]
    except (InstallError, OSError):
        return None


def checks(probe: Probe) -> Iterator[Check]:
    from omcm_core._cli.agent_setup.gemini import plan
    from omcm_core._cli.settings_file import installed_commands

    hooks = {hook for plugin in probe.manager.enabled() for hook in plugin.hooks}
    pairs, skipped = plan(hooks)
    wanted = {gemini: event for event, gemini in pairs}
    registered_any = False
    for path in _files(probe):
        data = _load(path)
        shown = probe.tilde(path)
        if data is None:
            yield error(
                "gemini.settings.invalid",
                f"{shown} is not a JSON object omcm can read (Gemini CLI allows comments; omcm does not edit such a file)",
                fix=f"edit {shown}",
            )
            continue
        commands = installed_commands(path)
        if not commands:
            continue
        registered_any = True
        events = sorted({event for event, _ in commands})
        yield ok("gemini.registered", f"{shown} runs omcm for {', '.join(events)}", data={"path": str(path)})
        yield from _coverage(shown, events, wanted)
        yield from _commands(shown, commands)
        yield from _switches(shown, data)
        yield from _context_moves(shown, events)
        yield _mcp(shown, data)
    if not registered_any:
        yield error("gemini.none", "omcm is not registered with Gemini CLI", fix=FIX)
        return
    for event, why in skipped:
        yield info(f"gemini.skipped.{event}", f"{event} is not registered with Gemini CLI: {why}")
    yield from _trust(probe)


def _coverage(shown: str, events: list[str], wanted: dict[str, str]) -> Iterator[Check]:
    for gemini, event in wanted.items():
        if gemini not in events:
            yield error(
                f"gemini.missing.{gemini}",
                f"{gemini} is not registered in {shown}, so the plugins answering {event} never run under Gemini CLI",
                fix=FIX,
            )
    for gemini in events:
        if gemini not in wanted:
            yield warning(
                f"gemini.unused.{gemini}",
                f"{gemini} is registered in {shown} but no enabled plugin answers it (a process per call for nothing)",
                fix=f"omcm uninstall --agent gemini && {FIX}",
            )


def _commands(shown: str, commands: list[tuple[str, str]]) -> Iterator[Check]:
    """Commands whose client is gone (omcm moved or upgraded) or that answer in Claude's form."""
    for event, command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        while words and "=" in words[0] and not words[0].startswith("/"):  # OMCM_AGENT=gemini in front
            words = words[1:]
        programs = words[:1] + [w for w in words[1:] if w.endswith("fast_hook.py")]
        gone = [w for w in programs if w.startswith("/") and not os.path.exists(w)]
        if gone:
            yield error(
                f"gemini.stale.{event}",
                f"{event} in {shown} runs {gone[0]}, which is gone (omcm moved or upgraded): the hook answers nothing",
                fix=FIX,
            )
        if not command.startswith("OMCM_AGENT=gemini "):
            yield warning(
                f"gemini.claude_form.{event}",
                f"{event} in {shown} runs omcm without OMCM_AGENT=gemini: its answers are in Claude Code's form, "
                "which Gemini CLI ignores (a guard's deny lets the command run)",
                fix=f"omcm uninstall --agent gemini && {FIX}",
            )


def _switches(shown: str, data: dict) -> Iterator[Check]:
    config = section(data, "hooksConfig")
    if config.get("enabled") is False:
        yield error(
            "gemini.hooks_disabled",
            f"hooksConfig.enabled is false in {shown}: Gemini CLI runs no hooks, omcm's guards included",
            fix=f'edit {shown}: "hooksConfig": {{"enabled": true}}',
        )
    disabled = config.get("disabled")
    if isinstance(disabled, list) and "omcm" in disabled:
        yield warning(
            "gemini.omcm_disabled",
            f'hooksConfig.disabled lists "omcm" in {shown}: omcm\'s hooks are turned off in Gemini CLI',
            fix="in Gemini CLI: /hooks enable omcm",
        )


def _context_moves(shown: str, events: list[str]) -> Iterator[Check]:
    """Gemini CLI passes no BeforeTool context to the model: omcm gives it with the same call's AfterTool."""
    if "BeforeTool" not in events:
        return
    if "AfterTool" in events:
        yield info(
            "gemini.context_moves",
            "BeforeTool context (tool-counter's suggestion, pre-tool-guide's lesson) reaches the model with the "
            "same call's AfterTool: Gemini CLI drops BeforeTool context",
        )
    else:
        yield warning(
            "gemini.context_lost",
            f"BeforeTool is registered in {shown} without AfterTool: plugins' BeforeTool context never reaches "
            "the model (Gemini CLI drops it there; omcm delivers it at AfterTool)",
            fix=f"omcm uninstall --agent gemini && {FIX}",
        )


def _mcp(shown: str, data: dict) -> Check:
    from omcm_core._cli.mcp_registration import ours

    servers = section(data, "mcpServers")
    if ours(servers.get("omcm")):
        return ok("gemini.mcp", f"omcm's MCP server is registered in {shown}")
    return info("gemini.mcp", f"omcm's MCP server is not registered in {shown} (no enabled plugin offers MCP tools)")


def _trust(probe: Probe) -> Iterator[Check]:
    """Gemini CLI runs no settings hooks in a folder it does not trust (0.61: not even the user's own)."""
    project = probe.project
    if project is None:
        return
    user = Path(probe.env.get("HOME") or Path.home()) / ".gemini"
    settings = _load(user / "settings.json") or {}
    security = section(settings, "security")
    folder_trust = section(security, "folderTrust")
    if folder_trust.get("enabled") is False:
        return
    verdict = trusted(project, Path(probe.env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or user / "trustedFolders.json"))
    if verdict:
        yield ok("gemini.trust", f"Gemini CLI trusts {probe.tilde(project)}: it runs omcm's hooks there")
    else:
        yield warning(
            "gemini.trust",
            f"Gemini CLI does not trust {probe.tilde(project)}{' (you chose so)' if verdict is False else ''}: "
            "it runs no hooks there, so omcm's guards do not run",
            fix=f"trust it when Gemini CLI asks in {probe.tilde(project)} (or /permissions there)",
        )


def trusted(folder: Path, rules_file: Path) -> bool | None:
    """Gemini CLI's verdict on ``folder`` from its trustedFolders.json: True, False (DO_NOT_TRUST) or None (never asked).

    As Gemini CLI 0.61 decides: of the rules whose folder (``TRUST_PARENT``: the rule's parent)
    holds ``folder``, the one with the longest path as written wins.
    """
    try:
        with open(rules_file, "rb") as handle:
            rules = json.loads(handle.read(1 << 20) or b"{}")
    except (OSError, ValueError):
        return None
    if not isinstance(rules, dict):
        return None
    target = os.path.realpath(folder)
    best: tuple[int, str] | None = None
    for raw, level in rules.items():
        if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"):
            continue
        root = os.path.realpath(os.path.dirname(raw) if level == "TRUST_PARENT" else raw)
        inside = target == root or target.startswith(root.rstrip("/") + "/")
        if inside and (best is None or len(raw) > best[0]):
            best = (len(raw), level)
    return None if best is None else best[1] != "DO_NOT_TRUST"
