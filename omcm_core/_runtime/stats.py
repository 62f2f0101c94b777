"""What each plugin costs: calls, time, and the context it puts in front of the model.

One row per session, plugin and event, updated in place (``omcm stats`` sums
them). Time is kept as a histogram of fixed buckets, so the median and p95 are
read from the buckets (the upper bound of the bucket they fall in), not from a
list of every call. The first :data:`EXACT_CALLS` times of a row are kept as
they were too: a plugin called three times shows its real median and p95, not
a bucket's bound.

The hook path only appends to a list in memory (a few microseconds). A
one-call process writes the rows when the call is done; the warm dispatcher
flushes them from a thread every few seconds and when it exits, so a tool call
never waits for this write.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from omcm_core import log

_logger = log.get_logger(component="stats")

#: Rows of sessions idle this long are deleted when statistics are next written (24 rows a session
#: otherwise accumulate for ever); the observer keeps its calls 90 days by default too.
KEEP_DAYS = 90.0

#: Upper bounds (ms) of the time buckets; the last bucket is everything slower.
BUCKETS_MS: tuple[float, ...] = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)

MIGRATIONS = [
    """
    CREATE TABLE IF NOT EXISTS omcm_stats (
        session_id TEXT NOT NULL,
        plugin TEXT NOT NULL,
        event TEXT NOT NULL,
        first_ts REAL NOT NULL,
        last_ts REAL NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0,
        failures INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        breaker_opened INTEGER NOT NULL DEFAULT 0,
        total_ms REAL NOT NULL DEFAULT 0,
        histogram TEXT NOT NULL DEFAULT '[]',
        context_chars INTEGER NOT NULL DEFAULT 0,
        cuts INTEGER NOT NULL DEFAULT 0,
        cut_chars INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, plugin, event)
    );
    CREATE INDEX IF NOT EXISTS omcm_stats_last ON omcm_stats(last_ts);
    """,
    # The first times of each row as measured (ms), for exact quantiles of small counts.
    "ALTER TABLE omcm_stats ADD COLUMN exact TEXT NOT NULL DEFAULT '[]'",
]

#: Times kept as measured per row; over this many calls (summed over rows), quantiles come from the buckets.
EXACT_CALLS = 32


def bucket(ms: float) -> int:
    for index, bound in enumerate(BUCKETS_MS):
        if ms <= bound:
            return index
    return len(BUCKETS_MS)


def quantile(histogram: Sequence[int], q: float) -> float | None:
    """The upper bound (ms) of the bucket holding the ``q`` quantile; None without calls."""
    total = sum(histogram)
    if not total:
        return None
    rank = q * total
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= rank and count:
            return BUCKETS_MS[index] if index < len(BUCKETS_MS) else float("inf")
    return float("inf")


def exact_quantile(times: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of measured ``times`` (nearest rank, as :func:`quantile` ranks); None without any."""
    if not times:
        return None
    ordered = sorted(times)
    rank = max(1, -(-q * len(ordered) // 1))  # ceil(q * n), at least the first
    return round(ordered[int(rank) - 1], 3)


def add_histograms(a: Sequence[int], b: Sequence[int]) -> list[int]:
    size = max(len(a), len(b))
    return [(a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(size)]


class Recorder:
    """Rows noted on the hook path, written to the store later (:meth:`flush`)."""

    def __init__(self) -> None:
        self._pending: list[tuple] = []
        self._lock = threading.Lock()
        self.deferred = False  # the warm dispatcher flushes from a thread instead of after each call

    def note(
        self,
        session_id: str | None,
        event: str,
        timings_ms: dict,
        failed: Iterable[str] = (),
        skipped: Iterable[str] = (),
        opened: Iterable[str] = (),
        context: dict | None = None,
        cuts: dict | None = None,
    ) -> None:
        """One call of ``event``: each plugin's time, which failed, which a breaker kept out,
        the characters each put in front of the model and what the budget cut from each."""
        now, session = time.time(), (session_id or "")[:200]  # payload text: bounded before it is stored
        failed, skipped, opened = set(failed), set(skipped), set(opened)
        context, cuts = context or {}, cuts or {}
        rows = [
            (
                session,
                plugin,
                event,
                now,
                ms,
                plugin in failed,
                0,
                plugin in opened,
                context.get(plugin, 0),
                cuts.get(plugin, 0),
            )
            for plugin, ms in timings_ms.items()
        ]
        rows += [(session, plugin, event, now, None, False, 1, False, 0, 0) for plugin in skipped]
        with self._lock:
            self._pending.extend(rows)

    def flush(self, store: Any) -> int:
        """Write the noted rows in one transaction; how many. A failure is logged, never raised."""
        with self._lock:
            rows, self._pending = self._pending, []
        if not rows:
            return 0
        merged: dict[tuple, dict] = {}
        for session, plugin, event, ts, ms, failed, skipped, opened, chars, cut in rows:
            row = merged.setdefault(
                (session, plugin, event),
                {
                    "first": ts,
                    "last": ts,
                    "calls": 0,
                    "failures": 0,
                    "skipped": 0,
                    "opened": 0,
                    "ms": 0.0,
                    "hist": [0] * (len(BUCKETS_MS) + 1),
                    "exact": [],
                    "chars": 0,
                    "cuts": 0,
                    "cut_chars": 0,
                },
            )
            row["first"], row["last"] = min(row["first"], ts), max(row["last"], ts)
            if ms is not None:
                row["calls"] += 1
                row["ms"] += ms
                row["hist"][bucket(ms)] += 1
                if len(row["exact"]) < EXACT_CALLS:
                    row["exact"].append(round(ms, 3))
            row["failures"] += int(failed)
            row["skipped"] += skipped
            row["opened"] += int(opened)
            row["chars"] += chars
            row["cuts"] += int(cut > 0)
            row["cut_chars"] += cut
        try:
            store.migrate("core-stats", MIGRATIONS)
            with store.transaction() as conn:
                for (session, plugin, event), row in merged.items():
                    old = conn.execute(
                        "SELECT histogram, exact FROM omcm_stats WHERE session_id = ? AND plugin = ? AND event = ?",
                        (session, plugin, event),
                    ).fetchone()
                    histogram = add_histograms(json.loads(old[0]) if old else [], row["hist"])
                    exact = (json.loads(old[1]) if old else []) + row["exact"]
                    conn.execute(
                        "INSERT INTO omcm_stats(session_id, plugin, event, first_ts, last_ts, calls, failures, skipped, "
                        "breaker_opened, total_ms, histogram, context_chars, cuts, cut_chars, exact) "
                        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id, plugin, event) DO UPDATE SET "
                        "last_ts = max(last_ts, excluded.last_ts), calls = calls + excluded.calls, "
                        "failures = failures + excluded.failures, skipped = skipped + excluded.skipped, "
                        "breaker_opened = breaker_opened + excluded.breaker_opened, "
                        "total_ms = total_ms + excluded.total_ms, histogram = excluded.histogram, "
                        "context_chars = context_chars + excluded.context_chars, cuts = cuts + excluded.cuts, "
                        "cut_chars = cut_chars + excluded.cut_chars, exact = excluded.exact",
                        (
                            session,
                            plugin,
                            event,
                            row["first"],
                            row["last"],
                            row["calls"],
                            row["failures"],
                            row["skipped"],
                            row["opened"],
                            row["ms"],
                            json.dumps(histogram),
                            row["chars"],
                            row["cuts"],
                            row["cut_chars"],
                            json.dumps(exact[:EXACT_CALLS]),
                        ),
                    )
                # Retention: one indexed range delete, nothing to do on most calls.
                conn.execute("DELETE FROM omcm_stats WHERE last_ts < ?", (time.time() - KEEP_DAYS * 86400,))
        except Exception as exc:  # statistics are never worth a broken call
            _logger.warning("stats_not_written", error=f"{type(exc).__name__}: {exc}", rows=len(rows))
            return 0
        return len(rows)


#: The process's recorder (the dispatcher notes into it).
RECORDER = Recorder()


def start_flusher(home: Path, every_s: float = 5.0) -> threading.Thread:
    """The warm dispatcher's writer: flush every ``every_s`` seconds on its own connection."""
    from omcm_core.store import Store

    RECORDER.deferred = True

    def loop() -> None:
        store = Store(home)
        try:
            while True:
                time.sleep(every_s)
                RECORDER.flush(store)
        finally:
            store.close()

    thread = threading.Thread(target=loop, name="omcm-stats", daemon=True)
    thread.start()
    return thread


def flush_now(home: Path) -> None:
    """Write what is pending on a connection of its own (the warm dispatcher at exit)."""
    from omcm_core.store import Store

    store = Store(home)
    try:
        RECORDER.flush(store)
    finally:
        store.close()


def summary(store: Any, session_id: str | None = None, days: float | None = None) -> list[dict]:
    """Per plugin and event, summed over sessions (one session's when ``session_id``), newest ``days``."""
    store.migrate("core-stats", MIGRATIONS)
    where: list[str] = []
    params: list[object] = []
    if session_id:
        where.append("session_id = ?")
        params.append(session_id)
    if days is not None:
        where.append("last_ts >= ?")
        params.append(time.time() - days * 86400)
    sql = (
        "SELECT plugin, event, count(DISTINCT session_id), sum(calls), sum(failures), sum(skipped), "
        "sum(breaker_opened), sum(total_ms), group_concat(histogram, '|'), sum(context_chars), sum(cuts), "
        "sum(cut_chars), min(first_ts), max(last_ts), group_concat(exact, '|') FROM omcm_stats"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " GROUP BY plugin, event ORDER BY plugin, event"
    )
    out = []
    for row in store.query(sql, params):
        plugin, event, sessions, calls, failures, skipped, opened, total, hists, chars, cuts, cut_chars = row[:12]
        first, last, exacts = row[12:]
        histogram: list[int] = []
        for text in (hists or "").split("|"):
            if text:
                histogram = add_histograms(histogram, json.loads(text))
        times = [t for text in (exacts or "").split("|") if text for t in json.loads(text)]
        measured = len(times) == (calls or 0)  # every call's time is known: quantiles need no bucket
        out.append(
            {
                "plugin": plugin,
                "event": event,
                "sessions": sessions,
                "calls": calls,
                "failures": failures,
                "skipped_by_breaker": skipped,
                "breaker_openings": opened,
                "mean_ms": round(total / calls, 3) if calls else None,
                "median_ms": exact_quantile(times, 0.5) if measured else _finite(quantile(histogram, 0.5)),
                "p95_ms": exact_quantile(times, 0.95) if measured else _finite(quantile(histogram, 0.95)),
                "exact": measured,  # False: median/p95 are the upper bounds of their buckets
                "first_ts": first,
                "last_ts": last,
                "context_chars": chars,
                "context_tokens_est": (chars + 3) // 4,
                "budget_cuts": cuts,
                "cut_chars": cut_chars,
            }
        )
    return out


def _finite(ms: float | None) -> float | str | None:
    """JSON has no infinity: the slowest bucket reads "> 5000"."""
    return f"> {BUCKETS_MS[-1]:g}" if ms == float("inf") else ms
