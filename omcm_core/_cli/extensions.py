"""Subcommands that plugins add through the ``commands`` hook."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection

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
            p.set_defaults(run=_runner(plugin, command))


def _runner(plugin: str, command):
    def run(args: argparse.Namespace, inv: Invocation) -> int:
        return int(command.run(args, inv.context(plugin)) or 0)

    return run
