"""Validate and store an L3 summary (what the memory-summarizer agent returns)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omcm_core.confined import UnsafePathError, stat_confined, write_confined_atomic
from omcm_memory_rotation import index, layout

LIMIT = 10


class SummaryError(ValueError):
    pass


def validate(data: Any) -> dict:
    """The L3 shape the memory-summarizer agent writes: themes, keyDecisions, issues (at most 10 each), overallSummary."""
    if not isinstance(data, dict):
        raise SummaryError("the summary must be a JSON object")
    if not isinstance(data.get("overallSummary"), str) or not data["overallSummary"].strip():
        raise SummaryError("overallSummary must be a non-empty string")
    rules = {"themes": ("name", "summary"), "keyDecisions": ("decision",), "issues": ("issue",)}
    for key, required in rules.items():
        items = data.get(key, [])
        if not isinstance(items, list):
            raise SummaryError(f"{key} must be a list")
        if len(items) > LIMIT:
            raise SummaryError(f"{key} has {len(items)} items; at most {LIMIT}")
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in required):
                raise SummaryError(f"{key}[{i}] needs string fields {', '.join(required)}")
            if key == "issues" and item.get("status") not in (None, "resolved", "open"):
                raise SummaryError(f"issues[{i}].status must be resolved or open")
    return data


def save(folder: Path, archive: str, raw: str, log) -> Path:
    """Store the summary for ``archive`` and mark it generated; raises SummaryError."""
    try:
        found = "/" not in archive and "\\" not in archive and stat_confined(layout.root(folder), folder / archive)
    except UnsafePathError:
        found = None
    if not found:
        raise SummaryError(f"no archive named {archive} in {folder}")
    try:
        data = validate(json.loads(raw))
    except (ValueError, SummaryError) as exc:
        write_confined_atomic(layout.root(folder), folder / (archive[:-3] + ".summary.raw.txt"), raw)
        layout.error_log(folder, "summary-error.log", f"{archive}: {exc}")
        raise SummaryError(str(exc)) from None
    target = folder / layout.summary_name(archive)
    write_confined_atomic(layout.root(folder), target, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    index.mark_summarized(folder, archive, log)
    return target
