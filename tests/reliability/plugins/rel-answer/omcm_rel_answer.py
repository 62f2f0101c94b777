"""A well-behaved plugin: answers every hook with a deterministic Result.

It also records each tool call under ``ctx.session_dir(session_id)``, so hostile
session ids exercise the path sanitiser through a real plugin.
"""

from omcm_core import Result, hookimpl


def _remember(event, ctx):
    from omcm_core.files import atomic_write_json

    try:
        folder = ctx.session_dir(event.session_id)
        atomic_write_json(folder / "rel-answer.json", {"event": event.hook_event_name})
    except OSError as exc:  # a full disk costs this note, never the answer
        ctx.log.warning("rel_answer_state_unwritable", error=str(exc))


@hookimpl
def pre_tool(event, ctx):
    return Result(additional_context=f"rel-answer saw {event.tool_name} before it ran", system_message="rel-answer ok")


@hookimpl
def post_tool(event, ctx):
    _remember(event, ctx)
    state = "succeeded" if event.succeeded else "failed"
    return Result(additional_context=f"rel-answer saw {event.tool_name} {state}")


@hookimpl
def session_start(event, ctx):
    _remember(event, ctx)
    return Result(additional_context=f"rel-answer session {event.source}")


@hookimpl
def session_end(event, ctx):
    _remember(event, ctx)


@hookimpl
def user_prompt_submit(event, ctx):
    return Result(additional_context=f"rel-answer prompt of {len(event.prompt or '')} characters")


@hookimpl
def stop(event, ctx):
    return Result(system_message="rel-answer stop")


@hookimpl
def pre_compact(event, ctx):
    return None
