"""MCP server: where ``omcm mcp`` is registered with Claude Code, and whether each entry runs this omcm.

An entry an older omcm wrote with ``python -m omcm_core`` runs a cloned repository's own
``omcm_core/`` as the user (see ``mcp_registration.MCP_CODE``); one naming another Python or a
removed installation starts nothing, so the tools silently vanish. ``omcm install`` rewrites both.
"""

from __future__ import annotations

from collections.abc import Iterator

from omcm_core._cli import mcp_registration as mcp
from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning


def mcp_server(probe: Probe) -> Iterator[Check]:
    if not probe.manager.implementations("mcp_tools"):
        return  # no installed plugin offers MCP tools: nothing to register
    wanted = mcp.server_entry()
    found = False
    for scope in ("user", "local", "project"):
        path, keys = mcp.place(scope, probe.project, probe.env)
        try:
            servers = mcp._servers(mcp._load(path), keys, create=False)
        except (OSError, ValueError):
            continue
        entry = servers.get(mcp.NAME) if servers is not None else None
        if not isinstance(entry, dict) or not mcp.ours(entry):
            continue
        found = True
        where = f"{scope} scope ({probe.tilde(path)})"
        fix = "omcm install" + ("" if scope == "user" else f" --scope {scope}")
        if mcp.unsafe(entry):
            yield error(
                f"mcp.{scope}.unsafe",
                f"the MCP server in {where} starts with `python -m omcm_core`, which runs a cloned project's own "
                "omcm_core as you",
                fix=fix,
            )
        elif entry != wanted:
            yield warning(
                f"mcp.{scope}.stale",
                f"the MCP server in {where} runs {entry.get('command')!s}, not this omcm ({wanted['command']})",
                fix=fix,
            )
        else:
            yield ok(f"mcp.{scope}", f"`omcm mcp` registered in {where}")
    if not found and not probe.env.get("CLAUDE_PLUGIN_ROOT"):
        yield info("mcp.none", "omcm's MCP tools are not registered with Claude Code", fix="omcm install")
