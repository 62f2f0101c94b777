"""The error knowledge base in the shared store: what failed, and what fixed it.

Tables (plugin ``pre-tool-guide``):

- ``guide_events``: one ``tool_error`` event per failed call (prefixed because
  the store is shared).
- ``error_kb``: one row per distinct normalized error and file (the same
  message about two files is two lessons), with use count, last use, and once
  known its ``resolution`` JSON
  ``{"resolvedBy", "tool", "toolSequence"}``.
- ``guide_pending``: per session and tool, the last unresolved error, what it
  is about (``subject``: programs, module, file) and the tools used since,
  until the same tool succeeds in a related call (one sharing a subject key).
"""

from __future__ import annotations

import json
import time
from typing import Any

PLUGIN = "pre-tool-guide"
MAX_SEQUENCE = 20

MIGRATIONS = [
    """
    CREATE TABLE guide_events (
        id INTEGER PRIMARY KEY,
        type TEXT NOT NULL,
        ts REAL NOT NULL,
        session_id TEXT,
        tool TEXT,
        file_key TEXT,
        data TEXT NOT NULL
    );
    CREATE INDEX guide_events_session ON guide_events(session_id, type, tool, ts);
    CREATE TABLE error_kb (
        id INTEGER PRIMARY KEY,
        ts REAL NOT NULL,
        error_normalized TEXT NOT NULL,
        error_raw TEXT NOT NULL,
        tool TEXT,
        file_key TEXT NOT NULL DEFAULT '',
        file_path TEXT,
        resolution TEXT,
        use_count INTEGER NOT NULL DEFAULT 1,
        last_used REAL NOT NULL
    );
    CREATE UNIQUE INDEX error_kb_error_file ON error_kb(error_normalized, file_key);
    CREATE INDEX error_kb_file ON error_kb(file_key, last_used);
    CREATE TABLE guide_pending (
        session_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        error_normalized TEXT NOT NULL,
        file_key TEXT NOT NULL DEFAULT '',
        sequence TEXT NOT NULL DEFAULT '[]',
        ts REAL NOT NULL,
        PRIMARY KEY (session_id, tool)
    );
    """,
    # Files read or written in a session: Claude Code refuses an Edit of a file the session has not read.
    """
    CREATE TABLE guide_seen_files (
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        ts REAL NOT NULL,
        PRIMARY KEY (session_id, path)
    );
    CREATE INDEX guide_seen_files_ts ON guide_seen_files(ts);
    """,
    # What a pending error is about (normalize.subject): only a related success resolves it.
    "ALTER TABLE guide_pending ADD COLUMN subject TEXT NOT NULL DEFAULT '[]';",
]
SEEN_KEEP_S = 7 * 86400


def ready(store) -> None:
    store.migrate(PLUGIN, MIGRATIONS)


def record_failure(
    store,
    session_id: str | None,
    tool: str,
    raw: str,
    normalized: str,
    path: str | None,
    key: str | None,
    command: str | None = None,
    subject: list[str] | None = None,
) -> None:
    now = time.time()
    data = json.dumps(
        {"tool": tool, "error": normalized, "raw": raw, "file": path, "command": command}, ensure_ascii=False
    )
    with store.transaction() as conn:
        _extend_sequences(conn, session_id, tool)
        conn.execute(
            "INSERT INTO guide_events(type, ts, session_id, tool, file_key, data) VALUES('tool_error', ?, ?, ?, ?, ?)",
            (now, session_id, tool, key, data),
        )
        conn.execute(
            "INSERT INTO error_kb(ts, error_normalized, error_raw, tool, file_key, file_path, last_used) "
            "VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(error_normalized, file_key) DO UPDATE SET "
            "use_count = use_count + 1, last_used = excluded.last_used, error_raw = excluded.error_raw, "
            "file_path = coalesce(excluded.file_path, file_path)",
            (now, normalized, raw, tool, key or "", path, now),
        )
        if session_id:
            conn.execute(
                "INSERT INTO guide_pending(session_id, tool, error_normalized, file_key, sequence, ts, subject) "
                "VALUES(?, ?, ?, ?, json_array(?), ?, ?) ON CONFLICT(session_id, tool) DO UPDATE SET "
                "error_normalized = excluded.error_normalized, file_key = excluded.file_key, "
                "sequence = excluded.sequence, ts = excluded.ts, subject = excluded.subject",
                (session_id, tool, normalized, key or "", tool, now, json.dumps(subject or [])),
            )


def record_success(
    store, session_id: str | None, tool: str, resolved_by: str, subject: list[str] | None = None
) -> tuple[dict, str, str] | None:
    """Note a successful call; if it resolves a pending error of this session, store the resolution.

    Only a related call resolves (``subject`` shares a key with the error's, see
    ``normalize.related``); an unrelated success leaves the error pending.
    Returns (resolution, normalized error, file key) of the error it resolved, else None.
    """
    from omcm_pre_tool_guide.normalize import related

    if not session_id:
        return None
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM guide_pending WHERE session_id = ? LIMIT 1", (session_id,)).fetchone() is None:
            return None  # the common case: nothing pending, nothing written
        _extend_sequences(conn, session_id, tool)
        row = conn.execute(
            "SELECT error_normalized, file_key, sequence, subject FROM guide_pending WHERE session_id = ? AND tool = ?",
            (session_id, tool),
        ).fetchone()
        if row is None or not related(_keys(row[3]), subject or []):
            return None
        resolution = {"resolvedBy": resolved_by, "tool": tool, "toolSequence": json.loads(row[2])}
        conn.execute(
            "UPDATE error_kb SET resolution = ?, last_used = ? WHERE error_normalized = ? AND file_key = ?",
            (json.dumps(resolution, ensure_ascii=False), time.time(), row[0], row[1]),
        )
        conn.execute("DELETE FROM guide_pending WHERE session_id = ? AND tool = ?", (session_id, tool))
    return resolution, row[0], row[1]


def _keys(text: str) -> list[str]:
    try:
        keys = json.loads(text)
    except (TypeError, ValueError):
        return []
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []


def _extend_sequences(conn, session_id: str | None, tool: str) -> None:
    if session_id:
        conn.execute(
            "UPDATE guide_pending SET sequence = json_insert(sequence, '$[#]', ?) "
            "WHERE session_id = ? AND json_array_length(sequence) < ?",
            (tool, session_id, MAX_SEQUENCE),
        )


def errors_for_file(store, key: str, path: str | None, limit: int = 2) -> list[tuple[str, Any]]:
    """Up to ``limit`` resolved errors about this file, the same path first, most recent first.

    Each row is (the error as it was, masked; its resolution): normalized text is for matching only.
    """
    return store.query(
        "SELECT error_raw, resolution FROM error_kb WHERE file_key = ? AND resolution IS NOT NULL "
        "ORDER BY (file_path = ?) DESC, last_used DESC LIMIT ?",
        (key, path, limit),
    )


def note_seen(store, session_id: str | None, path: str | None) -> None:
    """Remember that this session read or wrote ``path``."""
    if session_id and path:
        now = time.time()
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO guide_seen_files(session_id, path, ts) VALUES(?, ?, ?) "
                "ON CONFLICT(session_id, path) DO UPDATE SET ts = excluded.ts",
                (session_id, path, now),
            )
            if int(now) % 97 == 0:  # now and then, not on every call
                conn.execute("DELETE FROM guide_seen_files WHERE ts < ?", (now - SEEN_KEEP_S,))


def seen(store, session_id: str | None, path: str) -> bool:
    return bool(
        session_id
        and store.query("SELECT 1 FROM guide_seen_files WHERE session_id = ? AND path = ?", (session_id, path))
    )


def unread_file_lessons(store, tool: str, signatures: tuple[str, ...], limit: int = 1) -> list[tuple[str, Any]]:
    """Resolved lessons of ``tool`` failing on a file the session had not read, about any file."""
    if not signatures:
        return []
    where = " OR ".join("error_normalized LIKE ?" for _ in signatures)
    return store.query(
        f"SELECT error_raw, resolution FROM error_kb WHERE tool = ? AND resolution IS NOT NULL AND ({where}) "
        "ORDER BY last_used DESC LIMIT ?",
        (tool, *(f"%{s}%" for s in signatures), limit),
    )


def last_bash_failure(store, session_id: str) -> tuple[str, str | None] | None:
    """The session's last Bash error: (normalized error, the command that failed, masked), or None."""
    row = store.query(
        "SELECT json_extract(data, '$.error'), json_extract(data, '$.command') FROM guide_events "
        "WHERE session_id = ? AND type = 'tool_error' AND tool = 'Bash' ORDER BY ts DESC LIMIT 1",
        (session_id,),
    )
    return (row[0][0], row[0][1]) if row and row[0][0] is not None else None


def last_bash_error(store, session_id: str) -> tuple[str, Any, str | None] | None:
    """The session's last Bash error (as it was, masked), if the knowledge base knows how it was resolved.

    Returns (error, resolution JSON, the command that failed, masked; None for events stored before it was kept).
    """
    row = store.query(
        "SELECT json_extract(data, '$.error'), json_extract(data, '$.command') FROM guide_events "
        "WHERE session_id = ? AND type = 'tool_error' AND tool = 'Bash' ORDER BY ts DESC LIMIT 1",
        (session_id,),
    )
    if not row or row[0][0] is None:
        return None
    match = store.query(
        "SELECT error_raw, resolution FROM error_kb WHERE error_normalized = ? AND resolution IS NOT NULL "
        "ORDER BY last_used DESC LIMIT 1",
        (row[0][0],),
    )
    return (match[0][0], match[0][1], row[0][1]) if match else None
