"""The tool calls no hook reported, read incrementally from Claude Code's transcripts.

Claude Code checks a tool's input before it runs the tool, and the errors it
finds there ("File has not been read yet", "String to replace not found", input
validation errors) fire no hook at all. The transcript has them: a ``tool_use``
block (the input) and later a ``tool_result`` with ``is_error``, paired by id.

:func:`unreported_calls` reads only the bytes appended since the last call (at
most a megabyte per file per call; the rest waits for the next call),
parses each line once for every plugin, and hands each consumer (a plugin) the
calls it has not seen yet and that no hook reported, in transcript order. The
transcript is untrusted and may lag behind the hooks:

- a partial last line is left for the next call; a line longer than
  512 KB is skipped without being held in memory;
- a file that shrank, or was replaced (another inode, other first bytes), is
  read again from the start; ids already stored are not stored twice;
- a file first seen when it is already large is read from its last
  8 MB: old history is not worth a slow hook;
- a result younger than :data:`GRACE_S` is held back unless the caller says the
  session is settled (Stop, SessionEnd): its PostToolUse hook may still be
  running, and hooks that did fire win.

Inputs and results are masked before they are stored. Plugins reach this
through :meth:`omcm_core.context.Context.unreported_tool_calls`. This module
owns the tables and hands each consumer its calls; reading the files and
storing what they hold (and the limits above) is
:mod:`omcm_core._runtime.transcript_reading`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable

import attrs

from omcm_core._runtime.transcript_reading import ingest

SCHEMA = "omcm-core.transcripts"
GRACE_S = 2.0
MAX_SUBAGENT_FILES = 50

MIGRATIONS = [
    """
    CREATE TABLE transcript_files (
        path TEXT PRIMARY KEY,
        dev INTEGER, ino INTEGER,
        mark BLOB,  -- the 64 bytes before offset, to notice a rewritten file (hashed since version 2)
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
    """,
    lambda conn: _hash_raw_marks(conn),
]


def _hash_raw_marks(conn) -> None:
    """Version 2: marks were the transcript's raw last 64 bytes (a token sat there in clear); now their hash.

    Hashing the old bytes gives what the reader now computes for the same place,
    so a file goes on being read where it was.
    """
    from omcm_core._runtime.transcript_reading import MARK_PREFIX, mark_of

    rows = conn.execute("SELECT path, mark FROM transcript_files WHERE mark IS NOT NULL").fetchall()
    for path, mark in rows:
        if not bytes(mark).startswith(MARK_PREFIX):
            conn.execute("UPDATE transcript_files SET mark = ? WHERE path = ?", (mark_of(bytes(mark)), path))


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
        ingest(store, path, now)
    return _hand_out(store, consumer, settled, now)


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


def _loads(text: str | None) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}  # cut while masking or storing: the input is lost, the call is not
    return value if isinstance(value, dict) else {}
