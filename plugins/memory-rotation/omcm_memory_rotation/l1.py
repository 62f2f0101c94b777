"""L1: the session's raw transcript, kept as ``sessions/<date>_<session>.l1.jsonl``.

One JSON line per user or assistant message (role, text, timestamp), secrets
masked. Written by ``omcm memory write-l1`` in a detached process, because all
SessionEnd hooks share 1.5 s.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator

from omcm_core.files import atomic_write_text
from omcm_core.paths import safe_component
from omcm_core.redact import mask


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def messages(transcript: Path) -> Iterator[dict]:
    from omcm_core.transcripts import transcript_entries

    for entry in transcript_entries(transcript):
        if entry.get("type") not in ("user", "assistant"):
            continue
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        text = _text(message.get("content"))
        if text.strip():
            yield {"role": message.get("role", entry["type"]), "content": mask(text), "ts": entry.get("timestamp")}


def write(folder: Path, transcript: Path, session_id: str) -> Path:
    lines = [json.dumps(m, ensure_ascii=False) for m in messages(transcript)]
    name = f"{time.strftime('%Y-%m-%d_%H%M')}_{safe_component(session_id)[:40]}.l1.jsonl"
    target = folder / "sessions" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, "\n".join(lines) + ("\n" if lines else ""), mode=0o600)
    return target
