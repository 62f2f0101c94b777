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
#: What an Elicitation or ElicitationResult hook may answer for the user.
ELICITATION_ACTIONS = ("accept", "decline", "cancel")
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

    @property
    def tool_kind(self) -> str:
        """``tool_name``'s canonical kind across agents: shell, read, edit, write, search, web, agent, mcp or other."""
        from omcm_core.agents.tool_kinds import kind_of

        return kind_of(self.tool_name)


@frozen(kw_only=True)
class GenericEvent(Event):
    """Any event omcm's table does not know (a newer client's): ``payload`` is the raw stdin object."""

    payload: dict = field(factory=dict)


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
      SubagentStop, PreCompact: top-level ``decision: "block"``. On
      TaskCreated, TaskCompleted and TeammateIdle it is how to refuse.
    - ``additional_context``: text added to Claude's context (PreToolUse,
      PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit; on Stop
      and SubagentStop it keeps Claude going, client 2.1.163+).
    - ``context_tail``: text that follows ``additional_context`` on a line of its
      own and that the context budget never cuts (the body is cut instead): put a
      request or marker Claude must act on here, not at the end of a long text.
    - ``system_message``: a warning shown to the user.
    - ``updated_input``: PreToolUse; replaces the whole tool input.
    - ``halt`` / ``halt_reason``: ``continue: false`` with ``stopReason``; ends
      Claude's work entirely (not the ``stop`` hook, which is about one turn).

    Events newer than PreToolUse's family answer with these too:

    - ``permission`` on PermissionRequest: ``allow`` or ``deny`` become
      ``decision.behavior`` (deny wins; ``reason`` is the deny message);
      ``updated_input`` (first wins) and ``updated_permissions`` (a list of
      permission-update entries, joined) go with an allow. On PreModelSwitch
      and PreSkillShellCommand it is a permissionDecision as on PreToolUse
      (PreModelSwitch takes allow, deny or ask).
    - ``retry``: PermissionDenied; True lets the model retry the call, unless
      another plugin answers False.
    - ``watch_paths``: SessionStart, CwdChanged, FileChanged; absolute paths
      whose changes fire FileChanged (all plugins' lists, joined).
    - ``worktree_path``: WorktreeCreate; the worktree the plugin created (first wins).
    - ``elicitation_action`` / ``elicitation_content``: Elicitation and
      ElicitationResult; answer the MCP server's request for the user
      (cancel > decline > accept; content goes with an accept).
    - ``display_content``: MessageDisplay; text shown instead of the delta (first wins).
    """

    permission: str | None = field(default=None, validator=attrs.validators.optional(attrs.validators.in_(PERMISSIONS)))
    reason: str | None = field(default=None, validator=_optional_str)
    block: bool | None = None
    additional_context: str | None = field(default=None, validator=_optional_str)
    context_tail: str | None = field(default=None, validator=_optional_str)
    system_message: str | None = field(default=None, validator=_optional_str)
    updated_input: dict | None = None
    halt: bool | None = None
    halt_reason: str | None = field(default=None, validator=_optional_str)
    updated_permissions: list | None = None
    retry: bool | None = None
    watch_paths: list | None = None
    worktree_path: str | None = field(default=None, validator=_optional_str)
    elicitation_action: str | None = field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(ELICITATION_ACTIONS))
    )
    elicitation_content: dict | None = None
    display_content: str | None = field(default=None, validator=_optional_str)


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


#: Event records defined in a family module, built on first use: a hook call pays for its own event's
#: classes only (35 attrs classes cost ~21 ms of CPU at import, most for events a call never sees).
_FAMILIES = {
    "omcm_core._records_tool": ("PreToolEvent", "PostToolEvent"),
    "omcm_core._records_session": (
        "SessionStartEvent",
        "SessionEndEvent",
        "UserPromptEvent",
        "StopEvent",
        "PreCompactEvent",
    ),
    "omcm_core._records_more": (
        "StopFailureEvent",
        "PermissionRequestEvent",
        "PermissionDeniedEvent",
        "PostToolBatchEvent",
        "NotificationEvent",
        "SubagentStartEvent",
        "PostCompactEvent",
        "SetupEvent",
        "UserPromptExpansionEvent",
        "CwdChangedEvent",
        "FileChangedEvent",
        "InstructionsLoadedEvent",
        "ConfigChangeEvent",
        "DirectoryAddedEvent",
        "ModelSwitchEvent",
        "SkillShellCommandEvent",
        "WorktreeCreateEvent",
        "WorktreeRemoveEvent",
        "TaskEvent",
        "TeammateIdleEvent",
        "ElicitationEvent",
        "MessageDisplayEvent",
    ),
}
FAMILY_OF = {name: module for module, names in _FAMILIES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = FAMILY_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain global
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *FAMILY_OF])
