"""``omcm plugins``: what is installed, and whether it runs; ``reset NAME`` closes a breaker; ``install``/``uninstall``."""

from __future__ import annotations

import argparse
import json
import sys

from omcm_core._cli.invocation import Invocation


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plugins",
        help="list plugins: name, distribution, version, hooks, status; "
        "`install NAME|PATH|URL`, `uninstall NAME`, `reset NAME` (close a breaker)",
    )
    p.add_argument("--json", action="store_true", help="one JSON list for machines")
    p.add_argument(
        "action",
        nargs="?",
        choices=("install", "uninstall", "reset"),
        help="install: add a plugin to omcm's own environment (pipx, uv tool, venv alike) and register its events; "
        "uninstall: remove one; reset: close a plugin's circuit breaker now",
    )
    p.add_argument(
        "name",
        nargs="*",
        metavar="NAME",
        help="the plugin; for install anything pip takes: a name, a folder ('./omcm-x[extra]'), a URL",
    )
    p.add_argument("-e", "--editable", action="store_true", help="install: the folder you work on, editable")
    p.add_argument("--upgrade", action="store_true", help="install: the newest version even if one is installed")
    p.set_defaults(run=plugins)


def plugins(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._runtime.breaker import open_breakers, reset_breaker

    if args.action and not args.name:
        print(f"omcm: plugins {args.action} needs a plugin name", file=sys.stderr)
        return 2
    if args.action in ("install", "uninstall"):
        from omcm_core._cli import plugin_install

        if args.action == "install":
            return plugin_install.install(args.name, args.editable, args.upgrade, inv)
        return plugin_install.uninstall(args.name, inv)
    if args.action == "reset":
        for name in args.name:
            closed = reset_breaker(inv.home, name)
            print(f"{name}: breaker closed" if closed else f"{name}: no breaker was open or counting")
        return 0
    if args.name:
        print(f"omcm: unexpected {' '.join(args.name)} (plugins install|uninstall|reset NAME)", file=sys.stderr)
        return 2
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
