"""Counts tool calls per session in the shared store (read-modify-write)."""

from omcm_core import hookimpl

MIGRATIONS = ["CREATE TABLE rel_counter (session_id TEXT PRIMARY KEY, calls INTEGER NOT NULL);"]


@hookimpl
def post_tool(event, ctx):
    ctx.store.migrate("rel-counter", MIGRATIONS)
    with ctx.store.transaction() as conn:
        row = conn.execute("SELECT calls FROM rel_counter WHERE session_id = ?", (event.session_id,)).fetchone()
        calls = (row[0] if row else 0) + 1
        conn.execute(
            "INSERT INTO rel_counter(session_id, calls) VALUES(?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET calls = excluded.calls",
            (event.session_id, calls),
        )
    return None
