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
  argument a default value: pluggy would not pass it.
- Return ``None`` for "no opinion" or a :class:`omcm_core.records.Result`.
  Anything else is logged as a plugin error.
- The core calls each plugin on its own, in plugin-name order, timed, with a time
  budget (``[core] plugin_budget_ms``). A plugin that raises, returns garbage or
  overruns is skipped and logged with its name and version; the others still
  answer. Three failures in a row open the plugin's circuit breaker for a while
  (``omcm plugins`` shows "breaker open"; ``omcm plugins reset NAME`` closes it,
  and so does a new version or an edit of the plugin's source). A plugin named in
  ``[core] fail_closed`` that cannot answer a PreToolUse (failed, kept out by
  its breaker, or not importable) turns the call into a deny.
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
        McpTool,
        PostToolEvent,
        PreCompactEvent,
        PreToolEvent,
        Result,
        SessionEndEvent,
        SessionStartEvent,
        StopEvent,
        StopFailureEvent,
        UserPromptEvent,
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

    :return: ``None`` or a Result; ``block`` with a ``reason`` keeps Claude
        going. Check ``event.stop_hook_active`` first or you will loop.
        A ``reason`` without ``block`` is context for a continuation: when
        another plugin blocks, it is appended to the block reasons (after them,
        in plugin-name order, separated by a blank line); when nobody blocks it
        is dropped. So a plugin can add to another's continuation message
        without either importing the other. (``additional_context`` is not
        rendered on Stop: Claude Code treats it as feedback that keeps Claude
        going, which is a block in all but name.)
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


@hookspec
def config_schema() -> type | None:
    """The attrs class describing this plugin's config section (``[<plugin name>]``).

    Optional. ``omcm doctor`` uses it to check the user's config files and
    ``ctx.config(schema)`` reads the section with it.
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
