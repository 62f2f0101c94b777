"""pre-tool-guide: learn from failed tool calls and warn Claude before it repeats one.

Learning: every failed call becomes a ``tool_error`` event and an ``error_kb``
row keyed by its normalized error and its file; when the same tool later
succeeds in that session, the row gets its resolution (what succeeded, with
which tool, and the tools used on the way). Failures come from PostToolUse /
PostToolUseFailure hooks and, for the errors Claude Code raises before a tool
runs (an Edit of a file not read yet fires no hook), from the transcript
(:meth:`omcm_core.context.Context.unreported_tool_calls`).

Guidance (``pre_tool``): before Edit/Write, up to two resolved past errors
about that file, and the learned "read it first" lesson when the session has
not read the file; before Bash, the session's last Bash error if its resolution
is known; Task/Agent and other tools: nothing. Never blocks; any failure means
no guidance and a log line.

Sharing (``[pre-tool-guide] share = true`` with a team store, see docs/teams.md):
lessons are also queued for the team, and guidance adds the team's lessons from
the local copy the background sync keeps (:mod:`omcm_pre_tool_guide.sharing`).
"""

from __future__ import annotations

import os

from omcm_core import Result, hookimpl

FILE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
READ_TOOLS = ("Read", *FILE_TOOLS)
#: The tools ``pre_tool`` answers: ``omcm install`` starts no PreToolUse process for others (docs/writing-plugins.md).
handles_tools = {"pre_tool": ("Bash", *FILE_TOOLS)}


@hookimpl
def pre_tool(event, ctx):
    from omcm_pre_tool_guide import knowledge

    if event.tool_name not in FILE_TOOLS and event.tool_name != "Bash":
        return None  # Task/Agent: no guidance (SubagentStop carries no success flag); other tools: none known
    try:
        knowledge.ready(ctx.store)
        _learn_from_transcript(event, ctx)
        items = _file_items(event, ctx) if event.tool_name in FILE_TOOLS else _bash_items(event, ctx)
    except Exception as exc:  # store missing, locked or damaged: no guidance, never a broken call
        ctx.log.error("guidance_failed", tool=event.tool_name, error=f"{type(exc).__name__}: {exc}")
        return None
    _sync_if_due(ctx)
    return Result(additional_context="\n".join(items)) if items else None


def _file_items(event, ctx) -> list[str]:
    from omcm_pre_tool_guide import guidance, knowledge, normalize, sharing

    path = normalize.file_of(event.tool_input)
    key = normalize.file_key(path)
    if not key:
        return []
    project = str(ctx.project_dir) if ctx.project_dir else None
    rows = knowledge.errors_for_file(ctx.store, key, path)
    shown_rows = normalize.displayed(rows, project)
    team = sharing.enabled(ctx)
    if team and len(shown_rows) < 2:  # the team's lessons about this file fill what this machine lacks
        have = {error for error, _ in shown_rows}
        shown_rows += sharing.safely(ctx, sharing.file_lessons, key, have, 2 - len(shown_rows), default=[])
    items = guidance.file_items(shown_rows, ctx.language)
    if path and not knowledge.seen(ctx.store, event.session_id, path) and os.path.isfile(path):
        known = {error for error, _ in rows}
        lessons = knowledge.unread_file_lessons(ctx.store, event.tool_name, normalize.UNREAD_FILE_ERRORS)
        lessons = normalize.displayed([row for row in lessons if row[0] not in known], project)
        if team and not lessons:
            shown_errors = {error for error, _ in shown_rows}
            lessons = [
                row
                for row in sharing.safely(
                    ctx, sharing.unread_lessons, event.tool_name, normalize.UNREAD_FILE_ERRORS, default=[]
                )
                if row[0] not in shown_errors
            ]
        shown = normalize.display_error(path, project)
        items += guidance.unread_items(lessons, shown, ctx.language)
    return items


def _bash_items(event, ctx) -> list[str]:
    from omcm_pre_tool_guide import guidance, knowledge, normalize, sharing

    row = knowledge.last_bash_error(ctx.store, event.session_id) if event.session_id else None
    if not row and event.session_id and sharing.enabled(ctx):
        failure = knowledge.last_bash_failure(ctx.store, event.session_id)
        lesson = sharing.safely(ctx, sharing.bash_lesson, failure[0]) if failure else None
        row = (*lesson, failure[1]) if lesson and failure else None
    if not row:
        return []
    error, resolution, failed = row
    command = event.tool_input.get("command") if isinstance(event.tool_input, dict) else None
    if failed and not normalize.programs(failed) & normalize.programs(command):
        return []  # the last error was about another program: `env | grep X` needs no pytest lesson
    project = str(ctx.project_dir) if ctx.project_dir else None
    return guidance.bash_items(normalize.displayed([(error, resolution)], project)[0], ctx.language)


@hookimpl
def post_tool(event, ctx):
    from omcm_pre_tool_guide import knowledge

    try:
        knowledge.ready(ctx.store)
        _learn_from_transcript(event, ctx)
        _learn(event, ctx)
    except Exception as exc:
        ctx.log.error("learning_failed", tool=event.tool_name, error=f"{type(exc).__name__}: {exc}")
    return None


@hookimpl
def stop(event, ctx):
    _settle(event, ctx)


@hookimpl
def session_end(event, ctx):
    _settle(event, ctx)


def _settle(event, ctx) -> None:
    from omcm_pre_tool_guide import knowledge

    try:
        knowledge.ready(ctx.store)
        _learn_from_transcript(event, ctx)
    except Exception as exc:
        ctx.log.error("learning_failed", error=f"{type(exc).__name__}: {exc}")


def _learn_from_transcript(event, ctx) -> None:
    """Learn from the calls no hook reported (an Edit refused before it ran), in transcript order."""
    calls = ctx.unreported_tool_calls(event)
    for call in calls:
        _learn(call.as_event(), ctx)
    if calls:
        ctx.log.info("learned_from_transcript", calls=len(calls), failures=sum(c.is_error for c in calls))


def _learn(event, ctx) -> None:
    from omcm_core.redact import mask_head
    from omcm_pre_tool_guide import knowledge, normalize

    error = event.error if not event.succeeded else normalize.failed_exit(event.tool_name, event.tool_response)
    if error is not None and not normalize.is_mistake(error):
        return  # a user's rejection or an interruption: nothing to learn, nothing resolved
    if error is not None:
        raw = mask_head(error, 4000)  # masked as a whole, without masking megabytes
        normalized = normalize.normalize_error(error)
        path = normalize.file_of(event.tool_input, raw)
        command = event.tool_input.get("command") if event.tool_name == "Bash" else None
        knowledge.record_failure(
            ctx.store,
            event.session_id,
            event.tool_name,
            raw,
            normalized,
            path,
            normalize.file_key(path),
            mask_head(command, 200) if isinstance(command, str) else None,
            normalize.subject(event.tool_name, event.tool_input, raw),
        )
        _share(ctx, "share_failure", event.tool_name, raw, normalized, normalize.file_key(path))
        return
    if event.tool_name in READ_TOOLS:
        knowledge.note_seen(ctx.store, event.session_id, normalize.file_of(event.tool_input))
    resolved = knowledge.record_success(
        ctx.store,
        event.session_id,
        event.tool_name,
        normalize.resolved_by(event.tool_name, event.tool_input),
        normalize.subject(event.tool_name, event.tool_input),
    )
    if resolved:
        resolution, normalized, key = resolved
        ctx.log.info("error_resolved", tool=event.tool_name, steps=len(resolution["toolSequence"]))
        _share(ctx, "share_resolution", normalized, key, resolution)


def _share(ctx, what: str, *args) -> None:
    """Queue a lesson for the team when sharing is on; learned locally whatever happens here."""
    from omcm_pre_tool_guide import sharing

    try:
        if sharing.enabled(ctx):
            getattr(sharing, what)(ctx, *args)
    except Exception as exc:
        ctx.log.error("team_share_failed", error=f"{type(exc).__name__}: {exc}")


def _sync_if_due(ctx) -> None:
    """Start the background team sync when due: a timestamp read, a process start at most every interval."""
    from omcm_pre_tool_guide import sharing

    try:
        if sharing.enabled(ctx):
            from omcm_core import team

            team.maybe_sync(ctx)
    except Exception as exc:
        ctx.log.error("team_sync_start_failed", error=f"{type(exc).__name__}: {exc}")


@hookimpl
def config_schema():
    from omcm_pre_tool_guide.sharing import GuideConfig

    return GuideConfig


@hookimpl
def doctor_report(ctx):
    from omcm_pre_tool_guide import knowledge

    knowledge.ready(ctx.store)
    ((errors, resolved),) = ctx.store.query("SELECT count(*), count(resolution) FROM error_kb")
    ((events,),) = ctx.store.query("SELECT count(*) FROM guide_events")
    return {"known_errors": errors, "resolved": resolved, "error_events": events}


@hookimpl
def commands():
    from omcm_core.records import Command
    from omcm_pre_tool_guide import lessons

    return [
        Command(
            name="lessons",
            help="list what pre-tool-guide learned from failed calls (`omcm lessons forget ID` drops one)",
            configure=lessons.configure,
            run=lessons.run,
        )
    ]


@hookimpl
def mcp_tools(ctx):
    from omcm_pre_tool_guide import lessons

    return lessons.offered(ctx)
