"""Codex CLI (0.171): Claude Code's hook format, event names and answers.

The shell tool arrives as ``Bash`` with ``tool_input.command`` (no read tool:
reads are ``cat``); ``tool_response`` is a string, normalised to Claude's
object shape ``{"output": text}`` so plugins read one shape.
"""

from __future__ import annotations

from omcm_core.agents.base import Agent


def normalize(payload: dict) -> dict | None:
    response = payload.get("tool_response")
    if isinstance(response, str):
        return {**payload, "tool_response": {"output": response}}
    return payload


AGENT = Agent(name="codex", events={}, normalize=normalize)
