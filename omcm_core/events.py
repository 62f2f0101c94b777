"""Every Claude Code hook event omcm answers, in one table.

Each row says, for one ``hook_event_name``: which hook (``omcm_core.hookspecs``)
its plugins implement, which record (``omcm_core.records``) they receive, the
timeout omcm registers with Claude Code, which :class:`~omcm_core.records.Result`
fields Claude Code reads for it, and which ``[core]`` budget each plugin gets.
The payload parser, the merge, ``omcm install``, the dispatcher and
``omcm_core.testing`` all read this table, so supporting a new event is one row
here (plus its hook and record if it needs new ones, and its entry in the
repository's ``hooks.json``, which a test compares with this table).

Events missing here are accepted and answered with nothing.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from omcm_core import records

#: Claude Code caps additionalContext and systemMessage at 10,000 characters.
TEXT_CAP = 10_000


@frozen(kw_only=True)
class EventSpec:
    """What omcm knows about one Claude Code hook event."""

    #: Claude Code's ``hook_event_name``.
    name: str
    #: The hookspec its plugins implement.
    hook: str
    #: The frozen record the hook's ``event`` argument is.
    record: type
    #: Seconds Claude Code waits for the hook (written by ``omcm install``).
    timeout_s: float = 10
    #: ``Result.permission`` and ``Result.updated_input`` render (permissionDecision, updatedInput).
    permission: bool = False
    #: ``Result.additional_context`` renders (hookSpecificOutput.additionalContext).
    context: bool = False
    #: ``Result.block`` renders (top-level ``decision: "block"`` with ``reason``).
    block: bool = False
    #: ``Result.system_message`` is shown; Claude Code discards it for some events.
    system_message: bool = True
    #: ``Result.halt`` renders (``continue: false``); meaningless for side-effect-only events.
    halt: bool = True
    #: When one plugin blocks, the reasons of plugins that answered without blocking follow its reason
    #: (Stop: a continuation message carries another plugin's context; dropped when nobody blocks).
    ride_along: bool = False
    #: The oldest Claude Code that knows the event. Before 2.1.101 an unknown event name made Claude
    #: Code reject the whole settings file, so ``omcm install`` registers the event only when the
    #: client it finds is at least this version.
    min_client: str | None = None
    #: The ``[core]`` setting holding each plugin's time budget on this event.
    budget: str = "plugin_budget_ms"


def _table(*specs: EventSpec) -> dict[str, EventSpec]:
    return {spec.name: spec for spec in specs}


_TOOL: dict[str, Any] = dict(context=True, block=True, timeout_s=15)
_STOP: dict[str, Any] = dict(hook="stop", record=records.StopEvent, block=True, ride_along=True)

EVENTS: dict[str, EventSpec] = _table(
    EventSpec(name="PreToolUse", hook="pre_tool", record=records.PreToolEvent, permission=True, context=True),
    EventSpec(name="PostToolUse", hook="post_tool", record=records.PostToolEvent, **_TOOL),
    EventSpec(name="PostToolUseFailure", hook="post_tool", record=records.PostToolEvent, **_TOOL),
    EventSpec(name="SessionStart", hook="session_start", record=records.SessionStartEvent, context=True, timeout_s=20),
    # Every SessionEnd hook shares 1.5 s in Claude Code, hence the smaller per-plugin budget.
    EventSpec(
        name="SessionEnd",
        hook="session_end",
        record=records.SessionEndEvent,
        timeout_s=1.5,
        system_message=False,
        halt=False,
        budget="session_end_budget_ms",
    ),
    EventSpec(
        name="UserPromptSubmit", hook="user_prompt_submit", record=records.UserPromptEvent, context=True, block=True
    ),
    EventSpec(name="Stop", **_STOP),
    EventSpec(name="SubagentStop", **_STOP),
    EventSpec(name="PreCompact", hook="pre_compact", record=records.PreCompactEvent, block=True, system_message=False),
    # The turn ended on an API error; Claude Code ignores the output (side effects only).
    EventSpec(
        name="StopFailure",
        hook="stop_failure",
        record=records.StopFailureEvent,
        system_message=False,
        halt=False,
        min_client="2.1.101",
    ),
)


def spec_for(event_name: str) -> EventSpec | None:
    """The row for ``event_name``, or None when omcm has no hook for it."""
    return EVENTS.get(event_name)


def events_for_hooks(hooks: set[str], client_version: str | None = None) -> list[str]:
    """The event names whose hook is in ``hooks``, in table order (what ``omcm install`` registers).

    An event with a ``min_client`` is left out unless ``client_version`` (``claude --version``)
    is known and at least that: registering it for an older client would break its settings file.
    """
    return [
        spec.name
        for spec in EVENTS.values()
        if spec.hook in hooks and (spec.min_client is None or _at_least(client_version, spec.min_client))
    ]


def _at_least(version: str | None, minimum: str) -> bool:
    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".") if p.isdigit())

    return version is not None and parts(version) >= parts(minimum)
