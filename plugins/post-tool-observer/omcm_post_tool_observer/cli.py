"""`omcm search` and `omcm observer-worker`."""

from __future__ import annotations

import json
import time


def configure_search(parser) -> None:
    parser.add_argument("query", nargs="+")
    parser.add_argument("--tool", help="only this tool (Bash, Edit, ...)")
    parser.add_argument("--file", help="only calls whose file path contains this")
    parser.add_argument("--session", help="only this session id")
    parser.add_argument("--failures", action="store_true", help="only failed calls")
    parser.add_argument("--limit", type=int, default=10)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--semantic", action="store_true", help="rank by meaning (needs the [embeddings] extra)")
    mode.add_argument("--hybrid", action="store_true", help="full text and meaning together")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run_search(args, ctx) -> int:
    from omcm_post_tool_observer import search, storage

    storage.ready(ctx.store)
    text = " ".join(args.query)
    filters = search.Filters(tool=args.tool, file=args.file, session=args.session, failures_only=args.failures)
    mode = "semantic" if args.semantic else "hybrid" if args.hybrid else "full-text"
    if args.semantic:
        hits = search.semantic(ctx.store, text, filters, args.limit)
        if hits is None:
            print("omcm search: semantic search needs the [embeddings] extra and embedded observations; "
                  "showing full-text results.", file=__import__("sys").stderr)
            hits, mode = search.full_text(ctx.store, text, filters, args.limit), "full-text"
    elif args.hybrid:
        hits = search.hybrid(ctx.store, text, filters, args.limit)
    else:
        hits = search.full_text(ctx.store, text, filters, args.limit)
    if args.json:
        print(json.dumps({"query": text, "mode": mode, "results": hits}, ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print(f"No observations match {text!r}.")
        return 0
    for hit in hits:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit["ts"]))
        status = "ok  " if hit["success"] else "FAIL"
        what = hit["command"] or hit["file"] or ""
        print(f"{when} {status} {hit['tool']:<10} {what[:80]}  (score {hit['score']})")
        detail = (hit["error"] or hit["output"] or "").strip().replace("\n", " ⏎ ")
        if detail:
            print(f"    {detail[:160]}")
    return 0


def configure_worker(parser) -> None:
    parser.add_argument("--prune", action="store_true", help="only apply retention (age, size) and VACUUM")
    parser.add_argument("--idle", type=float, default=60.0, metavar="SECONDS",
                        help="exit after this long without a job (default 60)")


def run_worker(args, ctx) -> int:
    from omcm_post_tool_observer import ObserverConfig, retention, storage, worker

    # Never create the store (or OMCM_HOME) from here: a worker started for a
    # store that was deleted since has nothing to do.
    if not ctx.store.path.exists():
        print(f"no store at {ctx.store.path}: nothing to do")
        return 0
    worker.lower_priority()  # the whole process: pruning and VACUUM too
    storage.ready(ctx.store)
    config = ctx.config(ObserverConfig)
    if args.prune or retention.due(ctx.store, config.prune_interval_s):
        result = retention.prune(ctx.store, config.max_age_days, config.max_mb, ctx.log)
        print(f"pruned {result['deleted']} observations; {result['bytes']} bytes kept")
    if not args.prune and ctx.store.is_current():
        print(f"embedded {worker.run(ctx.store, ctx.data_dir(), ctx.log, idle_s=args.idle)} observations")
    return 0
