"""Event records of the less frequent events (permission, batch, notification, files, tasks, ...).

Split from :mod:`omcm_core.records` so a hook call builds only its own event's
attrs classes (each costs its generated methods at import); import them from
``omcm_core.records``, which loads this module on first use.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from omcm_core.records import Event, ToolEvent


@frozen(kw_only=True)
class StopFailureEvent(Event):
    """StopFailure (Claude Code v2.1.78): the turn ended on an API error; output is ignored."""

    error: str | None = None
    error_details: Any = None
    last_assistant_message: str | None = None


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
