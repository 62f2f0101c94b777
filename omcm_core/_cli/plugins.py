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
    from omcm_core._runtime.breaker import open_breakers

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
        return _reset(args.name, inv)
    kept_out = open_breakers(inv.home, inv.project, inv.env)
    guards = _fail_closed(inv)
    rows = []
    for i in inv.manager.infos.values():
        why = " ".join(i.why.split())  # one line: a multi-line message would break the table
        status = ("breaker open" if i.name in kept_out else "enabled") if i.enabled else f"disabled ({why})"
        fields = ("name", "distribution", "version", "hooks", "enabled", "fix")
        row = {**{field: getattr(i, field) for field in fields}, "why": why, "status": status}
        row["denying_every_tool_call"] = bool(
            i.why.startswith(("import failed", "invalid")) and {i.name, i.distribution} & guards
        )
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _mistyped_selection(inv)
    if not rows:
        print("No omcm plugins installed.")
    for r in rows:
        print(f"{r['name']:<20} {r['distribution']} {r['version']:<8} {r['status']}")
        print(f"{'':<20} hooks: {', '.join(r['hooks']) or '-'}")
        if r["fix"]:
            print(f"{'':<20} fix: {r['fix']}")
        if r["denying_every_tool_call"]:
            print(f"{'':<20} !! in [core] fail_closed and not loaded: EVERY TOOL CALL IS DENIED until it loads")
    return 0


def _mistyped_selection(inv: Invocation) -> None:
    """A name in OMCM_LOAD_PLUGINS / OMCM_DISABLE_PLUGINS that no plugin has: said, with the closest one."""
    from omcm_core._runtime.hook_checks import did_you_mean

    known = sorted({n for i in inv.manager.infos.values() for n in (i.name, i.distribution) if n})
    for variable in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS"):
        for name in sorted({p.strip() for p in inv.env.get(variable, "").split(",") if p.strip()} - set(known)):
            close = did_you_mean(name, known)
            hint = f": did you mean {close}?" if close else ""
            print(f"omcm: {variable} names {name!r}, which is not an installed plugin{hint}", file=sys.stderr)


def _reset(names: list[str], inv: Invocation) -> int:
    from omcm_core._runtime.breaker import reset_breaker
    from omcm_core._runtime.hook_checks import did_you_mean

    known = sorted({n for i in inv.manager.infos.values() for n in (i.name, i.distribution) if n})
    status = 0
    for name in names:
        if reset_breaker(inv.home, name):
            print(f"{name}: breaker closed")  # also a plugin uninstalled since its breaker opened
        elif name in known:
            print(f"{name}: no breaker was open or counting")
        else:
            close = did_you_mean(name, known)
            installed = ", ".join(sorted(inv.manager.infos)) or "none"
            hint = f": did you mean {close}?" if close else f" (installed: {installed})"
            print(f"omcm plugins reset: no plugin named {name!r}{hint}", file=sys.stderr)
            status = 1
    return status


def _fail_closed(inv: Invocation) -> set[str]:
    from omcm_core.config import CoreConfig

    try:
        return set(inv.config.section("core", CoreConfig).fail_closed)
    except Exception:  # a broken config file is doctor's to report; the listing still shows
        return set()
