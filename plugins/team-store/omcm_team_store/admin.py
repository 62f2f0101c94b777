"""The admin's and the reviewers' side: members as PostgreSQL roles, the review queue, the team's settings.

A member is a login role in the group ``omcm_<database>_member``; a reviewer
is also in ``omcm_<database>_reviewer``. Only the tables' owner (who ran
``omcm team init``) or a role allowed to create roles adds and removes them.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class AdminError(Exception):
    """Refused: a bad name, or the server said no (the message says why)."""


def group(conn, what: str) -> str:
    return conn.execute("SELECT omcm_team_group(%s)", (what,)).fetchone()[0]


def add_member(conn, name: str, reviewer: bool = False, password: bool = True) -> str | None:
    """Create (or reuse) the login role ``name`` in the member group; returns its new password, if one was set."""
    from psycopg import sql

    if not NAME.match(name):
        raise AdminError(f"{name!r}: a member's name is lower-case letters, digits and _ (a PostgreSQL role)")
    secret = secrets.token_urlsafe(24) if password else None
    with conn.transaction():
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
        if secret:
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(name), sql.Literal(secret)))
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group(conn, "member")), sql.Identifier(name)))
        which = sql.SQL("GRANT {} TO {}") if reviewer else sql.SQL("REVOKE {} FROM {}")
        conn.execute(which.format(sql.Identifier(group(conn, "reviewer")), sql.Identifier(name)))
    return secret


def remove_member(conn, name: str) -> None:
    """Take ``name`` out of the team (its entries stay, attributed; ``omcm team prune`` removes old ones)."""
    from psycopg import sql

    if not NAME.match(name):
        raise AdminError(f"{name!r} is not a member's name")
    with conn.transaction():
        for what in ("reviewer", "member"):
            conn.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(group(conn, what)), sql.Identifier(name)))


def members(conn) -> list[tuple[str, bool]]:
    """(name, is reviewer) of every member."""
    return conn.execute(
        "SELECT r.rolname, pg_has_role(r.oid, omcm_team_group('reviewer'), 'MEMBER') FROM pg_roles r "
        "WHERE r.rolcanlogin AND pg_has_role(r.oid, omcm_team_group('member'), 'MEMBER') AND NOT r.rolsuper "
        "ORDER BY 1"
    ).fetchall()


def queue(conn, state: str = "pending", limit: int = 50) -> list[tuple[Any, ...]]:
    """(id, kind, author, count, key, payload) of entries in review ``state``, oldest first."""
    return conn.execute(
        "SELECT id, kind, author, count, key, payload::text FROM omcm_team_items "
        "WHERE NOT deleted AND review = %s ORDER BY server_seq LIMIT %s",
        (state, limit),
    ).fetchall()


def entry(conn, entry_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT id, kind, project, key, payload, count, author, review, reviewed_by, updated_at::text "
        "FROM omcm_team_items WHERE id = %s AND NOT deleted",
        (entry_id,),
    ).fetchone()
    names = ("id", "kind", "project", "key", "payload", "count", "author", "review", "reviewed_by", "updated_at")
    return dict(zip(names, row, strict=True)) if row else None


def verdict(conn, entry_id: int, decision: str) -> bool:
    """Approve or reject entry ``entry_id`` (the server checks that this role is a reviewer)."""
    return bool(conn.execute("SELECT omcm_team_review(%s, %s)", (entry_id, decision)).fetchone()[0])


def set_review(conn, on: bool) -> None:
    """The team's rule: review on (only approved entries reach anyone's Claude) or off (quoted, bounded)."""
    conn.execute(
        "INSERT INTO omcm_team_meta(name, value) VALUES ('review', %s) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        ("on" if on else "off",),
    )


OWNED = (  # what ``hand_over`` gives away ({} is the new owner); omcm_team_items_id_seq follows its table
    "ALTER TABLE omcm_team_items OWNER TO {}",
    "ALTER TABLE omcm_team_origins OWNER TO {}",
    "ALTER TABLE omcm_team_meta OWNER TO {}",
    "ALTER TABLE omcm_team_usage OWNER TO {}",
    "ALTER TABLE omcm_team_schema OWNER TO {}",
    "ALTER SEQUENCE omcm_team_seq OWNER TO {}",
    "ALTER FUNCTION omcm_team_group(text) OWNER TO {}",
    "ALTER FUNCTION omcm_team_setting(text, bigint) OWNER TO {}",
    "ALTER FUNCTION omcm_team_ship(text, jsonb) OWNER TO {}",
    "ALTER FUNCTION omcm_team_review(bigint, text) OWNER TO {}",
)


def hand_over(conn, role: str) -> None:
    """Make ``role`` (no superuser, may create roles) the owner of the team's tables, sequence and functions.

    For a team set up by a superuser: the functions then run with ``role``'s rights only. ``role`` also gets
    the group roles WITH ADMIN OPTION, so it adds and removes members.
    """
    from psycopg import sql

    if not NAME.match(role):
        raise AdminError(f"{role!r} is not a role name")
    found = conn.execute("SELECT rolsuper, rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = %s", (role,))
    row = found.fetchone()
    if row is None:
        raise AdminError(f"no role {role}: create it first (CREATE ROLE {role} LOGIN CREATEROLE)")
    if row[0]:
        raise AdminError(f"{role} is a superuser: the owner must not be one (docs/teams.md, Set-up)")
    if not row[1]:
        raise AdminError(f"{role} may not create roles: ALTER ROLE {role} CREATEROLE, then again")
    who = sql.Identifier(role)
    with conn.transaction():
        for statement in OWNED:
            conn.execute(sql.SQL(statement).format(who))
        for what in ("member", "reviewer"):
            grant = sql.SQL("GRANT {} TO {} WITH ADMIN OPTION").format(sql.Identifier(group(conn, what)), who)
            conn.execute(grant)
