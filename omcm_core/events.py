"""Every Claude Code hook event omcm answers, in one table.

Each row says, for one ``hook_event_name``: which hook (``omcm_core.hookspecs``)
its plugins implement, which record (``omcm_core.records``) they receive, the
timeout omcm registers with Claude Code, which :class:`~omcm_core.records.Result`
fields Claude Code reads for it, and which ``[core]`` budget each plugin gets.
The payload parser, the merge, ``omcm install``, the dispatcher and
``omcm_core.testing`` all read this table, so supporting a new event is one row
here (plus its hook and record if it needs new ones, and its entry in the
repository's ``hooks.json``, which a test compares with this table).

An event missing here (one a newer client added) goes to the generic hook
``any_event`` with its raw payload (:data:`GENERIC`), which can only answer the
protocol's common fields.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from omcm_core import records

#: Claude Code caps additionalContext and systemMessage at 10,000 characters.
TEXT_CAP = 10_000


@frozen(kw_only=True)
class EventSpec:
    """What omcm knows about one Claude Code hook event."""

    #: Claude Code's ``hook_event_name``.
    name: str
    #: The hookspec its plugins implement.
    hook: str
    #: The frozen record the hook's ``event`` argument is: the class, or its name in
    #: :mod:`omcm_core.records`, whose family module is then imported on first use (``record``).
    record_ref: type | str = field(alias="record")
    #: Seconds Claude Code waits for the hook (written by ``omcm install``).
    timeout_s: float = 10
    #: ``Result.permission`` renders (hookSpecificOutput.permissionDecision, most restrictive wins).
    permission: bool = False
    #: A ``[core] fail_closed`` guard that cannot answer turns the call into a deny (a gate on commands).
    fail_closed: bool = False
    #: The permissionDecision values the event takes; other answers are dropped.
    permissions: tuple[str, ...] = records.PERMISSIONS
    #: ``Result.updated_input`` renders (hookSpecificOutput.updatedInput, first wins).
    rewrite: bool = False
    #: ``Result.permission`` (allow/deny), ``updated_input`` and ``updated_permissions`` render as
    #: PermissionRequest's ``decision`` object (deny wins).
    decision: bool = False
    #: ``Result.retry`` renders (hookSpecificOutput.retry).
    retry: bool = False
    #: ``Result.watch_paths`` renders (hookSpecificOutput.watchPaths).
    watch_paths: bool = False
    #: ``Result.worktree_path`` renders (hookSpecificOutput.worktreePath).
    worktree_path: bool = False
    #: ``Result.elicitation_action`` / ``elicitation_content`` render (hookSpecificOutput.action/content).
    elicitation: bool = False
    #: ``Result.display_content`` renders (hookSpecificOutput.displayContent).
    display: bool = False
    #: A hookSpecificOutput key a command hook prints as plain text instead of JSON (WorktreeCreate).
    plain_stdout: str | None = None
    #: ``Result.additional_context`` renders (hookSpecificOutput.additionalContext).
    context: bool = False
    #: ``Result.additional_context`` shares ``[core] context_budget``. Not on Stop: there it is the
    #: continuation itself, which, like a block reason, a budget must not cut away.
    budget_context: bool = True
    #: ``Result.block`` renders (top-level ``decision: "block"`` with ``reason``).
    block: bool = False
    #: ``Result.system_message`` is shown; Claude Code discards it for some events.
    system_message: bool = True
    #: ``Result.halt`` renders (``continue: false``); meaningless for side-effect-only events.
    halt: bool = True
    #: The reasons of plugins that answered without blocking follow a continuation: appended to the
    #: block reason when one plugin blocks, else to the additionalContext when one plugin gives context
    #: (Stop: a continuation message carries another plugin's note); dropped when nobody continues.
    ride_along: bool = False
    #: The oldest Claude Code that knows the event. Before 2.1.101 an unknown event name made Claude
    #: Code reject the whole settings file, so ``omcm install`` registers the event only when the
    #: client it finds is at least this version.
    min_client: str | None = None
    #: The ``[core]`` setting holding each plugin's time budget on this event.
    budget: str = "plugin_budget_ms"

    @property
    def record(self) -> type:
        ref = self.record_ref
        return getattr(records, ref) if isinstance(ref, str) else ref


def _table(*specs: EventSpec) -> dict[str, EventSpec]:
    return {spec.name: spec for spec in specs}


_TOOL: dict[str, Any] = dict(context=True, block=True, timeout_s=15)
#: Stop's additionalContext (client 2.1.163+) keeps Claude going like a block, as non-error feedback.
_STOP: dict[str, Any] = dict(
    hook="stop", record="StopEvent", block=True, context=True, budget_context=False, ride_along=True
)
#: Events Claude Code does not show a systemMessage for, and whose ``continue`` means nothing.
_QUIET: dict[str, Any] = dict(system_message=False, halt=False)
#: The intro version of events the hooks reference (as of 2.1.240's docs) lists without one:
#: the oldest client they are known to exist in, so no older client meets their names.
_DOCUMENTED = "2.1.240"

EVENTS: dict[str, EventSpec] = _table(
    EventSpec(
        name="PreToolUse",
        hook="pre_tool",
        record="PreToolEvent",
        permission=True,
        rewrite=True,
        context=True,
        fail_closed=True,
    ),
    EventSpec(name="PostToolUse", hook="post_tool", record="PostToolEvent", **_TOOL),
    EventSpec(name="PostToolUseFailure", hook="post_tool", record="PostToolEvent", **_TOOL),
    EventSpec(
        name="SessionStart",
        hook="session_start",
        record="SessionStartEvent",
        context=True,
        watch_paths=True,
        timeout_s=20,
    ),
    # Every SessionEnd hook shares 1.5 s in Claude Code, hence the smaller per-plugin budget.
    EventSpec(
        name="SessionEnd",
        hook="session_end",
        record="SessionEndEvent",
        timeout_s=1.5,
        budget="session_end_budget_ms",
        **_QUIET,
    ),
    EventSpec(name="UserPromptSubmit", hook="user_prompt_submit", record="UserPromptEvent", context=True, block=True),
    EventSpec(name="Stop", **_STOP),
    EventSpec(name="SubagentStop", **_STOP),
    EventSpec(name="PreCompact", hook="pre_compact", record="PreCompactEvent", block=True, system_message=False),
    # The turn ended on an API error; Claude Code ignores the output (side effects only).
    EventSpec(name="StopFailure", hook="stop_failure", record="StopFailureEvent", min_client="2.1.101", **_QUIET),
    # --- events added in omcm 0.x (issue 27); each row is all the core needs ---
    EventSpec(
        name="PermissionRequest",
        hook="permission_request",
        record="PermissionRequestEvent",
        decision=True,
        min_client="2.0.45",
    ),
    EventSpec(
        name="PermissionDenied",
        hook="permission_denied",
        record="PermissionDeniedEvent",
        retry=True,
        min_client="2.1.89",
    ),
    EventSpec(
        name="PostToolBatch",
        hook="post_tool_batch",
        record="PostToolBatchEvent",
        min_client=_DOCUMENTED,
        **_TOOL,
    ),
    # Claude Code discards a Notification's systemMessage. It parses additionalContext (the protocol's
    # types have it) but 2.1.330 and 2.1.332 give it to neither the model nor the transcript (measured,
    # tests/e2e/test_events_interactive_e2e.py): side effects are what a Notification hook is for.
    EventSpec(
        name="Notification",
        hook="notification",
        record="NotificationEvent",
        context=True,
        system_message=False,
    ),
    EventSpec(
        name="SubagentStart",
        hook="subagent_start",
        record="SubagentStartEvent",
        context=True,
        min_client="2.0.43",
    ),
    EventSpec(name="PostCompact", hook="post_compact", record="PostCompactEvent", min_client="2.1.76", **_QUIET),
    EventSpec(name="Setup", hook="setup", record="SetupEvent", context=True, min_client="2.1.10"),
    EventSpec(
        name="UserPromptExpansion",
        hook="user_prompt_expansion",
        record="UserPromptExpansionEvent",
        context=True,
        block=True,
        min_client=_DOCUMENTED,
    ),
    EventSpec(
        name="CwdChanged",
        hook="cwd_changed",
        record="CwdChangedEvent",
        watch_paths=True,
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    EventSpec(
        name="FileChanged",
        hook="file_changed",
        record="FileChangedEvent",
        watch_paths=True,
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    EventSpec(
        name="InstructionsLoaded",
        hook="instructions_loaded",
        record="InstructionsLoadedEvent",
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    EventSpec(
        name="ConfigChange", hook="config_change", record="ConfigChangeEvent", block=True, min_client=_DOCUMENTED
    ),
    EventSpec(
        name="DirectoryAdded",
        hook="directory_added",
        record="DirectoryAddedEvent",
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    # deny cancels the switch, ask asks the user (a headless session refuses); no defer, no rewrite.
    EventSpec(
        name="PreModelSwitch",
        hook="pre_model_switch",
        record="ModelSwitchEvent",
        permission=True,
        permissions=("allow", "deny", "ask"),
        min_client="2.1.251",
    ),
    EventSpec(
        name="PostModelSwitch",
        hook="post_model_switch",
        record="ModelSwitchEvent",
        context=True,
        min_client="2.1.251",
    ),
    # Claude Code never applies an updatedInput here (any value stops the command), so no rewrite.
    EventSpec(
        name="PreSkillShellCommand",
        hook="pre_skill_shell_command",
        record="SkillShellCommandEvent",
        permission=True,
        fail_closed=True,
        min_client="2.1.332",
    ),
    # A WorktreeCreate hook replaces git's worktree creation; a command hook prints the path.
    EventSpec(
        name="WorktreeCreate",
        hook="worktree_create",
        record="WorktreeCreateEvent",
        worktree_path=True,
        plain_stdout="worktreePath",
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    EventSpec(
        name="WorktreeRemove",
        hook="worktree_remove",
        record="WorktreeRemoveEvent",
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
    # decision: "block" (Result.block) refuses the task / keeps the teammate working, its reason going
    # to the model; 2.1.330 and 2.1.332 log a continue: false here and go on (tests/e2e/test_task_refusal_e2e.py).
    EventSpec(name="TaskCreated", hook="task_created", record="TaskEvent", block=True, min_client=_DOCUMENTED),
    EventSpec(name="TaskCompleted", hook="task_completed", record="TaskEvent", block=True, min_client=_DOCUMENTED),
    EventSpec(
        name="TeammateIdle", hook="teammate_idle", record="TeammateIdleEvent", block=True, min_client=_DOCUMENTED
    ),
    EventSpec(
        name="Elicitation",
        hook="elicitation",
        record="ElicitationEvent",
        elicitation=True,
        min_client=_DOCUMENTED,
    ),
    EventSpec(
        name="ElicitationResult",
        hook="elicitation_result",
        record="ElicitationEvent",
        elicitation=True,
        min_client=_DOCUMENTED,
    ),
    # Runs while text streams (Claude Code's default timeout is 10 s): keep it very fast.
    EventSpec(
        name="MessageDisplay",
        hook="message_display",
        record="MessageDisplayEvent",
        display=True,
        timeout_s=5,
        min_client=_DOCUMENTED,
        **_QUIET,
    ),
)

#: The row for any event not in :data:`EVENTS` (a newer client's): the generic hook, common fields only.
GENERIC = EventSpec(name="*", hook="any_event", record="GenericEvent")


def spec_for(event_name: str) -> EventSpec:
    """The row for ``event_name``; :data:`GENERIC` for an event omcm does not know."""
    return EVENTS.get(event_name, GENERIC)


def known(event_name: str) -> bool:
    """Whether omcm's table has a row for ``event_name``."""
    return event_name in EVENTS


def events_for_hooks(hooks: set[str], client_version: str | None = None) -> list[str]:
    """The event names whose hook is in ``hooks``, in table order (what ``omcm install`` registers).

    An event with a ``min_client`` is left out unless ``client_version`` (``claude --version``)
    is known and at least that: registering it for an older client would break its settings file.
    """
    return [
        spec.name
        for spec in EVENTS.values()
        if spec.hook in hooks and (spec.min_client is None or _at_least(client_version, spec.min_client))
    ]


def _at_least(version: str | None, minimum: str) -> bool:
    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".") if p.isdigit())

    return version is not None and parts(version) >= parts(minimum)
