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
class PermissionRequestEvent(ToolEvent):
    """PermissionRequest (v2.0.45): Claude Code is about to show a permission dialog for a tool call.

    ``permission_suggestions`` are the permission-update entries the dialog
    offers ("always allow ..."); there is no ``tool_use_id``.
    """

    permission_suggestions: list | None = None


@frozen(kw_only=True)
class PermissionDeniedEvent(ToolEvent):
    """PermissionDenied (v2.1.89): auto mode's classifier denied a tool call; ``reason`` says why."""

    reason: str | None = None


@frozen(kw_only=True)
class PostToolBatchEvent(Event):
    """PostToolBatch: every tool call of one parallel batch has resolved, before the next model request.

    ``tool_calls`` is a list of ``{tool_name, tool_input, tool_use_id, tool_response}``
    objects (opaque JSON: check each entry's type before reading it).
    """

    tool_calls: list = field(factory=list)


@frozen(kw_only=True)
class NotificationEvent(Event):
    """Notification: Claude Code shows the user a notification (``notification_type``:
    permission_prompt, idle_prompt, auth_success, elicitation_dialog, agent_needs_input, ...)."""

    message: str | None = None
    title: str | None = None
    notification_type: str | None = None


@frozen(kw_only=True)
class SubagentStartEvent(Event):
    """SubagentStart (v2.0.43): a subagent (Agent tool call) starts; ``agent_id`` and ``agent_type`` say which."""


@frozen(kw_only=True)
class PostCompactEvent(Event):
    """PostCompact (v2.1.76): the conversation was compacted; ``compact_summary`` is the summary kept."""

    trigger: str | None = None
    compact_summary: str | None = None


@frozen(kw_only=True)
class SetupEvent(Event):
    """Setup (v2.1.10): repository setup; ``trigger`` is init or maintenance."""

    trigger: str | None = None


@frozen(kw_only=True)
class UserPromptExpansionEvent(Event):
    """UserPromptExpansion: a user-typed slash command expands into ``prompt``."""

    expansion_type: str | None = None
    command_name: str | None = None
    command_args: str | None = None
    command_source: str | None = None
    prompt: str | None = None


@frozen(kw_only=True)
class CwdChangedEvent(Event):
    """CwdChanged: the working directory moved from ``old_cwd`` to ``new_cwd``."""

    old_cwd: str | None = None
    new_cwd: str | None = None


@frozen(kw_only=True)
class FileChangedEvent(Event):
    """FileChanged: a watched file changed; ``event`` is change, add or unlink."""

    file_path: str | None = None
    event: str | None = None


@frozen(kw_only=True)
class InstructionsLoadedEvent(Event):
    """InstructionsLoaded: an instruction file (CLAUDE.md or a rule) was loaded.

    ``memory_type`` is User, Project, Local or Managed; ``load_reason`` is
    session_start, nested_traversal, path_glob_match, include or compact.
    """

    file_path: str | None = None
    memory_type: str | None = None
    load_reason: str | None = None
    globs: Any = None
    trigger_file_path: str | None = None
    parent_file_path: str | None = None


@frozen(kw_only=True)
class ConfigChangeEvent(Event):
    """ConfigChange: a settings file changed during the session (``source``: user_settings, project_settings, ...)."""

    source: str | None = None
    file_path: str | None = None


@frozen(kw_only=True)
class DirectoryAddedEvent(Event):
    """DirectoryAdded: a working directory was added mid-session (``/add-dir``)."""

    directory: str | None = None
    source: str | None = None


@frozen(kw_only=True)
class ModelSwitchEvent(Event):
    """PreModelSwitch (a switch is requested) and PostModelSwitch (the model changed), v2.1.251.

    ``context_tokens`` and the estimated re-cache cost (kept in ``extra``) say
    what the switch costs.
    """

    from_model: str | None = None
    to_model: str | None = None
    requested_model: str | None = None
    source: str | None = None
    context_tokens: Any = None


@frozen(kw_only=True)
class SkillShellCommandEvent(ToolEvent):
    """PreSkillShellCommand (v2.1.332): a skill is about to run an inline shell command.

    ``tool_name`` is the shell tool (Bash or PowerShell) and
    ``tool_input["command"]`` the command with its arguments filled in;
    ``command_name`` is the skill or command whose text holds it. ``tool_use_id``
    names no tool call in the transcript.
    """

    command_name: str | None = None
    command_source: str | None = None
    invoked_by: Any = None


@frozen(kw_only=True)
class WorktreeCreateEvent(Event):
    """WorktreeCreate: create an isolated worktree; ``name`` is the suggested slug."""

    name: str | None = None


@frozen(kw_only=True)
class WorktreeRemoveEvent(Event):
    """WorktreeRemove: remove the worktree at ``worktree_path``."""

    worktree_path: str | None = None


@frozen(kw_only=True)
class TaskEvent(Event):
    """TaskCreated and TaskCompleted: a task of the native checklist (or a team's) is created or completed."""

    task_id: str | None = None
    task_subject: str | None = None
    task_description: str | None = None
    teammate_name: str | None = None
    team_name: str | None = None


@frozen(kw_only=True)
class TeammateIdleEvent(Event):
    """TeammateIdle: a teammate is about to go idle."""

    teammate_name: str | None = None
    team_name: str | None = None


@frozen(kw_only=True)
class ElicitationEvent(Event):
    """Elicitation (an MCP server asks the user for input) and ElicitationResult (the user answered).

    ``requested_schema`` is the JSON schema of the wanted input; ``action``
    (accept, decline, cancel) and ``content`` are set on ElicitationResult.
    """

    mcp_server_name: str | None = None
    message: str | None = None
    mode: str | None = None
    url: str | None = None
    elicitation_id: str | None = None
    requested_schema: dict | None = None
    action: str | None = None
    content: Any = None


@frozen(kw_only=True)
class MessageDisplayEvent(Event):
    """MessageDisplay: assistant text is about to be displayed; ``delta`` holds the newly completed lines."""

    turn_id: str | None = None
    message_id: str | None = None
    index: Any = None
    final: bool | None = None
    delta: str | None = None


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
      SubagentStop, PreCompact: top-level ``decision: "block"``.
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
      On TaskCreated, TaskCompleted and TeammateIdle it is how to refuse.

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
