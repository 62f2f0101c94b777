"""team-store: the PostgreSQL side of sharing with a team (docs/teams.md).

Installed only by teams. It adds ``omcm team`` (init, status, sync, prune and
the admin's member and review commands) and the background sync the core's
``omcm_core.team.maybe_sync`` starts. Plugins that share never import this
package: they queue rows and read the local copy through ``omcm_core.team``;
this distribution ships those rows and fills that copy. Nothing here runs on
a hook: psycopg is imported by the sync process and the commands only.
"""

from __future__ import annotations

from omcm_core import hookimpl
from omcm_core.records import Command

PLUGIN = "team-store"


@hookimpl
def commands():
    from omcm_team_store import cli

    return [Command(name="team", help=cli.HELP, configure=cli.configure, run=cli.run)]
