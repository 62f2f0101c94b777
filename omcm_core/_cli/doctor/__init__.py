"""``omcm doctor``: is omcm installed, registered, configured and healthy, and what fixes what is not.

Each section is a small function in this package, listed in :mod:`.sections`.
Doctor changes nothing unless asked with ``--fix``, and then says what it did.
"""

from __future__ import annotations

import argparse

from omcm_core._cli.doctor.render import JSON_HELP
from omcm_core._cli.doctor.runtime import recent_errors
from omcm_core._cli.invocation import Invocation

__all__ = ["recent_errors", "register", "run"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check install, registration, config, store, plugins, daemon; print the fix for each problem",
        description="Check omcm and print, for each problem, the one command that fixes it. "
        "Exits 1 when a check fails (warnings do not).",
        epilog=JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print one JSON object for machines (shape below)")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes (make OMCM_HOME private) and say so")
    from omcm_core._cli.settings import add_agent_argument

    add_agent_argument(p, "check")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, inv: Invocation) -> int:
    import sys

    from omcm_core._cli.doctor import render
    from omcm_core._cli.doctor.records import Probe
    from omcm_core._cli.doctor.sections import run_sections

    probe = Probe(inv.home, inv.project, inv.env, manager=inv.manager, config=inv.config, fix=args.fix)
    sections = run_sections(probe, agent=args.agent)
    print(render.as_json(sections) if args.json else render.text(sections, sys.stdout, inv.env))
    return 0 if all(c.level != "error" for s in sections for c in s["checks"]) else 1
