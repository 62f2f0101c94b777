"""What a call answers when the dispatcher itself failed (a bug in omcm, not in a plugin).

Any other call answers nothing: the session goes on. A gate a ``[core] fail_closed`` guard keeps
(PreToolUse and the other ``fail_closed`` rows of ``omcm_core.events``) is denied instead, as when
the guard itself fails: a guard that fails keeps guarding, whoever failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omcm_core import log

_logger = log.get_logger(component="dispatch")


def crash_reply(raw: bytes, argv_event: str | None, env: Mapping[str, str], home: Path) -> Any:
    """The reply after ``dispatch.handle`` raised: empty, or a deny at a configured guard's gate."""
    from omcm_core._runtime.dispatch import EMPTY

    try:
        return _denied(raw, argv_event, dict(env), home) or EMPTY
    except Exception as exc:  # this is the last resort: it must not raise either
        _logger.error("crash_reply_failed", error=f"{type(exc).__name__}: {exc}")
        return EMPTY


def _denied(raw: bytes, argv_event: str | None, env: dict, home: Path) -> Any:
    from omcm_core import agents
    from omcm_core.events import EVENTS

    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {}
    payload = payload if isinstance(payload, dict) else {}
    agent = agents.for_env(env)
    name = argv_event or payload.get("hook_event_name") or payload.get("hookEventName")
    name = agent.event_name(name) if agent is not None else name
    spec = EVENTS.get(name) if isinstance(name, str) else None
    if spec is None or not spec.fail_closed or not isinstance(name, str):
        return None
    guards = _guards(env, home, payload)
    if not guards:
        return None
    from omcm_core._runtime.dispatch import Reply

    reason = f"omcm: the {', '.join(guards)} guard is unavailable: omcm itself failed on this call; denied to be safe."
    # Written out, not merged: the bug may be in the merge (both fail_closed rows answer this way).
    specific = {"hookEventName": name, "permissionDecision": "deny", "permissionDecisionReason": reason}
    _logger.error("crash_denied", hook_event=name, guards=guards)
    reply = Reply(stdout=json.dumps({"hookSpecificOutput": specific}).encode("ascii"))
    if agent is None:
        return reply
    try:
        return agents.outgoing(agent, _Named(name, payload), reply, home)
    except Exception as exc:  # the agent layer may be the bug: Claude's form is the best left
        _logger.error("crash_reply_agent_failed", agent=agent.name, error=f"{type(exc).__name__}: {exc}")
        return reply


def _guards(env: dict, home: Path, payload: dict) -> list[str]:
    """The ``[core] fail_closed`` guards the user configured for this call's project."""
    from omcm_core._runtime.payload import resolve_project_dir
    from omcm_core.config import Config, CoreConfig

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    config = Config.load(home, resolve_project_dir(env, cwd), env)
    return sorted(str(name) for name in config.section("core", CoreConfig).fail_closed)


class _Named:
    """Just enough of an event for ``agents.outgoing``: its name and ids."""

    def __init__(self, name: str, payload: dict) -> None:
        self.hook_event_name = name
        self.session_id = str(payload.get("session_id") or "")
        self.tool_use_id = payload.get("tool_use_id")
