"""Legacy migration: split an oversized memory.md, kept before rotation existed, by its date headers.

Sections start at ``## YYYY-MM-DD`` (or, without dates, at any ``## ``); a file
without headers becomes one archive. A section over the threshold is split by
lines. Sections are grouped into chunks under the threshold and **every** chunk
is archived, the last one too (memory.md then keeps its carry-over tail, so no
line is lost: only the archives hold the whole text).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from omcm_core.confined import read_confined_text, write_confined_atomic
from omcm_memory_rotation import index, layout

if TYPE_CHECKING:
    from omcm_memory_rotation.settings import Settings

_DATE = re.compile(r"^## (\d{4}-\d{2}-\d{2})")


def parse_sections(content: str) -> list[dict]:
    lines = content.split("\n")
    dated = any(_DATE.match(line) for line in lines)
    header = _DATE if dated else re.compile(r"^## ")
    sections: list[dict] = []
    current: dict | None = None
    for line in lines:
        match = header.match(line)
        if match:
            if current:
                sections.append(current)
            current = {"date": match.group(1) if dated else None, "lines": [line]}
        elif current:
            current["lines"].append(line)
        else:
            current = {"date": None, "lines": [line]}  # text before the first header
    if current:
        sections.append(current)
    return sections


def force_split(section: dict, threshold: int) -> list[dict]:
    parts, current, tokens = [], [], 0
    for line in section["lines"]:
        cost = layout.estimate_tokens(line + "\n")
        if current and tokens + cost > threshold:
            parts.append({"date": section["date"], "lines": current})
            current, tokens = [], 0
        current.append(line)
        tokens += cost
    if current:
        parts.append({"date": section["date"], "lines": current})
    return parts


def split(content: str, threshold: int) -> list[list[dict]]:
    sections = parse_sections(content)
    if len(sections) == 1 and not sections[0]["lines"][0].startswith("## "):
        return [sections]  # no headers at all: nothing to split on, so the whole file is one archive
    chunks, current, tokens = [], [], 0
    for section in sections:
        for part in force_split(section, threshold):
            cost = layout.estimate_tokens("\n".join(part["lines"]) + "\n")
            if current and tokens + cost > threshold:
                chunks.append(current)
                current, tokens = [], 0
            current.append(part)
            tokens += cost
    if current:
        chunks.append(current)
    return chunks


def migrate(folder: Path, settings: Settings, log) -> list[str]:
    """Split memory.md when it is over the threshold; returns the archives written."""
    memory = folder / layout.MEMORY_FILE
    from omcm_memory_rotation.rotation import acquire, release

    if layout.tokens_of_file(memory) < settings.threshold_tokens or not acquire(folder):
        return []
    try:
        from omcm_memory_rotation.rotation import MAX_MEMORY_BYTES

        content = read_confined_text(layout.root(folder), memory, max_bytes=MAX_MEMORY_BYTES, single_link=True)
        archives = []
        for chunk in split(content, settings.threshold_tokens):
            dates = [p["date"] for p in chunk if p["date"]]
            stamp = dates[-1].replace("-", "") + "_235959" if dates else time.strftime("%Y%m%d_%H%M%S")
            name = layout.archive_name(folder, stamp)
            text = "\n".join("\n".join(p["lines"]) for p in chunk).rstrip("\n") + "\n"
            write_confined_atomic(layout.root(folder), folder / name, text)
            archives.append((name, text))
        last_text = archives[-1][1]
        write_confined_atomic(layout.root(folder), memory, layout.tail_by_tokens(last_text, settings.carryover_tokens))
        for name, text in archives:
            index.add_archive(folder, name, layout.estimate_tokens(text), log)
        log.info("legacy_migrated", archives=len(archives))
        return [name for name, _ in archives]
    finally:
        release(folder)
