"""bash-guard: deny destructive shell commands, ask before force-pushing.

The complete worked example of docs/writing-plugins.md.
"""

from __future__ import annotations

import re

import attrs

from omcm_core import Result, hookimpl
from omcm_core.config import Project

DENY = [
    (re.compile(r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f?\s+(/|~)(\s|$)"), "deletes the whole disk or home directory"),
    (re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b"), "pipes a download straight into a shell"),
    (re.compile(r"\bmkfs(\.\w+)?\s"), "formats a filesystem"),
]
ASK = [(re.compile(r"\bgit\s+push\b.*(--force\b|-f\b)"), "force-pushes and may overwrite others' work")]


@attrs.frozen
class BashGuardConfig:
    """``[bash-guard]`` in OMCM_HOME/config.toml; a project's .claude/omcm.toml may only make it stricter."""

    #: Also deny commands matching these regular expressions (a project may add patterns, never remove one).
    extra_deny: tuple = attrs.field(default=(), metadata=Project.add)
    #: Ask instead of deny (for people who like to decide themselves; a project may only switch it off).
    ask_only: bool = attrs.field(default=False, metadata=Project.off)


@hookimpl
def config_schema():
    return BashGuardConfig


@hookimpl
def pre_tool(event, ctx):
    if event.tool_kind != "shell":  # Bash, PowerShell, run_shell_command: every agent's shell tool
        return None
    command = event.tool_input.get("command")
    if not isinstance(command, str):
        return None
    config = ctx.config(BashGuardConfig)
    rules = list(DENY)
    for pattern in config.extra_deny:
        try:
            rules.append((re.compile(pattern), f"matches your extra_deny pattern {pattern!r}"))
        except re.error as exc:
            ctx.log.error("bad_extra_deny_pattern", pattern=pattern, error=str(exc))
    for pattern, why in rules:
        if pattern.search(command):
            ctx.log.info("denied", why=why)
            return Result(permission="ask" if config.ask_only else "deny", reason=f"bash-guard: this command {why}.")
    for pattern, why in ASK:
        if pattern.search(command):
            return Result(permission="ask", reason=f"bash-guard: this command {why}.")
    return None
