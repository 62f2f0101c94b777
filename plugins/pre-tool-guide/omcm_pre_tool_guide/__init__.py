"""pre-tool-guide: learn from failed tool calls and warn Claude before it repeats one.

Learning (``post_tool``): every failed call becomes a ``tool_error`` event and an
``error_kb`` row keyed by its normalized error and its file; when the same tool
later succeeds in that session, the row gets its resolution (what succeeded,
with which tool, and the tools used on the way).

Guidance (``pre_tool``), per seed 001 (REQ-RA-301..305): before Edit/Write, up to
two resolved past errors about that file; before Bash, the session's last Bash
error if its resolution is known; Task/Agent and other tools: nothing. Never
blocks; any failure means no guidance and a log line.
"""

from __future__ import annotations

from omcm_core import Result, hookimpl

FILE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


@hookimpl
def pre_tool(event, ctx):
    from omcm_pre_tool_guide import guidance, knowledge, normalize

    try:
        if event.tool_name in FILE_TOOLS:
            path = normalize.file_of(event.tool_input)
            key = normalize.file_key(path)
            if not key:
                return None
            knowledge.ready(ctx.store)
            items = guidance.file_items(knowledge.errors_for_file(ctx.store, key, path), ctx.language)
        elif event.tool_name == "Bash" and event.session_id:
            knowledge.ready(ctx.store)
            row = knowledge.last_bash_error(ctx.store, event.session_id)
            items = guidance.bash_items(row, ctx.language) if row else []
        else:
            return None  # Task/Agent: disabled as in the seed's v9; other tools: nothing to say
    except Exception as exc:  # store missing, locked or damaged: no guidance, never a broken call
        ctx.log.error("guidance_failed", tool=event.tool_name, error=f"{type(exc).__name__}: {exc}")
        return None
    return Result(additional_context="\n".join(items)) if items else None


@hookimpl
def post_tool(event, ctx):
    from omcm_core.redact import mask

    from omcm_pre_tool_guide import knowledge, normalize

    error = event.error if not event.succeeded else normalize.failed_exit(event.tool_name, event.tool_response)
    if error is not None and not normalize.is_mistake(error):
        return None  # a user's rejection or an interruption: nothing to learn, nothing resolved
    try:
        knowledge.ready(ctx.store)
        if error is not None:
            raw = mask(error)[:4000]
            normalized = normalize.normalize_error(error)
            path = normalize.file_of(event.tool_input, raw)
            knowledge.record_failure(
                ctx.store, event.session_id, event.tool_name, raw, normalized, path, normalize.file_key(path)
            )
        else:
            resolution = knowledge.record_success(
                ctx.store, event.session_id, event.tool_name, normalize.resolved_by(event.tool_name, event.tool_input)
            )
            if resolution:
                ctx.log.info("error_resolved", tool=event.tool_name, steps=len(resolution["toolSequence"]))
    except Exception as exc:
        ctx.log.error("learning_failed", tool=event.tool_name, error=f"{type(exc).__name__}: {exc}")
    return None


@hookimpl
def doctor_report(ctx):
    from omcm_pre_tool_guide import knowledge

    knowledge.ready(ctx.store)
    (errors, resolved), = ctx.store.query("SELECT count(*), count(resolution) FROM error_kb")
    (events,), = ctx.store.query("SELECT count(*) FROM guide_events")
    return {"known_errors": errors, "resolved": resolved, "error_events": events}
