"""``omcm team``: create the team store's schema, show its state, sync now, prune old entries."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from typing import Any

HELP = "share lessons with a team through PostgreSQL (docs/teams.md)"
NO_STORE = "no team store: set [core] team_store or OMCM__CORE__TEAM_STORE (docs/teams.md)"


def configure(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="team_action", metavar="ACTION", required=True)
    init_p = actions.add_parser("init", help="create or upgrade the schema on the server (as the team's admin)")
    init_p.add_argument(
        "--allow-superuser-owner",
        action="store_true",
        help="let a superuser own the tables and functions (refused by default: see docs/teams.md)",
    )
    init_p.add_argument(
        "--owner",
        metavar="ROLE",
        help="then make ROLE (no superuser, may create roles) the owner of the tables and functions",
    )
    init_p.set_defaults(team_run=init)
    status_p = actions.add_parser("status", help="connection, schema version, outbox, last sync, lag")
    status_p.add_argument("--json", action="store_true", help="one JSON object")
    status_p.set_defaults(team_run=status)
    sync_p = actions.add_parser("sync", help="ship the outbox and fetch the team's entries now")
    sync_p.add_argument("--if-idle", action="store_true", help="return at once if a sync is running (hooks use it)")
    sync_p.add_argument(
        "--repair", action="store_true", help="fetch the team's entries from the start (rebuilds the local copy)"
    )
    sync_p.set_defaults(team_run=sync)
    prune_p = actions.add_parser("prune", help="delete entries untouched for DAYS everywhere (tombstones)")
    prune_p.add_argument(
        "--days", type=float, required=True, help="entries untouched for this many days are deleted, on every machine"
    )
    prune_p.add_argument("--yes", action="store_true", help="do not ask before deleting every entry (--days 0)")
    prune_p.set_defaults(team_run=prune)

    member_p = actions.add_parser("member", help="admin: add, remove or list the team's members (PostgreSQL roles)")
    member_a = member_p.add_subparsers(dest="member_action", metavar="MEMBER_ACTION", required=True)
    add_p = member_a.add_parser("add", help="make NAME a member (a login role); prints its new password once")
    add_p.add_argument("name", metavar="NAME", help="the member's PostgreSQL role name")
    add_p.add_argument("--reviewer", action="store_true", help="may also approve and reject entries")
    add_p.add_argument("--no-password", action="store_true", help="set no password (peer, cert or SSO login)")
    add_p.set_defaults(team_run=member_add)
    remove_p = member_a.add_parser("remove", help="take NAME out of the team (its entries stay, attributed)")
    remove_p.add_argument("name", metavar="NAME", help="the member's PostgreSQL role name")
    remove_p.set_defaults(team_run=member_remove)
    member_a.add_parser("list", help="the members and who reviews").set_defaults(team_run=member_list)

    review_p = actions.add_parser("review", help="reviewers: what may reach everyone's Claude (list, show, approve)")
    review_a = review_p.add_subparsers(dest="review_action", metavar="REVIEW_ACTION", required=True)
    list_p = review_a.add_parser("list", help="entries waiting for review (or --state approved|rejected)")
    list_p.add_argument("--state", choices=("pending", "approved", "rejected"), default="pending", help="which")
    list_p.set_defaults(team_run=review_list)
    for action, text in (
        ("show", "one entry in full"),
        ("approve", "let it reach the team"),
        ("reject", "keep it out"),
    ):
        one = review_a.add_parser(action, help=text)
        one.add_argument("id", metavar="ID", type=int, help="the entry's id (omcm team review list)")
        one.set_defaults(team_run=review_one, review_verb=action)
    mode_p = review_a.add_parser("mode", help="admin: review on (default) or off (entries quoted, bounded)")
    mode_p.add_argument("mode", choices=("on", "off"), help="on: only approved entries; off: all, quoted")
    mode_p.set_defaults(team_run=review_mode)


def run(args: argparse.Namespace, ctx) -> int:
    try:
        return int(args.team_run(args, ctx) or 0)
    except Exception as exc:  # the server refused (not a member, not a reviewer, no such role): say so plainly
        from omcm_team_store import server

        if type(exc).__module__.split(".")[0] not in ("psycopg", "omcm_team_store"):
            raise
        print(f"omcm team: {server.mask_url(str(exc)).strip()}", file=sys.stderr)
        return 1


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


def _in_transaction(action: Callable[[argparse.Namespace, Any, Any], tuple[int, str]]) -> Callable[..., int]:
    """A command whose ``action(args, ctx, conn)`` runs in one transaction on the team server.

    The action returns ``(status, text)``; the text is printed once the transaction committed
    (stdout, or stderr when the status is not 0), so nothing claims a change the server refused.
    """

    @functools.wraps(action)
    def command(args: argparse.Namespace, ctx) -> int:
        conn, status = _connect(ctx)
        if conn is None:
            return status
        with conn:
            status, text = action(args, ctx, conn)
        if text:
            print(text, file=sys.stdout if status == 0 else sys.stderr)
        return status

    return command


SUPERUSER_OWNER = (
    "omcm team init: {role} is a PostgreSQL superuser. The role that runs init owns the team's tables and the "
    "functions every member calls with the owner's rights (omcm_team_ship, omcm_team_review): owned by a "
    "superuser, any flaw in them makes a member superuser of the whole server. Run init as an admin role that "
    "is no superuser, e.g. `CREATE ROLE omcm_admin LOGIN CREATEROLE; ALTER DATABASE {db} OWNER TO omcm_admin;` "
    "(docs/teams.md, Set-up); `--owner omcm_admin` hands a team set up by a superuser over to it; "
    "--allow-superuser-owner accepts the risk."
)


@_in_transaction
def init(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin, schema, server

    if schema.superuser(conn) and not (args.allow_superuser_owner or args.owner):
        role, db = conn.execute("SELECT current_user, current_database()").fetchone()
        return 1, SUPERUSER_OWNER.format(role=role, db=db)
    before, after = schema.migrate(conn)
    if args.owner:
        admin.hand_over(conn, args.owner)
    owner = f", owned by {args.owner}" if args.owner else ""
    return 0, f"team schema on {server.mask_url(ctx.core_config.team_store)}: version {before} -> {after}{owner}"


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
    report = run_sync(ctx.home, ctx.core_config, wait_s=0 if args.if_idle else 120, repair=args.repair)
    if report.skipped:
        print("another sync is running")
        return 0
    if report.error:
        print(f"sync failed (outbox kept): {report.error}", file=sys.stderr)
        return 1
    print(f"shipped {report.shipped}, fetched {report.fetched}")
    return 0


def prune(args: argparse.Namespace, ctx) -> int:
    if args.days <= 0 and not args.yes:
        prompt = "Delete EVERY team entry, on every machine? Type yes: "
        answer = input(prompt) if sys.stdin.isatty() else ""
        if answer.strip().lower() != "yes":
            print("nothing deleted (--days 0 deletes everything: confirm, or pass --yes)", file=sys.stderr)
            return 1
    return _prune(args, ctx)


@_in_transaction
def _prune(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import server

    deleted, removed = server.prune(conn, args.days)
    return 0, f"{deleted} entries deleted (tombstones shipped to every machine), {removed} old tombstones removed"


@_in_transaction
def member_add(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    secret = admin.add_member(conn, args.name, reviewer=args.reviewer, password=not args.no_password)
    lines = [f"{args.name} is a {'member and reviewer' if args.reviewer else 'member'}"]
    if secret:
        lines.append(f"password (shown once; give it to {args.name} for ~/.pgpass or PGPASSWORD): {secret}")
    return 0, "\n".join(lines)


@_in_transaction
def member_remove(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    admin.remove_member(conn, args.name)
    return 0, f"{args.name} is no longer a member"


@_in_transaction
def member_list(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    return 0, "\n".join(f"{name}{'  (reviewer)' if reviewer else ''}" for name, reviewer in admin.members(conn))


@_in_transaction
def review_list(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    lines = []
    for entry_id, kind, author, count, key, payload in admin.queue(conn, args.state):
        summary = " ".join(f"{key} {payload}".split())
        lines.append(f"{entry_id}\t{kind}\tby {author or 'unknown'}\tx{count}\t{summary[:100]}")
    return 0, "\n".join(lines) or f"no {args.state} entries"


@_in_transaction
def review_one(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    if args.review_verb == "show":
        found = admin.entry(conn, args.id)
        if found is None:
            return 1, f"no entry {args.id}"
        return 0, json.dumps(found, indent=2, ensure_ascii=False, default=str)
    if not admin.verdict(conn, args.id, "approved" if args.review_verb == "approve" else "rejected"):
        return 1, f"no entry {args.id}"
    return 0, f"entry {args.id} {args.review_verb}d"


@_in_transaction
def review_mode(args: argparse.Namespace, ctx, conn) -> tuple[int, str]:
    from omcm_team_store import admin

    admin.set_review(conn, args.mode == "on")
    return 0, f"review {args.mode}"
