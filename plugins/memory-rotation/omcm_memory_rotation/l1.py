"""L1: the session's raw transcript, kept as ``sessions/<date>_<session>.l1.jsonl``.

One JSON line per user or assistant message (role, text, timestamp), secrets
masked (a message longer than ``MAX_MESSAGE`` keeps its head and tail). Written by ``omcm memory write-l1`` in a detached process, because all
SessionEnd hooks share 1.5 s.

The transcript path comes from the hook's input, so reading it is bounded: only
its last ``MAX_SCAN`` bytes are read, a line longer than ``MAX_LINE`` is
skipped in pieces rather than held whole, and the L1 keeps the newest
``MAX_OUTPUT`` bytes of messages (a 2 GB sparse file of NULs once took 4 GB).
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omcm_core.confined import write_confined_atomic
from omcm_core.redact import mask_cut
from omcm_core.transcripts import claude_entry
from omcm_memory_rotation import layout

MAX_SCAN = 256 * 1024 * 1024
MAX_LINE = 8 * 1024 * 1024
MAX_OUTPUT = 32 * 1024 * 1024
MAX_MESSAGE = 64 * 1024  # characters kept of one message (masked head and tail): masking 8 MB took seconds
_NAME_OK = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")


def session_name(session_id: str) -> str:
    """The session part of an L1 file name: the id itself when short and plain, else prefix + hash.

    Two long ids with one prefix used to be cut to the same 40 characters and
    share a file; the hash keeps them apart. Idempotent, so the hook may pass
    the name rather than a raw id (which may hold NUL or start with ``-``).
    """
    if _NAME_OK.match(session_id):
        return session_id
    clean = re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:32].lstrip(".-") or "id"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{clean}-{digest}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def bounded_lines(transcript: Path) -> Iterator[bytes]:
    """Whole lines of the transcript's last MAX_SCAN bytes; over-long lines are dropped unread."""
    # O_NONBLOCK and a regular-file check: a FIFO or device at the path must not hang the writer.
    fd = os.open(transcript, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{transcript} is not a regular file")
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_SCAN:
            fh.seek(size - MAX_SCAN)
            fh.readline(MAX_LINE)  # the rest of a line cut by the seek
        while True:
            line = fh.readline(MAX_LINE)
            if not line:
                return
            if line.endswith(b"\n") or len(line) < MAX_LINE:
                yield line
                continue
            while line and not line.endswith(b"\n"):  # too long: skip to its end in bounded pieces
                line = fh.readline(MAX_LINE)


def messages(transcript: Path) -> Iterator[dict]:
    for raw in bounded_lines(transcript):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        entry = claude_entry(entry)  # another agent's line (Qwen Code) in Claude's shape
        if entry.get("type") not in ("user", "assistant"):
            continue
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        text = _text(message.get("content"))
        if text.strip():
            yield {
                "role": message.get("role", entry["type"]),
                "content": mask_cut(text, MAX_MESSAGE),
                "ts": entry.get("timestamp"),
            }


def write(folder: Path, transcript: Path, session_id: str) -> Path:
    kept: collections.deque = collections.deque()
    total = 0
    for message in messages(transcript):
        line = json.dumps(message, ensure_ascii=False) + "\n"
        kept.append(line)
        total += len(line)
        while total > MAX_OUTPUT and len(kept) > 1:
            total -= len(kept.popleft())
    name = f"{time.strftime('%Y-%m-%d_%H%M')}_{session_name(session_id)}.l1.jsonl"
    return write_confined_atomic(layout.root(folder), folder / "sessions" / name, "".join(kept))
