"""Canonical tool kinds: every agent's raw tool name -> one of a few kinds (a declarative table).

A plugin matching ``event.tool_kind == "shell"`` covers Claude Code's ``Bash``
and ``PowerShell``, Codex's ``Bash`` and Gemini CLI's and Qwen Code's
``run_shell_command`` alike; ``tool_name`` stays the agent's raw name.
"""

from __future__ import annotations

KINDS = ("shell", "read", "edit", "write", "search", "web", "agent", "mcp", "other")

#: Raw tool name (Claude Code, Codex CLI, Gemini CLI, Qwen Code) -> kind.
TOOL_KINDS: dict[str, str] = {
    # shell
    "Bash": "shell",
    "PowerShell": "shell",
    "run_shell_command": "shell",
    "shell": "shell",
    # read
    "Read": "read",
    "read_file": "read",
    "read_many_files": "read",
    # edit
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "replace": "edit",
    "edit": "edit",
    # write
    "Write": "write",
    "write_file": "write",
    # search
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "search_file_content": "search",
    "grep_search": "search",
    "glob": "search",
    "list_directory": "search",
    # web
    "WebFetch": "web",
    "WebSearch": "web",
    "web_fetch": "web",
    "google_web_search": "web",
    "web_search": "web",
    # agent
    "Task": "agent",
    "Agent": "agent",
}


def kind_of(tool_name: object) -> str:
    """The canonical kind of ``tool_name`` (``mcp`` for any ``mcp__server__tool`` or Gemini's
    ``mcp_server_tool``; ``other`` when unknown)."""
    if not isinstance(tool_name, str):
        return "other"
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    # Claude Code: mcp__server__tool; Gemini CLI: mcp_server_tool (its docs: the server alias holds no "_").
    server, _, tool = tool_name[4:].partition("_") if tool_name.startswith("mcp_") else ("", "", "")
    return "mcp" if tool_name.startswith("mcp__") or (server and tool) else "other"
