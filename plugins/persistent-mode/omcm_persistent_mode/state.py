"""The plugin's two state records and where they live.

- :class:`RalphState`: ``<project>/.omc/ralph/<session id>.json``, one per
  session, in the project so the loop survives a restart and ``omcm ralph``
  can show and cancel it.
- :class:`SessionState`: ``OMCM_HOME/sessions/<session id>/persistent-mode.json``,
  the session's counters (ultrawork on, todo continuation attempts, skills
  already given, search calls, a pending API-error note).

A record that does not parse is logged and replaced by a fresh one.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import attrs
from attrs import field, frozen
from attrs.validators import ge, in_, instance_of, optional

from omcm_core.paths import safe_component

SESSION_FILE = "persistent-mode.json"
RALPH_DIR = (".omc", "ralph")
STATUSES = ("active", "completed", "cancelled", "max_iterations", "auto_approved")
_int = [instance_of(int), ge(0)]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@frozen(kw_only=True)
class RalphState:
    session_id: str = field(validator=instance_of(str))
    mode: str = field(default="ralph-loop", validator=in_(("ralph-loop", "ultrawork-ralph")))
    task: str = field(default="", validator=instance_of(str))
    status: str = field(default="active", validator=in_(STATUSES))
    iteration: int = field(default=0, validator=_int)
    max_iterations: int = field(default=50, validator=[instance_of(int), ge(1)])
    started_at: str = field(factory=now, validator=instance_of(str))
    updated_at: str = field(factory=now, validator=instance_of(str))
    #: A verification request is out and its verdict not seen yet.
    verification_pending: bool = field(default=False, validator=instance_of(bool))
    verification_attempts: int = field(default=0, validator=_int)

    @property
    def active(self) -> bool:
        return self.status == "active"


@frozen(kw_only=True)
class SessionState:
    mode: str | None = field(default=None, validator=optional(in_(("ultrawork",))))
    cancelled: bool = field(default=False, validator=instance_of(bool))
    todo_attempts: int = field(default=0, validator=_int)
    #: The highest completed-todo count seen at a continuation in this goal: only more than that is progress.
    todo_completed_at_block: int | None = field(default=None, validator=optional(instance_of(int)))
    #: Todo/ultrawork continuations since the user's last prompt (the goal's budget).
    todo_goal_blocks: int = field(default=0, validator=_int)
    #: The todo continuation gave up in this goal and said so (the notice is shown once).
    todo_gave_up: bool = field(default=False, validator=instance_of(bool))
    #: Continuations of every kind in this session.
    session_blocks: int = field(default=0, validator=_int)
    skills: tuple = field(default=(), converter=tuple)
    search_calls: int = field(default=0, validator=_int)
    #: Which search/read tools those calls used (named in the reminder).
    search_tools: tuple = field(default=(), converter=tuple)
    recovery: dict | None = field(default=None, validator=optional(instance_of(dict)))
    #: The transcript's API-error line already told (its uuid), so it is told once.
    recovery_seen: str | None = field(default=None, validator=optional(instance_of(str)))
    #: Stops blocked in a row in the current turn: Claude Code overrides a block past its own cap.
    stop_blocks: int = field(default=0, validator=_int)


def to_json(record: Any) -> dict:
    return attrs.asdict(record)


def from_json(cls: type, data: Any) -> Any:
    """Raises ValueError when ``data`` is not a record of ``cls``."""
    if not isinstance(data, dict):
        raise ValueError("state is not a JSON object")
    known = {a.name for a in attrs.fields(cls)}
    if any(
        isinstance(v, bool)
        for k, v in data.items()
        if k in ("iteration", "max_iterations", "todo_attempts", "stop_blocks", "todo_goal_blocks", "session_blocks")
    ):
        raise ValueError("a counter is a boolean")
    try:
        return cls(**{k: v for k, v in data.items() if k in known})
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)[:200]) from None


def ralph_parts(session_id: str) -> tuple:
    return (*RALPH_DIR, f"{safe_component(session_id)}.json")
