"""One sync with the team server: ship the outbox in batches, then fetch what changed since last time.

Run by ``omcm team sync`` (``python -m omcm_team_store sync``, which hooks start detached through
``omcm_core.team.maybe_sync``);
never inside a hook. One sync at a time per OMCM_HOME (a file lock); a server
that is down, slow or unreachable ends the sync with the outbox kept and the
error (masked) noted for ``omcm team status``.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import attrs

from omcm_core import team
from omcm_core.config import CoreConfig
from omcm_core.files import file_lock
from omcm_core.log import get_logger
from omcm_core.paths import ensure_private_dir
from omcm_core.store import Store
from omcm_team_store import schema, server

SHIP_BATCH = 500
FETCH_BATCH = 500  # each entry at most server.MAX_ROW_BYTES: a batch is at most about 4 MB in memory
MAX_LOCAL_BYTES = 50 * 1024 * 1024  # the local copy's cap; the oldest entries are dropped first
MAX_FETCH_BATCHES = 2_000  # a sync fetches at most 1,000,000 entries; the next one goes on from there
MAX_OUTBOX = 200_000  # rows kept while the server is unreachable (about 60 MB); older ones are dropped
_log = get_logger(component="team")


@attrs.frozen
class SyncReport:
    shipped: int = 0
    fetched: int = 0
    error: str | None = None
    skipped: bool = False  # another sync held the lock


def sync(home: Path, core: CoreConfig, wait_s: float = 0, repair: bool = False) -> SyncReport:
    """Ship and fetch once; while another sync runs, wait up to ``wait_s`` for it, then return ``skipped``.

    ``repair``: fetch the team's entries from the start (the local copy is rebuilt, the outbox kept).
    """
    ensure_private_dir(Path(home))
    try:
        with file_lock(Path(home) / team.SYNC_LOCK, timeout=wait_s):
            return _sync_locked(Store(home), home, core, repair)
    except TimeoutError:
        return SyncReport(skipped=True)


def _sync_locked(store: Store, home: Path, core: CoreConfig, repair: bool = False) -> SyncReport:
    team.ready(store)
    shipped = fetched = 0
    try:
        conn = server.connect(core.team_store)
        try:
            found = schema.version(conn)
            if found < schema.NEEDS:
                raise server.TeamServerError(
                    f"server schema version {found}, this omcm needs {schema.NEEDS}: run `omcm team init`"
                )
            salt = server.salt(conn)
            if not salt:
                raise server.TeamServerError("the server has no project salt: run `omcm team init`")
            _adopt(store, salt)
            shipped = _ship(store, conn, origin(store), salt)
            fetched = _fetch(store, conn, repair)
            _cap(store)
        finally:
            conn.close()
    except Exception as exc:
        message = server.mask_url(str(exc).replace(core.team_store, server.mask_url(core.team_store)))
        _note(store, error=message)
        _trim(store)
        _log.warning("team_sync_failed", error=message, shipped=shipped, fetched=fetched)
        return SyncReport(shipped, fetched, message)
    _note(store, error=None)
    if shipped or fetched:
        _log.info("team_synced", shipped=shipped, fetched=fetched)
    return SyncReport(shipped, fetched)


def _adopt(store: Store, salt: str) -> None:
    """Remember the server's salt; another salt is another server (or a new one): the copy starts over."""
    with store.transaction() as local:
        known = local.execute("SELECT value FROM team_meta WHERE name = 'project_salt'").fetchone()
        if known and known[0] != salt:
            local.execute("DELETE FROM team_items")
            local.execute("DELETE FROM team_meta WHERE name = 'cursor'")
        team.set_meta(local, "project_salt", salt)


def origin(store: Store) -> str:
    """This store's origin id: made with the store, so a store started afresh never reuses sequence numbers."""
    found = team.get_meta(store, "origin")
    if found:
        return found
    with store.transaction() as conn:
        row = conn.execute("SELECT value FROM team_meta WHERE name = 'origin'").fetchone()
        if row:
            return row[0]
        value = "o-" + secrets.token_hex(12)
        team.set_meta(conn, "origin", value)
    return value


def _ship(store: Store, conn, origin_id: str, salt: str) -> int:
    from omcm_core.redact import mask, mask_structured

    total = 0
    while True:
        rows = store.query(
            "SELECT seq, kind, project_source, key, op, count, payload FROM team_outbox ORDER BY seq LIMIT ?",
            (SHIP_BATCH,),
        )
        if not rows:
            return total
        batch = [
            {
                "seq": seq,
                "kind": kind,
                "project": team.hash_project(salt, source),
                "key": mask(key),  # masked again: a rule added since the row was queued
                "op": op,
                "count": count,
                "payload": json.dumps(mask_structured(json.loads(payload)), ensure_ascii=False),
            }
            for seq, kind, source, key, op, count, payload in rows
        ]
        total += server.ship(conn, origin_id, batch)
        # Deleted only after the server committed; a crash in between ships the batch again, skipped there.
        with store.transaction() as local:
            local.execute("DELETE FROM team_outbox WHERE seq <= ?", (rows[-1][0],))


def _fetch(store: Store, conn, repair: bool = False) -> int:
    """Copy what changed since the cursor; only what may reach Claude is kept (see omcm_core.team)."""
    cursor = int(team.get_meta(store, "cursor") or 0)
    review = "off" if server.setting(conn, "review") == "off" else "on"
    purged = server.purged_through(conn)
    # Tombstones we never saw were removed, or the team changed its review rule: start the copy over.
    restart = repair or cursor < purged or team.get_meta(store, "review") != review
    if cursor > max(server.head(conn), purged):
        # Beyond anything the server ever numbered: a forged sequence number (a server before schema 3) or
        # a damaged local store. Left alone, every later entry would sit below it and never arrive.
        _log.warning("team_cursor_reset", cursor=cursor)
        restart = True
    cursor = 0 if restart else cursor
    total = 0
    for _ in range(MAX_FETCH_BATCHES):
        rows = server.changes(conn, cursor, FETCH_BATCH)
        with store.transaction() as local:
            if restart:
                local.execute("DELETE FROM team_items")
                team.set_meta(local, "review", review)
                restart = False
            for _id, kind, project, key, payload, count, deleted, author, verdict, seq in rows:
                shown = verdict == "approved" or (review == "off" and verdict != "rejected")
                if deleted or not shown or payload is None or key is None:
                    local.execute(
                        "DELETE FROM team_items WHERE kind = ? AND project = ? AND key = ?", (kind, project, key)
                    )
                else:
                    local.execute(
                        "INSERT OR REPLACE INTO team_items"
                        "(kind, project, key, payload, count, updated_by, author, approved, server_seq) "
                        "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (kind, project, key, payload, count, author, author, int(verdict == "approved"), seq),
                    )
            if rows:
                if rows[-1][-1] <= cursor:
                    # A server that answers "after N" with N or less would keep this loop going for ever.
                    raise server.TeamServerError(f"the server sent entries out of order (at {rows[-1][-1]})")
                cursor = rows[-1][-1]
                team.set_meta(local, "cursor", cursor)
        total += len(rows)
        if len(rows) < FETCH_BATCH:
            return total
    return total  # the rest at the next sync: one sync never runs without end


def _cap(store: Store, limit: int = MAX_LOCAL_BYTES) -> int:
    """Keep the local copy under ``limit`` bytes of text, the oldest entries (by server order) dropped first."""
    ((size,),) = store.query(
        "SELECT coalesce(sum(length(CAST(payload AS BLOB)) + length(CAST(key AS BLOB))), 0) FROM team_items"
    )
    if size <= limit:
        return 0
    dropped = 0
    with store.transaction() as local:
        for seq, bytes_ in local.execute(
            "SELECT server_seq, length(CAST(payload AS BLOB)) + length(CAST(key AS BLOB)) FROM team_items "
            "ORDER BY server_seq"
        ).fetchall():
            if size <= limit:
                break
            local.execute("DELETE FROM team_items WHERE server_seq = ?", (seq,))
            size -= bytes_
            dropped += 1
    _log.warning("team_copy_capped", dropped=dropped, limit=limit)
    return dropped


def _trim(store: Store) -> None:
    """A server gone for good must not grow the local store without end: keep the newest MAX_OUTBOX rows."""
    with store.transaction() as conn:
        dropped = conn.execute(
            "DELETE FROM team_outbox WHERE seq <= (SELECT max(seq) FROM team_outbox) - ?", (MAX_OUTBOX,)
        ).rowcount
    if dropped:
        _log.error("team_outbox_trimmed", dropped=dropped, kept=MAX_OUTBOX)


def _note(store: Store, error: str | None) -> None:
    with store.transaction() as conn:
        if error is None:
            team.set_meta(conn, "last_sync", time.time())
            conn.execute("DELETE FROM team_meta WHERE name = 'last_error'")
        else:
            team.set_meta(conn, "last_error", error[:500])
            team.set_meta(conn, "last_error_at", time.time())
