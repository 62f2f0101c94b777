"""The embedding worker: drains the outbox in the background, never in a hook.

Started detached by ``post_tool`` when jobs are waiting (at most once per
``worker_interval_s``, and not while one runs), or by hand with ``omcm
observer-worker``. It

- runs alone: an exclusive lock, taken before the model is loaded, so a second
  worker exits at once and cheaply;
- runs at the lowest CPU priority (nice 19) and the lowest best-effort I/O
  priority (like ``ionice -c2 -n7``; not the idle class, which could starve a
  worker holding SQLite's write lock and make hooks wait for it);
- embeds in batches of similar length, ``threads`` batches at a time, each on
  one BLAS thread (see embedder): at nice 19 it may use both cores, as it yields
  them to anything else that wants them;
- stops when no job came for ``idle_s`` seconds, or as soon as its store file is
  deleted or replaced: it never recreates OMCM_HOME or the database, and writes
  no log line once the store is gone (logging would recreate the folder).
"""

from __future__ import annotations

import json
import os
import time

import attrs

from omcm_core.files import file_lock
from omcm_post_tool_observer import embedder

# Jobs read per round: enough for the embedder to sort by length and keep two
# threads busy; one round's texts (at most 128 tokens each) stay a few MB.
CLAIM = 256
MAX_ATTEMPTS = 3
LOCK_NAME = "worker.lock"
_IOPRIO_SET = {"x86_64": 251, "aarch64": 30}  # syscall numbers; os has no ioprio call


def lower_priority() -> None:
    """nice 19 and best-effort I/O level 7, where the system allows it (Linux for I/O)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 19)
    except (AttributeError, OSError):
        pass
    number = _IOPRIO_SET.get(os.uname().machine) if os.name == "posix" else None
    if number is None:
        return
    try:
        import ctypes

        best_effort, lowest, who_process = 2, 7, 1
        ctypes.CDLL(None, use_errno=True).syscall(number, who_process, 0, (best_effort << 13) | lowest)
    except (OSError, AttributeError):
        pass


def running(lock_dir) -> bool:
    """Whether a worker holds the lock now (a cheap check for the hook, before spawning one)."""
    try:
        with file_lock(lock_dir / LOCK_NAME, timeout=0):
            return False
    except TimeoutError:
        return True
    except OSError:
        return False


def run(store, lock_dir, log, idle_s: float = 60.0, poll_s: float = 2.0, threads: int = 2) -> int:
    """Embed jobs until idle or the store is gone; returns how many (0 if another worker runs)."""
    if not embedder.available():
        return 0
    try:
        with file_lock(lock_dir / LOCK_NAME, timeout=0):
            model = embedder.load()
            _extend_cache(store, model, log)  # after a prune, the cache is rebuilt here rather than at a search
            done, idle_since = 0, time.monotonic()
            while store.is_current():
                count = _round(store, model, log, threads)
                if count:
                    done, idle_since = done + count, time.monotonic()
                    _extend_cache(store, model, log)
                elif time.monotonic() - idle_since >= idle_s:
                    break
                else:
                    time.sleep(poll_s)
            if done and store.is_current():
                log.info("embedded", jobs=done)
            return done
    except TimeoutError:
        return 0


def _extend_cache(store, model, log) -> None:
    """Add the new vectors to search's memory-mapped matrix now, so no search has to."""
    try:
        embedder.vector_matrix(store, model.name, embedder.cache_dir(store), map_rows=False)
    except Exception as exc:  # search rebuilds what is missing
        log.warning("vector_cache_not_extended", error=f"{type(exc).__name__}: {exc}")


def _round(store, model, log, threads: int = 1) -> int:
    """Claim, embed and store one round of jobs; 0 when none is waiting or the store is gone."""
    jobs = store.query(
        "SELECT o.id, o.event_id, e.payload_json, e.output FROM observer_outbox o "
        "JOIN observer_events e ON e.event_id = o.event_id WHERE o.status = 'pending' "
        "ORDER BY o.id LIMIT ?",
        (CLAIM,),
    )
    if not jobs:
        return 0
    from omcm_post_tool_observer.capture import embedding_text

    texts = [embedding_text({**json.loads(payload), "toolOutput": output}) for _, _, payload, output in jobs]
    try:
        vectors = model.encode(texts, threads=threads)
    except Exception as exc:
        if not store.is_current():
            return 0
        log.error("embedding_failed", error=str(exc))
        with store.transaction() as conn:
            conn.executemany(
                "UPDATE observer_outbox SET attempts = attempts + 1, updated = ?, "
                "status = CASE WHEN attempts + 1 >= ? THEN 'failed' ELSE status END WHERE id = ?",
                [(time.time(), MAX_ATTEMPTS, j[0]) for j in jobs],
            )
        return len(jobs)
    if not store.is_current():  # deleted or replaced while we embedded: write nothing
        return 0
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO observer_vectors(event_id, model, dim, vector) VALUES(?, ?, ?, ?)",
            [(j[1], model.name, model.dim, v.tobytes()) for j, v in zip(jobs, vectors, strict=True)],
        )
        # A done job has nothing left to say: delete it, so the outbox stays small.
        conn.executemany("DELETE FROM observer_outbox WHERE id = ?", [(j[0],) for j in jobs])
    return len(jobs)


def drop_unservable(store) -> int:
    """Delete pending jobs no worker can serve (the extra is not installed); returns how many."""
    if embedder.available():
        return 0
    with store.transaction() as conn:
        return conn.execute("DELETE FROM observer_outbox WHERE status = 'pending'").rowcount


@attrs.frozen
class QueueState:
    """The embedding queue, for ``omcm doctor`` and the operator."""

    pending: int
    failed: int
    #: Seconds the oldest pending job has waited (None: none waits).
    oldest_s: float | None
    worker_running: bool
    extra_installed: bool
    bound: int

    @property
    def problem(self) -> str | None:
        """What is wrong with the queue, in a sentence; None when nothing is."""
        if self.pending and not self.extra_installed:
            return (
                f"{self.pending} jobs wait for a worker that cannot run without the [embeddings] extra; "
                "none are added, these are dropped at the next prune"
            )
        if self.pending > self.bound:
            return f"{self.pending} jobs pending, over max_pending_embeddings={self.bound}; the oldest go at the next prune"
        return None


def queue_state(store, lock_dir, bound: int) -> QueueState:
    """Length and state of the embedding queue (read-only: cheap enough for a doctor run)."""
    ((pending, failed, oldest),) = store.query(
        "SELECT coalesce(sum(status = 'pending'), 0), coalesce(sum(status = 'failed'), 0), "
        "min(CASE WHEN status = 'pending' THEN created END) FROM observer_outbox"
    )
    return QueueState(
        pending=pending,
        failed=failed,
        oldest_s=None if oldest is None else max(0.0, round(time.time() - oldest, 1)),
        worker_running=running(lock_dir),
        extra_installed=embedder.available(),
        bound=bound,
    )


def trim_queue(store, bound: int) -> int:
    """Drop the oldest pending jobs beyond ``bound`` (their observations stay, found by full text); how many."""
    with store.transaction() as conn:
        return conn.execute(
            "DELETE FROM observer_outbox WHERE status = 'pending' AND id NOT IN "
            "(SELECT id FROM observer_outbox WHERE status = 'pending' ORDER BY id DESC LIMIT ?)",
            (max(bound, 0),),
        ).rowcount
