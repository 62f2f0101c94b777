"""Session start context, in this order and capped in size:

1. the unreflected tail of the last L1 session (what the last session said at
   its end that memory.md does not contain);
2. the latest L3 overallSummary;
3. the last 50 lines of memory.md;
4. the pending-summaries notice, which re-triggers each pending summary.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from omcm_core.confined import list_confined, open_confined, read_confined_text
from omcm_core.redact import mask, mask_head
from omcm_core.transcripts import read_jsonl
from omcm_memory_rotation import index, layout

MAX_CHARS = 8_000
TAIL_LINES = 50
L1_TAIL_BYTES = 4_000_000  # the last session's L1 may be 32 MB; its end is what counts


def unreflected_l1(folder: Path, memory_text: str) -> list[str]:
    sessions = folder / "sessions"
    files = [n for n in list_confined(layout.root(folder), sessions) if n.endswith(".l1.jsonl")]
    if not files:
        return []
    try:  # confined (no symlink, one hard link), then the shared JSONL reader over the file's tail
        with os.fdopen(open_confined(layout.root(folder), sessions / files[-1], single_link=True), "rb") as fh:
            entries = list(read_jsonl(fh, max_bytes=L1_TAIL_BYTES))[-20:]
    except OSError:
        return []
    out = []
    for entry in entries:
        text = entry.get("content") if entry.get("role") == "assistant" else None
        if isinstance(text, str) and len(text) > 50 and text[:50] not in memory_text:
            out.append(mask(text)[:200])  # mask, then cut
    return out


def latest_summary(folder: Path, data: dict) -> tuple[dict, str] | None:
    for entry in reversed(data["rotatedFiles"]):
        if entry.get("summaryGenerated"):
            try:
                summary = json.loads(
                    read_confined_text(layout.root(folder), folder / layout.summary_name(entry["file"]))
                )
                return entry, str(summary["overallSummary"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return None


def _read(folder: Path, path: Path, limit: int = 4_000_000) -> str:
    """A file of the memory folder; "" when missing or refused (a planted symlink is logged)."""
    try:
        return read_confined_text(
            layout.root(folder), path, limit=limit, single_link=True
        )  # a hard link can point anywhere
    except OSError:
        return ""


def context(folder: Path, log) -> str | None:
    """What session start tells Claude, as one text (the body, then the notice)."""
    body, notice = parts(folder, log)
    return "\n---\n".join(t for t in (body, notice) if t) or None


#: Pending summaries named in the notice at most (each line re-triggers one).
MAX_PENDING_NAMED = 20


def parts(folder: Path, log) -> tuple[str | None, str | None]:
    """(the memory, capped; the pending-summaries notice), secrets masked (memory.md is project text, not vetted).

    The notice asks Claude to act, so it is apart: the plugin gives it as its
    answer's ``context_tail``, which no budget cuts (the memory is cut instead).
    """
    memory_text = _read(folder, folder / layout.MEMORY_FILE)
    data = index.reconcile(folder, log)
    parts = []
    l1 = unreflected_l1(folder, memory_text)
    if l1:
        parts.append("## Previous session's end (not yet in memory.md)\n" + "\n".join(f"- {t}" for t in l1))
    found = latest_summary(folder, data)
    if found:
        entry, summary = found
        span = entry.get("dateRange") or {}
        dates = f" ({span.get('first')} ~ {span.get('last')})" if span else ""
        parts.append(f"## Earlier memory summary{dates}\n{summary}")
    tail = memory_text.rstrip("\n").split("\n")[-TAIL_LINES:] if memory_text.strip() else []
    if tail:
        parts.append("## Recent memory (.claude/memory/memory.md)\n" + "\n".join(tail))
    pending = index.pending(data)
    notice = None
    if pending:
        lines = [f"[MEMORY_KEEPER] {len(pending)} summaries not generated yet:"]
        lines += [f"{layout.TRIGGER} file={name}" for name in pending[:MAX_PENDING_NAMED]]
        if len(pending) > MAX_PENDING_NAMED:
            lines.append(f"(and {len(pending) - MAX_PENDING_NAMED} more, listed by `omcm memory status`)")
        notice = mask("\n".join(lines))
    room = MAX_CHARS - (len(notice) + 5 if notice else 0)  # the whole stays within MAX_CHARS
    from omcm_core.quoting import inert

    # Recalled text: its control tags must not act again.
    return (cap(inert("\n---\n".join(parts)), room) if parts else None), notice


def cap(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` masked and within ``limit`` characters (masked before the cut, see redact.mask_head)."""
    if len(text) <= limit:
        return mask(text)
    note = f"\n[memory-rotation: {len(text) - limit + 80} characters cut to stay within {limit}]"
    return mask_head(text, limit - len(note)) + note
