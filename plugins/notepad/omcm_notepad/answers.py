"""One subagent's notes are saved once, whichever way its answer arrives.

A foreground Agent's answer reaches the notepad twice: in SubagentStop's
``last_assistant_message`` and in the Agent tool's PostToolUse result. A
background agent's arrives only through SubagentStop. Whichever comes first
claims (session, agent id, the cleaned notes) in the shared store; the other
finds the claim and saves nothing. Keyed by the notes, not by the agent alone,
so an agent kept going by a SubagentStop block may still add new notes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time

PLUGIN = "notepad"
MIGRATIONS = ["CREATE TABLE notepad_answers (key TEXT PRIMARY KEY, ts REAL NOT NULL)"]
#: Claims older than this are forgotten (both deliveries come within the agent's turn).
KEEP_S = 24 * 3600


def key(session_id: str | None, agent_id, notes: list) -> str | None:
    """The claim for these notes of this agent, or None when the agent is unknown (no dedupe)."""
    if not isinstance(agent_id, str) or not agent_id:
        return None
    body = json.dumps([session_id or "", agent_id, [[n.priority, n.text] for n in notes]])
    return hashlib.sha256(body.encode()).hexdigest()


def claim(store, claim_key: str, log) -> bool:
    """True if this call is the first to save these notes; True too when the store fails (twice beats lost)."""
    now = time.time()
    try:
        store.migrate(PLUGIN, MIGRATIONS)
        with store.transaction() as conn:
            conn.execute("DELETE FROM notepad_answers WHERE ts < ?", (now - KEEP_S,))
            cursor = conn.execute("INSERT OR IGNORE INTO notepad_answers(key, ts) VALUES(?, ?)", (claim_key, now))
            return cursor.rowcount == 1
    except sqlite3.Error as exc:
        log.warning("notepad_dedupe_unavailable", error=f"{type(exc).__name__}: {exc}")
        return True


def release(store, claim_key: str, log) -> None:
    """Give the claim back when the save failed, so the other delivery may still save the notes."""
    try:
        with store.transaction() as conn:
            conn.execute("DELETE FROM notepad_answers WHERE key = ?", (claim_key,))
    except sqlite3.Error as exc:
        log.warning("notepad_dedupe_unavailable", error=f"{type(exc).__name__}: {exc}")
