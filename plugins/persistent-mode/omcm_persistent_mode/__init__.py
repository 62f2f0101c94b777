"""persistent-mode: keep Claude working until the job is done.

- UserPromptSubmit: mode keywords (ultrawork/ulw/uw, ``/ralph-loop``,
  ``/ultrawork-ralph``, ``/cancel-ralph``), search/analyze hints and the
  frontend or git skill are given to Claude as context.
- Stop: an active ralph loop, ultrawork with pending todos, or plain pending
  todos continue the turn with a rotating continuation message (Stop context
  on a client known to take it, 2.1.163+, else a block), each bounded by a
  counter; a completion promise is verified once against ``.omc/prd.json``.
- PostToolUse: a throttled reminder to delegate searches to subagents.
- StopFailure: remembered and told to Claude at the next prompt or resume.

Any internal error fails open: it is logged and the hook says nothing.
"""

from __future__ import annotations

import attrs
from attrs.validators import ge

from omcm_core import hookimpl
from omcm_core.config import Project
from omcm_core.records import Command

PLUGIN = "persistent-mode"
#: Direct search tools counted for the agent-usage reminder, and the delegation tools that reset it.
_COUNTED_TOOLS = ("Grep", "Glob", "Read", "WebFetch", "Agent", "Task")


def _names(value) -> tuple:
    return tuple(str(v).lower() for v in value) if isinstance(value, (list, tuple)) else (str(value).lower(),)


@attrs.frozen
class PersistentModeConfig:
    """``[persistent-mode]``. A repository must not keep Claude looping longer than the user allows:
    a project may lower the limits and switch things off, never the reverse (``Project`` markers)."""

    #: Off switch for everything this plugin does (the user's escape from any loop).
    enabled: bool = attrs.field(default=True, metadata=Project.off)
    #: Stops a ralph loop blocks before it ends on its own.
    max_iterations: int = attrs.field(default=50, validator=ge(1), metadata=Project.lower)
    #: Continuations in a row without a newly completed todo before giving up (a todo that flips
    #: back to pending and done again is not progress: only a new highest completed count is).
    max_todo_attempts: int = attrs.field(default=5, validator=ge(0), metadata=Project.lower)
    #: Todo/ultrawork continuations for one goal (from one user prompt to the next), progress or not.
    max_todo_continuations: int = attrs.field(default=20, validator=ge(0), metadata=Project.lower)
    #: Continuations of every kind (ralph, ultrawork, todos) in one session before persistent-mode stops continuing.
    max_session_continuations: int = attrs.field(default=200, validator=ge(1), metadata=Project.lower)
    #: Days a session's state (the user's alone: it removes every project's sessions' state) (ultrawork, a cancel, skills given) is kept after it ends, so --resume remembers it.
    state_days: float = attrs.field(default=7.0, validator=ge(0))
    #: Continue on pending todos without any mode on.
    todo_continuation: bool = attrs.field(default=True, metadata=Project.off)
    #: Ask Claude to verify a ralph completion claim against the PRD.
    verify: bool = attrs.field(default=True, metadata=Project.off)
    #: Verification requests without a verdict before the claim is accepted.
    max_verification_attempts: int = attrs.field(default=3, validator=ge(1), metadata=Project.lower)
    #: Give the frontend/git skill prompts when a prompt calls for them.
    skills: bool = attrs.field(default=True, metadata=Project.off)
    #: Give the search/analyze hints when a prompt says search/find/analyze.
    keyword_hints: bool = attrs.field(default=True, metadata=Project.off)
    #: Keywords that switch nothing on: any of ultrawork, ulw, uw, ralph-loop, ultrawork-ralph, cancel, search, analyze.
    disabled_keywords: tuple = attrs.field(default=(), converter=_names, metadata=Project.add)
    #: Skills never given: git-master, frontend-ui-ux.
    disabled_skills: tuple = attrs.field(default=(), converter=_names, metadata=Project.add)
    #: Remind Claude to delegate after every N direct Grep/Glob/Read/WebFetch calls (0: never). The user's
    #: alone: 0 is "never", so neither lower nor raise is a safe direction.
    agent_reminder_every: int = attrs.field(default=15, validator=ge(0))
    #: How much of the transcript's end is read for todos and the last message.
    transcript_tail_bytes: int = attrs.field(default=2_000_000, validator=ge(4096), metadata=Project.lower)


def _guarded(name, work, ctx, *args):
    """Run ``work``; on any error log it and say nothing (never block on our own bug)."""
    try:
        return _for_route(work(*args), ctx)
    except Exception as exc:  # noqa: BLE001 - failing open is the contract
        ctx.log.error("failed_open", hook=name, error=f"{type(exc).__name__}: {str(exc)[:200]}")
        return None


_SLASH = r"(?<![\w:/])/(cancel-ralph|cancel-ultrawork|ultrawork-ralph|ralph-loop|ultrawork)(?![\w-])"


def _for_route(result, ctx):
    """On the Claude Code plugin route the client names our commands ``/omcm:NAME``: say them so."""
    if result is None or not ctx.env.get("CLAUDE_PLUGIN_ROOT"):
        return result
    import re

    fields = {
        key: re.sub(_SLASH, r"/omcm:\1", value)
        for key in ("reason", "additional_context", "context_tail", "system_message")
        if isinstance(value := getattr(result, key), str)
    }
    return attrs.evolve(result, **fields)


def _config(ctx):
    config = ctx.config(PersistentModeConfig)
    return config if config.enabled else None


@hookimpl
def config_schema():
    return PersistentModeConfig


@hookimpl
def user_prompt_submit(event, ctx):
    from omcm_persistent_mode import handlers

    config = _config(ctx)
    return config and _guarded("user_prompt_submit", handlers.on_prompt, ctx, event, ctx, config)


@hookimpl
def stop(event, ctx):
    if event.hook_event_name != "Stop":
        return None  # a subagent's stop is not the session's
    from omcm_persistent_mode import handlers

    config = _config(ctx)
    return config and _guarded("stop", handlers.on_stop, ctx, event, ctx, config)


@hookimpl
def post_tool(event, ctx):
    if event.tool_name not in _COUNTED_TOOLS or event.agent_id:
        return None  # the common case, answered before any import
    from omcm_persistent_mode import handlers

    config = _config(ctx)
    return config and _guarded("post_tool", handlers.on_post_tool, ctx, event, ctx, config)


@hookimpl
def session_start(event, ctx):
    if event.source not in ("resume", "compact"):
        return None
    from omcm_persistent_mode import handlers

    config = _config(ctx)
    return config and _guarded("session_start", handlers.on_session_start, ctx, event, ctx, config)


@hookimpl
def stop_failure(event, ctx):
    from omcm_persistent_mode import handlers

    return _guarded("stop_failure", handlers.on_stop_failure, ctx, event, ctx)


@hookimpl
def session_end(event, ctx):
    from omcm_persistent_mode import handlers

    return _guarded("session_end", handlers.on_session_end, ctx, event, ctx, ctx.config(PersistentModeConfig))


@hookimpl
def commands():
    from omcm_persistent_mode import cli

    return [
        Command(name="ralph", help="ralph loops in this project: status, cancel", configure=cli.configure, run=cli.run)
    ]
