"""`omcm memory status|search|summary|migrate-legacy|rotate` (and the internal `write-l1`).

Everything here is printed for a person; the markers Claude reacts to
(layout.TRIGGER) are only in what the hooks answer Claude.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PUBLIC = ("status", "search", "summary", "migrate-legacy", "rotate")
READ_ONLY = ("status", "search")
SEARCH_LIMIT = 20


def configure(parser) -> None:
    from omcm_memory_rotation.summary import LIMIT, SHAPE

    parser.add_argument("--project", help="the project folder (default: CLAUDE_PROJECT_DIR or the current one)")
    # The metavar lists the actions people use: write-l1 (run by the session-end hook) stays out of --help.
    sub = parser.add_subparsers(dest="action", required=True, metavar="{" + ",".join(PUBLIC) + "}")
    sub.add_parser("status", help="size, threshold, archives, pending summaries")
    p = sub.add_parser("search", help="memory.md, L3 summaries, L2 archives (and L1 with --deep)")
    p.add_argument("query", help="text to find (case-insensitive)")
    p.add_argument("--deep", action="store_true", help="also look in the kept session transcripts (L1)")
    p.add_argument("--limit", type=int, default=SEARCH_LIMIT, help=f"at most this many hits (default {SEARCH_LIMIT})")
    p.add_argument("--json", action="store_true", help="one JSON list for machines: source, file, line, type, text")
    p = sub.add_parser(
        "summary",
        help="store the L3 summary of an archive (validated JSON)",
        description=f"Check a summary's JSON and store it as ARCHIVE's L3 summary.\nThe JSON (each list at most {LIMIT} "
        f"items):\n\n{SHAPE}\n\nEvery problem is listed at once; the archive stays pending until one is stored.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("archive", help="the archive's file name, e.g. memory_20260113_112700.md")
    p.add_argument("--from", dest="source", required=True, help="a file with the JSON, or - for stdin")
    sub.add_parser("migrate-legacy", help="split an oversized memory.md by its date headers")
    sub.add_parser("rotate", help="rotate now if memory.md is over the threshold")
    p = sub.add_parser("write-l1", description="Keep a session's transcript as L1 (the session-end hook runs this).")
    p.add_argument("--transcript", required=True, help="the session's transcript (JSONL)")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--project", dest="l1_project", help="the project the session ran in")


def run(args, ctx) -> int:
    from omcm_memory_rotation import index, layout
    from omcm_memory_rotation.settings import load_settings

    project = Path(getattr(args, "l1_project", None) or args.project or ctx.project_dir or Path.cwd())
    folder = layout.memory_dir(project)
    if args.action in READ_ONLY and not folder.is_dir():
        # Reading makes nothing: `omcm memory status` in the wrong folder must not leave a .claude/memory/ there.
        print(f"no project memory in {folder} yet")
        return 0
    try:
        index.ensure_structure(folder)
    except OSError as exc:  # a planted symlink (UnsafePathError) or an unwritable project
        print(f"omcm memory: {exc}", file=sys.stderr)
        return 1
    settings = load_settings(ctx, project)
    action = args.action.replace("-", "_")
    return int(ACTIONS[action](args, ctx, project, folder, settings))


def _status(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import index, layout
    from omcm_memory_rotation.settings import legacy_values, toml_for

    data = index.reconcile(folder, ctx.log)
    tokens = layout.tokens_of_file(folder / layout.MEMORY_FILE)
    print(f"memory.md: {tokens:,} tokens (rotates at {settings.threshold_tokens:,})")
    print(f"archives: {len(data['rotatedFiles'])}; summaries pending: {', '.join(index.pending(data)) or 'none'}")
    old = legacy_values(project, ctx.home, ctx.log)
    if old is not None:
        print(f"{old[0]} is read for the keys the TOML config does not set; write this instead, then delete it:")
        print(toml_for(old[1]), end="")
    return 0


def _search(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import search

    hits = search.search(folder, args.query, args.deep, ctx.log)
    shown = hits[: max(args.limit, 0)]
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    elif not hits:
        print(f"No memory matches {args.query!r}.")
    for hit in shown if not args.json else ():
        print(_hit_line(hit))
    if len(hits) > len(shown):
        print(f"({len(hits) - len(shown)} more; --limit {len(hits)} shows them all)", file=sys.stderr)
    return 0


def _hit_line(hit: dict) -> str:
    """One line per hit, whatever its text holds: where it is, then the matching text."""
    if hit["source"] == "L1 sessions":
        return f"sessions/{hit['file']}  (the session transcript mentions it)"
    where = f"{hit['file']}:{hit['line']}" if "line" in hit else f"{hit['file']} summary, {hit.get('type', '')}"
    line = f"{where}  {' '.join(hit.get('text', '').split())}"
    return line if len(line) <= 200 else line[:199] + "…"


def _summary(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import summary

    raw = sys.stdin.read() if args.source == "-" else Path(args.source).read_text(encoding="utf-8")
    try:
        target = summary.save(folder, Path(args.archive).name, raw, ctx.log)
    except summary.SummaryError as exc:
        print(f"omcm memory summary: {exc}", file=sys.stderr)
        if isinstance(exc, summary.ShapeError):
            print("The shape: omcm memory summary --help", file=sys.stderr)
        return 1
    print(f"saved {target.name}; {args.archive} is summarized")
    return 0


def _migrate_legacy(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import layout, legacy

    archives = legacy.migrate(folder, settings, ctx.log)
    if not archives:
        tokens = layout.tokens_of_file(folder / layout.MEMORY_FILE)
        print(
            f"memory.md has {tokens:,} tokens, under the {settings.threshold_tokens:,} that rotate: nothing to split."
        )
        return 0
    print(f"split memory.md by its date headers into {len(archives)} archives in {folder}:")
    _report_archives(folder, archives)
    return 0


def _rotate(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import check, layout

    before = layout.tokens_of_file(folder / layout.MEMORY_FILE)
    archives = check(folder, settings, ctx.log)
    if not archives:
        print(f"memory.md has {before:,} tokens, under the {settings.threshold_tokens:,} that rotate: nothing to do.")
        return 0
    after = layout.tokens_of_file(folder / layout.MEMORY_FILE)
    print(f"rotated {before:,} tokens of memory.md into {folder}/ (memory.md keeps its last {after:,}):")
    _report_archives(folder, archives)
    return 0


def _report_archives(folder: Path, archives: list[str]) -> None:
    from omcm_memory_rotation import layout

    for name in archives:
        print(f"  {name}  {layout.tokens_of_file(folder / name):,} tokens, summary pending")
    print(
        "Claude writes the summaries at the next session start (the memory-rotate skill);\n"
        f"or store one yourself: omcm memory summary {archives[0]} --from FILE  (shape: omcm memory summary --help)"
    )


def _write_l1(args, ctx, project, folder, settings) -> int:
    from omcm_memory_rotation import l1, layout

    try:
        path = l1.write(folder, Path(args.transcript), args.session)
    except OSError as exc:
        layout.error_log(folder, "rotation-error.log", f"L1 not written: {exc}")
        return 1
    print(path)
    return 0


ACTIONS = {
    "status": _status,
    "search": _search,
    "summary": _summary,
    "migrate_legacy": _migrate_legacy,
    "rotate": _rotate,
    "write_l1": _write_l1,
}
