"""memory-rotation: project memory that rotates, summarizes and reloads itself.

``.claude/memory/memory.md`` is the project's running memory (L2). Every
``save_interval`` tool uses it is checked; at 23,750 tokens it is archived whole
as ``memory_YYYYMMDD_HHMMSS.md`` and replaced by its last 2,375 tokens, and
Claude is told ``[MEMORY_KEEPER_ROTATE] file=<archive>`` so the memory-rotate
skill has the memory-summarizer agent write an L3 summary
(``omcm memory summary``). Session start loads the memory back; session end
keeps the transcript as L1.
"""

from __future__ import annotations

from omcm_core import Result, hookimpl
from omcm_core.confined import UnsafePathError
from omcm_core.records import Command

PLUGIN = "memory-rotation"
COUNTERS = ["CREATE TABLE memrot_counters (session_id TEXT PRIMARY KEY, uses INTEGER NOT NULL)"]


def _folder(ctx):
    from omcm_memory_rotation import layout

    if ctx.project_dir is None:
        return None
    return layout.memory_dir(ctx.project_dir)


def count_use(store, session_id: str) -> int:
    """This session's tool uses so far, counted exactly under parallel dispatchers."""
    store.migrate(PLUGIN, COUNTERS)
    with store.transaction() as conn:
        (uses,) = conn.execute(
            "INSERT INTO memrot_counters(session_id, uses) VALUES(?, 1) "
            "ON CONFLICT(session_id) DO UPDATE SET uses = uses + 1 RETURNING uses",
            (session_id,),
        ).fetchone()
    return uses


def check(folder, settings, log) -> list[str]:
    """Rotate (or on the first check, split a legacy file) when due; returns new archives."""
    from omcm_memory_rotation import index, legacy, rotation

    try:
        index.ensure_structure(folder)
    except UnsafePathError:  # a planted symlink: refused and logged by the helper; no rotation
        return []
    if rotation.too_large(folder, log):
        return []
    data = index.reconcile(folder, log)
    if not data["rotatedFiles"]:
        archives = legacy.migrate(folder, settings, log)
        if archives:
            return archives
    archive = rotation.check_and_rotate(folder, settings, log)
    return [archive] if archive else []


@hookimpl
def config_schema():
    from omcm_memory_rotation.settings import MemoryRotationConfig

    return MemoryRotationConfig


@hookimpl
def post_tool(event, ctx):
    from omcm_memory_rotation import layout
    from omcm_memory_rotation.settings import load_settings

    folder = _folder(ctx)
    if folder is None or not event.session_id:
        return None
    settings = load_settings(ctx, ctx.project_dir)
    if not settings.enabled or count_use(ctx.store, event.session_id) % settings.save_interval:
        return None
    try:
        archives = check(folder, settings, ctx.log)
    except UnsafePathError:  # a planted link: refused and logged by the helper; no rotation
        return None
    if not archives:
        return None
    return Result(additional_context="\n".join(f"{layout.TRIGGER} file={name}" for name in archives))


@hookimpl
def session_start(event, ctx):
    from omcm_memory_rotation import index, loader

    folder = _folder(ctx)
    if folder is None:
        ctx.log.info("no_project_dir")
        return None
    try:
        index.ensure_structure(folder)
    except UnsafePathError:  # a planted symlink: refused and logged by the helper; nothing to load
        return None
    body, notice = loader.parts(folder, ctx.log)
    # The notice asks for the pending summaries: a tail, which the context budget never cuts.
    return Result(additional_context=body, context_tail=notice) if body or notice else None


@hookimpl
def session_end(event, ctx):
    from pathlib import Path

    from omcm_core.background import omcm_argv, spawn_detached

    folder = _folder(ctx)
    if folder is None or not event.transcript_path or not event.session_id:
        return None
    if "\0" in event.transcript_path + str(ctx.project_dir) or not Path(event.transcript_path).is_file():
        ctx.log.warning("transcript_missing", path=event.transcript_path)
        return None
    ctx.store.migrate(PLUGIN, COUNTERS)
    with ctx.store.transaction() as conn:
        conn.execute("DELETE FROM memrot_counters WHERE session_id = ?", (event.session_id,))
    # The 1.5 s SessionEnd budget is shared by every hook: write L1 in the background.
    # Values go as --opt=value (an id "-h" is then a value, not an option) and the
    # id as its file-name form, which holds no NUL (a NUL in argv raises).
    from omcm_memory_rotation.l1 import session_name

    spawn_detached(
        omcm_argv(
            "memory",
            f"--project={ctx.project_dir}",
            "write-l1",
            f"--transcript={event.transcript_path}",
            f"--session={session_name(event.session_id)}",
        ),
        env=ctx.env,
    )
    return None


@hookimpl
def doctor_report(ctx):
    from omcm_memory_rotation import index, layout

    folder = _folder(ctx)
    if folder is None or not folder.is_dir() or folder.is_symlink():
        return {"memory": "no .claude/memory in this project"}
    data = index.read(folder, ctx.log)
    return {
        "memory_tokens": layout.tokens_of_file(folder / layout.MEMORY_FILE),
        "archives": len(data["rotatedFiles"]),
        "pending_summaries": index.pending(data),
    }


@hookimpl
def commands():
    from omcm_memory_rotation import cli

    return [
        Command(
            name="memory",
            help="project memory: status, search, summary, migrate-legacy",
            configure=cli.configure,
            run=cli.run,
        )
    ]


@hookimpl
def mcp_tools(ctx):
    from omcm_memory_rotation import tools

    return tools.offered(ctx)
