"""Parse ``omcm COMMAND`` and run it.

Each command group lives in its own module and registers its parser with a
``run(args, invocation)`` default. Plugins are imported only when the command
needs them: ``version``, ``daemon`` and ``uninstall`` start without them, and
the plugins' own commands are added to the parser only when the command word is
not a core one (or for ``--help``).
"""

from __future__ import annotations

import argparse
import os

from omcm_core import log
from omcm_core._cli import basic, doctor, extensions, mcp, new_plugin, plugins, settings, stats
from omcm_core._cli.invocation import Invocation

CORE_COMMANDS = ("hook", "plugins", "doctor", "install", "uninstall", "version", "daemon", "new-plugin", "stats", "mcp")
# In the order `omcm --help` lists them.
REGISTRARS = (
    basic.register_hook,
    plugins.register,
    doctor.register,
    settings.register,
    basic.register,
    new_plugin.register,
    stats.register,
    mcp.register,
)


def build_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="omcm", description="One dispatcher for every Claude Code hook.")
    parser.add_argument("--version", action="store_true", help="print omcm-core's version and each plugin's")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in REGISTRARS:
        register(sub)
    return parser, sub


def command_word(argv: list[str]) -> str | None:
    """The first argument that is not an option: the subcommand the user asked for, if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def run(argv: list[str], inv: Invocation | None = None) -> int:
    inv = inv or Invocation(dict(os.environ))
    log.configure(inv.home)
    parser, sub = build_parser()
    if command_word(argv) not in CORE_COMMANDS and argv[:1] != ["--version"]:
        extensions.register(sub, inv, reserved=CORE_COMMANDS)
    word = command_word(argv)
    if word is not None and word not in sub.choices:
        return _unknown_command(word, list(sub.choices))
    args = parser.parse_args(argv)
    if args.version:
        return basic.versions()
    if args.command is None:
        parser.print_help()
        return 0
    return int(args.run(args, inv) or 0)


def _unknown_command(word: str, commands: list[str]) -> int:
    """A mistyped command word: the closest command, as git does, instead of argparse's list of all."""
    import sys

    from omcm_core._runtime.hook_checks import did_you_mean

    close = did_you_mean(word, commands)
    hint = f"did you mean `omcm {close}`?" if close else f"the commands: {', '.join(sorted(commands))}"
    print(f"omcm: {word!r} is not an omcm command: {hint}", file=sys.stderr)
    return 2
