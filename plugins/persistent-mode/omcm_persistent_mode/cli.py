"""`omcm ralph status|cancel`: the ralph loops recorded in a project's ``.omc/ralph/``."""

from __future__ import annotations

import json
from pathlib import Path

from attrs import evolve


def configure(parser) -> None:
    parser.add_argument("--project", help="the project folder (default: CLAUDE_PROJECT_DIR or the current one)")
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("status", help="every ralph loop of this project, newest first, and the PRD")
    p.add_argument("--json", action="store_true", help="one JSON object for machines: loops and PRD stories")
    p = sub.add_parser("cancel", help="end the active ralph loops (all, or one session's)")
    p.add_argument("--session", help="only this session id")


def run(args, ctx) -> int:
    from omcm_persistent_mode import fsaccess, prd, state, stores

    project = Path(args.project or ctx.project_dir or Path.cwd()).absolute()
    loops = stores.all_ralph(project, ctx.log)
    if args.action == "status":
        stories = stores.load_stories(project, ctx.log)
        if args.json:
            data = {"loops": [state.to_json(r) for r in loops], "prd": [state.to_json(s) for s in stories]}
            print(json.dumps(data, ensure_ascii=False, indent=2))
            return 0
        if not loops:
            print(f"no ralph loops in {project}")
        for r in loops:
            verify = (
                f", verification {r.verification_attempts}" + (" pending" if r.verification_pending else "")
                if r.verification_attempts
                else ""
            )
            print(
                f"{r.session_id}  {r.status:<14} {r.mode}  iteration {r.iteration}/{r.max_iterations}{verify}  {r.updated_at}  {r.task[:60]}"
            )
        if stories:
            print(prd.describe(stories).splitlines()[0])
        return 0
    cancelled = 0
    for r in loops:
        if not r.active or (args.session is not None and r.session_id != args.session):
            continue
        # Under the session's lock, so a Stop running right now cannot write the loop back to active.
        with fsaccess.home_state_lock(ctx.session_dir(r.session_id)):
            current = stores.load_ralph(project, r.session_id, ctx.log)
            if current is None or not current.active:
                continue
            if stores.save_ralph(project, evolve(current, status="cancelled", updated_at=state.now()), ctx.log):
                cancelled += 1
                print(f"cancelled {current.session_id} at iteration {current.iteration}")
    if not cancelled:
        print("no active ralph loop to cancel")
    return 0
