"""The agent layer: which coding agent called, and its payloads and answers at the dispatcher's edge.

The agent is named by the registered command through ``OMCM_AGENT`` (``claude``
when unset), never guessed from the payload. :func:`incoming` and
:func:`outgoing` are the two calls ``dispatch.handle`` makes; for Claude Code
both return their input untouched (nothing is decoded twice, and no agent
module is imported: this module is on every hook call's path).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omcm_core.agents.base import Agent

NAMES = ("claude", "codex", "gemini", "qwen")


def for_env(env: Mapping[str, str]) -> Agent | None:
    """The agent ``OMCM_AGENT`` names; None for Claude Code (unset, empty, ``claude`` or unknown: logged)."""
    name = (env.get("OMCM_AGENT") or "claude").strip().lower()
    if name not in NAMES:
        from omcm_core import log

        log.get_logger(component="agents").warning("unknown_agent", agent=name[:40], known=list(NAMES))
        name = "claude"
    if name == "claude":
        return None
    return importlib.import_module(f"omcm_core.agents.{name}").AGENT


def incoming(agent: Agent | None, raw: bytes, argv_event: str | None) -> tuple[bytes | None, str | None]:
    """The payload and command-line event in Claude Code's shape; payload None: drop the call (no answer)."""
    if agent is None:
        return raw, argv_event
    argv_event = agent.event_name(argv_event)
    try:
        payload = json.loads(raw)
    except ValueError:
        return raw, argv_event  # read_event says what is wrong with it
    if not isinstance(payload, dict):
        return raw, argv_event
    out = agent.normalize(payload)
    return (None if out is None else json.dumps(out).encode("utf-8")), argv_event


def outgoing(agent: Agent | None, event_name: str | None, reply: Any) -> Any:
    """``reply`` (dispatch's Claude-form answer) rendered in the agent's contract."""
    if agent is None or not reply.stdout or event_name is None:
        return reply
    import attrs

    try:
        response = json.loads(reply.stdout)
    except ValueError:  # a plain-text answer (WorktreeCreate): no agent but Claude Code has one
        return reply
    stdout, code = agent.render(event_name, response)
    return attrs.evolve(reply, stdout=stdout, exit_code=code)
