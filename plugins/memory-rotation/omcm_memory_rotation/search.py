"""`omcm memory search`: the four tiers in the seed's order, each hit with its source."""

from __future__ import annotations

import json
from pathlib import Path

from omcm_memory_rotation import index, layout


def _lines(path: Path, query: str, source: str) -> list[dict]:
    hits = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), start=1):
        if query in line.lower():
            hits.append({"source": source, "file": path.name, "line": n, "text": line.strip()})
    return hits


def search(folder: Path, query: str, deep: bool, log) -> list[dict]:
    q = query.lower()
    tiers: list[dict] = []
    memory = folder / layout.MEMORY_FILE
    if memory.exists():
        tiers += _lines(memory, q, "memory.md")
    data = index.reconcile(folder, log)
    for entry in data["rotatedFiles"]:
        summary_path = folder / layout.summary_name(entry["file"])
        if not entry.get("summaryGenerated") or not summary_path.exists():
            continue
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        for theme in summary.get("themes", []):
            if q in f"{theme.get('name', '')} {theme.get('summary', '')}".lower():
                tiers.append({"source": "L3 summaries", "file": entry["file"], "type": "theme", "text": theme.get("name", "")})
        for decision in summary.get("keyDecisions", []):
            if q in str(decision.get("decision", "")).lower():
                tiers.append({"source": "L3 summaries", "file": entry["file"], "type": "decision", "text": decision["decision"]})
        for issue in summary.get("issues", []):
            if q in str(issue.get("issue", "")).lower():
                tiers.append({"source": "L3 summaries", "file": entry["file"], "type": "issue", "text": issue["issue"]})
        if q in str(summary.get("overallSummary", "")).lower():
            tiers.append({"source": "L3 summaries", "file": entry["file"], "type": "summary", "text": summary["overallSummary"][:200]})
    for archive in sorted(folder.glob("memory_*.md")):
        tiers += _lines(archive, q, "L2 archives")
    if deep:
        for l1 in sorted((folder / "sessions").glob("*.l1.jsonl")):
            if q in l1.read_text(encoding="utf-8", errors="replace").lower():
                tiers.append({"source": "L1 sessions", "file": l1.name})
    return tiers
