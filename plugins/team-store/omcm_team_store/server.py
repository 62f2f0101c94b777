"""Talking to the team's PostgreSQL: connect, ship outbox rows, fetch changed entries, prune.

Shipping is idempotent: each machine's outbox rows carry a sequence number
that only grows (SQLite AUTOINCREMENT, and a fresh local store gets a fresh
origin id), and the server keeps the last one it applied per origin, in the
same transaction as the entries. A batch cut off by a crash or a lost network
is shipped again and its applied rows are skipped: nothing is counted twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from omcm_team_store import schema

CONNECT_TIMEOUT_S = 5
_PASSWORD = re.compile(r"(password\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)
_URL_SECRET = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")


def mask_url(text: str) -> str:
    """``text`` with any password in a URL or a conninfo string replaced: safe for logs and output."""
    return _PASSWORD.sub(r"\1***", _URL_SECRET.sub(r"\1***@", text or ""))


class TeamServerError(Exception):
    """The server could not be reached or refused: the message is masked."""


DRIVER_MISSING = "the PostgreSQL driver psycopg is not installed: omcm plugins install 'psycopg[binary]'"


def connect(url: str, timeout: float = CONNECT_TIMEOUT_S):
    try:
        import psycopg
    except ImportError:
        raise TeamServerError(DRIVER_MISSING) from None

    try:
        return psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True, application_name="omcm")
    except Exception as exc:
        raise TeamServerError(mask_url(f"{type(exc).__name__}: {exc}".replace(url, mask_url(url)))) from None


def salt(conn) -> str | None:
    row = conn.execute("SELECT value FROM omcm_team_meta WHERE name = 'project_salt'").fetchone()
    return row[0] if row else None


def ship(conn, origin: str, rows: Sequence[dict[str, Any]]) -> int:
    """Apply ``rows`` (in seq order) once each, as this connection's role; returns how many were new.

    All or nothing, through the server's ``omcm_team_ship``: it stamps the author from ``session_user``,
    keeps each author's entries theirs, drops rows over the size limit and refuses a member over quota.
    """
    if not rows:
        return 0
    batch = [
        {
            "seq": r["seq"],
            "kind": r["kind"],
            "project": r["project"],
            "key": r["key"],
            "op": r["op"],
            "count": r["count"],
            "payload": json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"],
        }
        for r in rows
    ]
    (applied,) = conn.execute("SELECT omcm_team_ship(%s, %s::jsonb)", (origin, json.dumps(batch))).fetchone()
    return int(applied)


MAX_ROW_BYTES = 8192  # what a sync accepts of one entry: the server operator is not trusted to bound it
# An entry too big comes back without its payload (NULL), so it never crosses the network nor fills memory.
COLUMNS = (
    "id, kind, left(project, 64), CASE WHEN octet_length(key) > 1000 THEN NULL ELSE key END, "
    f"CASE WHEN octet_length(payload::text) > {MAX_ROW_BYTES} THEN NULL ELSE payload::text END, "
    "count, deleted, author, review, server_seq"
)


def changes(conn, after: int, limit: int) -> list[tuple]:
    """Entries changed after server sequence ``after``, oldest first (tombstones included): :data:`COLUMNS`."""
    return conn.execute(
        f"SELECT {COLUMNS} FROM omcm_team_items WHERE server_seq > %s ORDER BY server_seq LIMIT %s",
        (after, limit),
    ).fetchall()


def setting(conn, name: str) -> str | None:
    row = conn.execute("SELECT value FROM omcm_team_meta WHERE name = %s", (name,)).fetchone()
    return row[0] if row else None


def purged_through(conn) -> int:
    """Tombstones up to this sequence were removed: a reader behind it must start over."""
    row = conn.execute("SELECT value FROM omcm_team_meta WHERE name = 'purged_through'").fetchone()
    return int(row[0]) if row else 0


def head(conn) -> int:
    return conn.execute("SELECT coalesce(max(server_seq), 0) FROM omcm_team_items").fetchone()[0]


def prune(conn, older_than_days: float, tombstone_days: float = 30.0) -> tuple[int, int]:
    """Retention: entries untouched for ``older_than_days`` become tombstones; old tombstones are removed.

    Returns (entries deleted, tombstones removed).
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (schema.WRITE_LOCK,))
        deleted = conn.execute(
            "UPDATE omcm_team_items SET deleted = true, payload = '{}'::jsonb, count = 0, "
            "server_seq = nextval('omcm_team_seq'), updated_at = now() "
            "WHERE NOT deleted AND updated_at < now() - make_interval(secs => %s)",
            (older_than_days * 86400,),
        ).rowcount
        gone = conn.execute(
            "DELETE FROM omcm_team_items WHERE deleted AND updated_at < now() - make_interval(secs => %s) "
            "RETURNING server_seq",
            (tombstone_days * 86400,),
        ).fetchall()
        if gone:
            conn.execute(
                "INSERT INTO omcm_team_meta(name, value) VALUES ('purged_through', %s) "
                "ON CONFLICT (name) DO UPDATE SET value = greatest(omcm_team_meta.value::bigint, "
                "excluded.value::bigint)::text",
                (str(max(s for (s,) in gone)),),
            )
    return deleted, len(gone)
