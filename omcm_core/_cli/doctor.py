"""``omcm doctor``: is omcm installed, configured, registered and healthy?"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omcm_core import __version__
from omcm_core._cli.install import installed_commands, settings_path
from omcm_core._cli.invocation import Invocation
from omcm_core._runtime.manager import Manager
from omcm_core.config import Config, CoreConfig
from omcm_core.context import Context
from omcm_core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check install, config, store, hook registration, breakers, recent errors")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, inv: Invocation) -> int:
    data = report(inv.home, inv.project, inv.env, manager=inv.manager, config=inv.config)
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print_report(data)
    return 1 if data["problems"] else 0


def _mode(path: Path) -> str:
    try:
        return oct(stat.S_IMODE(path.stat().st_mode))
    except OSError:
        return "missing"


def recent_errors(log_file: Path, limit: int = 10) -> list[dict]:
    """The newest error lines of the log, newest first, from its last 256 KiB."""
    from omcm_core.transcripts import read_jsonl

    try:
        entries = list(read_jsonl(log_file, max_bytes=256 * 1024))
    except OSError:
        return []
    return [e for e in reversed(entries) if e.get("level") in ("error", "critical")][:limit]


def report(
    home: Path,
    project: Path | None,
    env: Mapping[str, str],
    manager: Manager | None = None,
    config: Config | None = None,
) -> dict[str, Any]:
    """Everything doctor knows, as JSON-friendly data; ``problems`` lists what is wrong.

    Pass the ``manager`` and ``config`` the caller already has, so plugins are loaded once per process.
    """
    problems: list[str] = []
    manager = manager or Manager.from_environment(env)
    config = config or Config.load(home, project, env)
    out: dict[str, Any] = {
        "omcm": {"version": __version__, "python": sys.version.split()[0], "executable": sys.executable},
        "home": {"path": str(home), "mode": _mode(home)},
    }
    if home.exists() and os.name == "posix" and stat.S_IMODE(home.stat().st_mode) & 0o077:
        problems.append(f"{home} is readable by others; run chmod 700 on it")
    plugins = []
    for info in manager.infos.values():
        status = "enabled" if info.enabled else f"disabled: {info.why}"
        plugins.append(
            {"name": info.name, "version": info.version, "enabled": info.enabled, "why": info.why, "status": status}
        )
        if not info.enabled and info.why.startswith(("import failed", "invalid")):
            problems.append(f"plugin {info.name} {info.version}: {info.why}")
    out["plugins"] = plugins
    # Config: read every section through its schema so bad keys show up in the log and here.
    from omcm_core import log

    out["config"] = {"sources": config.sources}
    config.section("core", CoreConfig)
    for name, caller_result in _per_plugin(manager, "config_schema"):
        if isinstance(caller_result, type):
            config.section(name, caller_result)
    store = Store(home)
    try:
        out["store"] = {
            "path": str(store.path),
            "bytes": store.size_bytes(),
            "check": store.check(),
            "mode": _mode(store.path),
        }
        if out["store"]["check"] != "ok":
            problems.append(f"store check failed: {out['store']['check']}")
        from omcm_core._runtime.breaker import Breaker

        core = config.section("core", CoreConfig)
        breakers = Breaker(store, core.breaker_threshold, core.breaker_cooldown_s).rows()
        out["breakers"] = breakers
        for entry in plugins:
            if entry["enabled"] and any(row["open"] and row["plugin"] == entry["name"] for row in breakers):
                entry["status"] = "breaker open"
        for row in breakers:
            if row["open"]:
                problems.append(f"plugin {row['plugin']} is switched off by its circuit breaker: {row['last_error']}")
    except Exception as exc:
        problems.append(f"store unusable: {exc}")
    registrations: dict[str, Any] = {}
    for scope in ("user", "project", "local"):
        try:
            path = settings_path(scope, project)
        except Exception:
            continue
        found = installed_commands(path)
        if found:
            registrations[str(path)] = sorted({event for event, _ in found})
    if env.get("CLAUDE_PLUGIN_ROOT"):
        registrations["plugin"] = str(env["CLAUDE_PLUGIN_ROOT"])
    out["registrations"] = registrations
    if not registrations:
        problems.append("omcm is not registered in any Claude Code settings.json (run: omcm install)")
    for name, section in _per_plugin(manager, "doctor_report", home=home, project=project, config=config, env=env):
        if isinstance(section, Mapping):
            out.setdefault("plugin_reports", {})[name] = dict(section)
            problems += [f"{name}: {p}" for p in section.get("problems", [])]
    out["daemon"] = _daemon_report(env, problems)
    log_file = log.log_path() or home / "logs" / "omcm.jsonl"
    out["recent_errors"] = recent_errors(log_file)
    out["problems"] = problems
    return out


def _daemon_report(env: Mapping[str, str], problems: list[str]) -> dict[str, Any]:
    """The warm dispatcher's socket, whether one answers there, and why it cannot be used."""
    from omcm_core._runtime import client, daemon

    path = client.socket_path(env)
    problem = client.socket_problem(os.fsencode(path))
    if problem:
        problems.append(f"hooks answer in process (slow): {problem}")
    return {"socket": path, "running": daemon.status(dict(env)) is not None, "problem": problem}


def _per_plugin(manager: Manager, hook: str, **ctx_args: Any):
    for name, function, argnames in manager.implementations(hook):
        kwargs = {}
        if "ctx" in argnames:
            kwargs["ctx"] = Context(
                name, ctx_args["home"], ctx_args["project"], ctx_args["config"], dict(ctx_args["env"])
            )
        try:
            yield name, function(**kwargs)
        except Exception as exc:
            yield name, {"problems": [f"{hook} raised {type(exc).__name__}: {exc}"]}


def print_report(data: dict) -> None:
    print(f"omcm {data['omcm']['version']} on Python {data['omcm']['python']} ({data['omcm']['executable']})")
    print(f"home: {data['home']['path']} (mode {data['home']['mode']})")
    for p in data["plugins"]:
        print(f"plugin {p['name']} {p['version']}: {p['status']}")
    print(f"config sources: {', '.join(data['config']['sources']) or 'defaults only'}")
    if "store" in data:
        s = data["store"]
        print(f"store: {s['path']} {s['bytes']} bytes, check {s['check']}, mode {s['mode']}")
    for row in data.get("breakers", []):
        state = "OPEN" if row["open"] else "closed"
        print(f"breaker {row['plugin']}: {row['failures']} failures, {state}: {row['last_error']}")
    for where, events in data["registrations"].items():
        print(f"registered in {where}: {events}")
    for name, section in data.get("plugin_reports", {}).items():
        print(f"{name}: {section}")
    for entry in data["recent_errors"]:
        when, event, plugin = entry.get("timestamp", ""), entry.get("event"), entry.get("plugin", "")
        print(f"recent error {when} {event}: {plugin} {entry.get('error', '')}"[:300])
    if data["problems"]:
        print("problems:")
        for problem in data["problems"]:
            print(f"  - {problem}")
    else:
        print("no problems found")
