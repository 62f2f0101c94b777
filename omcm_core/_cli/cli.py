"""The ``omcm`` command.

``omcm hook`` is the hot path and is handled before argparse or pluggy are
imported; every other subcommand is for people and may take its time.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing `typing` costs ~4 ms on every `omcm hook`
    from typing import Optional, Sequence

CORE_COMMANDS = ("hook", "plugins", "doctor", "install", "uninstall", "version", "daemon")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "hook":
        from omcm_core._runtime.client import main as hook_main

        return hook_main(argv[1:])
    return _main(argv)


def _main(argv: list[str]) -> int:
    import argparse
    import json
    import os

    from omcm_core import __version__, log
    from omcm_core.config import Config
    from omcm_core.context import Context
    from omcm_core._runtime.dispatch import resolve_project_dir
    from omcm_core._runtime.manager import Manager
    from omcm_core.paths import omcm_home

    env = dict(os.environ)
    home = omcm_home(env)
    log.configure(home)
    project = resolve_project_dir(env, os.getcwd())
    manager = Manager.from_environment(env)

    parser = argparse.ArgumentParser(prog="omcm", description="One dispatcher for every Claude Code hook.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("hook", help="answer one hook payload from stdin (Claude Code runs this)")
    p.add_argument("event", nargs="?")
    p = sub.add_parser("plugins", help="list plugins: name, distribution, version, hooks, status; `reset NAME` closes a breaker")
    p.add_argument("--json", action="store_true")
    p.add_argument("action", nargs="?", choices=("reset",), help="reset NAME: close the plugin's circuit breaker now")
    p.add_argument("name", nargs="?")
    p = sub.add_parser("doctor", help="check install, config, store, hook registration, breakers, recent errors")
    p.add_argument("--json", action="store_true")
    for name, verb in (("install", "add omcm to"), ("uninstall", "remove omcm from")):
        p = sub.add_parser(name, help=f"{verb} a Claude Code settings.json")
        p.add_argument("--scope", choices=("user", "project", "local"), default="user")
        p.add_argument("--settings", help="an explicit settings.json path (overrides --scope)")
        p.add_argument("--project-dir", help="the project for --scope project/local (default: current directory)")
    sub.add_parser("version", help="print the omcm version")
    p = sub.add_parser("daemon", help="the warm dispatcher that makes hooks fast (started on demand)")
    p.add_argument("action", choices=("run", "status", "stop"))

    plugin_commands = {}
    for plugin, function, _args in manager.implementations("commands"):
        try:
            commands = list(function() or ())
        except Exception as exc:
            print(f"omcm: plugin {plugin} failed to list its commands: {exc}", file=sys.stderr)
            continue
        for command in commands:
            if command.name in CORE_COMMANDS or command.name in plugin_commands:
                print(f"omcm: command {command.name!r} of plugin {plugin} clashes; skipped", file=sys.stderr)
                continue
            p = sub.add_parser(command.name, help=f"{command.help} [{plugin}]")
            if command.configure is not None:
                command.configure(p)
            plugin_commands[command.name] = (plugin, command)

    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "version":
        print(__version__)
        return 0
    if args.command == "daemon":
        from omcm_core._runtime import daemon

        if args.action == "run":
            return daemon.run(env)
        if args.action == "stop":
            print("stopped" if daemon.stop(env) else "no daemon was running")
            return 0
        where = daemon.status(env)
        print(f"running at {where}" if where else "not running")
        return 0 if where else 1
    if args.command == "plugins":
        from omcm_core._runtime.breaker import open_breakers, reset_breaker

        if args.action == "reset":
            if not args.name:
                parser.error("plugins reset needs a plugin name")
            closed = reset_breaker(home, args.name)
            print(f"{args.name}: breaker closed" if closed else f"{args.name}: no breaker was open or counting")
            return 0
        kept_out = open_breakers(home, project, env)
        rows = [
            {
                "name": i.name,
                "distribution": i.distribution,
                "version": i.version,
                "hooks": i.hooks,
                "enabled": i.enabled,
                "why": i.why,
                "status": ("breaker open" if i.name in kept_out else "enabled") if i.enabled else f"disabled ({i.why})",
            }
            for i in manager.infos.values()
        ]
        if args.json:
            print(json.dumps(rows, indent=2))
        elif not rows:
            print("No omcm plugins installed.")
        for r in rows if not args.json else ():
            print(f"{r['name']:<20} {r['distribution']} {r['version']:<8} {r['status']}")
            print(f"{'':<20} hooks: {', '.join(r['hooks']) or '-'}")
        return 0
    if args.command == "doctor":
        from omcm_core._cli.doctor import report

        data = report(home, project, env)
        if args.json:
            print(json.dumps(data, indent=2, default=str))
        else:
            _print_doctor(data)
        return 1 if data["problems"] else 0
    if args.command in ("install", "uninstall"):
        return _install(args, home, manager)
    plugin, command = plugin_commands[args.command]
    config = Config.load(home, project, env)
    return int(command.run(args, Context(plugin, home, project, config, env)) or 0)


def _install(args, home, manager) -> int:
    import os
    from pathlib import Path

    from omcm_core._cli.install import InstallError, events_for_hooks, install, settings_path, uninstall

    project = Path(args.project_dir or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    try:
        path = Path(args.settings) if args.settings else settings_path(args.scope, project)
        if args.command == "install":
            hooks = {h for info in manager.enabled() for h in info.hooks}
            events = events_for_hooks(hooks)
            if not events:
                print("omcm: no installed plugin implements a hook; nothing to register.", file=sys.stderr)
                return 1
            result = install(home, path, events)
            if result.get("already"):
                print(f"omcm is already installed in {path}")
            else:
                print(f"omcm installed in {path} for: {', '.join(a['event'] for a in result['added'])}")
        else:
            result = uninstall(home, path)
            note = result.get("note") or ("original file restored" if result.get("restored") else "omcm entries removed")
            print(f"{path}: {note}")
    except InstallError as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    return 0


def _print_doctor(data: dict) -> None:
    print(f"omcm {data['omcm']['version']} on Python {data['omcm']['python']} ({data['omcm']['executable']})")
    print(f"home: {data['home']['path']} (mode {data['home']['mode']})")
    for p in data["plugins"]:
        print(f"plugin {p['name']} {p['version']}: {p['status']}")
    print(f"config sources: {', '.join(data['config']['sources']) or 'defaults only'}")
    if "store" in data:
        s = data["store"]
        print(f"store: {s['path']} {s['bytes']} bytes, check {s['check']}, mode {s['mode']}")
    for row in data.get("breakers", []):
        print(f"breaker {row['plugin']}: {row['failures']} failures, {'OPEN' if row['open'] else 'closed'}: {row['last_error']}")
    for where, events in data["registrations"].items():
        print(f"registered in {where}: {events}")
    for name, section in data.get("plugin_reports", {}).items():
        print(f"{name}: {section}")
    for entry in data["recent_errors"]:
        print(f"recent error {entry.get('timestamp', '')} {entry.get('event')}: {entry.get('plugin', '')} {entry.get('error', '')}"[:300])
    if data["problems"]:
        print("problems:")
        for problem in data["problems"]:
            print(f"  - {problem}")
    else:
        print("no problems found")
