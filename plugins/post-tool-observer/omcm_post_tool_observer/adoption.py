"""Calls recorded before observations carried their project, given back to the project they were made in.

Until the ``project`` column, a call was stored without its project; after the
upgrade a search in the project (the CLI's and Claude's MCP ``search``) skips
such rows, and the history looks lost. The project of an old row is known only
from evidence, so a row is adopted by project ``P`` only when one of these holds:

- its session has calls recorded with a project, and all of them in ``P`` (a
  session that went on across the upgrade);
- Claude Code keeps the session's transcript under ``P``'s folder in
  ``~/.claude/projects/`` (its name is ``P`` with every character other than
  a letter or digit made ``-``), which is where the client ran it;
- the file it read or changed is inside ``P``.

Anything else stays unscoped and shows with ``--all-projects`` only: a call
from another project must not appear in this one. Run when a project is
searched; a count in ``observer_meta`` makes the check free once done.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

#: Sessions looked up per search at most (each is one stat of a transcript path).
MAX_SESSIONS = 2000


def transcript_folder(project: str, env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps the transcripts of sessions run in ``project``."""
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    return Path(config) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", project)


def _under(path: str | None, project: str) -> bool:
    return bool(path) and (path == project or str(path).startswith(project.rstrip("/") + "/"))


def adopt(store, project: str, env: Mapping[str, str] | None = None) -> int:
    """Give ``project`` its unscoped calls (see the module's rules); how many were adopted."""
    env = os.environ if env is None else env
    key = f"unscoped-checked:{project}"
    waiting = store.query("SELECT count(*) FROM observer_events WHERE project IS NULL")[0][0]
    done = store.query("SELECT value FROM observer_meta WHERE key = ?", [key])
    if not waiting or (done and done[0][0] == str(waiting)):
        return 0
    folder = transcript_folder(project, env)
    sessions = [
        row[0]
        for row in store.query(
            "SELECT DISTINCT session_id FROM observer_events WHERE project IS NULL AND session_id IS NOT NULL LIMIT ?",
            [MAX_SESSIONS],
        )
    ]
    mine = []
    for session in sessions:
        scoped = {
            row[0]
            for row in store.query(
                "SELECT DISTINCT project FROM observer_events WHERE session_id = ? AND project IS NOT NULL", [session]
            )
        }
        safe = "/" not in session and session not in ("", ".", "..")
        if scoped == {project} or (not scoped and safe and (folder / f"{session}.jsonl").is_file()):
            mine.append(session)
    files = [
        row[0]
        for row in store.query(
            "SELECT id, file_path FROM observer_events WHERE project IS NULL AND file_path IS NOT NULL"
        )
        if _under(row[1], project)
    ]
    adopted = 0
    with store.transaction() as conn:
        for session in mine:
            adopted += conn.execute(
                "UPDATE observer_events SET project = ? WHERE project IS NULL AND session_id = ?", (project, session)
            ).rowcount
        for row_id in files:
            adopted += conn.execute(
                "UPDATE observer_events SET project = ? WHERE project IS NULL AND id = ?", (project, row_id)
            ).rowcount
        left = conn.execute("SELECT count(*) FROM observer_events WHERE project IS NULL").fetchone()[0]
        conn.execute("INSERT OR REPLACE INTO observer_meta(key, value) VALUES(?, ?)", (key, str(left)))
    return adopted
