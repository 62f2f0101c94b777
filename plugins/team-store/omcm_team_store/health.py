"""What ``omcm team status`` shows and ``omcm doctor`` checks: connection, schema version, outbox, lag."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from omcm_core import team
from omcm_core.config import CoreConfig
from omcm_core.store import Store

Check = tuple[bool, str, "str | None"]


def status(home: Path, core: CoreConfig, connect: bool = True) -> dict[str, Any]:
    """The team store's state as plain data; the URL masked, the server asked only when ``connect``."""
    from omcm_team_store import schema, server

    store = Store(home)
    try:
        team.ready(store)
        ((outbox,),) = store.query("SELECT count(*) FROM team_outbox")
        ((items,),) = store.query("SELECT count(*) FROM team_items")
        last_sync = team.get_meta(store, "last_sync")
        report: dict[str, Any] = {
            "team_store": server.mask_url(core.team_store) if core.team_store else None,
            "outbox": outbox,
            "local_entries": items,
            "last_sync": float(last_sync) if last_sync else None,
            "since_last_sync_s": round(time.time() - float(last_sync), 1) if last_sync else None,
            "last_error": team.get_meta(store, "last_error"),
            "sync_running": team.sync_running(home),
            "schema_needed": schema.NEEDS,
            "schema_known": len(schema.MIGRATIONS),
        }
        cursor = int(team.get_meta(store, "cursor") or 0)
    finally:
        store.close()
    if not (connect and core.team_store):
        return report
    try:
        conn = server.connect(core.team_store)
    except server.TeamServerError as exc:
        return {**report, "connection": "failed", "connection_error": str(exc)}
    try:
        version = schema.version(conn)
        report.update(connection="ok", schema_version=version)
        if version >= schema.NEEDS:
            report["lag_entries"] = max(0, server.head(conn) - cursor)
            report["functions_version"] = int(server.setting(conn, "functions") or 0)
            report["functions_by_superuser"] = conn.execute(
                "SELECT r.rolsuper FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles r ON r.oid = p.proowner "
                "WHERE p.oid = 'omcm_team_ship(text, jsonb)'::pg_catalog.regprocedure"
            ).fetchone()[0]
    except Exception as exc:
        report.update(connection="failed", connection_error=server.mask_url(str(exc)))
    finally:
        conn.close()
    return report


def team_health(home: Path, core: CoreConfig) -> list[Check]:
    """For ``omcm doctor``: (ok, message, command that fixes it or None); [] when no team store is set."""
    if not core.team_store:
        return []
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return [
            (False, "team_store is set but the PostgreSQL driver is missing", "omcm plugins install 'psycopg[binary]'")
        ]
    from omcm_team_store import functions

    info = status(home, core)
    where = info["team_store"]
    if info.get("connection") != "ok":
        return [(False, f"team store {where} unreachable: {info.get('connection_error')}", "omcm team status")]
    checks: list[Check] = [(True, f"team store {where} reachable", None)]
    version = info["schema_version"]
    if version < info["schema_needed"]:
        checks.append(
            (False, f"team schema version {version}, this omcm needs {info['schema_needed']}", "omcm team init")
        )
    elif info["functions_version"] < functions.VERSION:
        # Before version 3 a member's temporary table could run her SQL with the admin's rights.
        checks.append(
            (
                False,
                f"the team server's functions are version {info['functions_version']}, unsafe against members "
                f"(this omcm has {functions.VERSION}): the admin must upgrade them",
                "omcm team init",
            )
        )
    else:
        owner = ", functions owned by a superuser (allowed at init)" if info["functions_by_superuser"] else ""
        checks.append((True, f"team schema version {version} (this omcm knows {info['schema_known']}){owner}", None))
    behind, since = info.get("lag_entries", 0), info["since_last_sync_s"]
    stale = since is None or since > 3600
    checks.append(
        (
            not stale and not info["last_error"],
            f"team sync: {info['outbox']} rows to ship, {behind} entries behind, last sync "
            + (f"{since:.0f} s ago" if since is not None else "never")
            + (f", last error: {info['last_error']}" if info["last_error"] else ""),
            "omcm team sync" if stale or info["last_error"] else None,
        )
    )
    return checks
