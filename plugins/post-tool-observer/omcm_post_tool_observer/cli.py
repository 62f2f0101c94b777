"""`omcm search` and `omcm observer-worker`."""

from __future__ import annotations

import json
import sys
import time


def configure_search(parser) -> None:
    parser.add_argument("query", nargs="*", help="words to find; none (or '*') lists the most recent calls")
    parser.add_argument("--tool", help="only this tool (Bash, Edit, ...)")
    parser.add_argument("--file", help="only calls whose file path contains this")
    parser.add_argument("--session", help="only this session id")
    parser.add_argument("--failures", action="store_true", help="only failed calls")
    parser.add_argument(
        "--all-projects",
        action="store_true",
        help="search every project (default: only calls made in the current project)",
    )
    parser.add_argument("--limit", type=int, default=10, help="at most this many results (default 10)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--semantic", action="store_true", help="rank by meaning (needs the [embeddings] extra)")
    mode.add_argument(
        "--hybrid", action="store_true", help="full text and meaning together (the default once calls are embedded)"
    )
    mode.add_argument("--full-text", action="store_true", help="words only, even when calls are embedded")
    parser.add_argument(
        "--json", action="store_true", help="machine-readable output, with each call's full stored output"
    )
    parser.add_argument(
        "--team",
        action="store_true",
        help="search the team's shared observations (local copy of the team store; every word as a plain "
        "substring of the entry, no ranking; with --tool, --file, --failures, --limit, --json)",
    )
    parser.add_argument(
        "--stop-server",
        action="store_true",
        help="stop the background search process (it keeps the model loaded; it also leaves after 10 idle minutes)",
    )


def run_search(args, ctx) -> int:
    if args.stop_server:
        from omcm_post_tool_observer import search_client

        print("search server stopped" if search_client.stop(ctx.home) else "no search server was running")
        return 0
    if args.team:
        return _run_team_search(args, ctx)
    return answer(args, ctx.store, ctx.project_dir, ctx.env)


def _argv_route(argv, env, cwd, home):
    from omcm_post_tool_observer.search_route import route

    return route(argv, env, cwd, home)


# Run before argparse by omcm's command cache once this command is remembered: the common forms
# of `omcm search` parsed by hand (None: anything else, which argparse then parses as always).
run_search.argv_route = _argv_route  # type: ignore[attr-defined]


def answer(args, store, project_dir, env) -> int:
    """Search and print: the same for the argparse route and the one of search_route (same output, byte for byte)."""
    from omcm_post_tool_observer import search, storage

    storage.ready(store)
    text = " ".join(args.query).strip()
    limit = max(args.limit, 0)
    project = None if args.all_projects or project_dir is None else str(project_dir)
    if project is not None:
        from omcm_post_tool_observer import adoption

        adoption.adopt(store, project, env)  # calls recorded before they carried their project
    filters = search.Filters(
        tool=args.tool, file=args.file, session=args.session, failures_only=args.failures, project=project
    )
    if search.fts_query(text) is None:  # no words: the most recent calls
        hits, mode = search.recent(store, filters, limit), "recent"
    elif args.semantic:
        hits, mode = _ranked_by_meaning(store, "semantic", text, filters, limit, env), "semantic"
        if hits is None:
            print(
                "omcm search: semantic search needs the [embeddings] extra "
                "(omcm plugins install 'omcm-post-tool-observer[embeddings]') and embedded observations; "
                "showing full-text results.",
                file=sys.stderr,
            )
            hits, mode = search.full_text(store, text, filters, limit), "full-text"
    elif args.hybrid or (not args.full_text and search.vectors_ready(store)):
        # The default where vectors exist: best recall on real sessions (docs/benchmarks.md, retrieval).
        hits, mode = _ranked_by_meaning(store, "hybrid", text, filters, limit, env), "hybrid"
    else:
        hits, mode = search.full_text(store, text, filters, limit), "full-text"
    hits = search.with_relevance(hits)
    if args.json:
        print(json.dumps({"query": text, "mode": mode, "results": hits}, ensure_ascii=False, indent=2))
        return 0
    if not hits:
        where = f" in {project} (--all-projects searches every project)" if project else ""
        print(f"No observations match {text!r}{where}." if text else f"No observations recorded yet{where}.")
        return 0
    for hit in hits:
        _print_hit(hit, mode)
    return 0


def _ranked_by_meaning(store, mode: str, text: str, filters, limit: int, env):
    """search.semantic or search.hybrid: answered by the search server if it can, else here (the same hits)."""
    from omcm_post_tool_observer import search, search_client

    served = search_client.ask(store.home, store.path, mode, text, filters._asdict(), limit, env)
    if served is not search_client.NOT_SERVED:
        return served
    return (search.semantic if mode == "semantic" else search.hybrid)(store, text, filters, limit)


def _one_line(text: str, width: int) -> str:
    """First line of ``text``, cut at ``width``; "…" says that something was left out."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > width:
        return first[: width - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


def _print_hit(hit: dict, mode: str) -> None:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit["ts"]))
    status = "ok  " if hit["success"] else "FAIL"
    what = _one_line(hit["command"] or hit["file"] or "", 80)
    rank = "" if mode == "recent" else f"  (relevance {hit['relevance']:.2f})"
    print(f"{when} {status} {hit['tool']:<10} {what}{rank}")
    detail = hit["snippet"] or hit["error"] or hit["output"] or ""
    detail = " ".join(detail.split())  # one line: newlines and runs of spaces become one space
    if detail:
        print(f"    {detail[:160]}")


def _run_team_search(args, ctx) -> int:
    from omcm_core import team
    from omcm_post_tool_observer import sharing

    if not team.configured(ctx):
        print("no team store: set [core] team_store or OMCM__CORE__TEAM_STORE (docs/teams.md)", file=sys.stderr)
        return 2
    if args.semantic or args.hybrid or args.session:
        print(
            "omcm search --team: --semantic, --hybrid and --session do not apply to the team's entries", file=sys.stderr
        )
        return 2
    words = [w for w in " ".join(args.query).split() if w != "*"]
    hits = sharing.search(ctx, words, args.tool, args.file, args.failures, args.limit)
    if args.json:
        print(json.dumps({"query": " ".join(words), "mode": "team", "results": hits}, ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print(f"No team observations match {' '.join(words)!r}." if words else "No team observations yet.")
        return 0
    for hit in hits:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit["ts"])) if hit["ts"] else "?"
        status = "ok  " if hit["success"] else "FAIL"
        where = "this project" if hit["this_project"] else "other project"
        what = _one_line(hit["input"] or hit["file"] or "", 80)
        print(f"{when} {status} {hit['tool'] or '?':<10} {what}  (by {hit['by'] or '?'}, {where})")
        detail = " ".join((hit["error"] or hit["output"] or "").split())
        if detail:
            print(f"    {detail[:160]}")
    return 0


def configure_worker(parser) -> None:
    parser.add_argument("--prune", action="store_true", help="only apply retention (age, size) and VACUUM")
    parser.add_argument(
        "--idle", type=float, default=60.0, metavar="SECONDS", help="exit after this long without a job (default 60)"
    )


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
        result = retention.prune(ctx.store, config.max_age_days, config.max_mb, ctx.log, config.max_pending_embeddings)
        print(f"pruned {result['deleted']} observations; {result['bytes']} bytes kept")
    if not args.prune and ctx.store.is_current():
        print(
            f"embedded {worker.run(ctx.store, ctx.data_dir(), ctx.log, idle_s=args.idle, threads=config.worker_threads)} observations"
        )
    return 0
