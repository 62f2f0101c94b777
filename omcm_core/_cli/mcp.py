"""``omcm mcp``: what omcm remembers, as read-only MCP tools Claude can call (stdio).

Claude Code starts this process itself (``omcm install`` registers it), in the
project it runs in, and talks JSON-RPC over stdin/stdout. Every plugin that
implements ``mcp_tools`` contributes tools; each answer is masked and cut to
``[core] mcp_answer_chars`` here, whatever the plugin returned, because it goes
straight into the model's context. Nothing of this is imported on the hook path.

The server itself (:mod:`omcm_core._cli.mcp_stdio`) answers ``initialize`` and
``tools/list`` without this module's imports; what is here (the plugins, the
SDK that validates arguments and runs the tools) is loaded for the first tool
call, or for ``tools/list`` when the remembered list is stale.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
from typing import Any

from omcm_core._cli.invocation import Invocation

HELP = "serve omcm's read-only tools (search, lessons, memory, notepad) to Claude over MCP (stdio)"
DESCRIPTION = """\
An MCP server on stdin/stdout, started by Claude Code (`omcm install` registers it
as the server "omcm"). Its tools come from the installed plugins, e.g. `search`
and `get` (post-tool-observer), `lessons` (pre-tool-guide), `memory_search`
(memory-rotation), `notepad` (notepad). Answers are read-only, secret-masked,
scoped to the current project unless a tool is asked for every project, and at
most [core] mcp_answer_chars characters.

  omcm mcp            serve (what Claude Code runs)
  omcm mcp --list     print the tools and their descriptions, then exit
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="print the tools the installed plugins offer and exit")
    p.set_defaults(run=run)


def collect(inv: Invocation) -> list[tuple[str, Any]]:
    """(plugin, McpTool) for every tool the plugins offer; a clash or a failing plugin is skipped on stderr."""
    from omcm_core._cli.extensions import offered

    return offered(inv, "mcp_tools", "tools")


def bounded(value: Any, limit: int) -> str:
    """The tool's answer as the model will read it: JSON, masked, at most ``limit`` characters."""
    from omcm_core.redact import mask_head

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, indent=1)
    size = len(text)
    text = mask_head(text, limit)  # masks only what can be shown (a margin past it, so no secret is cut in two)
    if size > limit:
        note = f"\n[omcm: answer cut at {limit:,} of {size:,} characters; narrow the query or lower `limit`]"
        text = text[: max(0, limit - len(note))] + note
    return text


def _guarded(tool: Any, limit: int):
    """The plugin's function, its answer bounded and its exceptions turned into a short message."""

    @functools.wraps(tool.function)
    def call(**kwargs: Any) -> str:
        try:
            return bounded(tool.function(**kwargs), limit)
        except Exception as exc:  # a broken plugin answers with an error, the server stays up
            return bounded(f"omcm: {tool.name} failed: {type(exc).__name__}: {exc}", limit)

    call.__signature__ = inspect.signature(tool.function).replace(return_annotation=str)  # type: ignore[attr-defined]
    call.__annotations__ = {**getattr(tool.function, "__annotations__", {}), "return": str}
    return call


def build_server(inv: Invocation):
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    from omcm_core import __version__
    from omcm_core.config import CoreConfig

    limit = inv.config.section("core", CoreConfig).mcp_answer_chars
    server = MCPServer(
        name="omcm",
        version=__version__,
        instructions="omcm's memory of this project: past tool calls, learned mistakes, memory archives, the notepad. "
        "Search first (short hits), then get one by id.",
    )
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    for _plugin, tool in collect(inv):
        server.add_tool(
            _guarded(tool, limit),
            name=tool.name,
            description=tool.description,
            annotations=read_only,
            structured_output=False,  # the text once: a second, structured copy would cost the tokens twice
        )
    return server


class Loaded:
    """The tools as the SDK serves them: the server, its ``tools/list`` entries and the plugins' source checks."""

    def __init__(self, inv: Invocation) -> None:
        import anyio

        from omcm_core import log
        from omcm_core._cli.mcp_cache import source_checks

        log.configure(inv.home)  # the fast path skipped it: plugins' log lines go to the file, never stdout
        self.server = build_server(inv)
        self.tools = [
            tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in anyio.run(self.server.list_tools)
        ]
        modules = [
            sys.modules.get(getattr(f, "__module__", "") or "") for _, f, _ in inv.manager.implementations("mcp_tools")
        ]
        self.checks = source_checks([m for m in modules if m is not None])

    def call(self, name: str, arguments: dict) -> dict:
        """The ``tools/call`` result as JSON; a protocol error (``MCPError``) propagates with its code."""
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp.types import CallToolResult, TextContent

        try:
            result = anyio.run(self.server.call_tool, name, arguments)
        except MCPError:
            raise
        except Exception as exc:  # unknown tool, rejected arguments: the SDK's own wording, as an error result
            print(f"omcm mcp: tool {name!r}: {str(exc).splitlines()[0][:200]}", file=sys.stderr)
            result = CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        answer.pop("resultType", None)  # 2026-era field; the handshake revisions served here do not have it
        return answer


def run(args: argparse.Namespace, inv: Invocation) -> int:
    if args.list:
        for plugin, tool in collect(inv):
            print(f"{tool.name:<16} [{plugin}] {tool.description}")
        return 0
    from omcm_core._cli.mcp_stdio import serve

    return serve(inv)
