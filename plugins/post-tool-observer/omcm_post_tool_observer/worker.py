"""The embedding worker: drains the outbox in the background, never in a hook.

Started detached by ``post_tool`` when jobs are waiting (at most once per
``worker_interval_s``), or by hand with ``omcm observer-worker``. Only one runs
at a time (an exclusive lock); jobs are claimed in short transactions, so hook
writes never wait long for it. It also prunes when pruning is due.
"""

from __future__ import annotations

import time

from omcm_core.files import file_lock

from omcm_post_tool_observer import embedder, storage

BATCH = 32
MAX_ATTEMPTS = 3


def drain(store, lock_dir, log, max_jobs: int = 100_000) -> int:
    """Embed pending jobs; returns how many were embedded (0 if another worker runs)."""
    model = embedder.load()
    if model is None:
        return 0
    try:
        with file_lock(lock_dir / "worker.lock", timeout=0):
            done = 0
            while done < max_jobs:
                jobs = store.query(
                    "SELECT o.id, o.event_id, e.payload_json, e.output FROM observer_outbox o "
                    "JOIN observer_events e ON e.event_id = o.event_id WHERE o.status = 'pending' "
                    "AND o.attempts < ? ORDER BY o.id LIMIT ?",
                    (MAX_ATTEMPTS, BATCH),
                )
                if not jobs:
                    break
                import json

                from omcm_post_tool_observer.capture import embedding_text

                texts = [embedding_text({**json.loads(payload), "toolOutput": output}) for _, _, payload, output in jobs]
                try:
                    vectors = model.encode(texts)
                except Exception as exc:
                    log.error("embedding_failed", error=str(exc))
                    with store.transaction() as conn:
                        conn.executemany("UPDATE observer_outbox SET attempts = attempts + 1, updated = ? WHERE id = ?",
                                         [(time.time(), j[0]) for j in jobs])
                    continue
                now = time.time()
                with store.transaction() as conn:
                    conn.executemany(
                        "INSERT OR REPLACE INTO observer_vectors(event_id, model, dim, vector) VALUES(?, ?, ?, ?)",
                        [(j[1], model.name, model.dim, v.tobytes()) for j, v in zip(jobs, vectors)],
                    )
                    conn.executemany("UPDATE observer_outbox SET status = 'done', updated = ? WHERE id = ?", [(now, j[0]) for j in jobs])
                done += len(jobs)
            if done:
                log.info("embedded", jobs=done)
            return done
    except TimeoutError:
        return 0
