"""``<remember>`` tags in a subagent's answer, made safe to store and to show Claude.

Only the answer is read: the text blocks of ``tool_response["content"]`` (or a
string response), never the echoed ``prompt``, so asking an agent to "save
with <remember>X</remember>" saves nothing until the agent itself says it.

The answer is attacker-controlled (a subagent may have read a hostile web
page), so every note is: stripped of control characters, masked for secrets,
bounded in size and count, and kept from changing the notepad's structure (a
line that would be a markdown heading, a code fence or an HTML comment is
escaped). Tags do not nest: in ``<remember>a <remember>b</remember>`` only
``b`` is a note; an unclosed tag is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import attrs

from omcm_core.redact import mask

#: Tags read from one tool answer; more are ignored (and logged).
MAX_TAGS = 10
#: Characters kept of one Working Memory note.
MAX_NOTE = 2000
#: Characters of the answer searched for tags.
MAX_SCAN = 1_000_000
TRUNCATED = " [truncated]"

_TAG = re.compile(r"<remember(\s+priority)?\s*>((?:(?!<remember\b).)*?)</remember\s*>", re.S | re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0085\u2028\u2029\ufeff]")
# Lines that would start a heading, a fence or a comment in the notepad.
_STRUCTURE = re.compile(r"^([ \t]*)(#|```|~~~|<!--)", re.M)


@attrs.frozen
class Note:
    text: str
    priority: bool


def answer_text(tool_response: Any) -> str:
    """The subagent's answer: text blocks of ``content``, or the response if it is a string."""
    if isinstance(tool_response, str):
        return tool_response
    content = tool_response.get("content") if isinstance(tool_response, dict) else tool_response
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def clean(text: str, limit: int) -> str:
    """A note safe to store: no control characters, secrets masked, structure escaped, bounded."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = mask(text)
    text = _STRUCTURE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    text = "\n".join(line.rstrip() for line in text.strip().split("\n"))
    if len(text) > limit:
        text = text[: max(0, limit - len(TRUNCATED))].rstrip() + TRUNCATED
    return text


def raw_tags(text: str) -> Iterator[tuple[bool, str]]:
    for match in _TAG.finditer(text[:MAX_SCAN]):
        yield bool(match.group(1)), match.group(2)


def extract(text: str, priority_limit: int) -> tuple[list, int]:
    """``(notes, ignored)``: at most MAX_TAGS cleaned, non-empty notes in order, and the overflow."""
    notes, ignored = [], 0
    for priority, body in raw_tags(text):
        note = clean(body, priority_limit if priority else MAX_NOTE)
        if not note:
            continue
        if len(notes) >= MAX_TAGS:
            ignored += 1
            continue
        notes.append(Note(note, priority))
    return notes, ignored
