"""Event records of a session's turn (SessionStart, SessionEnd, UserPromptSubmit, Stop, PreCompact).

Split from :mod:`omcm_core.records` so a hook call builds only its own event's
attrs classes (each costs its generated methods at import); import them from
``omcm_core.records``, which loads this module on first use.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from omcm_core.records import TASK_NOTIFICATION, Event


@frozen(kw_only=True)
class SessionStartEvent(Event):
    """SessionStart; ``source`` is startup, resume, clear, compact or fork."""

    source: str | None = None
    model: str | None = None
    session_title: str | None = None


@frozen(kw_only=True)
class SessionEndEvent(Event):
    """SessionEnd; every SessionEnd hook shares a 1.5 s budget, so detach slow work."""

    reason: str | None = None


@frozen(kw_only=True)
class UserPromptEvent(Event):
    """UserPromptSubmit."""

    prompt: str | None = None
    session_title: str | None = None

    @property
    def is_task_notification(self) -> bool:
        """Whether the "prompt" is a background task's result, not the user's words.

        Claude Code (2.1.330) hands a background agent's or command's result back
        as a user message starting ``<task-notification>``, which fires
        UserPromptSubmit. It is tool output (attacker-controlled): never take it
        for a user's request or count it as a new user prompt.
        """
        return (self.prompt or "").lstrip().startswith(TASK_NOTIFICATION)


@frozen(kw_only=True)
class StopEvent(Event):
    """Stop and SubagentStop. Honour ``stop_hook_active`` before blocking again."""

    stop_hook_active: bool | None = None
    last_assistant_message: str | None = None
    agent_transcript_path: str | None = None
    #: Background tasks (agents, shells) still known to the client (v2.1.145), as sent: a list of
    #: objects whose shape varies by client version; None when the client does not send it.
    background_tasks: Any = None


@frozen(kw_only=True)
class PreCompactEvent(Event):
    """PreCompact; ``trigger`` is manual or auto."""

    trigger: str | None = None
    custom_instructions: str | None = None
