"""Canonical tool kinds: every agent's raw tool name -> one of a few kinds (a declarative table).

A plugin matching ``event.tool_kind == "shell"`` covers Claude Code's ``Bash``
and ``PowerShell``, Codex's ``Bash`` and Gemini CLI's and Qwen Code's
``run_shell_command`` alike; ``tool_name`` stays the agent's raw name.
"""

from __future__ import annotations

import re

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


#: Agents with no read tool (Codex CLI: reads are ``cat``, ``sed -n``, ``head``): a shell call of theirs that
#: only reads files is their read, for counting (tool-counter); its kind stays ``shell``, so guards see it.
NO_READ_TOOL = ("codex",)
#: Programs that only print files, in any option form; ``sed`` only as ``sed -n 'N,Mp'``.
_PRINTERS = frozenset({"cat", "head", "tail", "nl"})
#: Patterns as text: compiled on a Codex call's first use, never on a Claude Code call's path (this module is on it).
_SHELL_SYNTAX = r"[;&<>`$()\n\\]|\|\|"
_SED_PRINT = r"[0-9]+(,[0-9$]+)?p"


def reads_files(command: object) -> bool:
    """``command`` only prints files: ``cat F``, ``head -n 5 F``, ``sed -n '1,80p' F``, ``nl -ba F | sed -n 1,9p``.

    Anything else a shell could do (redirections, substitutions, lists, other programs) is not a read.
    """
    import shlex

    if not isinstance(command, str) or not command.strip() or len(command) > 4096 or re.search(_SHELL_SYNTAX, command):
        return False
    stages = command.split("|")
    for n, stage in enumerate(stages):
        try:
            words = shlex.split(stage)
        except ValueError:
            return False
        if not words:
            return False
        program, args = words[0].rsplit("/", 1)[-1], words[1:]
        if program == "sed":
            scripts = [a for a in args if not a.startswith("-")]
            if "-n" not in args or any(a.startswith(("-i", "--in-place", "-e", "-f")) for a in args):
                return False
            if not scripts or not re.fullmatch(_SED_PRINT, scripts[0]):
                return False
            files = scripts[1:]
        elif program in _PRINTERS:
            files = [a for a in args if not a.startswith("-") and not a.isdigit()]
        else:
            return False
        if n == 0 and not files:
            return False  # the first stage must read a file (a bare `cat` reads nothing of the project)
    return True


def run_kind(event: object) -> str:
    """``event``'s kind for counting runs of calls: ``read`` for a file-printing shell call of an agent that has
    no read tool (its ``extra["agent"]``, :data:`NO_READ_TOOL`), else its ``tool_kind``."""
    kind = str(getattr(event, "tool_kind", "other"))
    extra = getattr(event, "extra", None) or {}
    if kind == "shell" and extra.get("agent") in NO_READ_TOOL:
        tool_input = getattr(event, "tool_input", None) or {}
        if reads_files(tool_input.get("command")):
            return "read"
    return kind
