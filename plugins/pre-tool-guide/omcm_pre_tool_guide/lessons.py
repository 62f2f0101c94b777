"""What pre-tool-guide has learned, for people (``omcm lessons``) and for Claude (the ``lessons`` MCP tool).

A lesson is one row of ``error_kb``: an error as it was seen (masked), the
file or command it was about, how often, and once known what resolved it.
Lessons about a file are scoped by the file's path (under the current project
unless every project is asked for); lessons about a command have no path and
apply everywhere, as the guidance itself does.
"""

from __future__ import annotations

import json
import time
from typing import Any

from omcm_core.records import McpTool
from omcm_core.redact import mask

#: Characters of an error and of a resolution in a listed lesson.
ERROR_CHARS, RESOLUTION_CHARS = 300, 300


def _under(path: str | None, project: str) -> bool:
    return bool(path) and (path == project or path.startswith(project.rstrip("/") + "/"))


def listed(
    store, file: str | None = None, command: str | None = None, project: str | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Lessons, most recently used first; ``file``/``command`` are substrings to match."""
    from omcm_pre_tool_guide import knowledge

    knowledge.ready(store)
    clauses, params = [], []
    if file:
        clauses.append("(file_path LIKE ? OR file_key LIKE ?)")
        params += [f"%{file}%", f"%{file.casefold()}%"]
    if command:
        clauses.append("(error_raw LIKE ? OR resolution LIKE ?)")
        params += [f"%{command}%", f"%{command}%"]
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = store.query(
        "SELECT id, tool, file_path, error_raw, resolution, use_count, last_used FROM error_kb"
        f"{where} ORDER BY last_used DESC LIMIT ?",
        [*params, max(1, limit) * (20 if project else 1)],  # a project filter in Python: read more
    )
    out = []
    for lesson_id, tool, path, error, resolution, count, last_used in rows:
        if project and path and not _under(path, project):
            continue
        fix = json.loads(resolution) if resolution else None
        out.append(
            {
                "id": lesson_id,
                "tool": tool,
                "file": mask(path) if path else None,
                "error": mask(error)[:ERROR_CHARS],
                "resolved_by": mask(str(fix.get("resolvedBy", "")))[:RESOLUTION_CHARS] if fix else None,
                "seen": count,
                "last_seen": time.strftime("%Y-%m-%d %H:%M", time.localtime(last_used)),
            }
        )
        if len(out) >= limit:
            break
    return out


def forget(store, lesson_id: int) -> bool:
    """Delete one lesson (and its pending state); False when there is no such lesson."""
    from omcm_pre_tool_guide import knowledge

    knowledge.ready(store)
    with store.transaction() as conn:
        row = conn.execute("SELECT error_normalized, file_key FROM error_kb WHERE id = ?", (lesson_id,)).fetchone()
        if row is None:
            return False
        conn.execute("DELETE FROM error_kb WHERE id = ?", (lesson_id,))
        conn.execute("DELETE FROM guide_pending WHERE error_normalized = ? AND file_key = ?", row)
    return True


def configure(parser) -> None:
    parser.add_argument("--file", help="only lessons about files whose path contains this")
    parser.add_argument("--command", dest="about_command", help="only lessons whose error or fix contains this text")
    parser.add_argument("--all-projects", action="store_true", help="include files of every project")
    parser.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="lessons_action", metavar="ACTION")
    forget_parser = sub.add_parser("forget", help="forget one lesson by its id (shown by `omcm lessons`)")
    forget_parser.add_argument("id", type=int, help="the lesson's id")


def run(args, ctx) -> int:
    if getattr(args, "lessons_action", None) == "forget":
        if forget(ctx.store, args.id):
            print(f"Forgot lesson {args.id}.")
            return 0
        print(f"omcm lessons: no lesson has id {args.id} (`omcm lessons --all-projects` lists them).")
        return 1
    project = None if args.all_projects or ctx.project_dir is None else str(ctx.project_dir)
    found = listed(ctx.store, args.file, args.about_command, project, args.limit)
    if args.json:
        print(json.dumps({"project": project, "lessons": found}, ensure_ascii=False, indent=2))
        return 0
    if not found:
        print("No lessons yet" + (f" in {project} (--all-projects shows every project's)." if project else "."))
        return 0
    for lesson in found:
        about = lesson["file"] or lesson["tool"] or "-"
        print(f"{lesson['id']:>5}  {lesson['last_seen']}  x{lesson['seen']:<3} {about}")
        print(f"       error: {' '.join(lesson['error'].split())[:160]}")
        if lesson["resolved_by"]:
            print(f"       fixed by: {' '.join(lesson['resolved_by'].split())[:160]}")
    return 0


def offered(ctx) -> list[McpTool]:
    project = str(ctx.project_dir) if ctx.project_dir is not None else None

    def lessons(
        file: str | None = None, command: str | None = None, all_projects: bool = False, limit: int = 10
    ) -> dict:
        found = listed(ctx.store, file, command, None if all_projects else project, max(1, min(int(limit), 30)))
        return {"scope": "every project" if all_projects or project is None else project, "lessons": found}

    return [
        McpTool(
            name="lessons",
            description="Mistakes made before in this project and what fixed them (learned from failed tool calls). "
            "`file`: lessons about files whose path contains this; `command`: lessons whose error or fix mentions "
            "it. Short entries, most recent first; `all_projects` includes other projects' files.",
            function=lessons,
        )
    ]
