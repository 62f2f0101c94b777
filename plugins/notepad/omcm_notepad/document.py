"""notepad.md as a list of blocks that renders back to the exact bytes it was parsed from.

A line that is exactly ``## Priority Context``, ``## Working Memory`` or
``## MANUAL`` (any case, surrounding spaces allowed) starts that section; any
other ``## `` line starts an unknown section. Text before the first section,
unknown sections, repeated section headers, MANUAL and everything after it
(a code sample in MANUAL may show a section header) are kept verbatim and
never changed. Inside Working Memory a line ``### YYYY-MM-DD HH:MM`` starts an
entry. Text is decoded with ``surrogateescape`` so that bytes that are not
UTF-8 survive too; ``render(parse(x)) == x`` for every ``x``.
"""

from __future__ import annotations

import re
from datetime import datetime

import attrs

PRIORITY, WORKING, MANUAL = "Priority Context", "Working Memory", "MANUAL"
_SECTION = re.compile(r"^\ufeff?[ \t]*##[ \t]+(.*?)[ \t]*$")
_ENTRY = re.compile(r"^###[ \t]+(\d{4}-\d{2}-\d{2} \d{2}:\d{2})[ \t]*$")
_COMMENT = re.compile(r"^[ \t]*<!--.*-->[ \t]*$")
STAMP = "%Y-%m-%d %H:%M"

COMMENTS = {
    PRIORITY: "<!-- ALWAYS loaded. Keep under 500 chars. -->",
    WORKING: "<!-- Session notes. Auto-pruned after 7 days. -->",
    MANUAL: "<!-- User content. Never touched by omcm. -->",
}
TITLE = "# Notepad\n<!-- Managed by omcm (omcm notepad show). Edits anywhere are kept; MANUAL is never touched. -->\n"


@attrs.define(eq=False)  # two entries with the same text are still two entries
class Entry:
    """A Working Memory entry: its ``### stamp`` line and every line up to the next entry."""

    lines: list
    when: datetime | None


@attrs.define
class Block:
    """A section (``name`` None for text before the first section and unknown sections).

    ``entries`` is only used for the managed Working Memory section; ``tail``
    holds its trailing blank lines so that new entries go before them.
    """

    name: str | None
    lines: list
    entries: list = attrs.Factory(list)
    tail: list = attrs.Factory(list)

    def render(self) -> str:
        return "".join(self.lines) + "".join("".join(e.lines) for e in self.entries) + "".join(self.tail)


@attrs.define
class Document:
    blocks: list
    newline: str = "\n"

    def render(self) -> str:
        return "".join(b.render() for b in self.blocks)

    def section(self, name: str) -> Block | None:
        return next((b for b in self.blocks if b.name == name), None)


def _name_of(line: str) -> str | None:
    match = _SECTION.match(line.rstrip("\r\n"))
    if not match:
        return None
    title = match.group(1)
    for name in (PRIORITY, WORKING, MANUAL):
        if title.lower() == name.lower():
            return name
    return "?"


def _stamp(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, STAMP)
    except ValueError:
        return None


def _split_entries(block: Block) -> None:
    body = block.lines[1:]
    end = len(body)
    while end and not body[end - 1].strip():
        end -= 1
    body, block.tail = body[:end], body[end:]
    block.lines = block.lines[:1]
    for line in body:
        match = _ENTRY.match(line.rstrip("\r\n"))
        if match:
            block.entries.append(Entry([line], _stamp(match.group(1))))
        elif block.entries:
            block.entries[-1].lines.append(line)
        else:
            block.lines.append(line)  # the section's comment or hand-written text


def parse(text: str) -> Document:
    """Blocks of ``text``; the first of each managed section is the one omcm manages."""
    first = text.split("\n", 1)[0]
    doc = Document([Block(None, [])], "\r\n" if first.endswith("\r") and "\n" in text else "\n")
    seen = set()
    for line in text.splitlines(keepends=True):
        name = _name_of(line)
        if name is not None:
            # After MANUAL everything is the user's (a code sample there may show a header).
            managed = name != "?" and name not in seen and MANUAL not in seen
            seen.add(name)
            doc.blocks.append(Block(name if managed else None, [line]))
        else:
            doc.blocks[-1].lines.append(line)
    for block in doc.blocks:
        if block.name == WORKING:
            _split_entries(block)
    return doc


def is_comment(line: str) -> bool:
    return bool(_COMMENT.match(line.rstrip("\r\n")))


def text_of(lines: list) -> str:
    """Lines without HTML comment lines, stripped: what the section says."""
    return "".join(line for line in lines if not is_comment(line)).strip()


def priority_text(doc: Document) -> str:
    block = doc.section(PRIORITY)
    return text_of(block.lines[1:]) if block else ""


def entry_body(entry: Entry) -> str:
    return "".join(entry.lines[1:]).strip()
