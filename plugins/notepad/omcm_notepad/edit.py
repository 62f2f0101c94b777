"""Changes omcm makes to a parsed notepad; everything else keeps its bytes.

- ``set_priority`` replaces the Priority Context text (its comment lines stay);
- ``add_entry`` appends a ``### YYYY-MM-DD HH:MM`` entry to Working Memory;
- ``prune`` removes Working Memory entries older than a cutoff;
- ``cap`` drops the oldest Working Memory entries (the given one last) until
  the file fits. Nothing else is ever dropped: text omcm did not write (the
  title, MANUAL, unknown sections, entries whose stamp is not a real date) is
  the user's, so a file that is over the cap even without entries stays over.

A missing section is created where it belongs (Priority Context, then Working
Memory, then MANUAL); the other sections do not move.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from omcm_notepad.document import (
    COMMENTS,
    MANUAL,
    PRIORITY,
    STAMP,
    TITLE,
    WORKING,
    Block,
    Document,
    Entry,
    is_comment,
    parse,
)

ORDER = (PRIORITY, WORKING, MANUAL)


def new_document() -> Document:
    return parse(TITLE + "".join(f"\n## {name}\n{COMMENTS[name]}\n" for name in ORDER))


def _lines(text: str, newline: str) -> list:
    return [line + newline for line in text.split("\n")]


def _last_list(block: Block) -> list:
    """The list holding the block's last line (entries and tail only in Working Memory)."""
    for candidate in (block.tail, block.entries[-1].lines if block.entries else [], block.lines):
        if candidate:
            return candidate
    return block.lines


def _end_with_blank(block: Block, newline: str) -> None:
    text = block.render()
    if not text:
        return
    last = _last_list(block)
    if not text.endswith("\n"):
        last[-1] += newline
    if not block.render().endswith(("\n\n", "\n\r\n")):
        (block.tail if block.name == WORKING else last).append(newline)


def ensure_section(doc: Document, name: str) -> Block:
    """The managed section ``name``, created at its place when missing."""
    block = doc.section(name)
    if block is not None:
        return block
    later = ORDER[ORDER.index(name) + 1 :]
    index = next((i for i, b in enumerate(doc.blocks) if b.name in later), len(doc.blocks))
    nl = doc.newline
    block = Block(name, [f"## {name}{nl}", f"{COMMENTS[name]}{nl}"])
    if name == WORKING:
        block.tail.append(nl)
    elif index < len(doc.blocks):
        block.lines.append(nl)
    if index > 0:
        _end_with_blank(doc.blocks[index - 1], nl)
    doc.blocks.insert(index, block)
    return block


def set_priority(doc: Document, text: str) -> None:
    """Replace what Priority Context says with ``text``; its leading comment lines stay."""
    block = ensure_section(doc, PRIORITY)
    keep = 1
    while keep < len(block.lines) and is_comment(block.lines[keep]):
        keep += 1
    nl = doc.newline
    kept = [line if line.endswith("\n") else line + nl for line in block.lines[:keep]]
    block.lines = kept + (_lines(text, nl) if text else []) + [nl]


def add_entry(doc: Document, when: datetime, text: str) -> Entry:
    """Append an entry stamped ``when`` (minutes) to Working Memory; returns it."""
    block = ensure_section(doc, WORKING)
    nl = doc.newline
    previous = block.entries[-1].lines if block.entries else block.lines
    if not previous[-1].endswith("\n"):
        previous[-1] += nl
    if block.entries and previous[-1].strip():
        previous.append(nl)  # a blank line between entries
    stamp = when.strftime(STAMP)
    entry = Entry([f"### {stamp}{nl}"] + _lines(text, nl), datetime.strptime(stamp, STAMP))
    block.entries.append(entry)
    if not block.tail:
        block.tail.append(nl)
    return entry


def prune(doc: Document, cutoff: datetime) -> int:
    """Remove Working Memory entries stamped before ``cutoff``; returns how many."""
    block = doc.section(WORKING)
    if block is None:
        return 0
    before = len(block.entries)
    block.entries = [e for e in block.entries if e.when is None or e.when >= cutoff]
    return before - len(block.entries)


def size(doc: Document) -> int:
    return len(doc.render().encode("utf-8", "surrogateescape"))


def cap(doc: Document, max_bytes: int, keep_last: Sequence[Entry] = ()) -> list:
    """Drop the oldest dated entries (those in ``keep_last`` last) until the file fits; returns them."""
    block = doc.section(WORKING)
    dropped: list = []
    if block is None or size(doc) <= max_bytes:
        return dropped
    dated = sorted((e for e in block.entries if e.when is not None and e not in keep_last), key=lambda e: e.when)
    for entry in dated + list(keep_last):
        if size(doc) <= max_bytes:
            break
        block.entries.remove(entry)
        dropped.append(entry)
    return dropped


def recent(doc: Document, count: int, cutoff: datetime) -> list:
    """The newest ``count`` entries that are not older than ``cutoff``, oldest first."""
    block = doc.section(WORKING)
    if block is None or count <= 0:
        return []
    live = [e for e in block.entries if e.when is None or e.when >= cutoff]
    return live[-count:]
