"""Event records of the tool calls (PreToolUse, PostToolUse and PostToolUseFailure).

Split from :mod:`omcm_core.records` so a hook call builds only its own event's
attrs classes (each costs its generated methods at import); import them from
``omcm_core.records``, which loads this module on first use.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from omcm_core.records import ToolEvent


@frozen(kw_only=True)
class PreToolEvent(ToolEvent):
    """PreToolUse: the tool has not run yet."""


@frozen(kw_only=True)
class PostToolEvent(ToolEvent):
    """PostToolUse (``succeeded`` is True) or PostToolUseFailure (False, with ``error``).

    ``tool_response`` is tool-specific and may be any JSON value (LS answers a
    string); treat it as opaque. ``error`` for a failed Bash call starts with
    ``Exit code N``.
    """

    succeeded: bool = True
    tool_response: Any = None
    error: str | None = None
    is_interrupt: bool | None = None
    duration_ms: float | None = None
