"""Which tool calls start ``omcm hook`` at all: settings.json ``matcher`` patterns from what plugins declare.

Claude Code spawns a hook process for every tool call an entry matches; a
script in Code Mode makes thousands. A plugin may declare which tools its tool
hooks want with a module-level ``handles_tools``:

- absent or ``None``: every tool (the default);
- a sequence of tool names or JavaScript-regex patterns (``"Bash"``,
  ``"mcp__github__.*"``): for each of its tool hooks;
- a mapping from hook name (``"pre_tool"``, ``"post_tool"``,
  ``"permission_request"``, ``"permission_denied"``) to either of the above;
  a hook left out wants every tool.

``omcm install`` registers, per tool event, the union over the plugins that
implement its hook; when any of them wants every tool, no matcher (all). A
declaration that is not one of these forms counts as "every tool": a mistake
never makes a guard miss a call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: Events whose ``matcher`` is compared with the tool name (docs: "Matcher patterns").
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied")
ATTRIBUTE = "handles_tools"
_PLAIN = re.compile(r"[A-Za-z0-9_]+")  # the client compares these exactly ("Edit|Write")
_JS_SPECIAL = re.compile(r"[\\^$.*+?()\[\]{}|/]")


def declared(value: Any, hook: str) -> tuple[str, ...] | None:
    """The patterns a plugin's ``handles_tools`` declares for ``hook``; None for every tool."""
    if isinstance(value, Mapping):
        value = value.get(hook)
    if value is None or isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return None  # every tool, or a single string where a list belongs: read as "all", never as "B|a|s|h"
    items = tuple(value)
    if not items or not all(isinstance(item, str) and item.strip() and item.strip() != "*" for item in items):
        return None
    return tuple(item.strip() for item in items)


def union(declarations: Iterable[tuple[str, ...] | None]) -> str | None:
    """One matcher for every plugin's patterns; None (match all) when any plugin wants every tool or none is given.

    Plain tool names only: ``Bash|Edit`` (exact). Otherwise one anchored regex, the
    names escaped: the client tests other matchers as unanchored JavaScript
    regexes, where ``Edit`` alone would also match ``NotebookEdit``.
    """
    patterns: set[str] = set()
    seen = False
    for patterns_of_one in declarations:
        if patterns_of_one is None:
            return None
        seen = True
        patterns.update(patterns_of_one)
    if not seen or not patterns:
        return None
    ordered = sorted(patterns)
    if all(_PLAIN.fullmatch(p) for p in ordered):
        return "|".join(ordered)
    parts = [p if _is_pattern(p) else _JS_SPECIAL.sub(lambda m: "\\" + m.group(0), p) for p in ordered]
    return "^(?:" + "|".join(parts) + ")$"


def _is_pattern(item: str) -> bool:
    """A regex, not a name: it uses a character no tool name has (names are letters, digits, ``_``, ``-``)."""
    return not re.fullmatch(r"[A-Za-z0-9_\-]+", item)


def for_events(events: Iterable[str], hook_of: Mapping[str, str], plugins_by_hook: Mapping[str, list[Any]]) -> dict:
    """``{event: matcher}`` for the tool events among ``events`` that get one (others match every call).

    :param hook_of: event name to its hook name (``EVENTS[name].hook``).
    :param plugins_by_hook: hook name to the plugin objects (modules) implementing it.
    """
    found = {}
    for event in events:
        if event not in TOOL_EVENTS or event not in hook_of:
            continue
        hook = hook_of[event]
        matcher = union(declared(getattr(p, ATTRIBUTE, None), hook) for p in plugins_by_hook.get(hook, []))
        if matcher is not None:
            found[event] = matcher
    return found


def from_manager(manager: Any, events: Iterable[str]) -> dict:
    """:func:`for_events` for the enabled plugins of a loaded ``Manager``."""
    from omcm_core.events import EVENTS

    events = list(events)
    hooks = {EVENTS[e].hook for e in events if e in EVENTS}
    by_hook = {hook: [manager.pm.get_plugin(name) for name, _f, _a in manager.implementations(hook)] for hook in hooks}
    return for_events(events, {e: EVENTS[e].hook for e in events if e in EVENTS}, by_hook)


def place(groups: list, handler: dict, matcher: str | None) -> bool:
    """Set (or clear) the ``matcher`` of the group holding ``handler``, if it holds nothing else; True if changed."""
    for group in groups:
        if not isinstance(group, dict) or not any(h is handler for h in group.get("hooks", [])):
            continue
        current = group.get("matcher")
        if len(group.get("hooks", [])) != 1 or current == matcher or (matcher is None and current in ("", "*")):
            return False
        if matcher is None:
            group.pop("matcher", None)
        else:
            group["matcher"] = matcher
        return True
    return False
