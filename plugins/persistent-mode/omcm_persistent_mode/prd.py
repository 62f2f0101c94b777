"""The PRD a ralph loop works from: ``<project>/.omc/prd.json``. No I/O.

Format (the ralph convention)::

    {"project": "...", "userStories": [
        {"id": "US-001", "title": "...", "acceptanceCriteria": ["..."], "passes": false}]}

A story is done when ``passes`` is true or ``status`` is done/complete/completed/passed.
"""

from __future__ import annotations

import re
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


#: The user asks for a PRD: "/ralph-loop --prd TASK", or the task names one ("with a PRD", "write a PRD").
_ASKED = re.compile(r"(?:^|\s)--prd(?:\s|$)|\bprd\b", re.I)
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")
#: Claude's report that a story is done: <story-done>US-001</story-done>, or "US-001: done" on a line of its own.
_TAG = re.compile(r"<story-done>\s*([\w.#-]{1,40})\s*</story-done>", re.I)
_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?(?:\[x\]\s*)?([A-Z]{1,10}-\d{1,5})\b[^\n]{0,80}?(?::|—|-|–)\s*(?:done|passes|passed|complete|completed)\b",
    re.I | re.M,
)


def asked(task: str) -> bool:
    return bool(_ASKED.search(task or ""))


def without_flag(task: str) -> str:
    return re.sub(r"(?:^|\s)--prd(?=\s|$)", " ", task or "").strip()


def from_task(task: str, prompt: str = "") -> dict:
    """A PRD for ``task``: one story per item listed in ``prompt`` ("- ...", "1. ..."), else one for the whole task."""
    items = [m.group(1) for m in map(_ITEM.match, (prompt or "").splitlines()) if m][:MAX_STORIES]
    titles = items or [re.sub(r"\s+", " ", task or "the task").strip()[:MAX_FIELD]]
    first_line = re.split(r"\s+(?:[-*•]|\d+[.)])\s+", (task or "the task").strip())[0] or "the task"
    return {
        "project": first_line[:MAX_FIELD],
        "createdBy": "omcm persistent-mode",
        "userStories": [
            {"id": f"US-{n:03d}", "title": title[:MAX_FIELD], "acceptanceCriteria": [], "passes": False}
            for n, title in enumerate(titles, 1)
        ],
    }


def reported_done(message: str | None) -> set:
    """Story ids Claude's message reports as done."""
    text = message or ""
    return {m.group(1).upper() for m in _TAG.finditer(text)} | {m.group(1).upper() for m in _LINE.finditer(text)}


def mark_done(data: Any, ids: set) -> list:
    """Set ``passes: true`` on the open stories of ``data`` (changed in place) whose id is in ``ids``; their ids."""
    raw = data.get("userStories") if isinstance(data, dict) else None
    changed = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and str(item.get("id") or "").upper() in ids and item.get("passes") is not True:
            item["passes"] = True
            changed.append(str(item["id"]))
    return changed


def open_stories(found: list) -> list:
    return [s for s in found if not s.done]
