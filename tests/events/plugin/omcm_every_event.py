"""A third party's plugin answering every event of issue 27, each from a field of its record.

Every answer quotes a field the record parsed, so a test sees both that the
payload reached the hook as the right record and that the answer reached
Claude Code's output in the event's shape. ``EVERY_EVENT_LOG`` (a file) gets one
line per call for the side-effect-only events.
"""

import json
import os

from omcm_core import Result, hookimpl


def _note(ctx, event, **fields):
    path = ctx.env.get("EVERY_EVENT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event.hook_event_name, "record": type(event).__name__, **fields}) + "\n")


@hookimpl
def permission_request(event, ctx):
    _note(ctx, event, tool=event.tool_name, input=event.tool_input)
    command = event.tool_input.get("command", "") if event.tool_name == "Bash" else ""
    if "rm -rf" in command:
        return Result(permission="deny", reason=f"every-event: no {command!r}")
    suggestions = [s for s in event.permission_suggestions or [] if isinstance(s, dict)]
    return Result(permission="allow", updated_input=dict(event.tool_input), updated_permissions=suggestions)


@hookimpl
def permission_denied(event, ctx):
    _note(ctx, event, tool=event.tool_name, input=event.tool_input, reason=event.reason)
    return Result(retry=(event.reason or "").lower() == "classifier unavailable")


@hookimpl
def post_tool_batch(event, ctx):
    names = ",".join(str(call.get("tool_name")) for call in event.tool_calls)
    return Result(additional_context=f"batch of {len(event.tool_calls)}: {names}")


@hookimpl
def notification(event, ctx):
    _note(ctx, event, kind=event.notification_type, message=event.message)
    return Result(additional_context=f"noted {event.notification_type}")


@hookimpl
def subagent_start(event, ctx):
    _note(ctx, event, agent_type=event.agent_type)
    return Result(additional_context=f"lessons for {event.agent_type} {event.agent_id}")


@hookimpl
def post_compact(event, ctx):
    _note(ctx, event, trigger=event.trigger, summary=event.compact_summary)


@hookimpl
def setup(event, ctx):
    return Result(additional_context=f"setup: {event.trigger}")


@hookimpl
def user_prompt_expansion(event, ctx):
    if event.command_name == "deploy":
        return Result(block=True, reason=f"/{event.command_name} {event.command_args} is not allowed here")
    return Result(additional_context=f"expanded /{event.command_name} ({event.expansion_type})")


@hookimpl
def cwd_changed(event, ctx):
    _note(ctx, event, old=event.old_cwd, new=event.new_cwd)
    return Result(watch_paths=[os.path.join(event.new_cwd, ".envrc")])


@hookimpl
def file_changed(event, ctx):
    _note(ctx, event, path=event.file_path, change=event.event)
    return Result(watch_paths=[event.file_path] if event.event != "unlink" else [])


@hookimpl
def instructions_loaded(event, ctx):
    _note(ctx, event, file=event.file_path, memory_type=event.memory_type, reason=event.load_reason)


@hookimpl
def config_change(event, ctx):
    return Result(block=event.source == "policy_settings", reason=f"{event.file_path} is managed")


@hookimpl
def directory_added(event, ctx):
    _note(ctx, event, directory=event.directory)


@hookimpl
def pre_model_switch(event, ctx):
    if event.context_tokens and event.context_tokens > 100_000:
        return Result(permission="ask", reason=f"switching to {event.to_model} re-reads {event.context_tokens} tokens")
    return Result(permission="allow")


@hookimpl
def post_model_switch(event, ctx):
    return Result(additional_context=f"now {event.to_model} (was {event.from_model})")


@hookimpl
def pre_skill_shell_command(event, ctx):
    _note(ctx, event, command=event.tool_input.get("command"), skill=event.command_name)
    if "curl" in event.tool_input.get("command", ""):
        return Result(permission="deny", reason=f"{event.command_name} may not download", updated_input={"x": 1})
    return None


@hookimpl
def worktree_create(event, ctx):
    return Result(worktree_path=f"/tmp/every-event-worktrees/{event.name}")


@hookimpl
def worktree_remove(event, ctx):
    _note(ctx, event, path=event.worktree_path)


@hookimpl
def task_created(event, ctx):
    if not event.task_description:
        return Result(block=True, reason=f"task {event.task_id} needs a description")
    return None


@hookimpl
def task_completed(event, ctx):
    return Result(block=True, reason=f"{event.task_subject}: run the tests first")


@hookimpl
def teammate_idle(event, ctx):
    return Result(block=True, reason=f"{event.teammate_name} of {event.team_name}: the queue is not empty")


@hookimpl
def elicitation(event, ctx):
    if event.mcp_server_name == "trusted":
        return Result(elicitation_action="accept", elicitation_content={"name": "omcm"})
    return Result(elicitation_action="decline")


@hookimpl
def elicitation_result(event, ctx):
    return Result(elicitation_action=event.action, elicitation_content={**(event.content or {}), "checked": True})


@hookimpl
def message_display(event, ctx):
    if event.delta and "password" in event.delta:
        return Result(display_content=event.delta.replace("password", "********"))
    return None


@hookimpl
def any_event(event, ctx):
    _note(ctx, event, keys=sorted(event.payload))
    return Result(system_message=f"seen {event.hook_event_name}", additional_context="never rendered")
