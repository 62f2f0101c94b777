"""The omcm hook specifications: the plugin author's manual.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names
are the hooks below, registered under the ``omcm`` entry-point group::

    # pyproject.toml
    [project.entry-points.omcm]
    my-plugin = "omcm_my_plugin"

    # omcm_my_plugin.py
    from omcm_core import hookimpl, Result

    @hookimpl
    def pre_tool(event, ctx):
        if event.tool_name == "Bash" and "rm -rf /" in event.tool_input.get("command", ""):
            return Result(permission="deny", reason="refusing to wipe the disk")
        return None

Rules every hook shares:

- Take only the arguments you need (pluggy passes the ones you name): ``event``
  is the frozen event record (``omcm_core.records``); ``ctx`` is the
  :class:`omcm_core.context.Context` with the store, your config section, paths,
  the language and a logger bound to your plugin name. Never give a hook
  argument a default value: pluggy would not pass it, so omcm refuses the
  plugin at load and ``omcm plugins`` names the argument.
- Return ``None`` for "no opinion" or a :class:`omcm_core.records.Result`.
  Anything else is logged as a plugin error.
- The core calls each plugin on its own, in plugin-name order, timed, with a time
  budget (``[core] plugin_budget_ms``). A plugin that raises, returns garbage or
  overruns is skipped and logged with its name and version; the others still
  answer. Three failures in a row open the plugin's circuit breaker for a while
  (``omcm plugins`` shows "breaker open"; ``omcm plugins reset NAME`` closes it,
  and so does a new version or an edit of the plugin's source). A plugin named in
  ``[core] fail_closed`` that cannot answer a PreToolUse or PreSkillShellCommand
  (failed, kept out by its breaker, or not importable) turns the call into a deny.
- Order: ``@hookimpl(tryfirst=True)`` runs (and its answer counts, e.g. for
  the first ``updated_input`` and the order of joined context) before the
  others, ``trylast=True`` after them; within each group, plugin-name order.
  Hook wrappers (``wrapper=True`` or ``hookwrapper=True``) are refused: the
  plugin is not loaded and ``omcm plugins`` says why, since the core calls
  each plugin on its own and there is no call chain to wrap.
- Never print to stdout: stdout is Claude Code's protocol channel. The core
  sends anything printed there to stderr.
- Every tool call waits for ``pre_tool``: keep it to a few milliseconds and
  import heavy modules inside the function that needs them.
- Claude Code runs hooks in parallel and parallel tool calls start several
  dispatchers at once: keep shared state in ``ctx.store`` (SQLite, WAL) or
  behind ``omcm_core.files.file_lock``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from omcm_core.context import Context
    from omcm_core.records import (
        Command,
        ConfigChangeEvent,
        CwdChangedEvent,
        DirectoryAddedEvent,
        ElicitationEvent,
        FileChangedEvent,
        GenericEvent,
        InstructionsLoadedEvent,
        McpTool,
        MessageDisplayEvent,
        ModelSwitchEvent,
        NotificationEvent,
        PermissionDeniedEvent,
        PermissionRequestEvent,
        PostCompactEvent,
        PostToolBatchEvent,
        PostToolEvent,
        PreCompactEvent,
        PreToolEvent,
        Result,
        SessionEndEvent,
        SessionStartEvent,
        SetupEvent,
        SkillShellCommandEvent,
        StopEvent,
        StopFailureEvent,
        SubagentStartEvent,
        TaskEvent,
        TeammateIdleEvent,
        UserPromptEvent,
        UserPromptExpansionEvent,
        WorktreeCreateEvent,
        WorktreeRemoveEvent,
    )

PROJECT = "omcm"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def pre_tool(event: PreToolEvent, ctx: Context) -> Result | None:
    """PreToolUse: Claude is about to run ``event.tool_name`` with ``event.tool_input``.

    :param event: the tool call; ``tool_use_id`` and ``permission_mode`` are
        ``None`` on older Claude Code. File paths are native (backslashes on
        Windows).
    :param ctx: the per-plugin context.
    :return: ``None`` or a Result. ``permission`` (allow/deny/ask/defer) merges
        most-restrictive-wins; ``additional_context`` is joined in plugin-name
        order; ``updated_input`` from the first plugin in name order that gives
        one wins and is dropped when the merged permission is deny or defer.

    A plugin whose tool hooks want only some tools says so with a module-level
    ``handles_tools`` (e.g. ``("Bash", "Edit")``, or per hook:
    ``{"pre_tool": ("Bash",)}``; names or JavaScript-regex patterns such as
    ``"mcp__github__.*"``): ``omcm install`` then registers a ``matcher`` so
    Claude Code starts no hook process for other tools, unless another plugin
    wants every tool. The hook may still see other tools; keep its own check.
    """


@hookspec
def post_tool(event: PostToolEvent, ctx: Context) -> Result | None:
    """PostToolUse and PostToolUseFailure: the tool has run.

    :param event: ``succeeded`` is False for PostToolUseFailure, with ``error``
        (Bash: ``"Exit code N\\n..."``). ``tool_response`` is opaque JSON.
        ``duration_ms`` is set by Claude Code v2.1.119 and later.
    :param ctx: the per-plugin context.
    :return: ``None`` or a Result; ``additional_context`` reaches Claude next to
        the tool result; ``block`` sends ``reason`` to Claude (the tool already ran).
    """


@hookspec
def session_start(event: SessionStartEvent, ctx: Context) -> Result | None:
    """SessionStart (startup, resume, clear, compact, fork).

    :return: ``None`` or a Result whose ``additional_context`` opens the
        conversation. Keep it small: every session pays for it.
    """


@hookspec
def session_end(event: SessionEndEvent, ctx: Context) -> None:
    """SessionEnd. Side effects only; the answer is ignored by Claude Code.

    All SessionEnd hooks share a 1.5 s budget: start slow work with
    ``omcm_core.background.spawn_detached`` and return at once.
    """


@hookspec
def user_prompt_submit(event: UserPromptEvent, ctx: Context) -> Result | None:
    """UserPromptSubmit: the user sent ``event.prompt``.

    :return: ``None`` or a Result; ``additional_context`` goes with the prompt;
        ``block`` erases the prompt and shows ``reason`` to the user.
    """


@hookspec
def stop(event: StopEvent, ctx: Context) -> Result | None:
    """Stop and SubagentStop: Claude is about to end its turn.

    :return: ``None`` or a Result. Two answers keep Claude going: ``block``
        with a ``reason`` (shown to the user as a hook error), or, with Claude
        Code 2.1.163 and later, ``additional_context`` alone (non-error
        feedback; older clients ignore it). Both count toward the client's cap
        of consecutive continuations (``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``,
        default 8). Check ``event.stop_hook_active`` first or you will loop.
        A ``reason`` without ``block`` is a note for a continuation: when
        another plugin blocks, it is appended to the block reasons, else when
        another plugin gives context, to that context (after them, in
        plugin-name order, separated by a blank line); when nobody continues it
        is dropped. So a plugin can add to another's continuation message
        without either importing the other.
    """


@hookspec
def stop_failure(event: StopFailureEvent, ctx: Context) -> None:
    """StopFailure: the turn ended on an API error (rate limit, overload, ...).

    Side effects only: Claude Code ignores the output of this event, so record
    what happened and tell Claude later (at the next UserPromptSubmit or
    SessionStart). ``event.error`` is the error type; ``error_details`` and
    ``last_assistant_message`` are sent when Claude Code has them.
    """


@hookspec
def pre_compact(event: PreCompactEvent, ctx: Context) -> Result | None:
    """PreCompact (manual or auto). ``block`` prevents the compaction."""


# --- The events below are registered only with a Claude Code that knows them (``min_client`` in
# ``omcm_core.events``; docs/writing-plugins.md has the table). Each answers only what its docstring says.


@hookspec
def permission_request(event: PermissionRequestEvent, ctx: Context) -> Result | None:
    """PermissionRequest (v2.0.45): Claude Code is about to ask the user to allow a tool call.

    Fires only when a dialog would show (not under bypassPermissions, not for
    calls a rule already allows). ``event.permission_suggestions`` are the
    "always allow" entries the dialog offers.

    :return: ``None`` (show the dialog) or a Result whose ``permission`` is
        ``allow`` or ``deny`` (``ask``/``defer`` mean "show the dialog"). Deny
        wins; its ``reason`` is the message Claude gets. An allow may carry
        ``updated_input`` (first wins) and ``updated_permissions``
        (permission-update entries such as ``{"type": "addRules", "rules":
        [{"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow",
        "destination": "session"}``; every allowing plugin's, joined).
    """


@hookspec
def permission_denied(event: PermissionDeniedEvent, ctx: Context) -> Result | None:
    """PermissionDenied (v2.1.89): auto mode refused a tool call; ``event.reason`` says why.

    :return: ``None`` or a Result with ``retry=True`` to let the model retry
        the call; one plugin's ``retry=False`` vetoes it.
    """


@hookspec
def post_tool_batch(event: PostToolBatchEvent, ctx: Context) -> Result | None:
    """PostToolBatch: every tool call of a parallel batch has resolved (one call per batch).

    ``event.tool_calls`` lists ``{tool_name, tool_input, tool_use_id,
    tool_response}``: cheaper than ``post_tool`` when work can be done once
    per batch.

    :return: ``None`` or a Result; ``additional_context`` reaches Claude with
        the results; ``block`` sends ``reason`` to Claude.
    """


@hookspec
def notification(event: NotificationEvent, ctx: Context) -> Result | None:
    """Notification: Claude Code notifies the user (``event.notification_type``:
    permission_prompt, idle_prompt, agent_needs_input, ...). A desktop notifier's hook.

    :return: ``None``: it is a hook for side effects (a desktop notification, a
        sound). Claude Code parses ``additional_context`` but 2.1.330 and 2.1.332
        never give it to Claude (measured); ``halt`` stops Claude.
    """


@hookspec
def subagent_start(event: SubagentStartEvent, ctx: Context) -> Result | None:
    """SubagentStart (v2.0.43): a subagent starts (``event.agent_type``, ``event.agent_id``).

    :return: ``None`` or a Result whose ``additional_context`` opens the
        subagent's conversation (the subagent does not see the parent's context).
    """


@hookspec
def post_compact(event: PostCompactEvent, ctx: Context) -> None:
    """PostCompact (v2.1.76): the conversation was compacted; ``event.compact_summary`` is what is left.

    Side effects only. To put something back into Claude's context after a
    compaction, answer ``session_start`` (it fires with ``source == "compact"``).
    """


@hookspec
def setup(event: SetupEvent, ctx: Context) -> Result | None:
    """Setup (v2.1.10): repository setup (``event.trigger``: init or maintenance).

    Fires when Claude Code starts with ``--init`` or ``--maintenance`` (measured with ``-p``);
    not at an ordinary start (that is SessionStart).

    :return: ``None`` or a Result; ``additional_context`` is meant to open the
        conversation, but in print mode (``-p``) 2.1.330 and 2.1.332 parse it and
        give it to no request (measured, tests/e2e/test_more_events_e2e.py): do
        the setup work here and say what matters at SessionStart.
    """


@hookspec
def user_prompt_expansion(event: UserPromptExpansionEvent, ctx: Context) -> Result | None:
    """UserPromptExpansion: a slash command typed by the user expands into ``event.prompt``.

    ``command_name``, ``command_args`` and ``command_source`` say which.

    :return: ``None`` or a Result; ``additional_context`` goes with the
        expanded prompt; ``block`` stops it and shows ``reason`` to the user.
    """


@hookspec
def cwd_changed(event: CwdChangedEvent, ctx: Context) -> Result | None:
    """CwdChanged: the working directory moved (``event.old_cwd`` -> ``event.new_cwd``).

    :return: ``None`` or a Result whose ``watch_paths`` (absolute paths) are
        watched for FileChanged.
    """


@hookspec
def file_changed(event: FileChangedEvent, ctx: Context) -> Result | None:
    """FileChanged: a watched file changed (``event.event``: change, add or unlink).

    :return: ``None`` or a Result whose ``watch_paths`` are watched from now on.
    """


@hookspec
def instructions_loaded(event: InstructionsLoadedEvent, ctx: Context) -> None:
    """InstructionsLoaded: a CLAUDE.md or rule file was loaded (``file_path``, ``memory_type``,
    ``load_reason``). Side effects only."""


@hookspec
def config_change(event: ConfigChangeEvent, ctx: Context) -> Result | None:
    """ConfigChange: a settings file changed during the session (``source``, ``file_path``).

    :return: ``None`` or a Result; ``block`` keeps the change from applying.
    """


@hookspec
def directory_added(event: DirectoryAddedEvent, ctx: Context) -> None:
    """DirectoryAdded: ``/add-dir`` added ``event.directory`` to the session. Side effects only."""


@hookspec
def pre_model_switch(event: ModelSwitchEvent, ctx: Context) -> Result | None:
    """PreModelSwitch (v2.1.251): a model switch is requested (``from_model`` -> ``to_model``).

    :return: ``None`` or a Result whose ``permission`` is allow (skip the
        re-cache confirmation), deny (cancel the switch) or ask; most
        restrictive wins.
    """


@hookspec
def post_model_switch(event: ModelSwitchEvent, ctx: Context) -> Result | None:
    """PostModelSwitch (v2.1.251): the session's model changed.

    :return: ``None`` or a Result; ``additional_context`` reaches the model
        with the next request the new model serves (measured in the interactive
        client, 2.1.330 and 2.1.332; in ``-p`` a ``/model`` run sends no request).
    """


@hookspec
def pre_skill_shell_command(event: SkillShellCommandEvent, ctx: Context) -> Result | None:
    """PreSkillShellCommand (v2.1.332): a skill's inline shell command is about to run.

    ``event.tool_input["command"]`` is the command; ``event.command_name`` the
    skill holding it.

    :return: ``None`` or a Result whose ``permission`` deny, ask or defer keeps
        the command from running (allow adds nothing). Claude Code never applies
        a rewritten input here, so ``updated_input`` is dropped.
    """


@hookspec
def worktree_create(event: WorktreeCreateEvent, ctx: Context) -> Result | None:
    """WorktreeCreate: create an isolated worktree named like ``event.name``.

    A registered WorktreeCreate hook replaces Claude Code's own git worktree
    creation: implement it only if your plugin creates worktrees.

    :return: a Result whose ``worktree_path`` is the absolute path created
        (the first plugin's wins; omcm prints it as Claude Code expects).
    """


@hookspec
def worktree_remove(event: WorktreeRemoveEvent, ctx: Context) -> None:
    """WorktreeRemove: remove the worktree at ``event.worktree_path``. Side effects only."""


@hookspec
def task_created(event: TaskEvent, ctx: Context) -> Result | None:
    """TaskCreated: a task is being created (``task_id``, ``task_subject``, ``teammate_name``, ...).

    :return: ``None`` or a Result with ``block=True`` and ``reason`` to refuse it: the task is not
        created and the model gets the reason as the TaskCreate call's error.
    """


@hookspec
def task_completed(event: TaskEvent, ctx: Context) -> Result | None:
    """TaskCompleted: a task is being marked completed.

    :return: ``None`` or a Result with ``block=True`` and ``reason`` to refuse it: the task stays
        open and the model gets the reason as the TaskUpdate call's error.
    """


@hookspec
def teammate_idle(event: TeammateIdleEvent, ctx: Context) -> Result | None:
    """TeammateIdle: a teammate (``teammate_name`` of ``team_name``) is about to go idle.

    :return: ``None`` or a Result with ``block=True`` and ``reason`` to keep it working (the
        teammate gets the reason as feedback).
    """


@hookspec
def elicitation(event: ElicitationEvent, ctx: Context) -> Result | None:
    """Elicitation: an MCP server (``mcp_server_name``) asks the user for input (``requested_schema``).

    :return: ``None`` (ask the user) or a Result answering for the user:
        ``elicitation_action`` accept, decline or cancel (cancel > decline >
        accept) with ``elicitation_content`` for an accept.
    """


@hookspec
def elicitation_result(event: ElicitationEvent, ctx: Context) -> Result | None:
    """ElicitationResult: the user answered an elicitation (``event.action``, ``event.content``).

    :return: ``None`` or a Result overriding ``elicitation_action`` /
        ``elicitation_content`` before the answer reaches the MCP server.
    """


@hookspec
def message_display(event: MessageDisplayEvent, ctx: Context) -> Result | None:
    """MessageDisplay: assistant text is about to be shown; ``event.delta`` holds the new lines.

    Runs while text streams: keep it to a few milliseconds.

    :return: ``None`` or a Result whose ``display_content`` is shown in place
        of the delta (first wins). What Claude said is unchanged.
    """


@hookspec
def any_event(event: GenericEvent, ctx: Context) -> Result | None:
    """Any event omcm does not know yet (a newer Claude Code's): ``event.payload`` is the raw stdin object.

    ``event.hook_event_name`` names it; the common fields (``session_id``,
    ``cwd``, ...) are set when sent.

    :return: ``None`` or a Result; only the protocol's common answers render:
        ``system_message``, and ``halt`` with ``halt_reason``.
    """


@hookspec
def config_schema() -> type | None:
    """The attrs class describing this plugin's config section (``[<plugin name>]``).

    Optional. ``omcm doctor`` uses it to check the user's config files and
    ``ctx.config(schema)`` reads the section with it. A project's ``.claude/omcm.toml``
    sets only the keys marked with :class:`omcm_core.config.Project` (field metadata);
    the rest are the user's alone.
    """


@hookspec
def doctor_report(ctx: Context) -> Mapping[str, Any] | None:
    """Facts ``omcm doctor`` prints under this plugin's name (sizes, counts, problems).

    :return: a JSON-serialisable mapping, shown as ``key: value`` lines; a key
        ``problems`` holding a list of strings marks the plugin unhealthy (doctor
        exits 1). End a problem with ``; run COMMAND`` and doctor shows COMMAND
        as its fix.
    """


@hookspec
def commands() -> Sequence[Command] | None:
    """Subcommands this plugin adds to the ``omcm`` command line.

    :return: a sequence of :class:`omcm_core.records.Command`. Names must not
        clash with the core's (hook, plugins, doctor, install, uninstall) or with
        another plugin's; a clash is logged and the later one skipped.
    """


@hookspec
def mcp_tools(ctx: Context) -> Sequence[McpTool] | None:
    """Read-only tools this plugin offers Claude through ``omcm mcp``.

    Called once when the MCP server starts, with this plugin's context (its
    ``project_dir`` is the folder Claude Code started the server in). Keep answers
    short and let Claude ask for more: a search returns ids and one line each,
    a ``get``-style tool the whole entry. Scope results to ``ctx.project_dir``
    unless the caller asks for every project. Nothing here runs on the hook path.

    :return: a sequence of :class:`omcm_core.records.McpTool`; names must be
        unique across plugins (a clash is logged and the later one skipped).
    """
