"""``omcm hook``, ``omcm version`` and ``omcm daemon``: commands that load no plugin."""

from __future__ import annotations

import argparse

from omcm_core._cli.invocation import Invocation

HOOK_HELP = """\
What Claude Code runs for each hook event. `omcm install` registers the same
call in its fastest form: python -S -c '...' .../omcm_core/fast_hook.py EVENT.

reads:   one hook payload on stdin, the JSON object Claude Code sends
         (its hook_event_name names the event when EVENT is left out)
prints:  at most one JSON object on stdout, every enabled plugin's answer
         merged into Claude Code's hook-output format; nothing when no plugin
         has anything to say. Plugins' own prints go to stderr.
exit:    always 0, also on bad input, a crashing, slow or missing plugin: the
         session never breaks. A plugin blocks or denies through the JSON
         (permissionDecision, decision), not through the exit status.
logs:    OMCM_HOME/logs/omcm.jsonl; OMCM_TRACE_PLUGINS=1 adds one line per
         plugin on stderr (what it answered, how long it took).

try it:  echo '{"hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "ls"}, "session_id": "s", "cwd": "."}' | omcm hook
"""
DAEMON_HELP = """\
run:     serve in the foreground (a hook call starts one on demand; it leaves
         about 30 s after the last Claude Code session that used it ends)
status:  where it listens, its pid, calls served and the sessions that keep
         it (exit 1 when none runs)
stop:    ask it to exit; the next hook call starts a new one
"""


def register_hook(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hook",
        help="answer one hook payload from stdin (Claude Code runs this)",
        description=HOOK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("event", nargs="?", help="the hook event (PreToolUse, Stop, ...); default: the payload's")
    p.set_defaults(run=hook)


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("version", help="print the omcm version").set_defaults(run=version)
    p = sub.add_parser(
        "daemon",
        help="the warm dispatcher that makes hooks fast (started on demand)",
        description=DAEMON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("run", "status", "stop"), help="see above")
    p.set_defaults(run=daemon)


def hook(args: argparse.Namespace, inv: Invocation) -> int:
    # Only reached when an option comes before "hook" (`omcm -- hook`): the entry point takes the usual route.
    from omcm_core._runtime.client import main as hook_main

    return hook_main([args.event] if args.event else [])


def version(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core import __version__

    print(__version__)
    return 0


def versions() -> int:
    """``omcm --version``: omcm-core's version, then each plugin's, read from metadata (no plugin is imported)."""
    from importlib.metadata import entry_points

    from omcm_core import __version__

    print(f"omcm-core {__version__}")
    seen = set()
    for entry in sorted(entry_points(group="omcm"), key=lambda e: e.name):
        dist = entry.dist
        if entry.name in seen or dist is None:
            continue
        seen.add(entry.name)
        print(f"{entry.name} {dist.version} ({dist.metadata['Name']})")
    return 0


def daemon(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._runtime import daemon

    if args.action == "run":
        return daemon.run(inv.env)
    if args.action == "stop":
        print("stopped" if daemon.stop(inv.env) else "no daemon was running")
        return 0
    where = daemon.status(inv.env)
    print(f"running at {where}" if where else "not running")
    if where:
        from omcm_core._runtime.control import details

        print(_describe(details(inv.env)))
    return 0 if where else 1


def _describe(info: dict | None) -> str:
    if info is None:
        return "  (it does not report details: started by an older omcm)"
    sessions = ", ".join(
        f"{s['session_id']} (client pid {s['client_pid']}, idle {s['idle_s']} s)" for s in info["sessions"]
    )
    return (
        f"  pid {info['pid']}, {info['served']} calls served, idle {info['idle_s']} s, {info['rss_mb']} MB resident\n"
        f"  live sessions: {sessions or 'none'}"
    )
