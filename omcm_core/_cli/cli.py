"""The ``omcm`` command's entry point.

``omcm hook`` is the hot path and is handed to the client here, before argparse
or pluggy are imported; every other subcommand is for people, parsed and run by
:mod:`omcm_core._cli.main`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing `typing` costs ~4 ms on every `omcm hook`
    from collections.abc import Sequence

#: What a shell reports for a writer killed by SIGPIPE (128 + 13): `yes | head -1`, `cat big | head -1`.
BROKEN_PIPE_STATUS = 141
#: omcm_core._cli.main.CORE_COMMANDS, kept here so routing a plugin's command does not import main (a test compares).
CORE_COMMANDS = ("hook", "plugins", "doctor", "install", "uninstall", "version", "daemon", "new-plugin", "stats", "mcp")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Claude Code never passes -h; a person asking `omcm hook --help` gets argparse's help instead of a read of stdin.
    if argv and argv[0] == "hook" and not {"-h", "--help"} & set(argv[1:]):
        from omcm_core._runtime.client import main as hook_main

        return hook_main(argv[1:])
    if argv == ["mcp"]:  # what Claude Code runs: answered before argparse, logging or any plugin is imported
        from omcm_core._cli.mcp_stdio import main as mcp_main

        return mcp_main()
    if argv == ["daemon", "run"]:  # what a hook call spawns: the long-lived process imports no CLI module
        return _daemon_run()
    if argv and argv[0] not in CORE_COMMANDS and not argv[0].startswith("-") and not {"-h", "--help"} & set(argv):
        # A plugin's command (`omcm search`): parsed and run without loading every plugin when remembered.
        from omcm_core._cli.command_cache import run as plugin_command

        try:
            code = plugin_command(argv, CORE_COMMANDS)
            sys.stdout.flush()
        except BrokenPipeError:
            return reader_left()
        return code
    from omcm_core._cli.main import run

    try:
        code = run(argv)
        sys.stdout.flush()  # inside the try: a reader gone before the last buffered write is a broken pipe too
    except BrokenPipeError:
        return reader_left()
    return code


def _daemon_run() -> int:
    """``omcm daemon run`` as the CLI runs it, without argparse and every command's module (~3 MB kept for days)."""
    import os

    from omcm_core import log
    from omcm_core._runtime import daemon
    from omcm_core.paths import omcm_home

    env = dict(os.environ)
    log.configure(omcm_home(env))
    return daemon.run(env)


def reader_left() -> int:
    """The reader of our stdout left (``omcm search | head -1``): stop quietly, as `cat` does.

    Python would report the pipe again when it flushes stdout at exit; pointing
    stdout at /dev/null first makes that flush a no-op.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return BROKEN_PIPE_STATUS
