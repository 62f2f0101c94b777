"""Work a plugin does after the hook's answer is out: Claude Code does not wait for it.

A plugin whose hook only records (the observer masks and stores each tool
call) calls :func:`defer` with a job; the job runs once the answer is written,
with a context of its own (its own store connection, the same config, paths,
environment and log):

- in the warm dispatcher, on one background thread, in the order deferred,
  after the reply was sent (:meth:`Runner.submit`); the thread finishes every
  queued job before the dispatcher exits (it is not a daemon thread);
- in a process answering one call, after stdout is written and closed;
- anywhere else (a test, a plugin called directly), at once.

Jobs live only in memory: nothing a job will write is on disk before it runs,
so a job may hold raw (unmasked) data. A dispatcher killed with jobs queued
loses them; a plugin that must not lose one needs a way to redo it (the
observer recovers such calls from the transcript, see its docs).
"""

from __future__ import annotations

import contextlib
import threading
import time
from _queue import Empty as _Empty  # what `queue` re-exports: `queue` imports heapq and more
from _queue import SimpleQueue
from collections.abc import Callable, Iterator
from typing import Any

from omcm_core.log import get_logger

_log = get_logger(component="after_answer")
#: Jobs queued in the warm dispatcher at most; beyond, a job runs on the connection's thread (after its answer).
MAX_QUEUED = 256

Job = Callable[[Any], None]
# The call being dispatched collects its plugins' jobs here (None: no dispatcher collects, run at once).
_collecting: dict[str, list | None] = {"jobs": None}


def defer(ctx: Any, job: Job) -> None:
    """Run ``job(context)`` after the answer: ``context`` is like ``ctx`` with a store connection of its own."""
    jobs = _collecting["jobs"]
    if jobs is None:
        _run_one(ctx, job, ctx.store)
    else:
        jobs.append((ctx, job))


@contextlib.contextmanager
def collecting(into: list) -> Iterator[list]:
    """Collect the jobs :func:`defer` is given while the block runs (one dispatched call)."""
    saved = _collecting["jobs"]
    _collecting["jobs"] = into
    try:
        yield into
    finally:
        _collecting["jobs"] = saved


def run_now(jobs: list) -> None:
    """Run collected jobs with the contexts they were deferred from (before the answer: no caller defers them)."""
    for ctx, job in jobs:
        _run_one(ctx, job, ctx.store)


def run(jobs: list) -> None:
    """Run collected jobs now, in order, on one fresh store connection per OMCM_HOME (never raises)."""
    stores: dict[Any, Any] = {}
    try:
        for ctx, job in jobs:
            _run_one(ctx, job, _store_for(stores, ctx.home))
    finally:
        for store in stores.values():
            store.close()


def _store_for(stores: dict, home: Any) -> Any:
    store = stores.get(home)
    if store is None:
        from omcm_core.store import Store

        store = stores[home] = Store(home)
    return store


def _run_one(ctx: Any, job: Job, store: Any) -> None:
    from omcm_core.context import Context

    own = ctx if store is getattr(ctx, "_store", None) else None
    if own is None:
        own = Context(ctx.plugin, ctx.home, ctx.project_dir, ctx._config, ctx.env, store=store, cwd=ctx.cwd)
    try:
        job(own)
    except Exception as exc:  # a job's failure is logged, never anyone's answer
        _log.exception("after_answer_failed", plugin=getattr(ctx, "plugin", None), error=f"{type(exc).__name__}: {exc}")


class Runner:
    """The warm dispatcher's background thread: runs submitted jobs in order on its own connections."""

    def __init__(self) -> None:
        self._queue: SimpleQueue = SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stores: dict[Any, Any] = {}

    def submit(self, jobs: list) -> None:
        if not jobs:
            return
        if self._queue.qsize() >= MAX_QUEUED:
            _log.warning("after_answer_queue_full", queued=self._queue.qsize())
            run(jobs)  # bounded memory: this connection's thread does it (its answer is already out)
            return
        for item in jobs:
            self._queue.put(item)
        self._ensure_thread()

    def wait(self, timeout: float | None = None) -> bool:
        """Until every job submitted so far has run; True if none is left."""
        done = threading.Event()
        self._queue.put((None, done.set))
        self._ensure_thread()
        return done.wait(timeout)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="omcm-after-answer")
                self._thread.start()

    def _loop(self) -> None:
        # Not a daemon thread: at exit the interpreter waits for it, and it leaves once the
        # queue is empty and the main thread has finished, so no queued job is dropped.
        try:
            while True:
                try:
                    ctx, job = self._queue.get(timeout=0.5)
                except _Empty:
                    if not threading.main_thread().is_alive():
                        return
                    continue
                if ctx is None:
                    job()
                    continue
                _while_a_call_runs()
                store = _store_for(self._stores, ctx.home)
                if store._conn is not None and not store.is_current():  # the file was deleted or replaced
                    store.close()
                    del self._stores[ctx.home]
                    store = _store_for(self._stores, ctx.home)
                _run_one(ctx, job, store)
        finally:
            for store in self._stores.values():
                store.close()
            self._stores.clear()


def _while_a_call_runs(most_s: float = 0.5) -> None:
    """Let a call being dispatched finish first: a job takes the GIL from it (masking 100 KB is ~100 ms)."""
    deadline = time.monotonic() + most_s
    while _collecting["jobs"] is not None and time.monotonic() < deadline:
        time.sleep(0.001)


#: The warm dispatcher's runner (one per process).
RUNNER = Runner()
