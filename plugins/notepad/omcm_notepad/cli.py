"""`omcm notepad show | add [--priority] TEXT | prune | stats` on the current project."""

from __future__ import annotations

import json
import sys
from pathlib import Path

CLI_LOCK_S = 10.0


def configure(parser) -> None:
    parser.add_argument("--project", help="the project folder (default: CLAUDE_PROJECT_DIR or the current one)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("show", help="print .omc/notepad.md")
    p = sub.add_parser("add", help="add a Working Memory entry (or, with --priority, replace the Priority Context)")
    p.add_argument("--priority", action="store_true", help="replace the Priority Context (read after every compaction)")
    p.add_argument("text", nargs="+", help="the note (words are joined with spaces)")
    sub.add_parser("prune", help="remove Working Memory entries older than [notepad] working_memory_days")
    p = sub.add_parser("stats", help="size, entries, oldest entry")
    p.add_argument("--json", action="store_true", help="one JSON object for machines")


def run(args, ctx) -> int:
    from omcm_notepad import clock, notes, storage, tags
    from omcm_notepad.settings import NotepadConfig

    project = Path(args.project or ctx.project_dir or Path.cwd()).absolute()
    config = ctx.config(NotepadConfig)
    now = clock.now(ctx.env)
    if args.action in ("show", "stats"):
        doc = notes.load(project, ctx.log)
        if args.action == "show":
            if doc is None:
                print(
                    f"no notepad at {project / storage.relative_path()} (or it was refused: see the log)",
                    file=sys.stderr,
                )
                return 1
            sys.stdout.write(notes.for_claude(doc.render(), 10 * config.max_bytes))
            return 0
        facts = notes.stats(doc, config, now)
        print(json.dumps(facts, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in facts.items()))
        return 0
    if args.action == "add":
        text = tags.clean(" ".join(args.text), config.priority_max_chars if args.priority else tags.MAX_NOTE)
        if not text:
            print("omcm notepad add: nothing to add", file=sys.stderr)
            return 2
        found = [tags.Note(text, args.priority)]
    else:
        found = []
    saved = notes.change(project, found, config, now, ctx.log, timeout=CLI_LOCK_S)
    if saved is None:
        print(f"omcm notepad: could not write {project / storage.relative_path()} (see the log)", file=sys.stderr)
        return 1
    if args.action == "prune":
        print(f"pruned {saved.pruned} entries older than {config.working_memory_days:g} days")
    else:
        print("priority context replaced" if saved.priority else "entry added", f"({saved.size} bytes)")
    return 0
