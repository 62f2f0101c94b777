"""Plugins' commands (``omcm search ...``) run without loading every plugin first.

Adding the plugins' commands to the parser means importing every installed
plugin and the plugin manager: most of what ``omcm search`` cost on a small
store (issue 35). Which plugin offers which command, and the functions that
configure and run it, change only when the installation, omcm's environment or
its configuration does, so the first run remembers them in
``OMCM_HOME/cache/commands-<key>.json`` under :func:`mcp_cache.key` (the MCP
tool list's rule) plus the size and mtime of the offering plugins' sources.
A later run whose key still matches imports only that command's module and
parses only its arguments; a command whose ``run`` function carries an
``argv_route`` (``route(argv, env, cwd, home) -> exit code | None``) is offered
its arguments first, before argparse or a plugin context is made, and a None
from it takes the argparse route. Anything unexpected (a stale or corrupt file, a
function that moved) takes the usual route, which rewrites the file.
"""

from __future__ import annotations

import os
import sys

from omcm_core._runtime.digest import sha256  # not hashlib: it loads OpenSSL (~2 ms of a start)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from omcm_core._cli.invocation import Invocation

FORMAT = 1


def path_for(inv: Invocation) -> Path:
    # The OMCM_* variables too (they are in the key): two environments used in turn (a variable set for one
    # run, a benchmark's variants) must not overwrite each other's file, or every run would load every plugin.
    wanted = sorted((k, v) for k, v in inv.env.items() if k.startswith("OMCM"))
    ident = repr((sys.executable, sys.path, inv.env.get("CLAUDE_PROJECT_DIR") or inv.cwd, wanted))
    return inv.home / "cache" / f"commands-{sha256(ident.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}.json"


def _name(function: Any) -> str | None:
    """``module:qualified.name`` of a function importable by name; None for a closure or lambda."""
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not module or not qualname or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def _resolve(name: str) -> Callable[..., Any]:
    import importlib

    module, _, qualname = name.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not callable(found):
        raise TypeError(f"{name} is not callable")
    return found


def _route(name: str, argv: list[str], inv: Invocation) -> tuple[int | None, tuple | None]:
    """Run the argv route ``name`` with its plugin's package imported but its ``__init__`` not run yet.

    A plugin's ``__init__`` holds its hook implementations (pluggy, attrs, its
    configuration schema: most of a search's start), which the route does not
    use. Returns the route's exit code (None: take the argparse route) and the
    package whose ``__init__`` is still to run (see :func:`_finish`), if any.
    """
    import importlib.util

    module = name.partition(":")[0]
    top = module.partition(".")[0]
    package = None
    try:
        if top != module and top not in sys.modules:
            spec = importlib.util.find_spec(top)
            if spec is None or spec.loader is None or spec.submodule_search_locations is None:
                return None, None
            package = (importlib.util.module_from_spec(spec), spec)
            sys.modules[top] = package[0]
        route = _resolve(name)
    except Exception:  # moved or renamed since: the argparse route finds it and rewrites the file
        return None, package
    try:
        code = route(argv, inv.env, inv.cwd, inv.home)
    except BaseException:
        if package is not None:
            _finish(*package)  # an exception handler at exit may still want the plugin whole
        raise
    return (None if code is None else int(code)), package


def _finish(module: Any, spec: Any) -> None:
    """Run a package's ``__init__`` that :func:`_route` left out, as its import would have."""
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)  # as a failed import leaves it: the next import tries again
        raise


def remember(inv: Invocation, reserved: tuple[str, ...]) -> None:
    """Load the plugins once (``inv.manager``, kept for the usual route) and write what commands they offer."""
    from omcm_core._cli import extensions, mcp_cache

    commands: dict[str, dict] = {}
    modules = []
    for plugin, command in extensions.offered(inv, "commands", "commands", reserved):
        run = _name(command.run)
        configure = _name(command.configure) if command.configure is not None else ""
        if run is None or configure is None:
            continue
        commands[command.name] = {"plugin": plugin, "run": run, "configure": configure, "help": command.help}
        route = _name(getattr(command.run, "argv_route", None))
        if route is not None:
            commands[command.name]["argv_route"] = route
        modules.append(sys.modules.get(run.partition(":")[0]))
    checks = mcp_cache.source_checks([m for m in modules if m is not None])
    if not inv.home.is_dir():
        return  # never create OMCM_HOME for a cache (`omcm observer-worker` with no store must leave none)
    try:
        from omcm_core.paths import write_private_json

        write_private_json(
            path_for(inv),
            {
                "format": FORMAT,
                "key": mcp_cache.key(inv.env, inv.cwd, inv.home),
                "checks": checks,
                "commands": commands,
            },
        )
    except OSError:
        pass  # no cache: the next run takes the usual route again


def lookup(inv: Invocation, word: str) -> dict | None:
    """The remembered entry of command ``word`` if nothing it depends on changed, else None."""
    import json

    from omcm_core._cli import mcp_cache

    try:
        fd = os.open(path_for(inv), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = json.loads(handle.read(1 << 20))
        if data.get("format") != FORMAT or data.get("key") != mcp_cache.key(inv.env, inv.cwd, inv.home):
            return None
        if any(mcp_cache._stat(str(check[0])) != list(check) for check in data["checks"]):
            return None
        entry = data["commands"].get(word)
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("plugin", "run", "help")):
            return None
        return entry
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


def run(argv: list[str], reserved: tuple[str, ...]) -> int:
    """``omcm WORD ...`` for a plugin's command WORD: its own parser when remembered, else the usual route."""
    from omcm_core import log
    from omcm_core._cli.invocation import Invocation

    inv = Invocation(dict(os.environ))
    log.configure(inv.home)
    entry = lookup(inv, argv[0])
    if entry is not None and isinstance(entry.get("argv_route"), str):
        # The command parses its usual forms itself (no argparse, no Context); None: not one of them.
        code, package = _route(entry["argv_route"], argv[1:], inv)
        if code is not None:
            return code
        if package is not None:
            _finish(*package)
    if entry is not None:
        try:
            configure = _resolve(entry["configure"]) if entry.get("configure") else None
            runner = _resolve(entry["run"])
        except Exception:  # moved or renamed since: the usual route finds it and rewrites the file
            entry = None
    if entry is None:
        remember(inv, reserved)
        from omcm_core._cli.main import run as usual

        return usual(argv, inv)
    import argparse

    from omcm_core._cli import extensions
    from omcm_core.records import Command

    # The parser `omcm --help` would have made for this command (same prog, options and --project handling).
    parser = argparse.ArgumentParser(prog=f"omcm {argv[0]}", description=None)
    if configure is not None:
        configure(parser)
    extensions._project_after_action(parser)
    command = Command(name=argv[0], help=entry["help"], run=runner, configure=configure)
    parser.set_defaults(command=argv[0], version=False, run=extensions._runner(entry["plugin"], command))
    args = parser.parse_args(argv[1:])
    return int(args.run(args, inv) or 0)
