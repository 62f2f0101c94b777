"""The small interface every agent module fills in: tables and two pure functions.

The agent layer sits at the dispatcher's edge (docs/agents.md)::

    stdin -> agent.normalize -> read_event -> plugins -> merge -> agent.render -> stdout, exit code

``normalize`` turns the agent's payload into Claude Code's shape (``None``: not
an event plugins should see, e.g. Qwen Code's empty-prompt tick); ``render``
turns the merged answer, in Claude Code's protocol, into the bytes and exit code
the agent understands. Both are pure: table-tested in tests/test_agents.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

#: What a hook prints and its exit code.
Answer = tuple[bytes, int]


def claude_bytes(response: dict | None) -> bytes:
    """The merged response as the dispatcher prints it for Claude Code."""
    return b"" if response is None else json.dumps(response).encode("ascii")


def _text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # a list of parts: {"text": ...}
        parts = [str(p["text"]) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return None


def with_output(payload: dict, raw_key: str) -> dict:
    """``payload`` with a ``tool_response`` of ``{"llmContent": ...}`` (Gemini CLI, Qwen Code) in Claude's
    object shape ``{"output": text}``; the agent's own value stays readable under ``raw_key`` (in ``extra``)."""
    response = payload.get("tool_response")
    if not (isinstance(response, dict) and "llmContent" in response):
        return payload
    text = _text(response["llmContent"])
    return {**payload, "tool_response": {"output": text if text is not None else ""}, raw_key: response}


def call_key(tool_name: object, tool_input: object) -> str:
    """``extra["agent_call"]`` for an agent that sends no call id (Gemini CLI): the same at a call's
    before- and after-tool events, since both carry the tool and the input it ran with."""
    import hashlib

    text = json.dumps([tool_name, tool_input], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def identity(payload: dict) -> dict | None:
    return payload


def as_claude(event_name: str, response: dict | None) -> Answer:
    return claude_bytes(response), 0


@frozen
class Agent:
    """One coding agent's contract with omcm."""

    #: "claude", "codex", "gemini", "qwen": the value of ``OMCM_AGENT`` in the registered command.
    name: str
    #: The agent's event name -> Claude Code's (omcm's row in ``omcm_core.events``); absent: same name.
    events: Mapping[str, str]
    #: Payload (already decoded) -> Claude-shaped payload, or None to drop the call (no answer).
    normalize: Callable[[dict], dict | None] = identity
    #: (Claude's event name, merged Claude response or None) -> (stdout bytes, exit code).
    render: Callable[[str, dict | None], Answer] = as_claude
    #: Context the agent drops at this event -> the event it would have to be held for (documented gaps).
    context_moves: Mapping[str, str] = {}

    def event_name(self, name: Any) -> Any:
        """Claude Code's name for the agent's event ``name`` (unchanged when not in the table)."""
        return self.events.get(name, name) if isinstance(name, str) else name
