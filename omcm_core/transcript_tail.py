"""The tool calls no hook reported, read incrementally from Claude Code's transcripts.

Claude Code checks a tool's input before it runs the tool, and the errors it
finds there ("File has not been read yet", "String to replace not found", input
validation errors) fire no hook at all. The transcript has them: a ``tool_use``
block (the input) and later a ``tool_result`` with ``is_error``, paired by id.

:func:`unreported_calls` reads only the bytes appended since the last call (at
most :data:`MAX_READ` per file per call; the rest waits for the next call),
parses each line once for every plugin, and hands each consumer (a plugin) the
calls it has not seen yet and that no hook reported, in transcript order. The
transcript is untrusted and may lag behind the hooks:

- a partial last line is left for the next call; a line longer than
  :data:`MAX_LINE` is skipped without being held in memory;
- a file that shrank, or was replaced (another inode, other first bytes), is
  read again from the start; ids already stored are not stored twice;
- a file first seen when it is already large is read from its last
  :data:`FIRST_WINDOW` bytes: old history is not worth a slow hook;
- a result younger than :data:`GRACE_S` is held back unless the caller says the
  session is settled (Stop, SessionEnd): its PostToolUse hook may still be
  running, and hooks that did fire win.

Inputs and results are masked before they are stored. Plugins reach this
through :meth:`omcm_core.context.Context.unreported_tool_calls`.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from omcm_core.redact import mask_head

SCHEMA = "omcm-core.transcripts"
MAX_READ = 1 << 20  # bytes per file per call
MAX_LINE = 512 << 10  # longer lines are skipped (an image pasted as base64, garbage)
FIRST_WINDOW = 8 << 20  # a file first seen at 2 GB is read from its last 8 MB
RESULT_CHARS = 4000  # stored per result, after masking
GRACE_S = 2.0
KEEP_S = 7 * 86400
MAX_SUBAGENT_FILES = 50

MIGRATIONS = [
    """
    CREATE TABLE transcript_files (
        path TEXT PRIMARY KEY,
        dev INTEGER, ino INTEGER,
        mark BLOB,  -- the 64 bytes before offset, to notice a rewritten file
        offset INTEGER NOT NULL DEFAULT 0,
        skipping INTEGER NOT NULL DEFAULT 0,
        updated REAL NOT NULL
    );
    CREATE TABLE transcript_uses (
        tool_use_id TEXT PRIMARY KEY, tool_name TEXT, input TEXT, ts REAL NOT NULL
    );
    CREATE INDEX transcript_uses_ts ON transcript_uses(ts);
    CREATE TABLE transcript_calls (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        tool_use_id TEXT NOT NULL UNIQUE,
        transcript TEXT, session_id TEXT, cwd TEXT, agent_id TEXT,
        tool_name TEXT, input TEXT, is_error INTEGER NOT NULL, result TEXT,
        written REAL NOT NULL,  -- the transcript's own time for the result: the grace period counts from it
        ts REAL NOT NULL        -- when it was read: retention counts from it
    );
    CREATE INDEX transcript_calls_ts ON transcript_calls(ts);
    CREATE TABLE transcript_reported (tool_use_id TEXT PRIMARY KEY, ts REAL NOT NULL);
    CREATE INDEX transcript_reported_ts ON transcript_reported(ts);
    CREATE TABLE transcript_cursors (consumer TEXT PRIMARY KEY, seq INTEGER NOT NULL);
    """
]


@attrs.frozen
class ToolCall:
    """One tool call found in a transcript, with its result. Input and result are masked."""

    tool_use_id: str
    tool_name: str
    tool_input: dict
    is_error: bool
    result: str
    session_id: str | None = None
    cwd: str | None = None
    agent_id: str | None = None
    transcript: str | None = None
    ts: float = 0.0

    def as_event(self):
        """The PostToolUse (or PostToolUseFailure) event Claude Code would have sent."""
        from omcm_core.records import PostToolEvent

        return PostToolEvent(
            hook_event_name="PostToolUseFailure" if self.is_error else "PostToolUse",
            session_id=self.session_id,
            transcript_path=self.transcript,
            cwd=self.cwd,
            agent_id=self.agent_id,
            tool_name=self.tool_name,
            tool_input=dict(self.tool_input),
            tool_use_id=self.tool_use_id,
            succeeded=not self.is_error,
            tool_response=None if self.is_error else self.result,
            error=self.result if self.is_error else None,
            extra={"omcm_source": "transcript"},
        )


def ready(store) -> None:
    store.migrate(SCHEMA, MIGRATIONS)


def note_reported(store, tool_use_id: str | None) -> None:
    """Record that a hook reported this call: it is never handed out as unreported."""
    if tool_use_id:
        ready(store)
        if store.query("SELECT 1 FROM transcript_reported WHERE tool_use_id = ?", (tool_use_id,)):
            return  # another plugin noted it in this call: no second write lock
        with store.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO transcript_reported(tool_use_id, ts) VALUES(?, ?)", (tool_use_id, time.time())
            )


def transcripts_of(event, settled: bool) -> list[str]:
    """The transcripts an event points at: the session's, a subagent's, and when settled its subagents'."""
    paths = [p for p in (event.transcript_path, getattr(event, "agent_transcript_path", None)) if p]
    if settled and event.transcript_path and event.transcript_path.endswith(".jsonl"):
        folder = os.path.join(event.transcript_path[: -len(".jsonl")], "subagents")
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))[:MAX_SUBAGENT_FILES]
        except OSError:
            names = []
        paths += [os.path.join(folder, n) for n in names]
    return list(dict.fromkeys(paths))


def unreported_calls(
    store, consumer: str, paths: Iterable[str], settled: bool = False, now: float | None = None
) -> list[ToolCall]:
    """Read what was appended to ``paths``; return the calls ``consumer`` has not seen and no hook reported."""
    ready(store)
    now = time.time() if now is None else now
    for path in paths:
        _ingest(store, path, now)
    return _hand_out(store, consumer, settled, now)


# -- reading --------------------------------------------------------------------
def _ingest(store, path: str, now: float) -> None:
    row = store.query("SELECT dev, ino, mark, offset, skipping FROM transcript_files WHERE path = ?", (path,))
    try:
        # O_NONBLOCK: a FIFO planted at the path must not hang the hook; O_NOFOLLOW: no link games.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        offset, skipping = _resume(fd, row, info)
        if offset >= info.st_size:
            if not row or row[0][3] != offset:
                _save_file(store, path, info, _mark(fd, offset), offset, skipping, now, [])
            return
        chunk = os.pread(fd, min(MAX_READ, info.st_size - offset), offset)
        lines, consumed, skipping = _complete_lines(chunk, skipping)
        mark = _mark(fd, offset + consumed)
    finally:
        os.close(fd)
    _save_file(store, path, info, mark, offset + consumed, skipping, now, _entries(lines))


def _mark(fd: int, offset: int) -> bytes:
    """The bytes just before ``offset``: an appended file still has them, a rewritten one rarely does."""
    return os.pread(fd, min(offset, 64), max(0, offset - 64))


def _resume(fd: int, row: Sequence[tuple], info: os.stat_result) -> tuple[int, bool]:
    """Where to go on reading: the stored offset, or the start when the file was truncated or replaced."""
    if row:
        dev, ino, mark, offset, skipping = row[0]
        if (
            (dev, ino) == (info.st_dev, info.st_ino)
            and offset <= info.st_size
            and _mark(fd, offset) == bytes(mark or b"")
        ):
            return offset, bool(skipping)
        return 0, False
    if info.st_size > FIRST_WINDOW:
        return info.st_size - FIRST_WINDOW, True  # mid-line: skip to the next newline
    return 0, False


def _complete_lines(chunk: bytes, skipping: bool) -> tuple[list[bytes], int, bool]:
    """Split a chunk into whole lines; returns them, the bytes consumed and whether a long line goes on."""
    start = 0
    if skipping:
        newline = chunk.find(b"\n")
        if newline < 0:
            return [], len(chunk), True
        start = newline + 1
    end = chunk.rfind(b"\n")
    if end < start:
        # No newline after start: a partial line. If it fills the whole read it is too long to keep.
        if len(chunk) - start >= MAX_READ // 2:
            return [], len(chunk), True
        return [], start, False
    lines = [line for line in chunk[start:end].split(b"\n") if 0 < len(line) <= MAX_LINE]
    return lines, end + 1, False


def _entries(lines: list[bytes]) -> list[dict]:
    entries = []
    for line in lines:
        if line[:1] != b"{":
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") in ("assistant", "user"):
            entries.append(entry)
    return entries


# -- storing ----------------------------------------------------------------------
def _save_file(store, path, info, mark, offset, skipping, now, entries: list[dict]) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO transcript_files(path, dev, ino, mark, offset, skipping, updated) VALUES(?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET dev = excluded.dev, ino = excluded.ino, mark = excluded.mark, "
            "offset = excluded.offset, skipping = excluded.skipping, updated = excluded.updated",
            (path, info.st_dev, info.st_ino, mark, offset, int(skipping), now),
        )
        for entry in entries:
            _store_entry(conn, entry, path, now)
        if entries:
            cutoff = now - KEEP_S
            for table in ("transcript_uses", "transcript_calls", "transcript_reported"):
                conn.execute(f"DELETE FROM {table} WHERE ts < ?", (cutoff,))


def _store_entry(conn, entry: dict, path: str, now: float) -> None:
    blocks = _blocks(entry)
    if entry.get("type") == "assistant":
        for block in blocks:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                given = block.get("input")
                tool_input = given if isinstance(given, dict) else {}
                conn.execute(
                    "INSERT OR IGNORE INTO transcript_uses(tool_use_id, tool_name, input, ts) VALUES(?, ?, ?, ?)",
                    (block["id"], str(block.get("name", ""))[:200], _masked_json(tool_input), now),
                )
        return
    for block in blocks:
        if block.get("type") != "tool_result" or not isinstance(block.get("tool_use_id"), str):
            continue
        use = conn.execute(
            "SELECT tool_name, input FROM transcript_uses WHERE tool_use_id = ?", (block["tool_use_id"],)
        ).fetchone()
        if use is None:
            continue  # its tool_use was before the part we read: nothing to pair it with
        conn.execute(
            "INSERT OR IGNORE INTO transcript_calls(tool_use_id, transcript, session_id, cwd, agent_id, tool_name, "
            "input, is_error, result, written, ts) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                block["tool_use_id"],
                path,
                _str(entry.get("sessionId")),
                _str(entry.get("cwd")),
                _str(entry.get("agentId")),
                use[0],
                use[1],
                int(block.get("is_error") is True),
                _masked_text(_result_text(block)),
                _timestamp(entry.get("timestamp"), now),
                now,
            ),
        )
        conn.execute("DELETE FROM transcript_uses WHERE tool_use_id = ?", (block["tool_use_id"],))


def _hand_out(store, consumer: str, settled: bool, now: float) -> list[ToolCall]:
    row = store.query("SELECT seq FROM transcript_cursors WHERE consumer = ?", (consumer,))
    ((last,),) = store.query("SELECT coalesce(max(seq), 0) FROM transcript_calls")
    if last <= (row[0][0] if row else 0):
        return []  # the common case: nothing new, no write lock taken
    with store.transaction() as conn:
        row = conn.execute("SELECT seq FROM transcript_cursors WHERE consumer = ?", (consumer,)).fetchone()
        cursor = row[0] if row else 0
        rows = conn.execute(
            "SELECT c.seq, c.tool_use_id, c.tool_name, c.input, c.is_error, c.result, c.session_id, c.cwd, "
            "c.agent_id, c.transcript, c.written, r.tool_use_id IS NOT NULL FROM transcript_calls c "
            "LEFT JOIN transcript_reported r ON r.tool_use_id = c.tool_use_id WHERE c.seq > ? ORDER BY c.seq LIMIT 500",
            (cursor,),
        ).fetchall()
        calls = []
        for seq, use_id, tool, tool_input, is_error, result, session, cwd, agent, path, ts, reported in rows:
            if not settled and ts > now - GRACE_S:
                break  # its hook may still be running: the next call decides
            cursor = seq
            if not reported:
                calls.append(
                    ToolCall(
                        use_id,
                        tool or "",
                        _loads(tool_input),
                        bool(is_error),
                        result or "",
                        session,
                        cwd,
                        agent,
                        path,
                        ts,
                    )
                )
        conn.execute(
            "INSERT INTO transcript_cursors(consumer, seq) VALUES(?, ?) "
            "ON CONFLICT(consumer) DO UPDATE SET seq = excluded.seq",
            (consumer, cursor),
        )
    return calls


# -- small parsers ------------------------------------------------------------------
def _blocks(entry: dict) -> list[dict]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _masked_text(text: str) -> str:
    """Masked, then cut (a secret across the cut is still recognised whole), without masking megabytes."""
    return mask_head(text, RESULT_CHARS)


def _masked_json(value: dict) -> str:
    """The tool's input as JSON, masked, each long value cut (the keys, such as file_path, stay usable)."""
    from omcm_core import redact

    value = redact.mask_structured(value)  # by key name: {"password": ...} whatever it looks like
    shown: dict[str, Any] = {}
    for key, item in list(value.items())[:50]:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
        masked = _masked_text(text)
        # A number, a flag or a small structure that masking left alone stays what it was.
        shown[str(key)[:100]] = item if not isinstance(item, str) and masked == text else masked
    return json.dumps(shown, ensure_ascii=False, default=str)


def _loads(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}  # cut while masking or storing: the input is lost, the call is not
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value[:500] if isinstance(value, str) else None


def _timestamp(value: Any, default: float) -> float:
    """``2026-02-10T21:55:11.345Z`` -> epoch seconds, without importing datetime on the hook path."""
    if not isinstance(value, str) or len(value) < 19 or value[4] != "-" or value[10] != "T":
        return default
    try:
        year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
        hour, minute, second = int(value[11:13]), int(value[14:16]), int(value[17:19])
    except ValueError:
        return default
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return default
    # Days from the civil date (Howard Hinnant's algorithm); transcripts write UTC.
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return float(days * 86400 + hour * 3600 + minute * 60 + second)
