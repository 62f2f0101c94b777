"""`omcm memory status|search|summary|migrate-legacy|rotate|write-l1`."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def configure(parser) -> None:
    parser.add_argument("--project", help="the project folder (default: CLAUDE_PROJECT_DIR or the current one)")
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("status", help="size, threshold, archives, pending summaries")
    p = sub.add_parser("search", help="memory.md, L3 summaries, L2 archives (and L1 with --deep)")
    p.add_argument("query")
    p.add_argument("--deep", action="store_true")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("summary", help="store the L3 summary of an archive (validated JSON)")
    p.add_argument("archive")
    p.add_argument("--from", dest="source", required=True, help="a file with the JSON, or - for stdin")
    sub.add_parser("migrate-legacy", help="split an oversized memory.md by its date headers")
    sub.add_parser("rotate", help="rotate now if memory.md is over the threshold")
    p = sub.add_parser("write-l1", help=argparse_hidden())
    p.add_argument("--transcript", required=True)
    p.add_argument("--session", required=True)
    for name in ("project",):
        p.add_argument(f"--{name}", dest=f"l1_{name}")


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


def run(args, ctx) -> int:
    from omcm_memory_rotation import check, index, layout, legacy, search, summary
    from omcm_memory_rotation.settings import legacy_values, load_settings, toml_for

    project = Path(getattr(args, "l1_project", None) or args.project or ctx.project_dir or Path.cwd())
    folder = layout.memory_dir(project)
    try:
        index.ensure_structure(folder)
    except OSError as exc:  # a planted symlink (UnsafePathError) or an unwritable project
        print(f"omcm memory: {exc}", file=sys.stderr)
        return 1
    settings = load_settings(ctx, project)
    if args.action == "status":
        data = index.reconcile(folder, ctx.log)
        print(
            f"memory.md: {layout.tokens_of_file(folder / layout.MEMORY_FILE)} tokens (rotates at {settings.threshold_tokens})"
        )
        print(f"archives: {len(data['rotatedFiles'])}; summaries pending: {', '.join(index.pending(data)) or 'none'}")
        old = legacy_values(project, ctx.home, ctx.log)
        if old is not None:
            print(f"{old[0]} is read for the keys the TOML config does not set; write this instead, then delete it:")
            print(toml_for(old[1]), end="")
        return 0
    if args.action == "search":
        hits = search.search(folder, args.query, args.deep, ctx.log)
        if args.json:
            print(json.dumps(hits, ensure_ascii=False, indent=2))
        elif not hits:
            print(f'[MEMORY_KEEPER] No results for "{args.query}"')
        for hit in hits if not args.json else ():
            where = f"{hit['file']}:{hit['line']}" if "line" in hit else hit["file"]
            print(
                f"[{hit['source']}] {where} {('[' + hit['type'] + '] ') if 'type' in hit else ''}{hit.get('text', '')}"[
                    :300
                ]
            )
        return 0
    if args.action == "summary":
        raw = sys.stdin.read() if args.source == "-" else Path(args.source).read_text(encoding="utf-8")
        try:
            target = summary.save(folder, Path(args.archive).name, raw, ctx.log)
        except summary.SummaryError as exc:
            print(f"omcm memory summary: {exc}", file=sys.stderr)
            return 1
        print(f"saved {target.name}; {args.archive} is summarized")
        return 0
    if args.action == "migrate-legacy":
        archives = legacy.migrate(folder, settings, ctx.log)
        if not archives:
            print("[MEMORY_KEEPER] No migration needed (under threshold)")
        else:
            print(f"[MEMORY_KEEPER] Legacy split: {len(archives)} archives created")
            for name in archives:
                print(f"{layout.TRIGGER} file={name}")
        return 0
    if args.action == "rotate":
        for name in check(folder, settings, ctx.log):
            print(f"{layout.TRIGGER} file={name}")
        return 0
    if args.action == "write-l1":
        from omcm_memory_rotation import l1

        try:
            path = l1.write(folder, Path(args.transcript), args.session)
        except OSError as exc:
            layout.error_log(folder, "rotation-error.log", f"L1 not written: {exc}")
            return 1
        print(path)
        return 0
    return 2
