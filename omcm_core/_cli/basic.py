"""``omcm hook``, ``omcm version`` and ``omcm daemon``: commands that load no plugin."""

from __future__ import annotations

import argparse

from omcm_core._cli.invocation import Invocation


def register_hook(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hook", help="answer one hook payload from stdin (Claude Code runs this)")
    p.add_argument("event", nargs="?")
    p.set_defaults(run=hook)


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("version", help="print the omcm version").set_defaults(run=version)
    p = sub.add_parser("daemon", help="the warm dispatcher that makes hooks fast (started on demand)")
    p.add_argument("action", choices=("run", "status", "stop"))
    p.set_defaults(run=daemon)


def hook(args: argparse.Namespace, inv: Invocation) -> int:
    # Only reached when an option comes before "hook" (`omcm -- hook`): the entry point takes the usual route.
    from omcm_core._runtime.client import main as hook_main

    return hook_main([args.event] if args.event else [])


def version(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core import __version__

    print(__version__)
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
