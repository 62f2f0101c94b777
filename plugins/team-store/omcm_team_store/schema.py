"""The server's tables, versioned like the local store's: append migrations, never edit one.

Migrations only add (tables, columns, indexes), so during an upgrade an older
omcm keeps working on a newer schema: it names the columns it reads and writes
and ignores the rest. ``NEEDS`` is the version this code cannot work below.
"""

from __future__ import annotations

import secrets

MIGRATIONS = [
    """
    CREATE SEQUENCE omcm_team_seq;
    CREATE TABLE omcm_team_items (
        kind text NOT NULL,
        project text NOT NULL,
        key text NOT NULL,
        payload jsonb NOT NULL DEFAULT '{}',
        count bigint NOT NULL DEFAULT 0,
        deleted boolean NOT NULL DEFAULT false,
        updated_by text,
        server_seq bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (kind, project, key)
    );
    CREATE INDEX omcm_team_items_seq ON omcm_team_items (server_seq);
    CREATE TABLE omcm_team_origins (
        origin text PRIMARY KEY,
        last_seq bigint NOT NULL,
        user_id text,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE omcm_team_meta (name text PRIMARY KEY, value text NOT NULL);
    """,
]
NEEDS = 1
# One number for pg_advisory_xact_lock: writers take turns, so server_seq values commit in order
# and a reader that saw seq N never later finds a row below N appear.
WRITE_LOCK = 0x6F6D636D


def version(conn) -> int:
    """The server's schema version; 0 when ``omcm team init`` never ran."""
    exists = conn.execute("SELECT to_regclass('omcm_team_schema') IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM omcm_team_schema").fetchone()[0]


def migrate(conn) -> tuple[int, int]:
    """Apply the missing migrations, each in its own transaction; returns (version before, version after)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS omcm_team_schema "
            "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    before = version(conn)
    for number, script in enumerate(MIGRATIONS[before:], start=before + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            if version(conn) >= number:  # another omcm team init got there first
                continue
            conn.execute(script)
            conn.execute("INSERT INTO omcm_team_schema(version) VALUES (%s)", (number,))
    with conn.transaction():
        conn.execute(
            "INSERT INTO omcm_team_meta(name, value) VALUES ('project_salt', %s) ON CONFLICT (name) DO NOTHING",
            (secrets.token_hex(32),),
        )
    return before, version(conn)
