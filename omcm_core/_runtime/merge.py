"""Merge every plugin's Result into the one JSON object Claude Code reads.

A pure function, mirroring how Claude Code itself merges parallel hooks:

- permission (PreToolUse, PreModelSwitch, PreSkillShellCommand): most
  restrictive wins, deny > defer > ask > allow, among the values the event takes;
  the reasons of the plugins that chose the winning decision are joined.
- PermissionRequest's ``decision``: deny wins over allow (its message is the
  deniers' reasons joined); an allow carries the first ``updated_input`` and
  every allowing plugin's ``updated_permissions``.
- ``continue: false`` from any plugin wins over every decision; stop reasons joined.
- block (``decision: "block"``): any plugin blocking blocks; reasons joined. On
  Stop and SubagentStop the reasons of plugins that did not block ride along
  with a continuation: appended to the block reason when a plugin blocks, else
  to the additionalContext when a plugin gives context (which keeps Claude
  going too, client 2.1.163+), and dropped when nobody continues.
- additional_context: joined under the budget by :func:`join_context`, in the
  order the answers are given (the dispatcher gives them in plugin-name order);
  system_message: joined the same way, capped at Claude Code's 10,000 characters.
- updated_input, worktree_path, display_content: the first plugin (in that
  order) that gives one wins; updated_input is dropped when the merged
  permission is deny or defer, where Claude Code ignores it.
- retry (PermissionDenied): True when a plugin asks for it and none says False.
- watch_paths: every plugin's paths, in order, without repeats.
- elicitation: cancel > decline > accept; the content of the first accepting
  plugin goes with an accept.

A value JSON cannot carry (a non-finite number, an object that is not JSON) is
not an answer: the merge skips it as if the plugin had given none, and
:func:`dropped_fields` names it so the dispatcher logs it.

Only keys valid for the event are rendered (``omcm_core.events`` says which);
``hookSpecificOutput`` always carries ``hookEventName``; an event missing from
that table renders the protocol's common fields only. ``None`` means there is
nothing to say (print nothing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from omcm_core.events import TEXT_CAP, EventSpec, spec_for
from omcm_core.records import Result

TRUNCATED = "\n[omcm: truncated]"

_RANK = {"allow": 0, "ask": 1, "defer": 2, "deny": 3}
_ELICITATION_RANK = {"accept": 0, "decline": 1, "cancel": 2}
#: Result fields whose values go into the JSON answer as they are, with the JSON type each must have.
_JSON_FIELDS = {"updated_input": dict, "updated_permissions": list, "watch_paths": list, "elicitation_content": dict}


def _join(parts: Sequence[str]) -> str | None:
    text = "\n\n".join(p for p in parts if p)
    if not text:
        return None
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP - len(TRUNCATED)] + TRUNCATED
    return text


def join_context(pieces: Sequence[tuple[str, str]]) -> str | None:
    """The additionalContext for ``(plugin_name, text)`` pieces, under Claude Code's cap.

    The one place context pieces meet their budget: a fairer per-plugin share
    replaces this function alone.
    """
    return _join([text for _, text in pieces])


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _valid(result: Result, name: str) -> Any:
    """``result``'s value for ``name``, or None when JSON cannot carry it."""
    value = getattr(result, name)
    kind = _JSON_FIELDS.get(name)
    if value is None or (kind is not None and not (isinstance(value, kind) and _is_json(value))):
        return None
    return value


def _first(answers: Sequence[tuple[str, Result]], name: str) -> Any:
    return next((value for _, r in answers if (value := _valid(r, name)) is not None), None)


def merge(event_name: str, answers: Sequence[tuple[str, Result]]) -> dict[str, Any] | None:
    """Combine ``(plugin_name, Result)`` pairs into Claude Code's response.

    :param event_name: the Claude Code event (``hook_event_name``).
    :param answers: non-None results in the order they should appear.
    :return: the JSON object to print, or ``None`` when there is nothing to say.
    """
    spec = spec_for(event_name)
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
        specific.update(_permission(spec, answers))

    if spec.decision:
        decision = _decision(answers)
        if decision:
            specific["decision"] = decision

    blockers = [r for _, r in answers if r.block] if spec.block else []
    riders = [(name, r.reason) for name, r in answers if not r.block and r.reason] if spec.ride_along else []
    if blockers:
        out["decision"] = "block"
        reason = "\n".join(r.reason for r in blockers if r.reason) or "Blocked by an omcm plugin."
        out["reason"] = "\n\n".join([reason] + [text for _, text in riders])

    if spec.context:
        pieces = [(name, r.additional_context) for name, r in answers if r.additional_context]
        if pieces and not blockers:
            pieces += riders  # a context continuation carries them; a block already does
        context = join_context(pieces)
        if context:
            specific["additionalContext"] = context

    if spec.retry:
        votes = [r.retry for _, r in answers if isinstance(r.retry, bool)]
        if True in votes and False not in votes:
            specific["retry"] = True

    if spec.watch_paths:
        paths: list[str] = []
        for _, r in answers:
            for path in _valid(r, "watch_paths") or []:
                if isinstance(path, str) and path and path not in paths:
                    paths.append(path)
        if paths:
            specific["watchPaths"] = paths

    if spec.worktree_path:
        path = _first(answers, "worktree_path")
        if path:
            specific["worktreePath"] = path

    if spec.elicitation:
        specific.update(_elicitation(answers))

    if spec.display:
        shown = _first(answers, "display_content")
        if shown is not None:
            specific["displayContent"] = shown

    if spec.system_message:
        message = _join([r.system_message or "" for _, r in answers])
        if message:
            out["systemMessage"] = message

    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event_name, **specific}
    return out or None


def _permission(spec: EventSpec, answers: Sequence[tuple[str, Result]]) -> dict[str, Any]:
    specific: dict[str, Any] = {}
    decided = [r for _, r in answers if r.permission in spec.permissions]
    decision = max((r.permission or "" for r in decided), key=_RANK.__getitem__, default=None)
    if decision:
        specific["permissionDecision"] = decision
        reason = "\n".join(r.reason for r in decided if r.permission == decision and r.reason)
        if reason:
            specific["permissionDecisionReason"] = reason
    if spec.rewrite and decision not in ("deny", "defer"):
        updated = _first(answers, "updated_input")
        if updated is not None:
            specific["updatedInput"] = dict(updated)
    return specific


def _decision(answers: Sequence[tuple[str, Result]]) -> dict[str, Any] | None:
    """PermissionRequest's ``decision`` object: deny wins; ask and defer mean "show the dialog"."""
    deniers = [r for _, r in answers if r.permission == "deny"]
    if deniers:
        decision: dict[str, Any] = {"behavior": "deny"}
        message = "\n".join(r.reason for r in deniers if r.reason)
        if message:
            decision["message"] = message
        return decision
    allowers = [(name, r) for name, r in answers if r.permission == "allow"]
    if not allowers:
        return None
    decision = {"behavior": "allow"}
    updated = _first(allowers, "updated_input")
    if updated is not None:
        decision["updatedInput"] = dict(updated)
    rules = [entry for _, r in allowers for entry in _valid(r, "updated_permissions") or [] if isinstance(entry, dict)]
    if rules:
        decision["updatedPermissions"] = rules
    return decision


def _elicitation(answers: Sequence[tuple[str, Result]]) -> dict[str, Any]:
    actions = [r.elicitation_action for _, r in answers if r.elicitation_action in _ELICITATION_RANK]
    if not actions:
        return {}
    action = max(actions, key=_ELICITATION_RANK.__getitem__)
    specific: dict[str, Any] = {"action": action}
    if action == "accept":
        content = _first([(n, r) for n, r in answers if r.elicitation_action == "accept"], "elicitation_content")
        if content is not None:
            specific["content"] = dict(content)
    return specific


#: Result field -> the row flag saying whether the event renders it.
_RENDERED_BY = {
    "permission": ("permission", "decision"),
    "updated_input": ("rewrite", "decision"),
    "updated_permissions": ("decision",),
    "block": ("block",),
    "additional_context": ("context",),
    "context_tail": ("context",),
    "system_message": ("system_message",),
    "halt": ("halt",),
    "retry": ("retry",),
    "watch_paths": ("watch_paths",),
    "worktree_path": ("worktree_path",),
    "elicitation_action": ("elicitation",),
    "elicitation_content": ("elicitation",),
    "display_content": ("display",),
}


def dropped_fields(event_name: str, result: Result) -> list[str]:
    """Names of ``result`` fields that ``merge`` cannot render for ``event_name``.

    A field the event takes but whose value JSON cannot carry (a non-finite
    number) counts as dropped too.
    """
    spec = spec_for(event_name)
    dropped = []
    for name, flags in _RENDERED_BY.items():
        value = getattr(result, name)
        if value in (None, False, ""):
            continue
        shown = any(getattr(spec, flag) for flag in flags)
        if name == "permission" and spec.permission and not spec.decision:
            shown = value in spec.permissions
        if not shown or (name in _JSON_FIELDS and _valid(result, name) is None):
            dropped.append(name)
    return dropped


def result_problem(result: Result) -> str | None:
    """Why ``result`` cannot go into Claude Code's JSON answer, or None.

    attrs validates the text fields; these are the ones it does not, and one bad
    value would otherwise make the merge (or ``json.dumps``) fail and silence
    every other plugin's answer.
    """
    for name in ("block", "halt", "retry"):
        value = getattr(result, name)
        if value is not None and not isinstance(value, bool):
            return f"{name} must be a boolean, got {type(value).__name__}"
    for name, kind in (
        ("updated_input", dict),
        ("elicitation_content", dict),
        ("updated_permissions", list),
        ("watch_paths", list),
    ):
        value = getattr(result, name)
        if value is None:
            continue
        if not isinstance(value, kind):
            return f"{name} must be a {kind.__name__}, got {type(value).__name__}"
        if not _is_json(value):
            return f"{name} is not JSON (a non-finite number or a value JSON has no type for)"
    if result.watch_paths is not None and not all(isinstance(p, str) for p in result.watch_paths):
        return "watch_paths must hold strings"
    return None
