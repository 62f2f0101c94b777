"""``python -m omcm_team_store ACTION``: what ``omcm team ACTION`` runs, without loading the other plugins.

The core's ``maybe_sync`` starts the background sync this way: a user's
``OMCM_LOAD_PLUGINS`` or a slow plugin's import must not keep it from running.
"""

from __future__ import annotations

import argparse
import os
import sys

from omcm_core import log
from omcm_core.config import Config
from omcm_core.context import Context
from omcm_core.paths import omcm_home
from omcm_team_store import PLUGIN, cli


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="omcm team", description=cli.HELP)
    cli.configure(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    home = omcm_home(env)
    log.configure(home)
    # No project: the sync and the admin's commands are about the team, not about one checkout.
    return cli.run(args, Context(PLUGIN, home, None, Config.load(home, None, env), env))


if __name__ == "__main__":
    sys.exit(main())
