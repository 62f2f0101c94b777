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

Only keys valid for the event are rendered (``omcm_core.events`` says which);
``hookSpecificOutput`` always carries ``hookEventName``; an event missing from
that table renders nothing. ``None`` means there is nothing to say (print nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omcm_core.events import TEXT_CAP, spec_for
from omcm_core.records import Result

TRUNCATED = "\n[omcm: truncated]"

_RANK = {"allow": 0, "ask": 1, "defer": 2, "deny": 3}


def _join(parts: Sequence[str]) -> str | None:
    text = "\n\n".join(p for p in parts if p)
    if not text:
        return None
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP - len(TRUNCATED)] + TRUNCATED
    return text


def merge(event_name: str, answers: Sequence[tuple[str, Result]]) -> dict[str, Any] | None:
    """Combine ``(plugin_name, Result)`` pairs into Claude Code's response.

    :param event_name: the Claude Code event (``hook_event_name``).
    :param answers: non-None results in the order they should appear.
    :return: the JSON object to print, or ``None`` when there is nothing to say.
    """
    spec = spec_for(event_name)
    if spec is None:
        return None
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}

    if spec.halt:
        halters = [r for _, r in answers if r.halt]
        if halters:
            out["continue"] = False
            reason = _join([r.halt_reason or "" for r in halters])
            if reason:
                out["stopReason"] = reason

    if spec.permission:
        decided = [r for _, r in answers if r.permission]
        decision = max((r.permission or "" for r in decided), key=_RANK.__getitem__, default=None)
        if decision:
            specific["permissionDecision"] = decision
            reason = "\n".join(r.reason for r in decided if r.permission == decision and r.reason)
            if reason:
                specific["permissionDecisionReason"] = reason
        if decision not in ("deny", "defer"):
            updated = next((r.updated_input for _, r in answers if r.updated_input is not None), None)
            if updated is not None:
                specific["updatedInput"] = dict(updated)

    if spec.block:
        blockers = [r for _, r in answers if r.block]
        if blockers:
            out["decision"] = "block"
            reason = "\n".join(r.reason for r in blockers if r.reason) or "Blocked by an omcm plugin."
            if spec.ride_along:
                reason = "\n\n".join([reason] + [r.reason for _, r in answers if not r.block and r.reason])
            out["reason"] = reason

    if spec.context:
        context = _join([r.additional_context or "" for _, r in answers])
        if context:
            specific["additionalContext"] = context

    if spec.system_message:
        message = _join([r.system_message or "" for _, r in answers])
        if message:
            out["systemMessage"] = message

    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event_name, **specific}
    return out or None


def dropped_fields(event_name: str, result: Result) -> list[str]:
    """Names of ``result`` fields that ``merge`` cannot render for ``event_name``."""
    spec = spec_for(event_name)
    renders = {
        "permission": spec is not None and spec.permission,
        "updated_input": spec is not None and spec.permission,
        "block": spec is not None and spec.block,
        "additional_context": spec is not None and spec.context,
        "system_message": spec is not None and spec.system_message,
        "halt": spec is not None and spec.halt,
    }
    return [name for name, shown in renders.items() if getattr(result, name) not in (None, False, "") and not shown]


def result_problem(result: Result) -> str | None:
    """Why ``result`` cannot go into Claude Code's JSON answer, or None.

    attrs validates the text fields; these are the ones it does not, and one bad
    value would otherwise make the merge (or ``json.dumps``) fail and silence
    every other plugin's answer.
    """
    for name in ("block", "halt"):
        value = getattr(result, name)
        if value is not None and not isinstance(value, bool):
            return f"{name} must be a boolean, got {type(value).__name__}"
    if result.updated_input is not None:
        if not isinstance(result.updated_input, dict):
            return f"updated_input must be a dict, got {type(result.updated_input).__name__}"
        import json

        try:
            json.dumps(result.updated_input, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            return f"updated_input is not JSON: {exc}"
    return None
