"""``omcm plugins``: what is installed, and whether it runs."""

from __future__ import annotations

import argparse
import json

from omcm_core._cli.invocation import Invocation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list plugins: name, distribution, version, hooks, enabled or why not")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=list_plugins)


def list_plugins(args: argparse.Namespace, inv: Invocation) -> int:
    infos = list(inv.manager.infos.values())
    if args.json:
        fields = ("name", "distribution", "version", "hooks", "enabled", "why")
        print(json.dumps([{field: getattr(i, field) for field in fields} for i in infos], indent=2))
        return 0
    if not infos:
        print("No omcm plugins installed.")
    for i in infos:
        state = "enabled" if i.enabled else f"disabled ({i.why})"
        print(f"{i.name:<20} {i.distribution} {i.version:<8} {state}")
        print(f"{'':<20} hooks: {', '.join(i.hooks) or '-'}")
    return 0
