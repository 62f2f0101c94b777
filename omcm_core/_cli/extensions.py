"""Subcommands that plugins add through the ``commands`` hook."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from omcm_core._cli.invocation import Invocation


def offered(inv: Invocation, hook: str, what: str, reserved: Collection[str] = ()) -> list[tuple[str, Any]]:
    """(plugin, item) for every named item the plugins' ``hook`` offers (commands, MCP tools).

    A plugin whose hook raises, or an item whose ``name`` is already taken, is
    skipped with a note on stderr: one plugin's mistake never hides the others.
    """
    taken, found = set(reserved), []
    for plugin, function, args in inv.manager.implementations(hook):
        try:
            items = list(function(**({"ctx": inv.context(plugin)} if "ctx" in args else {})) or ())
        except Exception as exc:
            print(f"omcm: plugin {plugin} failed to list its {what}: {exc}", file=sys.stderr)
            continue
        for item in items:
            if item.name in taken:
                print(f"omcm: {what[:-1]} {item.name!r} of plugin {plugin} clashes; skipped", file=sys.stderr)
                continue
            taken.add(item.name)
            found.append((plugin, item))
    return found


def register(sub: argparse._SubParsersAction, inv: Invocation, reserved: Collection[str]) -> None:
    """Add every plugin's commands; a name already taken is skipped with a note on stderr."""
    for plugin, command in offered(inv, "commands", "commands", reserved):
        p = sub.add_parser(command.name, help=f"{command.help} [{plugin}]")
        if command.configure is not None:
            command.configure(p)
        _project_after_action(p)
        p.set_defaults(run=_runner(plugin, command))


def _project_after_action(parser: argparse.ArgumentParser) -> None:
    """``omcm memory status --project X`` as well as ``omcm memory --project X status``.

    A command's ``--project`` is its parser's; each of its actions gets the same
    option, with no default so that one given before the action stays.
    """
    option = parser._option_string_actions.get("--project")
    if option is None or option.dest != "project":
        return
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for child in dict.fromkeys(action.choices.values()):
            if "--project" not in child._option_string_actions:
                child.add_argument("--project", default=argparse.SUPPRESS, help=option.help)


def _runner(plugin: str, command):
    def run(args: argparse.Namespace, inv: Invocation) -> int:
        project = getattr(args, "project", None)
        if isinstance(project, str) and project and not Path(inv.cwd, project).is_dir():
            # A typo must not become a new project tree: commands that write would create it.
            print(f"omcm {command.name}: --project {project}: no such folder", file=sys.stderr)
            return 2
        return int(command.run(args, inv.context(plugin)) or 0)

    return run
