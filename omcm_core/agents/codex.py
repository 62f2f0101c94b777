"""Codex CLI (0.171): Claude Code's hook format, event names and answers.

The shell tool arrives as ``Bash`` with ``tool_input.command`` (no read tool:
reads are ``cat``); ``tool_response`` is a string, normalised to Claude's
object shape ``{"output": text}`` so plugins read one shape.
"""

from __future__ import annotations

from omcm_core.agents.base import Agent

#: The hook events Codex 0.171 runs, by Claude Code's names (its ``HookEventName`` has these and
#: ``PreModelRequest``, ``PostModelRequest``, ``Interrupt``, which Claude Code has not): ``omcm install
#: --agent codex`` registers no other, since Codex would never call it.
HOOK_EVENTS = (
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)
#: Codex ends a SessionEnd hook after this many seconds whatever the file says.
SESSION_END_MAX_S = 3


def normalize(payload: dict) -> dict | None:
    response = payload.get("tool_response")
    if isinstance(response, str):
        return {**payload, "tool_response": {"output": response}}
    return payload


AGENT = Agent(name="codex", events={}, normalize=normalize)
