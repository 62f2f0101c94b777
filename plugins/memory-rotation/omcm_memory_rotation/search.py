"""`omcm memory search`: memory.md, then L3 summaries, L2 archives and (with --deep) L1 sessions, each hit with its source.

Files are read confined to the project (a planted symlink is refused and
logged) and every hit's text is masked before it is printed.
"""

from __future__ import annotations

import json
from pathlib import Path

from omcm_core.confined import list_confined, read_confined_text
from omcm_core.redact import mask
from omcm_memory_rotation import index, layout


def _text(folder: Path, path: Path) -> str:
    """A memory file; "" when missing or refused."""
    try:
        return read_confined_text(layout.root(folder), path)
    except OSError:
        return ""


def _lines(folder: Path, path: Path, query: str, source: str) -> list[dict]:
    hits = []
    for n, line in enumerate(_text(folder, path).split("\n"), start=1):
        if query in line.lower():
            hits.append({"source": source, "file": path.name, "line": n, "text": mask(line.strip())})
    return hits


def _summary_hits(folder: Path, entry: dict, q: str) -> list[dict]:
    try:
        summary = json.loads(_text(folder, folder / layout.summary_name(entry["file"])))
    except ValueError:
        return []
    if not isinstance(summary, dict):
        return []
    found = []
    for kind, key, fields in (
        ("theme", "themes", ("name", "summary")),
        ("decision", "keyDecisions", ("decision",)),
        ("issue", "issues", ("issue",)),
    ):
        for item in summary.get(key, []):
            if isinstance(item, dict) and q in " ".join(str(item.get(f, "")) for f in fields).lower():
                found.append({"type": kind, "text": str(item.get(fields[0], ""))})
    if q in str(summary.get("overallSummary", "")).lower():
        found.append({"type": "summary", "text": str(summary["overallSummary"])})
    return [
        {"source": "L3 summaries", "file": entry["file"], "type": h["type"], "text": mask(h["text"])[:200]}
        for h in found
    ]


def search(folder: Path, query: str, deep: bool, log) -> list[dict]:
    q = query.lower()
    tiers: list[dict] = _lines(folder, folder / layout.MEMORY_FILE, q, "memory.md")
    data = index.reconcile(folder, log)
    for entry in data["rotatedFiles"]:
        if entry.get("summaryGenerated"):
            tiers += _summary_hits(folder, entry, q)
    for name in list_confined(layout.root(folder), folder):
        if name.startswith(layout.ARCHIVE_PREFIX) and name.endswith(".md"):
            tiers += _lines(folder, folder / name, q, "L2 archives")
    if deep:
        for name in list_confined(layout.root(folder), folder / "sessions"):
            if name.endswith(".l1.jsonl") and q in _text(folder, folder / "sessions" / name).lower():
                tiers.append({"source": "L1 sessions", "file": name})
    return tiers
