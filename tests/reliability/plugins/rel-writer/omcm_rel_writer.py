"""Many small store transactions; each id is reported in a side file after COMMIT.

``REL_WRITES`` transactions (default 200) on PostToolUse, ids ``<pid>-<n>``. The
side file (``REL_SIDE_FILE``) gets a line only once the COMMIT has returned, so
every id in it must survive a SIGKILL of the process at any point.
``REL_HOLD_S`` keeps the process (and its open store) alive afterwards.
"""

import os
import time

from omcm_core import hookimpl

MIGRATIONS = [
    "CREATE TABLE rel_writer (id TEXT PRIMARY KEY, payload TEXT NOT NULL);",
    "CREATE TABLE rel_writer_totals (k TEXT PRIMARY KEY, n INTEGER NOT NULL);",
]


@hookimpl
def post_tool(event, ctx):
    side = ctx.env["REL_SIDE_FILE"]
    writes = int(ctx.env.get("REL_WRITES", "200"))
    ctx.store.migrate("rel-writer", MIGRATIONS)
    fd = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        for n in range(writes):
            ident = f"{os.getpid()}-{n}"
            with ctx.store.transaction() as conn:
                conn.execute("INSERT INTO rel_writer(id, payload) VALUES(?, ?)", (ident, "x" * (n % 700)))
                conn.execute(
                    "INSERT INTO rel_writer_totals(k, n) VALUES('rows', 1) ON CONFLICT(k) DO UPDATE SET n = n + 1"
                )
            os.write(fd, (ident + "\n").encode())
    finally:
        os.close(fd)
    time.sleep(float(ctx.env.get("REL_HOLD_S", "0")))
    return None
