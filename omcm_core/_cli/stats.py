"""``omcm stats``: per plugin and event, what it cost in time and in the model's context."""

from __future__ import annotations

import argparse
import json

from omcm_core._cli.invocation import Invocation

HELP = "per plugin and event: calls, median/p95 time, characters and tokens put before the model, budget cuts"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help=HELP, description=HELP + " (kept per session in the store).")
    p.add_argument("--json", action="store_true", help="machine-readable rows")
    p.add_argument("--session", metavar="ID", help="only this session")
    p.add_argument("--days", type=float, metavar="N", help="only sessions active in the last N days")
    p.set_defaults(run=run)


COLUMNS = (
    ("plugin", "plugin"),
    ("event", "event"),
    ("calls", "calls"),
    ("median_ms", "median ms"),
    ("p95_ms", "p95 ms"),
    ("context_chars", "chars"),
    ("context_tokens_est", "~tokens"),
    ("budget_cuts", "cuts"),
    ("failures", "failures"),
    ("breaker_openings", "breaker"),
)


def run(args: argparse.Namespace, inv: Invocation) -> int:
    from omcm_core._runtime.stats import summary
    from omcm_core.store import DB_NAME, Store

    rows: list[dict] = []
    if (inv.home / DB_NAME).exists():  # never create a store just to say it is empty
        store = Store(inv.home)
        try:
            rows = summary(store, args.session, args.days)
        finally:
            store.close()
    if args.json:
        print(json.dumps({"session": args.session, "days": args.days, "rows": rows}, indent=2))
        return 0
    if not rows:
        print("No hook calls recorded" + (f" for session {args.session}." if args.session else " yet."))
        return 0
    table = [[_cell(r, key) for key, _ in COLUMNS] for r in rows]
    widths = [max(len(title), *(len(line[i]) for line in table)) for i, (_, title) in enumerate(COLUMNS)]
    print("  ".join(title.ljust(w) for (_, title), w in zip(COLUMNS, widths, strict=True)).rstrip())
    for line in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    total = sum(r["context_chars"] for r in rows)
    print(
        f"\nIn front of the model: {total:,} characters (~{(total + 3) // 4:,} tokens, estimated at 4 characters each)."
    )
    print(span(rows))
    if not all(r.get("exact", True) for r in rows):
        print("≤N: more calls than kept one by one; the time is the upper bound of the bucket it falls in.")
    return 0


def _cell(row: dict, key: str) -> str:
    value = row[key]
    if value is None:
        return "-"
    if key in ("median_ms", "p95_ms") and not row.get("exact", True) and not str(value).startswith(">"):
        return f"≤{value:g}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def span(rows: list[dict]) -> str:
    """The time the figures cover: from the first call recorded to the last."""
    import time

    firsts = [r["first_ts"] for r in rows if r.get("first_ts")]
    lasts = [r["last_ts"] for r in rows if r.get("last_ts")]
    if not firsts or not lasts:
        return "Time span: unknown."
    first, last = min(firsts), max(lasts)

    def when(ts: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))

    hours = (last - first) / 3600
    length = (
        f"{hours * 60:.0f} minutes" if hours < 2 else f"{hours:.1f} hours" if hours < 48 else f"{hours / 24:.1f} days"
    )
    return f"Calls from {when(first)} to {when(last)} ({length})."
