"""notepad: a project notepad that survives compaction (``.omc/notepad.md``).

A subagent (the Agent tool, formerly Task) that ends its answer with
``<remember>...</remember>`` adds a timestamped Working Memory entry (read from
SubagentStop, which carries a background agent's answer too, and from the Agent
tool's result; saved once). A SubagentStop without an ``agent_type`` is not an
Agent-tool agent (the compaction summary arrives that way) and is ignored;
``<remember priority>...</remember>`` replaces the Priority Context (at most
500 characters). Every SessionStart, including the one that follows a
compaction (``source: "compact"``), hands the priority context back to Claude,
and SubagentStart gives it to each subagent the Agent tool starts (a subagent
sees no SessionStart context); when another plugin keeps Claude going at Stop, it rides along in that
continuation message. ``## MANUAL`` and every hand edit are left alone.
"""

from __future__ import annotations

from omcm_core import Result, hookimpl
from omcm_core.records import Command

PLUGIN = "notepad"


def _config(ctx):
    from omcm_notepad.settings import NotepadConfig

    return ctx.config(NotepadConfig)


@hookimpl
def config_schema():
    from omcm_notepad.settings import NotepadConfig

    return NotepadConfig


@hookimpl
def post_tool(event, ctx):
    config = _config(ctx)
    if not event.succeeded or event.tool_name not in config.tools or ctx.project_dir is None:
        return None
    from omcm_notepad import tags

    response = event.tool_response
    agent_id = response.get("agentId") if isinstance(response, dict) else None
    return _remember(ctx, config, tags.answer_text(response), event.session_id, agent_id)


def _remember(ctx, config, answer: str, session_id, agent_id):
    """Save the tags of one subagent answer (once per agent and notes); the user's notice, or None."""
    from omcm_notepad import answers, clock, notes, tags

    found, ignored = tags.extract(answer, config.priority_max_chars)
    if ignored:
        ctx.log.warning("remember_tags_ignored", ignored=ignored, kept=len(found), limit=tags.MAX_TAGS)
    if not found:
        return None
    claim = answers.key(session_id, agent_id, found)
    if claim is not None and not answers.claim(ctx.store, claim, ctx.log):
        ctx.log.info("remember_already_saved", agent_id=agent_id, notes=len(found))
        return None
    timeout = notes.hook_lock_timeout(ctx.core_config.plugin_budget_ms)
    saved = notes.change(ctx.project_dir, found, config, clock.now(ctx.env), ctx.log, timeout)
    if saved is None:
        if claim is not None:
            answers.release(ctx.store, claim, ctx.log)
        return None
    ctx.log.info(
        "remembered",
        agent_id=agent_id,
        entries=saved.entries,
        priority=saved.priority,
        pruned=saved.pruned,
        dropped=saved.dropped,
        bytes=saved.size,
    )
    if not config.notify:
        return None
    what = [f"{saved.entries} working-memory note{'s' if saved.entries > 1 else ''}"] if saved.entries else []
    what += ["the priority context"] if saved.priority else []
    return Result(system_message=f"notepad: saved {' and '.join(what)} to .omc/notepad.md")


@hookimpl
def session_start(event, ctx):
    from omcm_notepad import clock, notes

    config = _config(ctx)
    now = clock.now(ctx.env)
    if event.source in (None, "startup") and ctx.project_dir is not None:
        # Prune once per new session; a busy lock only postpones it.
        notes.change(
            ctx.project_dir, [], config, now, ctx.log, notes.hook_lock_timeout(ctx.core_config.plugin_budget_ms) / 2
        )
    text = _inert(notes.context(notes.load(ctx.project_dir, ctx.log), config, now))
    if text:
        ctx.log.info("priority_context_injected", source=event.source, chars=len(text))
    return Result(additional_context=text) if text else None


@hookimpl
def subagent_start(event, ctx):
    # Priority context only (bounded, masked): a subagent's window is small and its task narrow.
    config = _config(ctx)
    if not config.subagent_context or ctx.project_dir is None:
        return None
    if not event.agent_type:
        # Not an agent the Agent tool launched (the compaction summary's forked agent has agent_type "").
        return None
    from omcm_notepad import notes

    text = _inert(notes.continuation(notes.load(ctx.project_dir, ctx.log), config))
    if text:
        ctx.log.info("priority_context_injected", source="subagent", agent_type=event.agent_type, chars=len(text))
    return Result(additional_context=text) if text else None


@hookimpl
def stop(event, ctx):
    config = _config(ctx)
    if event.hook_event_name == "SubagentStop":
        # A subagent's answer, background or not; the main agent's own Stop is never a note.
        if not config.subagent_stop or ctx.project_dir is None or not event.last_assistant_message:
            return None
        if not event.agent_type:
            # Not an agent the Agent tool launched: the compaction summary is written by a forked
            # agent with agent_type "", and it may quote an old <remember priority> tag.
            ctx.log.info("remember_skipped_untyped_agent", agent_id=event.agent_id)
            return None
        return _remember(ctx, config, event.last_assistant_message, event.session_id, event.agent_id)
    # A reason without block: the core adds it to another plugin's block reason
    # (a continuation message) and drops it when nobody blocks.
    if event.hook_event_name != "Stop" or not config.continuation:
        return None
    from omcm_notepad import notes

    text = _inert(notes.continuation(notes.load(ctx.project_dir, ctx.log), config))
    return Result(reason=text) if text else None


def _inert(text):
    """Notes are recalled text: a quoted <promise> or <remember> tag must not act again."""
    from omcm_core.quoting import inert

    return inert(text) if text else text


@hookimpl
def doctor_report(ctx):
    from omcm_notepad import clock, notes

    facts = notes.stats(notes.load(ctx.project_dir, ctx.log), _config(ctx), clock.now(ctx.env))
    trouble = notes.problem(ctx.project_dir)
    return {**facts, "problems": [trouble]} if trouble else facts


@hookimpl
def commands():
    from omcm_notepad import cli

    return [
        Command(
            name="notepad",
            help="the project notepad: show, add [--priority] TEXT, prune, stats",
            configure=cli.configure,
            run=cli.run,
        )
    ]


@hookimpl
def mcp_tools(ctx):
    from omcm_notepad import tools

    return tools.offered(ctx)
