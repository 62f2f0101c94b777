"""``omcm plugins``: what is installed, and whether it runs; ``omcm plugins reset NAME`` closes a breaker."""

from __future__ import annotations

import argparse
import json
import sys

from omcm_core._cli.invocation import Invocation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plugins", help="list plugins: name, distribution, version, hooks, status; `reset NAME` closes a breaker"
    )
    p.add_argument("--json", action="store_true", help="one JSON list for machines")
    p.add_argument("action", nargs="?", choices=("reset",), help="reset NAME: close the plugin's circuit breaker now")
    p.add_argument("name", nargs="?", help="the plugin, with reset")
    p.set_defaults(run=plugins)


def plugins(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._runtime.breaker import open_breakers, reset_breaker

    if args.action == "reset":
        if not args.name:
            print("omcm: plugins reset needs a plugin name", file=sys.stderr)
            return 2
        closed = reset_breaker(inv.home, args.name)
        print(f"{args.name}: breaker closed" if closed else f"{args.name}: no breaker was open or counting")
        return 0
    kept_out = open_breakers(inv.home, inv.project, inv.env)
    rows = []
    for i in inv.manager.infos.values():
        status = ("breaker open" if i.name in kept_out else "enabled") if i.enabled else f"disabled ({i.why})"
        fields = ("name", "distribution", "version", "hooks", "enabled", "why")
        rows.append({**{field: getattr(i, field) for field in fields}, "status": status})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("No omcm plugins installed.")
    for r in rows:
        print(f"{r['name']:<20} {r['distribution']} {r['version']:<8} {r['status']}")
        print(f"{'':<20} hooks: {', '.join(r['hooks']) or '-'}")
    return 0
