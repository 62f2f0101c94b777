"""Subcommands that plugins add through the ``commands`` hook."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection
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
        p.set_defaults(run=_runner(plugin, command))


def _runner(plugin: str, command):
    def run(args: argparse.Namespace, inv: Invocation) -> int:
        return int(command.run(args, inv.context(plugin)) or 0)

    return run
