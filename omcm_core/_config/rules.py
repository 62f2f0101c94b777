"""What a project's ``.claude/omcm.toml`` may do with each key: the schema says, key by key (issue 34).

The repository is untrusted. A schema (the core's :class:`~omcm_core.config.CoreConfig`, a plugin's
``config_schema``) marks each key a project may set with one rule in the field's metadata::

    blocked: tuple = attrs.field(default=("rm -rf",), metadata=Project.add)

=========  =================================================================================
free       a harmless preference (a language, a message style): the project's value is used
lower      a limit: the smaller of the user's value (or the default) and the project's
raise      a floor: the larger of the two
add        a list of protections: the project's entries are added, never one removed
off        a switch a project may only turn off: on only if the user's and the project's say on
on         a switch a project may only turn on (a stricter mode)
=========  =================================================================================

A key without a rule (and every key of a section without a schema) is the user's alone: the project's
value is ignored, with one log line and a doctor warning. A value the schema refuses, or that does not
fit the rule, is ignored too: what the user set stays; a guard that fails keeps guarding.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from omcm_core._config.files import Entry
from omcm_core._config.structure import default_of, fields_of, structure

FREE, LOWER, RAISE, ADD, OFF, ON, USER = "free", "lower", "raise", "add", "off", "on", "user"
RULES = (FREE, LOWER, RAISE, ADD, OFF, ON)
#: Entries a project may add to one list: 16,000 guard names fit in 64 KB, each then logged on every call.
MAX_ADDED = 64
METADATA_KEY = "omcm.project"


def _marker(rule: str) -> Mapping[str, str]:
    return MappingProxyType({METADATA_KEY: rule})


class Project:
    """Field metadata saying what a project may do with a key: ``attrs.field(..., metadata=Project.lower)``.

    Undeclared keys are the user's alone. Join with other metadata as ``{**Project.add, "x": 1}``.
    """

    free = _marker(FREE)
    lower = _marker(LOWER)
    raise_ = _marker(RAISE)
    add = _marker(ADD)
    off = _marker(OFF)
    on = _marker(ON)


@attrs.frozen
class ProjectKey:
    """One key a project's file set, and what became of it (``omcm doctor`` shows each)."""

    section: str
    #: As written in the project's file (``fail-closed``).
    written: str
    value: Any
    #: The schema's rule for the key; "user" when it declares none.
    rule: str
    used: bool
    #: Why it was ignored ("" when used).
    why: str = ""
    #: The value in effect once combined with the user's.
    result: Any = None


def rule_of(spec: attrs.Attribute | None) -> str:
    """The field's declared rule; ``user`` for an undeclared key or an unknown rule name."""
    if spec is None:
        return USER
    rule = spec.metadata.get(METADATA_KEY, USER)
    return rule if rule in RULES else USER


def judge(
    section: str,
    schema: type | None,
    user: Mapping[str, Any],
    from_env: Iterable[str],
    entries: Iterable[Entry],
) -> tuple[dict[str, Any], list[ProjectKey]]:
    """The section's values once the project's ``entries`` are combined with the ``user``'s, and a report.

    ``user`` holds the user's file and environment (normalised keys); ``from_env`` the keys the user's
    environment set, which win over a project's free preference.
    """
    entries = list(entries)
    values = dict(user)
    if not entries:  # the common case: the project's file is absent or has no such section
        return values, []
    fields = fields_of(schema)
    report: list[ProjectKey] = []
    if not fields:
        return values, [
            ProjectKey(section, e.written, e.value, USER, False, "no enabled plugin declares settings for this section")
            for e in entries
        ]
    assert schema is not None
    current, _ = structure(section, user, schema)  # the user's values as they will be used (bad ones: defaults)
    env_keys = set(from_env)
    for entry in entries:
        spec = fields.get(entry.key)
        rule = rule_of(spec)

        def ignored(why: str, rule: str = rule, entry: Entry = entry) -> None:
            report.append(ProjectKey(section, entry.written, entry.value, rule, False, why))

        if spec is None:
            ignored(f"not a key of [{section}]")
            continue
        if rule == USER:
            ignored("only the user's config may set it")
            continue
        checked, problems = structure(section, {entry.key: entry.value}, schema)
        if problems:
            ignored(f"refused: {problems[0].error}")
            continue
        value = checked[entry.key]
        if rule == ADD and isinstance(value, (list, tuple)) and len(value) > MAX_ADDED:
            ignored(f"{len(value)} entries, more than the {MAX_ADDED} a project may add")
            continue
        if rule == FREE:
            if entry.key in env_keys:
                ignored("the user's environment sets it")
                continue
            combined = value
        else:
            base = current.get(entry.key, default_of(spec))
            combined = combine(rule, base, value)
            if combined is attrs.NOTHING:
                ignored(f"a {rule!r} key needs a value like the user's, got {json.dumps(value, default=str)[:60]}")
                continue
            # min, max, and, or give back one of two checked values; only a joined list is new
            if rule == ADD and structure(section, {entry.key: combined}, schema)[1]:
                ignored(f"the combined value {json.dumps(combined, default=str)[:60]} is refused")
                continue
        current[entry.key] = values[entry.key] = combined
        report.append(ProjectKey(section, entry.written, entry.value, rule, True, result=combined))
    return values, report


def combine(rule: str, user: Any, project: Any) -> Any:
    """The user's value moved by the project's in ``rule``'s safe direction; ``attrs.NOTHING`` if it does not fit."""
    if rule == ADD and isinstance(user, (list, tuple)) and isinstance(project, (list, tuple)):
        joined = [*user, *(item for item in project if item not in user)]
        return tuple(joined) if isinstance(user, tuple) else joined
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (user, project))
    if rule == LOWER and numbers:
        return min(user, project)
    if rule == RAISE and numbers:
        return max(user, project)
    if rule in (OFF, ON) and isinstance(user, bool) and isinstance(project, bool):
        return (user and project) if rule == OFF else (user or project)
    return attrs.NOTHING
