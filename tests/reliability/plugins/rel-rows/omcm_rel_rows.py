"""Appends one row per tool call (an observation log) to the shared store."""

import os

from omcm_core import hookimpl

MIGRATIONS = [
    "CREATE TABLE rel_rows (tool_use_id TEXT, session_id TEXT, pid INTEGER NOT NULL);",
    "CREATE INDEX rel_rows_session ON rel_rows(session_id);",
]


@hookimpl
def post_tool(event, ctx):
    ctx.store.migrate("rel-rows", MIGRATIONS)
    with ctx.store.transaction() as conn:
        conn.execute(
            "INSERT INTO rel_rows(tool_use_id, session_id, pid) VALUES(?, ?, ?)",
            (event.tool_use_id, event.session_id, os.getpid()),
        )
    return None
