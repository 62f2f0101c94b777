"""The PRD a ralph loop works from: ``<project>/.omc/prd.json``. No I/O.

Format (the ralph convention)::

    {"project": "...", "userStories": [
        {"id": "US-001", "title": "...", "acceptanceCriteria": ["..."], "passes": false}]}

A story is done when ``passes`` is true or ``status`` is done/complete/completed/passed.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

PARTS = (".omc", "prd.json")
_DONE = ("done", "complete", "completed", "passed", "pass")
MAX_STORIES = 30
MAX_FIELD = 300


@frozen
class Story:
    id: str
    title: str
    criteria: tuple
    done: bool


def stories(data: Any) -> list:
    """The user stories in a parsed prd.json; [] when it has none."""
    raw = data.get("userStories") if isinstance(data, dict) else None
    found = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status") or "").lower()
        criteria = item.get("acceptanceCriteria")
        found.append(
            Story(
                id=str(item.get("id") or f"#{len(found) + 1}")[:40],
                title=str(item.get("title") or item.get("description") or "")[:MAX_FIELD],
                criteria=tuple(str(c)[:MAX_FIELD] for c in criteria[:20]) if isinstance(criteria, list) else (),
                done=item.get("passes") is True or status in _DONE,
            )
        )
    return found


def next_story(found: list) -> str | None:
    for story in found:
        if not story.done:
            return f"{story.id} {story.title}".strip()
    return None


def describe(found: list) -> str:
    """The PRD as the verifier reads it (untrusted project text: the caller masks it)."""
    if not found:
        return "No PRD found (.omc/prd.json): verify against the task as the user stated it."
    done = sum(1 for s in found if s.done)
    lines = [f"PRD (.omc/prd.json): {done}/{len(found)} stories marked done."]
    for story in found[:MAX_STORIES]:
        lines.append(f"- [{'x' if story.done else ' '}] {story.id}: {story.title}")
        lines.extend(f"    - {c}" for c in story.criteria)
    if len(found) > MAX_STORIES:
        lines.append(f"... and {len(found) - MAX_STORIES} more stories")
    return "\n".join(lines)
