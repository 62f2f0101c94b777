"""``omcm install`` and ``omcm uninstall``: register omcm in a Claude Code settings.json, or remove it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from omcm_core._cli.invocation import Invocation


def register(sub: argparse._SubParsersAction) -> None:
    for name, verb, function in (("install", "add omcm to", install), ("uninstall", "remove omcm from", uninstall)):
        p = sub.add_parser(name, help=f"{verb} a Claude Code settings.json")
        p.add_argument(
            "--scope",
            choices=("user", "project", "local"),
            default="user",
            help="~/.claude/settings.json (user, the default), the project's .claude/settings.json, "
            "or its .claude/settings.local.json (local)",
        )
        p.add_argument("--settings", help="an explicit settings.json path (overrides --scope)")
        p.add_argument("--project-dir", help="the project for --scope project/local (default: current directory)")
        add_agent_argument(p, verb)
        p.set_defaults(run=function)
    from omcm_core._cli import update

    update.register(sub)  # after install/uninstall in `omcm --help`


def add_agent_argument(p: argparse.ArgumentParser, verb: str) -> None:
    from omcm_core._cli.agent_setup import AGENTS

    p.add_argument(
        "--agent",
        choices=AGENTS,
        default=AGENTS[0],
        help=f"the coding agent to {verb} (default: claude, Claude Code); docs/agents.md says what works where",
    )


def _settings_file(args: argparse.Namespace, inv: Invocation) -> Path:
    from omcm_core._cli.install import InstallError, settings_path

    if args.project_dir and not args.settings and not Path(inv.cwd, args.project_dir).is_dir():
        # A typo must not become a new folder tree with a .claude/settings.json in it.
        raise InstallError(f"--project-dir {args.project_dir}: no such folder")
    project = Path(inv.cwd, args.project_dir or inv.env.get("CLAUDE_PROJECT_DIR") or inv.cwd)
    if args.settings:
        return Path(args.settings)
    if args.scope in ("project", "local") and (project / ".claude").is_symlink():
        # The project is untrusted: a cloned repository's .claude -> ~/.ssh would have omcm write there.
        raise InstallError(
            f"{project / '.claude'} is a link (to {os.readlink(project / '.claude')}); omcm writes only into a "
            "project's own .claude folder. Remove the link, or name the file with --settings."
        )
    return settings_path(args.scope, project, inv.env)


def install(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import install as settings

    if getattr(args, "agent", "claude") != "claude":
        from omcm_core._cli.agent_setup import setup_for

        return int(setup_for(args.agent).install(args, inv, {h for info in inv.manager.enabled() for h in info.hooks}))
    try:
        path = _settings_file(args, inv)
        # Register only the events some enabled plugin answers: every registered event costs a process per call.
        hooks = {h for info in inv.manager.enabled() for h in info.hooks}
        version = settings.client_version()
        events = settings.events_for_hooks(hooks, version)
        if not events:
            print("omcm: no installed plugin implements a hook; nothing to register.", file=sys.stderr)
            return 1
        from omcm_core.config import CoreConfig

        guard = bool(inv.config.section("core", CoreConfig).fail_closed)  # a guard that cannot load denies too
        from omcm_core._cli.matchers import from_manager

        tools = from_manager(inv.manager, events)  # no hook process for a tool call no plugin wants
        result = settings.install(
            inv.home, path, events, guard=guard, on_failure=settings.on_failure_known(version), matchers=tools
        )
        from omcm_core._cli import native_client

        native_client.prune(inv.home)  # binaries built for an installation since upgraded
        names = settings.claude_files_for({info.name for info in inv.manager.enabled()})
        files = settings.install_files(inv.home, path, names)
    except settings.InstallError as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    if result.get("already"):
        print(f"omcm is already installed in {path}")
    else:
        if result["added"]:
            print(f"omcm installed in {path} for: {', '.join(a['event'] for a in result['added'])}")
        if result.get("rewritten"):
            print(f"omcm updated in {path} for: {', '.join(a['event'] for a in result['rewritten'])}")
    if files["written"]:
        print(
            f"omcm added {len(files['written'])} file(s) for Claude Code in {path.parent}: {_shown(files['written'], path)}"
        )
    for kept in files["kept"]:
        print(f"omcm: kept your {kept} (it differs from omcm's; delete it and run `omcm install` to get omcm's)")
    if files["written"] and args.scope == "local" and not args.settings:
        print(f"omcm: {_keep_local(files['written'], path)}", file=sys.stderr)
    for note in settings.install_notes(hooks, version, args.scope if not args.settings else None):
        print(f"omcm: {note}", file=sys.stderr)
    if inv.manager.implementations("mcp_tools"):
        from omcm_core._cli import mcp_registration

        mcp_file = mcp_registration.place(*mcp_registration.scope_of_settings(path, inv.env), inv.env)[0]
        existed = mcp_file.exists()
        print(_mcp(args, inv, path, register=True))
        if not existed and mcp_file.exists():
            settings.note_created(inv.home, path, mcp_file)  # removed at uninstall once it holds nothing
    return 0


def _mcp(args: argparse.Namespace, inv: Invocation, settings: Path, register: bool) -> str | None:
    """Register (or remove) ``omcm mcp`` in the MCP file of the same scope as ``settings``."""
    from omcm_core._cli import mcp_registration

    scope, project = mcp_registration.scope_of_settings(settings, inv.env)
    if register:
        return mcp_registration.register(scope, project, inv.env)
    return mcp_registration.unregister(scope, project, inv.env)


def uninstall(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._cli import install as settings

    if getattr(args, "agent", "claude") != "claude":
        from omcm_core._cli.agent_setup import setup_for

        return int(setup_for(args.agent).uninstall(args, inv))
    try:
        path = _settings_file(args, inv)
        created = settings.created_paths(inv.home, path)
        files = settings.uninstall_files(inv.home, path)
        result = settings.uninstall(inv.home, path)
    except settings.InstallError as exc:
        print(f"omcm: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {settings.uninstall_note(result)}")
    removed = _mcp(args, inv, path, register=False)
    if removed:
        print(removed)
    if files["removed"]:
        print(f"removed {len(files['removed'])} file(s) omcm had added: {_shown(files['removed'], path)}")
    for kept in files["kept"]:
        print(f"kept {kept}: you changed it after omcm added it")
    for gone in settings.remove_created(created):
        print(f"removed {gone} (omcm had created it; nothing is left in it)")
    _retire_servers(inv.home)
    print(_data_kept(inv, path))
    return 0


def _retire_servers(home: Path) -> None:
    """Remove plugins' server sockets (``OMCM_HOME/run/search-*.sock``): each server leaves within a second."""
    import glob

    from omcm_core._runtime.wire import socket_problem

    for sock in glob.glob(glob.escape(str(home / "run")) + "/search-*.sock"):
        if socket_problem(os.fsencode(sock)) is None:
            try:
                os.unlink(sock)
            except OSError:
                pass


def _data_kept(inv: Invocation, settings: Path) -> str:
    """What uninstall leaves on purpose (the user's history and memory), and how to delete it."""
    import shlex

    from omcm_core._cli.plugin_install import registered_settings

    project = Path(inv.cwd, inv.env.get("CLAUDE_PROJECT_DIR") or inv.cwd)
    if settings.parent.name == ".claude" and settings.parent.parent != Path(inv.env.get("HOME") or Path.home()):
        project = settings.parent.parent
    kept = [(inv.home, "omcm's data: recorded calls, lessons, logs, settings")] if inv.home.exists() else []
    kept += [
        (folder, what)
        for folder, what in (
            (project / ".claude" / "memory", "this project's memory"),
            (project / ".omc", "this project's loop and PRD state"),
        )
        if folder.is_dir() and not folder.is_symlink()
    ]
    if not kept:
        return "No omcm data was kept."
    lines = ["Kept your data (delete it yourself if you no longer want it):"]
    lines += [f"  {folder}: {what}  (rm -rf {shlex.quote(str(folder))})" for folder, what in kept]
    if registered_settings(inv.home):
        lines.append("  omcm is still registered elsewhere (`omcm doctor` lists where): keep OMCM_HOME while it is.")
    return "\n".join(lines)


def _keep_local(written: list[str], settings: Path) -> str:
    """Claude Code reads commands only from .claude/commands, a folder teams commit: how to keep them out of git."""
    import shlex

    project = settings.parent.parent
    names = " ".join(shlex.quote(str(Path(p).relative_to(project))) for p in written)
    return (
        "--scope local: the files above are in the project's .claude, which git tracks; to keep them yours, "
        f"from {project}: printf '%s\\n' {names} >> .git/info/exclude"
    )


def _shown(paths: list[str], settings: Path) -> str:
    return ", ".join(str(Path(p).relative_to(settings.parent)) for p in paths)
