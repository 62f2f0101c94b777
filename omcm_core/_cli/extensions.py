"""Subcommands that plugins add through the ``commands`` hook."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
from pathlib import Path

from omcm_core._cli.invocation import Invocation


def register(sub: argparse._SubParsersAction, inv: Invocation, reserved: Collection[str]) -> None:
    """Add every plugin's commands; a name already taken is skipped with a note on stderr."""
    taken = set(reserved)
    for plugin, function, _args in inv.manager.implementations("commands"):
        try:
            commands = list(function() or ())
        except Exception as exc:
            print(f"omcm: plugin {plugin} failed to list its commands: {exc}", file=sys.stderr)
            continue
        for command in commands:
            if command.name in taken:
                print(f"omcm: command {command.name!r} of plugin {plugin} clashes; skipped", file=sys.stderr)
                continue
            taken.add(command.name)
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
