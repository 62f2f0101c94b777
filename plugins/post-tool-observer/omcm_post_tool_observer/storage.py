"""Observer tables in the shared store: events, full-text index, embedding outbox, vectors.

The event and its embedding job are written in one transaction (an outbox:
the embedder works through the jobs later), so a crash can never leave an event that will not be embedded or a
job without its event. The FTS5 index is an external-content index over
``observer_events`` kept in step by triggers: one copy of the text on disk.
"""

from __future__ import annotations

import json
import time
from typing import Any

PLUGIN = "post-tool-observer"

MIGRATIONS = [
    """
    CREATE TABLE observer_events (
        id INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        event_type TEXT NOT NULL DEFAULT 'tool_observation',
        session_id TEXT,
        ts REAL NOT NULL,
        tool_name TEXT NOT NULL,
        tool_use_id TEXT,
        success INTEGER NOT NULL,
        duration_ms REAL,
        prompt_index INTEGER,
        tool_index INTEGER,
        file_path TEXT,
        command TEXT,
        output TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        bytes INTEGER NOT NULL
    );
    CREATE INDEX observer_events_session ON observer_events(session_id, ts);
    CREATE INDEX observer_events_ts ON observer_events(ts);
    CREATE INDEX observer_events_tool ON observer_events(tool_name, ts);
    CREATE VIRTUAL TABLE observer_fts USING fts5(
        tool_name, file_path, command, output,
        content='observer_events', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER observer_events_ai AFTER INSERT ON observer_events BEGIN
        INSERT INTO observer_fts(rowid, tool_name, file_path, command, output)
        VALUES (new.id, new.tool_name, new.file_path, new.command, new.output);
    END;
    CREATE TRIGGER observer_events_ad AFTER DELETE ON observer_events BEGIN
        INSERT INTO observer_fts(observer_fts, rowid, tool_name, file_path, command, output)
        VALUES ('delete', old.id, old.tool_name, old.file_path, old.command, old.output);
    END;
    CREATE TABLE observer_outbox (
        id INTEGER PRIMARY KEY,
        event_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL,
        updated REAL NOT NULL
    );
    CREATE INDEX observer_outbox_status ON observer_outbox(status, id);
    CREATE TABLE observer_vectors (
        event_id TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE TABLE observer_sessions (
        session_id TEXT PRIMARY KEY,
        prompt_index INTEGER NOT NULL DEFAULT 0,
        tool_index INTEGER NOT NULL DEFAULT 0,
        last_prompt_id TEXT
    );
    CREATE TABLE observer_starts (
        tool_use_id TEXT PRIMARY KEY,
        ts REAL NOT NULL
    );
    CREATE TABLE observer_meta (key TEXT PRIMARY KEY, value TEXT);
    """,
    # Weights for bm25 kept in the index itself, so ORDER BY rank (computed in C) uses them.
    "INSERT INTO observer_fts(observer_fts, rank) VALUES('rank', 'bm25(2.0, 3.0, 3.0, 1.0)')",
    # The error text of a failed call becomes searchable: a column of its own, and
    # the index rebuilt with it (an external-content index names its columns).
    """
    ALTER TABLE observer_events ADD COLUMN error TEXT;
    UPDATE observer_events SET error = json_extract(payload_json, '$.errorMessage');
    DROP TRIGGER observer_events_ai;
    DROP TRIGGER observer_events_ad;
    DROP TABLE observer_fts;
    CREATE VIRTUAL TABLE observer_fts USING fts5(
        tool_name, file_path, command, output, error,
        content='observer_events', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER observer_events_ai AFTER INSERT ON observer_events BEGIN
        INSERT INTO observer_fts(rowid, tool_name, file_path, command, output, error)
        VALUES (new.id, new.tool_name, new.file_path, new.command, new.output, new.error);
    END;
    CREATE TRIGGER observer_events_ad AFTER DELETE ON observer_events BEGIN
        INSERT INTO observer_fts(observer_fts, rowid, tool_name, file_path, command, output, error)
        VALUES ('delete', old.id, old.tool_name, old.file_path, old.command, old.output, old.error);
    END;
    INSERT INTO observer_fts(observer_fts) VALUES('rebuild');
    INSERT INTO observer_fts(observer_fts, rank) VALUES('rank', 'bm25(2.0, 3.0, 3.0, 1.0, 3.0)');
    """,
    # The project each call was made in, so a search (and Claude's MCP search) stays in its project.
    # Rows recorded before have none and show only with --all-projects.
    """
    ALTER TABLE observer_events ADD COLUMN project TEXT;
    CREATE INDEX observer_events_project ON observer_events(project, ts);
    """,
    # The masking rules' stamp (omcm_core.redact.rules_version) each row was masked under: search masks
    # again only rows masked under other rules. Rows from before have none, so they are masked again.
    "ALTER TABLE observer_events ADD COLUMN masked_with TEXT",
    # Semantic search's vector cache (embedder.vector_matrix) only appends rows past the last it read.
    # Whatever removes or changes a vector, by any path, gives the cache a new epoch so it is written
    # anew; a call removed takes its vector along, and a call whose text changes (masked again) loses
    # its vector and is queued to be embedded again. Triggers only: instant on a store of any size.
    """
    CREATE TRIGGER observer_vectors_ad AFTER DELETE ON observer_vectors BEGIN
        INSERT INTO observer_meta(key, value) VALUES('vectors_epoch', lower(hex(randomblob(8))))
        ON CONFLICT(key) DO UPDATE SET value = excluded.value;
    END;
    CREATE TRIGGER observer_vectors_au AFTER UPDATE ON observer_vectors BEGIN
        INSERT INTO observer_meta(key, value) VALUES('vectors_epoch', lower(hex(randomblob(8))))
        ON CONFLICT(key) DO UPDATE SET value = excluded.value;
    END;
    CREATE TRIGGER observer_events_vector_ad AFTER DELETE ON observer_events BEGIN
        DELETE FROM observer_vectors WHERE event_id = old.event_id;
    END;
    CREATE TRIGGER observer_events_text_au
    AFTER UPDATE OF tool_name, file_path, command, output, error ON observer_events BEGIN
        INSERT INTO observer_outbox(event_id, created, updated)
        SELECT new.event_id, (julianday('now') - 2440587.5) * 86400.0, (julianday('now') - 2440587.5) * 86400.0
        WHERE EXISTS (SELECT 1 FROM observer_vectors WHERE event_id = new.event_id)
        ON CONFLICT(event_id) DO UPDATE SET status = 'pending', attempts = 0, updated = excluded.updated;
        DELETE FROM observer_vectors WHERE event_id = new.event_id;
    END;
    """,
]


def ready(store) -> None:
    store.migrate(PLUGIN, MIGRATIONS)


def note_start(store, tool_use_id: str, started: float | None = None) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO observer_starts(tool_use_id, ts) VALUES(?, ?)",
            (tool_use_id, time.time() if started is None else started),
        )


def next_position(conn, session_id: str | None, prompt_id: str | None) -> tuple[int, int]:
    """(prompt index, tool index within the prompt) for a new observation of this session."""
    if not session_id:
        return 0, 0
    row = conn.execute(
        "SELECT prompt_index, tool_index, last_prompt_id FROM observer_sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    prompt, tool, last = row if row else (0, 0, None)
    if prompt_id and prompt_id != last:
        prompt, tool, last = prompt + 1, 0, prompt_id
    tool += 1
    conn.execute(
        "INSERT INTO observer_sessions(session_id, prompt_index, tool_index, last_prompt_id) VALUES(?, ?, ?, ?) "
        "ON CONFLICT(session_id) DO UPDATE SET prompt_index = excluded.prompt_index, "
        "tool_index = excluded.tool_index, last_prompt_id = excluded.last_prompt_id",
        (session_id, prompt, tool, last),
    )
    return prompt, tool


def new_prompt(store, session_id: str, prompt_id: str | None = None) -> None:
    """The user's next prompt; its ``prompt_id`` is remembered so its tool calls do not count it again."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO observer_sessions(session_id, prompt_index, tool_index, last_prompt_id) VALUES(?, 1, 0, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET prompt_index = prompt_index + 1, tool_index = 0, "
            "last_prompt_id = excluded.last_prompt_id",
            (session_id, prompt_id),
        )


def same_prompt(store, session_id: str, prompt_id: str) -> None:
    """A ``prompt_id`` that is not the user's (a task notification): its tool calls stay in the current prompt."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO observer_sessions(session_id, prompt_index, tool_index, last_prompt_id) VALUES(?, 0, 0, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET last_prompt_id = excluded.last_prompt_id",
            (session_id, prompt_id),
        )


def record(store, event, build, embed: bool, project: str | None = None, now: float | None = None) -> str | None:
    """Write one observation (and its outbox job) in one transaction; returns its event id.

    ``project`` is the project folder the call was made in (``ctx.project_dir``);
    ``now`` when the call was seen (its hook ran). None when a row for this
    ``tool_use_id`` is already stored: a call recorded from the transcript, after
    the process that answered its hook died with the work undone, is not stored twice.
    """
    import uuid  # here: `omcm search` imports this module and never makes an id

    from omcm_core.redact import prepare, rules_version

    prepare()  # building the observation masks: import masking's detectors before taking the write lock
    event_id = str(uuid.uuid4())
    now = time.time() if now is None else now
    # Masked outside the transaction (it is most of the work): the write lock is held only to write.
    obs = build(event, event.duration_ms, 0, 0)
    payload_fields = {k: v for k, v in obs.items() if k != "toolOutput"}
    meta = obs["metadata"]
    with store.transaction() as conn:
        if event.tool_use_id and _recorded(conn, event.session_id, event.tool_use_id):
            return None
        duration = event.duration_ms
        if duration is None and event.tool_use_id:
            row = conn.execute("SELECT ts FROM observer_starts WHERE tool_use_id = ?", (event.tool_use_id,)).fetchone()
            if row:
                duration = round((now - row[0]) * 1000, 1)
        if event.tool_use_id:
            conn.execute("DELETE FROM observer_starts WHERE tool_use_id = ?", (event.tool_use_id,))
        prompt_index, tool_index = next_position(conn, event.session_id, event.prompt_id)
        payload_fields.update(durationMs=duration, promptIndex=prompt_index, toolIndex=tool_index)
        payload = json.dumps(payload_fields, ensure_ascii=False, default=str)
        conn.execute(
            "INSERT INTO observer_events(event_id, session_id, ts, tool_name, tool_use_id, success, duration_ms, "
            "prompt_index, tool_index, file_path, command, output, payload_json, bytes, error, project, masked_with) "
            "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                event_id,
                event.session_id,
                now,
                event.tool_name,
                event.tool_use_id,
                int(event.succeeded),
                duration,
                prompt_index,
                tool_index,
                meta.get("filePath") or meta.get("url"),
                meta.get("command") or meta.get("pattern") or meta.get("query"),
                obs["toolOutput"],
                payload,
                len(payload) + len(obs["toolOutput"]),
                obs.get("errorMessage"),
                project,
                rules_version(),
            ),
        )
        if embed:
            conn.execute(
                "INSERT INTO observer_outbox(event_id, created, updated) VALUES(?, ?, ?)", (event_id, now, now)
            )
    return event_id


def _recorded(conn, session_id: str | None, tool_use_id: str) -> bool:
    # Through the (session_id, ts) index: a session's rows, not the whole table.
    return (
        conn.execute(
            "SELECT 1 FROM observer_events WHERE session_id IS ? AND tool_use_id = ? LIMIT 1", (session_id, tool_use_id)
        ).fetchone()
        is not None
    )


def pending_jobs(store) -> int:
    return store.query("SELECT count(*) FROM observer_outbox WHERE status = 'pending'")[0][0]


def get_meta(store, key: str) -> str | None:
    row = store.query("SELECT value FROM observer_meta WHERE key = ?", (key,))
    return row[0][0] if row else None


def set_meta(store, key: str, value: Any) -> None:
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO observer_meta(key, value) VALUES(?, ?)", (key, str(value)))
