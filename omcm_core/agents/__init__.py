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
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omcm_core.agents.base import Agent

NAMES = ("claude", "codex", "gemini", "qwen")


def for_env(env: Mapping[str, str]) -> Agent | None:
    """The agent ``OMCM_AGENT`` names; None for Claude Code (unset, empty, ``claude`` or unknown: logged)."""
    name = (env.get("OMCM_AGENT") or "claude").strip().lower()
    if name not in NAMES:
        _log().warning("unknown_agent", agent=name[:40], known=list(NAMES))
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
    if out is None:  # e.g. Qwen Code's empty-prompt tick before each model request: debug, it comes often
        _log().debug("agent_call_dropped", agent=agent.name, hook_event=payload.get("hook_event_name"))
        return None, argv_event
    return json.dumps(namespaced(agent.name, out)).encode("utf-8"), argv_event


def namespaced(name: str, payload: dict) -> dict:
    """``payload`` with its session id as ``NAME:<id>``: what plugins persist per session (a ralph loop, counters,
    held context) is never shared with a Claude Code session, or another agent's, of the same id. The agent's own
    id stays readable under ``agent_session_id`` (in ``extra``)."""
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return payload  # missing: read_event says so, as for any payload
    return {**payload, "session_id": f"{name}:{session}", "agent_session_id": session}


def outgoing(agent: Agent | None, event: Any, reply: Any, home: Path) -> Any:
    """``reply`` (dispatch's Claude-form answer to ``event``) rendered in the agent's contract, with context
    the agent would drop held for the event where it passes it (``context_moves``, :mod:`.held`)."""
    if agent is None:
        return reply
    name = event.hook_event_name
    response = None
    if reply.stdout:
        try:
            response = json.loads(reply.stdout)
        except ValueError:  # a plain-text answer (WorktreeCreate): no agent but Claude Code has one
            return reply
    if isinstance(response, dict) and name in agent.context_moves:
        response = _hold(response, event, home)
    if name in agent.context_moves.values() or (
        name == "PostToolUseFailure" and "PostToolUse" in agent.context_moves.values()
    ):
        response = _give_back(response, event, home)
    if response is None and not reply.stdout:
        return reply
    import attrs

    stdout, code = agent.render(name, response)
    return attrs.evolve(reply, stdout=stdout, exit_code=code)


def _call_key(event: Any) -> tuple[str, str] | None:
    session, call = getattr(event, "session_id", None), getattr(event, "tool_use_id", None)
    if not call:  # an agent that sends no call id (Gemini CLI) names the call itself, in ``extra``
        extra = getattr(event, "extra", None)
        call = extra.get("agent_call") if isinstance(extra, dict) else None
        call = call if isinstance(call, str) else None
    return (session, call) if session and call else None


def _hold(response: dict, event: Any, home: Path) -> dict | None:
    """``response`` without its additionalContext, which is held for the call's next event (not on a deny:
    the tool will not run, and the deny's reason reaches the model)."""
    specific = response.get("hookSpecificOutput")
    key = _call_key(event)
    if not (isinstance(specific, dict) and specific.get("additionalContext") and key):
        return response
    if specific.get("permissionDecision") == "deny":
        return response
    updated = specific.get("updatedInput")
    if isinstance(updated, dict) and not getattr(event, "tool_use_id", None):
        from omcm_core.agents.base import call_key

        # The after-tool event will carry the input the call ran with: the rewritten one (merged, as Gemini does).
        key = (
            key[0],
            call_key(getattr(event, "tool_name", None), {**(getattr(event, "tool_input", None) or {}), **updated}),
        )
    from omcm_core.agents import held

    try:
        held.hold(home, key[0], key[1], str(specific["additionalContext"]))
    except OSError as exc:  # the context stays where it was: lost to the model, not to the log
        _log().warning("context_not_held", error=f"{type(exc).__name__}: {exc}")
        return response
    rest = {k: v for k, v in specific.items() if k != "additionalContext"}
    out = {k: v for k, v in response.items() if k != "hookSpecificOutput"}
    if set(rest) - {"hookEventName"}:
        out["hookSpecificOutput"] = rest
    return out or None


def _give_back(response: dict | None, event: Any, home: Path) -> dict | None:
    key = _call_key(event)
    if key is None:
        return response
    from omcm_core.agents import held

    try:
        text = held.take(home, key[0], key[1])
    except OSError as exc:
        _log().warning("held_context_unreadable", error=f"{type(exc).__name__}: {exc}")
        return response
    if not text:
        return response
    out = dict(response or {})
    specific = dict(out.get("hookSpecificOutput") or {"hookEventName": event.hook_event_name})
    earlier = specific.get("additionalContext")
    specific["additionalContext"] = text + ("\n\n" + earlier if earlier else "")
    out["hookSpecificOutput"] = specific
    return out


def _log() -> Any:
    from omcm_core import log

    return log.get_logger(component="agents")
