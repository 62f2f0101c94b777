"""Validate and store an L3 summary (what the memory-summarizer agent returns)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omcm_core.confined import UnsafePathError, stat_confined, write_confined_atomic
from omcm_memory_rotation import index, layout

LIMIT = 10

#: The JSON an L3 summary is, as ``omcm memory summary --help`` and docs/plugins/memory-rotation.md show it.
SHAPE = """\
{
  "themes": [                         required list, at most 10 (may be empty)
    {"name": "topic", "summary": "3-5 sentences", "sessions": ["2026-01-10"]}
  ],                                  name, summary: strings; sessions: optional dates
  "keyDecisions": [                   required list, at most 10
    {"decision": "what", "reason": "why", "date": "2026-01-11"}
  ],                                  decision: string; reason, date: optional strings
  "issues": [                         required list, at most 10
    {"issue": "what went wrong", "status": "resolved", "date": "2026-01-12"}
  ],                                  issue: string; status: optional, resolved or open
  "overallSummary": "10-15 sentences", required, not empty
  "dateRange": {"first": "2026-01-10", "last": "2026-01-12"},   optional
  "sectionCount": 45                  optional, a whole number
}"""

MISSING = object()


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: Each list's item fields: name -> (required, check, what is expected).
ITEMS: dict[str, dict[str, tuple[bool, Callable[[Any], bool], str]]] = {
    "themes": {
        "name": (True, _is_str, "a string"),
        "summary": (True, _is_str, "a string"),
        "sessions": (False, _is_str_list, "a list of strings"),
    },
    "keyDecisions": {
        "decision": (True, _is_str, "a string"),
        "reason": (False, _is_str, "a string"),
        "date": (False, _is_str, "a string"),
    },
    "issues": {
        "issue": (True, _is_str, "a string"),
        "status": (False, lambda v: v in ("resolved", "open"), '"resolved" or "open"'),
        "date": (False, _is_str, "a string"),
    },
}


class SummaryError(ValueError):
    pass


class ShapeError(SummaryError):
    """The text is not JSON of the summary's shape."""


def _got(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _item_problems(key: str, items: Any) -> list[str]:
    if items is MISSING:
        return [f"{key}: missing (a list of at most {LIMIT} objects; [] when there is nothing)"]
    if not isinstance(items, list):
        return [f"{key}: expected a list, got {_got(items)}"]
    found = [f"{key}: {len(items)} items, at most {LIMIT}"] if len(items) > LIMIT else []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            found.append(f"{key}[{i}]: expected an object, got {_got(item)}")
            continue
        for name, (required, check, expected) in ITEMS[key].items():
            value = item.get(name, MISSING)
            if value is MISSING:
                found += [f"{key}[{i}].{name}: missing ({expected})"] if required else []
            elif not check(value):
                found.append(f"{key}[{i}].{name}: expected {expected}, got {_got(value)}")
    return found


def problems(data: Any) -> list[str]:
    """Every way ``data`` differs from :data:`SHAPE`, all at once (one run of the agent should fix them all)."""
    if not isinstance(data, dict):
        return [f"the summary must be a JSON object, got {_got(data)}"]
    found = []
    text = data.get("overallSummary", MISSING)
    if text is MISSING:
        found.append("overallSummary: missing (a non-empty string)")
    elif not isinstance(text, str) or not text.strip():
        found.append(f"overallSummary: expected a non-empty string, got {_got(text)}")
    for key in ITEMS:
        found += _item_problems(key, data.get(key, MISSING))
    span = data.get("dateRange", MISSING)
    if span is not MISSING and not (isinstance(span, dict) and all(_is_str(span.get(k)) for k in ("first", "last"))):
        found.append(f'dateRange: expected {{"first": "YYYY-MM-DD", "last": "YYYY-MM-DD"}}, got {_got(span)}')
    count = data.get("sectionCount", MISSING)
    if count is not MISSING and (not isinstance(count, int) or isinstance(count, bool)):
        found.append(f"sectionCount: expected a whole number, got {_got(count)}")
    return found


def validate(data: Any) -> dict:
    """``data`` when it has the L3 shape (:data:`SHAPE`); else SummaryError listing every problem."""
    found = problems(data)
    if found:
        head = "1 problem" if len(found) == 1 else f"{len(found)} problems"
        raise ShapeError(f"{head} in the summary:\n" + "\n".join(f"  {p}" for p in found))
    return data


def _parse(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ShapeError(
            f"the summary is not JSON ({exc}): give the JSON object alone, without a Markdown fence"
        ) from None


def save(folder: Path, archive: str, raw: str, log) -> Path:
    """Store the summary for ``archive`` and mark it generated; raises SummaryError."""
    try:
        found = "/" not in archive and "\\" not in archive and stat_confined(layout.root(folder), folder / archive)
    except UnsafePathError:
        found = None
    if not found:
        raise SummaryError(f"no archive named {archive} in {folder}")
    try:
        data = validate(_parse(raw))
    except SummaryError as exc:
        write_confined_atomic(layout.root(folder), folder / (archive[:-3] + ".summary.raw.txt"), raw)
        layout.error_log(
            folder, "summary-error.log", f"{archive}: " + str(exc).replace(":\n  ", ": ").replace("\n  ", "; ")
        )
        raise
    target = folder / layout.summary_name(archive)
    write_confined_atomic(layout.root(folder), target, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    index.mark_summarized(folder, archive, log)
    return target
