"""Merge every plugin's Result into the one JSON object Claude Code reads.

A pure function, mirroring how Claude Code itself merges parallel hooks:

- permission (PreToolUse): most restrictive wins, deny > defer > ask > allow;
  the reasons of the plugins that chose the winning decision are joined.
- ``continue: false`` from any plugin wins over every decision; stop reasons joined.
- block (``decision: "block"``): any plugin blocking blocks; reasons joined. On
  Stop and SubagentStop the reasons of plugins that did not block are appended
  to the block reason (context for the continuation) and dropped when nobody blocks.
- additional_context and system_message: joined with a blank line, in the order
  the answers are given (the dispatcher gives them in plugin-name order), then
  capped at Claude Code's 10,000 characters.
- updated_input: the first plugin (in that order) that gives one wins; dropped
  when the merged permission is deny or defer, where Claude Code ignores it.

Only keys valid for the event are rendered; ``hookSpecificOutput`` always carries
``hookEventName``. ``None`` means there is nothing to say (print nothing).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from omcm_core.records import Result

#: Claude Code caps additionalContext and systemMessage at 10,000 characters.
TEXT_CAP = 10_000
TRUNCATED = "\n[omcm: truncated]"

_RANK = {"allow": 0, "ask": 1, "defer": 2, "deny": 3}

# Events whose hookSpecificOutput accepts additionalContext.
_CONTEXT_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "UserPromptSubmit", "SubagentStart"}
)
# Events that take top-level decision: "block" + reason.
_BLOCK_EVENTS = frozenset(
    {"PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"}
)
# Events where a non-blocking reason rides along with another plugin's block reason.
_RIDE_ALONG_EVENTS = frozenset({"Stop", "SubagentStop"})
# Events whose systemMessage Claude Code discards.
_NO_SYSTEM_MESSAGE = frozenset({"Notification", "PreCompact", "PostCompact", "SessionEnd", "StopFailure"})
# Events where continue/stopReason mean nothing (side effects only).
_NO_CONTINUE = frozenset({"SessionEnd", "Notification", "StopFailure"})


def _join(parts: Sequence[str]) -> Optional[str]:
    text = "\n\n".join(p for p in parts if p)
    if not text:
        return None
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP - len(TRUNCATED)] + TRUNCATED
    return text


def merge(event_name: str, answers: Sequence[tuple[str, Result]]) -> Optional[dict[str, Any]]:
    """Combine ``(plugin_name, Result)`` pairs into Claude Code's response.

    :param event_name: the Claude Code event (``hook_event_name``).
    :param answers: non-None results in the order they should appear.
    :return: the JSON object to print, or ``None`` when there is nothing to say.
    """
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}

    if event_name not in _NO_CONTINUE:
        stoppers = [r for _, r in answers if r.stop]
        if stoppers:
            out["continue"] = False
            reason = _join([r.stop_reason or "" for r in stoppers])
            if reason:
                out["stopReason"] = reason

    if event_name == "PreToolUse":
        decided = [r for _, r in answers if r.permission]
        decision = max((r.permission for r in decided), key=_RANK.__getitem__, default=None)
        if decision:
            specific["permissionDecision"] = decision
            reason = "\n".join(r.reason for r in decided if r.permission == decision and r.reason)
            if reason:
                specific["permissionDecisionReason"] = reason
        if decision not in ("deny", "defer"):
            updated = next((r.updated_input for _, r in answers if r.updated_input is not None), None)
            if updated is not None:
                specific["updatedInput"] = dict(updated)

    if event_name in _BLOCK_EVENTS:
        blockers = [r for _, r in answers if r.block]
        if blockers:
            out["decision"] = "block"
            reason = "\n".join(r.reason for r in blockers if r.reason) or "Blocked by an omcm plugin."
            if event_name in _RIDE_ALONG_EVENTS:
                reason = "\n\n".join([reason] + [r.reason for _, r in answers if not r.block and r.reason])
            out["reason"] = reason

    if event_name in _CONTEXT_EVENTS:
        context = _join([r.additional_context or "" for _, r in answers])
        if context:
            specific["additionalContext"] = context

    if event_name not in _NO_SYSTEM_MESSAGE:
        message = _join([r.system_message or "" for _, r in answers])
        if message:
            out["systemMessage"] = message

    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event_name, **specific}
    return out or None


def dropped_fields(event_name: str, result: Result) -> list[str]:
    """Names of ``result`` fields that ``merge`` cannot render for ``event_name``."""
    dropped = []
    if result.permission and event_name != "PreToolUse":
        dropped.append("permission")
    if result.updated_input is not None and event_name != "PreToolUse":
        dropped.append("updated_input")
    if result.block and event_name not in _BLOCK_EVENTS:
        dropped.append("block")
    if result.additional_context and event_name not in _CONTEXT_EVENTS:
        dropped.append("additional_context")
    if result.system_message and event_name in _NO_SYSTEM_MESSAGE:
        dropped.append("system_message")
    if result.stop and event_name in _NO_CONTINUE:
        dropped.append("stop")
    return dropped
