"""``omcm team``: create the team store's schema, show its state, sync now, prune old entries."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

HELP = "share lessons with a team through PostgreSQL (docs/teams.md)"
NO_STORE = "no team store: set [core] team_store or OMCM__CORE__TEAM_STORE (docs/teams.md)"


def configure(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="team_action", metavar="ACTION", required=True)
    actions.add_parser("init", help="create or upgrade the schema on the server").set_defaults(team_run=init)
    status_p = actions.add_parser("status", help="connection, schema version, outbox, last sync, lag")
    status_p.add_argument("--json", action="store_true", help="one JSON object")
    status_p.set_defaults(team_run=status)
    sync_p = actions.add_parser("sync", help="ship the outbox and fetch the team's entries now")
    sync_p.add_argument("--if-idle", action="store_true", help="return at once if a sync is running (hooks use it)")
    sync_p.set_defaults(team_run=sync)
    prune_p = actions.add_parser("prune", help="delete entries untouched for DAYS everywhere (tombstones)")
    prune_p.add_argument(
        "--days", type=float, required=True, help="entries untouched for this many days are deleted, on every machine"
    )
    prune_p.set_defaults(team_run=prune)


def run(args: argparse.Namespace, ctx) -> int:
    return int(args.team_run(args, ctx) or 0)


def _store_url(ctx) -> str:
    url = ctx.core_config.team_store
    if not url:
        print(NO_STORE, file=sys.stderr)
    return url


def _connect(ctx) -> tuple[Any, int]:
    """A connection to the team server, or (None, exit status) having said why on stderr."""
    from omcm_team_store import server

    url = _store_url(ctx)
    if not url:
        return None, 2
    try:
        return server.connect(url), 0
    except server.TeamServerError as exc:
        print(f"cannot connect to {server.mask_url(url)}: {exc}", file=sys.stderr)
        return None, 1


def init(args: argparse.Namespace, ctx) -> int:
    from omcm_team_store import schema, server

    conn, status = _connect(ctx)
    if conn is None:
        return status
    with conn:
        before, after = schema.migrate(conn)
    print(f"team schema on {server.mask_url(ctx.core_config.team_store)}: version {before} -> {after}")
    return 0


def status(args: argparse.Namespace, ctx) -> int:
    from omcm_team_store import health

    _store_url(ctx)
    info = health.status(ctx.home, ctx.core_config)
    if args.json:
        print(json.dumps(info, sort_keys=True))
    else:
        for key, value in info.items():
            print(f"{key}: {value}")
    return 0 if info.get("connection") == "ok" else 1


def sync(args: argparse.Namespace, ctx) -> int:
    from omcm_team_store.sync import sync as run_sync

    if not _store_url(ctx):
        return 2
    report = run_sync(ctx.home, ctx.core_config, wait_s=0 if args.if_idle else 120)
    if report.skipped:
        print("another sync is running")
        return 0
    if report.error:
        print(f"sync failed (outbox kept): {report.error}", file=sys.stderr)
        return 1
    print(f"shipped {report.shipped}, fetched {report.fetched}")
    return 0


def prune(args: argparse.Namespace, ctx) -> int:
    from omcm_team_store import server

    conn, status = _connect(ctx)
    if conn is None:
        return status
    with conn:
        deleted, removed = server.prune(conn, args.days)
    print(f"{deleted} entries deleted (tombstones shipped to every machine), {removed} old tombstones removed")
    return 0
