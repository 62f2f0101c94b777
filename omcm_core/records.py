"""Typed records that go into and come out of plugins.

Events are frozen attrs records parsed from Claude Code's stdin payload (see
``omcm_core._runtime.payload``). Every documented field is typed; fields a given Claude Code
version does not send are ``None``; keys omcm does not know yet are kept in
``extra`` so a plugin can read a new field before the core learns it.

A plugin answers with ``None`` (no opinion) or a :class:`Result`. The core merges
every plugin's answer into one response (``omcm_core._runtime.merge``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from attrs import field, frozen

PERMISSIONS = ("allow", "deny", "ask", "defer")
#: How a background task's result opens the UserPromptSubmit "prompt" that carries it.
TASK_NOTIFICATION = "<task-notification>"


def _optional_str(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be a string or None, got {type(value).__name__}")


@frozen(kw_only=True)
class Event:
    """Fields every hook event carries (``hook_event_name`` always; the rest when sent)."""

    hook_event_name: str
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    prompt_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    effort: dict | None = None
    #: Payload keys this version of omcm does not model, kept verbatim.
    extra: dict = field(factory=dict)


@frozen(kw_only=True)
class ToolEvent(Event):
    """A tool call. ``tool_use_id`` is missing on Claude Code before v2.0.43."""

    tool_name: str
    tool_input: dict = field(factory=dict)
    tool_use_id: str | None = None


@frozen(kw_only=True)
class PreToolEvent(ToolEvent):
    """PreToolUse: the tool has not run yet."""


@frozen(kw_only=True)
class PostToolEvent(ToolEvent):
    """PostToolUse (``succeeded`` is True) or PostToolUseFailure (False, with ``error``).

    ``tool_response`` is tool-specific and may be any JSON value (LS answers a
    string); treat it as opaque. ``error`` for a failed Bash call starts with
    ``Exit code N``.
    """

    succeeded: bool = True
    tool_response: Any = None
    error: str | None = None
    is_interrupt: bool | None = None
    duration_ms: float | None = None


@frozen(kw_only=True)
class SessionStartEvent(Event):
    """SessionStart; ``source`` is startup, resume, clear, compact or fork."""

    source: str | None = None
    model: str | None = None
    session_title: str | None = None


@frozen(kw_only=True)
class SessionEndEvent(Event):
    """SessionEnd; every SessionEnd hook shares a 1.5 s budget, so detach slow work."""

    reason: str | None = None


@frozen(kw_only=True)
class UserPromptEvent(Event):
    """UserPromptSubmit."""

    prompt: str | None = None
    session_title: str | None = None

    @property
    def is_task_notification(self) -> bool:
        """Whether the "prompt" is a background task's result, not the user's words.

        Claude Code (2.1.330) hands a background agent's or command's result back
        as a user message starting ``<task-notification>``, which fires
        UserPromptSubmit. It is tool output (attacker-controlled): never take it
        for a user's request or count it as a new user prompt.
        """
        return (self.prompt or "").lstrip().startswith(TASK_NOTIFICATION)


@frozen(kw_only=True)
class StopEvent(Event):
    """Stop and SubagentStop. Honour ``stop_hook_active`` before blocking again."""

    stop_hook_active: bool | None = None
    last_assistant_message: str | None = None
    agent_transcript_path: str | None = None
    #: Background tasks (agents, shells) still known to the client (v2.1.145), as sent: a list of
    #: objects whose shape varies by client version; None when the client does not send it.
    background_tasks: Any = None


@frozen(kw_only=True)
class StopFailureEvent(Event):
    """StopFailure (Claude Code v2.1.78): the turn ended on an API error; output is ignored."""

    error: str | None = None
    error_details: Any = None
    last_assistant_message: str | None = None


@frozen(kw_only=True)
class PreCompactEvent(Event):
    """PreCompact; ``trigger`` is manual or auto."""

    trigger: str | None = None
    custom_instructions: str | None = None


@frozen(kw_only=True)
class Result:
    """One plugin's answer. Every field defaults to "no opinion".

    Which fields reach Claude Code depends on the event (the table in
    ``omcm_core.events`` says which; the core drops the rest and says so in the log):

    - ``permission``: PreToolUse only; ``allow``, ``deny``, ``ask`` or ``defer``.
      Across plugins the most restrictive wins: deny > defer > ask > allow.
    - ``reason``: why; with ``permission`` it is the permissionDecisionReason,
      with ``block`` it is the reason Claude is shown.
    - ``block``: PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop,
      SubagentStop, PreCompact: top-level ``decision: "block"``.
    - ``additional_context``: text added to Claude's context (PreToolUse,
      PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit).
    - ``system_message``: a warning shown to the user.
    - ``updated_input``: PreToolUse; replaces the whole tool input.
    - ``halt`` / ``halt_reason``: ``continue: false`` with ``stopReason``; ends
      Claude's work entirely (not the ``stop`` hook, which is about one turn).
    """

    permission: str | None = field(default=None, validator=attrs.validators.optional(attrs.validators.in_(PERMISSIONS)))
    reason: str | None = field(default=None, validator=_optional_str)
    block: bool | None = None
    additional_context: str | None = field(default=None, validator=_optional_str)
    system_message: str | None = field(default=None, validator=_optional_str)
    updated_input: dict | None = None
    halt: bool | None = None
    halt_reason: str | None = field(default=None, validator=_optional_str)


@frozen(kw_only=True)
class Command:
    """A subcommand a plugin adds to ``omcm`` (``omcm <name> ...``).

    ``configure`` receives the argparse sub-parser to add arguments to; ``run``
    receives the parsed namespace and a :class:`omcm_core.context.Context` and
    returns the process exit code.
    """

    name: str
    help: str
    run: Callable[..., int]
    configure: Callable[..., None] | None = None


@frozen(kw_only=True)
class McpTool:
    """A read-only tool a plugin offers Claude through ``omcm mcp`` (an MCP server over stdio).

    ``function`` takes keyword arguments with type hints (the SDK derives the
    tool's input schema from them) and returns something JSON can hold. Its
    docstring-free ``description`` is what the model reads to choose the tool:
    say what it finds and what it costs. omcm masks secrets in the answer and
    cuts it to ``[core] mcp_answer_chars`` before it reaches the model.
    """

    name: str
    description: str
    function: Callable[..., Any]
