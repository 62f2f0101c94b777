"""Keep the store bounded: maximum age, maximum size, then VACUUM.

Run at session start and end and by the worker, at most once per
``prune_interval_s``, never on a tool call's path.
"""

from __future__ import annotations

import time

from omcm_post_tool_observer import storage


def prune(store, max_age_days: float, max_mb: float, log, max_pending: int | None = None) -> dict:
    cutoff = time.time() - max_age_days * 86400
    deleted = 0
    with store.transaction() as conn:
        deleted += _delete(conn, "ts < ?", (cutoff,))
    budget = int(max_mb * 1024 * 1024)
    total = store.query("SELECT coalesce(sum(bytes), 0) FROM observer_events")[0][0]
    while total > budget:
        # Oldest first, in slices, so no transaction holds the write lock for long.
        with store.transaction() as conn:
            rows = conn.execute("SELECT id, bytes FROM observer_events ORDER BY ts LIMIT 500").fetchall()
            if not rows:
                break
            excess, cut = total - budget, []
            for row_id, size in rows:
                cut.append(row_id)
                excess -= size
                if excess <= 0:
                    break
            deleted += _delete(conn, f"id IN ({','.join('?' * len(cut))})", cut)
            total = conn.execute("SELECT coalesce(sum(bytes), 0) FROM observer_events").fetchone()[0]
    if deleted:
        with store.transaction() as conn:
            conn.execute("DELETE FROM observer_outbox WHERE event_id NOT IN (SELECT event_id FROM observer_events)")
            conn.execute("DELETE FROM observer_vectors WHERE event_id NOT IN (SELECT event_id FROM observer_events)")
            conn.execute(
                "INSERT OR REPLACE INTO observer_meta(key, value) VALUES('vectors_epoch', ?)", (str(time.time()),)
            )
        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.execute("VACUUM")
        log.info("pruned", deleted=deleted, bytes=total)
    from omcm_post_tool_observer.worker import drop_unservable, trim_queue

    dropped = drop_unservable(store)
    if dropped:
        log.info("embedding_jobs_dropped", jobs=dropped, why="the [embeddings] extra is not installed")
    # A worker that keeps failing (or never gets CPU) must not let the queue grow without end.
    trimmed = trim_queue(store, max_pending) if max_pending is not None else 0
    if trimmed:
        log.warning("embedding_jobs_dropped", jobs=trimmed, why=f"over max_pending_embeddings={max_pending}")
    storage.set_meta(store, "last_prune", time.time())
    return {"deleted": deleted, "bytes": total}


def _delete(conn, where: str, params) -> int:
    return conn.execute(f"DELETE FROM observer_events WHERE {where}", list(params)).rowcount


def due(store, interval_s: float) -> bool:
    last = storage.get_meta(store, "last_prune")
    return last is None or time.time() - float(last) >= interval_s
