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
    p.set_defaults(run=plugins, action=None)
    actions = p.add_subparsers(dest="action", metavar="{install,uninstall,reset}")
    i = actions.add_parser(
        "install",
        help="add a plugin to omcm's own environment (pipx, uv tool, venv alike) and register the events it answers",
    )
    i.add_argument(
        "name", nargs="*", metavar="NAME", help="anything pip takes: a name, a folder ('./omcm-x[extra]'), a URL"
    )
    i.add_argument(
        "-e", "--editable", action="append", default=[], metavar="PATH", help="a folder you work on, editable"
    )
    i.add_argument("--upgrade", action="store_true", help="the newest version even if one is installed")
    i.add_argument(
        "--reinstall", action="store_true", help="again, over a broken install (its dependencies only if missing)"
    )
    i.add_argument("--no-deps", action="store_true", help="without the dependencies it declares")
    u = actions.add_parser("uninstall", help="remove a plugin's distribution from omcm's own environment")
    u.add_argument("name", nargs="+", metavar="NAME", help="the plugin (or its distribution)")
    r = actions.add_parser("reset", help="close a plugin's circuit breaker now")
    r.add_argument("name", nargs="+", metavar="NAME", help="the plugin")


def plugins(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._runtime.breaker import open_breakers, reset_breaker

    if args.action == "install":
        from omcm_core._cli import plugin_install

        if not args.name and not args.editable:
            print("omcm: plugins install needs a NAME, PATH or URL (or -e PATH)", file=sys.stderr)
            return 2
        flags = plugin_install.Flags(args.editable, args.upgrade, args.reinstall, args.no_deps)
        return plugin_install.install(args.name, flags, inv)
    if args.action == "uninstall":
        from omcm_core._cli import plugin_install

        return plugin_install.uninstall(args.name, inv)
    if args.action == "reset":
        for name in args.name:
            closed = reset_breaker(inv.home, name)
            print(f"{name}: breaker closed" if closed else f"{name}: no breaker was open or counting")
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
