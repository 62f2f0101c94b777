"""The hooks' work: read state, decide, write state, answer. Called by the hookimpls in ``__init__``."""

from __future__ import annotations

from attrs import evolve

from omcm_core import Result
from omcm_core.redact import mask
from omcm_persistent_mode import fsaccess, keywords, prd, prompts, skills, stopping, stores, todos
from omcm_persistent_mode.state import RalphState, now

SEARCH_TOOLS = ("Grep", "Glob", "Read", "WebFetch")
AGENT_TOOLS = ("Agent", "Task")


def _context(parts) -> Result | None:
    # Every text here tells Claude what the user asked for (a mode, a loop, a recovery): a tail, never cut.
    text = "\n\n".join(p for p in parts if p)
    return Result(context_tail=mask(text)) if text else None


def _recovery(session, ralph) -> str:
    note = session.recovery or {}
    text = prompts.RECOVERY.format(error=note.get("error", "unknown"), at=note.get("at", "?"))
    if ralph is not None and ralph.active:
        text += prompts.RECOVERY_RALPH.format(
            iteration=ralph.iteration, max=ralph.max_iterations, task=ralph.task[:300]
        )
    return text


def _with_transcript_error(session, event, config):
    """``session`` with a recovery note for an API error seen only in the transcript.

    In ``-p`` the client exits right after a failed turn and kills a StopFailure
    hook still running (and a ``--plugin-dir`` install never registers it), so
    the transcript's error line is read at the next prompt or resume as well.
    """
    found = todos.api_error(fsaccess.tail_lines(event.transcript_path, min(config.transcript_tail_bytes, 262_144)))
    if found is None or found["key"] == session.recovery_seen:
        return session
    recovery = session.recovery or {"error": mask(found["error"]), "at": found["at"]}
    return evolve(session, recovery=recovery, recovery_seen=found["key"])


def _create_prd(project, task, prompt, ctx) -> str:
    """Write .omc/prd.json from the task unless one exists; what Claude is told about it."""
    if stores.load_prd_data(project, ctx.log) is not None:
        return "\n" + prompts.PRD_EXISTS
    data = prd.from_task(mask(task), mask(prompt))
    if not stores.save_prd(project, data, ctx.log):
        return ""
    ctx.log.info("prd_created", stories=len(data["userStories"]))
    count = len(data["userStories"])
    return "\n" + prompts.PRD_CREATED.format(count=count, count_plural="y" if count == 1 else "ies")


def _prd_reports(project, message, ctx) -> None:
    """Mark the stories Claude reports as done in .omc/prd.json."""
    ids = prd.reported_done(message)
    if not ids:
        return
    data = stores.load_prd_data(project, ctx.log)
    changed = prd.mark_done(data, ids)
    if changed and stores.save_prd(project, data, ctx.log):
        ctx.log.info("prd_stories_done", stories=changed)


def _mode_change(event, ctx, config, found, session, parts):
    """Apply a mode keyword or /cancel-ralph; returns the new session state."""
    project, sid = ctx.project_dir, event.session_id
    if found.cancel:
        ralph = stores.load_ralph(project, sid, ctx.log)
        if ralph is not None and ralph.active:
            stores.save_ralph(project, evolve(ralph, status="cancelled", updated_at=now()), ctx.log)
        parts.append(prompts.CANCELLED)
        ctx.log.info("cancelled", session_id=sid)
        return evolve(session, mode=None, cancelled=True)
    if found.mode is None:
        return session
    if found.mode in (keywords.RALPH, keywords.ULTRAWORK_RALPH) and not prd.without_flag(found.task).strip():
        # "/ralph-loop" + Enter (the client completes the name, the user has not typed a task yet):
        # a loop with nothing to do would block every Stop with an empty task.
        parts.append(prompts.usage(found.mode))
        ctx.log.info("mode_refused", mode=found.mode, reason="no task", session_id=sid)
        return session
    session = evolve(session, cancelled=False, mode="ultrawork" if found.mode == keywords.ULTRAWORK else session.mode)
    text = prompts.MODE_PROMPTS[found.mode]
    task = found.task
    if found.mode in (keywords.RALPH, keywords.ULTRAWORK_RALPH):
        wants_prd = prd.asked(task)
        task = prd.without_flag(task)
        ralph = RalphState(
            session_id=sid, mode=found.mode, task=mask(task)[:2000], max_iterations=config.max_iterations
        )
        if stores.save_ralph(project, ralph, ctx.log):
            text += f"\nLoop: at most {config.max_iterations} iterations; state in .omc/ralph/."
            if wants_prd:
                text += _create_prd(project, task, keywords.strip_code(event.prompt or ""), ctx)
        else:
            text = "[persistent-mode] The ralph loop could not start: this project has no usable .omc folder (see the omcm log)."
    parts.append(text + (f"\nTask: {task}" if task else ""))
    ctx.log.info("mode_on", mode=found.mode, session_id=sid)
    return session


def on_prompt(event, ctx, config):
    if not event.session_id or event.is_task_notification:
        return None  # a background agent's answer is not the user: no mode, skill, or "user is back" reset
    found = keywords.detect(event.prompt or "", config.disabled_keywords)
    skill = skills.detect(event.prompt or "", config.disabled_skills) if config.skills else None
    folder = ctx.session_dir(event.session_id)
    parts: list = []
    with fsaccess.home_state_lock(folder):
        session = _with_transcript_error(stores.load_session(folder, ctx.log), event, config)
        if session.recovery:
            parts.append(_recovery(session, stores.load_ralph(ctx.project_dir, event.session_id, ctx.log)))
        # The user is back: todo continuation starts counting afresh.
        session = evolve(
            session,
            recovery=None,
            todo_attempts=0,
            todo_completed_at_block=None,
            todo_goal_blocks=0,
            todo_gave_up=False,
        )
        session = _mode_change(event, ctx, config, found, session, parts)
        given = set(session.skills)
        for hint in found.hints if config.keyword_hints else ():
            if f"hint:{hint}" not in given:
                parts.append(prompts.HINTS[hint])
                given.add(f"hint:{hint}")
        if skill and skill not in given:
            parts.append(prompts.SKILLS[skill])
            given.add(skill)
        stores.save_session(folder, evolve(session, skills=tuple(sorted(given))))
    return _context(parts)


#: How long a Stop waits, at most, for the transcript to hold the message the Stop reports.
CATCH_UP_S, CATCH_UP_STEP_S = 0.3, 0.03


def _caught_up(event, config) -> list:
    """The transcript's tail once it holds the last message the Stop reports.

    The client writes its transcript lines late, and a fast hook (the native
    client answers in a few ms) can read it before the turn's last tool calls
    are there: a TaskUpdate done just before the stop would be missed and a
    finished list continued. Bounded: after CATCH_UP_S the tail is taken as it is.
    """
    import time

    def words(text: str | None) -> str:
        return " ".join((text or "").split())

    lines = fsaccess.tail_lines(event.transcript_path, config.transcript_tail_bytes)
    wanted = words(event.last_assistant_message)
    deadline = time.monotonic() + CATCH_UP_S
    while wanted and time.monotonic() < deadline:
        got = words(todos.last_assistant_text(lines))
        if got and (got in wanted or wanted in got):  # one text block of several, or the whole message
            break
        time.sleep(CATCH_UP_STEP_S)
        lines = fsaccess.tail_lines(event.transcript_path, config.transcript_tail_bytes)
    return lines


def on_stop(event, ctx, config):
    if event.hook_event_name != "Stop" or not event.session_id:
        return None  # a subagent's stop is not the session's
    folder, project = ctx.session_dir(event.session_id), ctx.project_dir
    limits = stopping.Limits(
        config.max_todo_attempts,
        config.max_verification_attempts,
        config.verify,
        config.todo_continuation,
        config.max_todo_continuations,
        config.max_session_continuations,
    )
    running = 0
    version = None
    with fsaccess.home_state_lock(folder):
        session = stores.load_session(folder, ctx.log)
        ralph = stores.load_ralph(project, event.session_id, ctx.log)
        looping = ralph is not None and ralph.active
        if not looping and (session.cancelled or not (session.mode or config.todo_continuation)):
            return None
        lines = _caught_up(event, config)
        version = todos.client_version(lines)
        todo_list = todos.extract(lines)
        message = event.last_assistant_message
        if looping and message is None:
            message = todos.last_assistant_text(lines)
        if looping:
            _prd_reports(project, message, ctx)
        stories = stores.load_stories(project, ctx.log) if looping else []
        decision = stopping.decide(ralph, session, message, todo_list, stories, limits)
        running = stopping.running_background_tasks(event.background_tasks)
        if decision.block and running:
            decision = stopping.wait_for_background()
        if decision.block and session.session_blocks >= limits.max_session_continuations:
            decision = stopping.session_limit(limits)
        # stop_hook_active is false on the first stop of a turn: the client's count of blocks starts there.
        # It counts context continuations as blocks too (measured on 2.1.330 and 2.1.332), so one count serves both.
        blocks = session.stop_blocks if event.stop_hook_active else 0
        cap = stopping.client_block_cap(ctx.env)
        if decision.block and blocks >= cap:
            decision = stopping.pause_at_client_cap(cap)
        if decision.ralph is not None and not stores.save_ralph(project, decision.ralph, ctx.log):
            return None  # an iteration that cannot be counted must not block: that could loop forever
        after = decision.session or session
        total = after.session_blocks + (1 if decision.block else 0)
        stores.save_session(
            folder, evolve(after, stop_blocks=blocks + 1 if decision.block else 0, session_blocks=total)
        )
    as_context = decision.block and stopping.continues_with_context(version)
    ctx.log.info(
        "stop",
        outcome=decision.outcome,
        session_id=event.session_id,
        stop_hook_active=event.stop_hook_active,
        background_tasks=running,
        iteration=decision.ralph.iteration if decision.ralph else None,
        form=("context" if as_context else "block") if decision.block else None,
        client=version,
    )
    if as_context:
        # Non-error feedback that keeps Claude going: the user sees no hook error at each continuation.
        return Result(context_tail=mask(decision.reason or ""), system_message=decision.system_message)
    if decision.block:
        return Result(block=True, reason=mask(decision.reason or ""), system_message=decision.system_message)
    return Result(system_message=decision.system_message) if decision.system_message else None


def on_post_tool(event, ctx, config):
    if not event.session_id or event.agent_id or config.agent_reminder_every <= 0:
        return None  # inside a subagent, searching directly is the point
    if event.tool_name not in SEARCH_TOOLS + AGENT_TOOLS:
        return None
    folder = ctx.session_dir(event.session_id)
    with fsaccess.home_state_lock(folder):
        session = stores.load_session(folder, ctx.log)
        delegated = event.tool_name in AGENT_TOOLS
        calls = 0 if delegated else session.search_calls + 1
        # Only the tools really called are named: current clients offer no Grep/Glob tools in every setup.
        used = () if delegated else tuple(t for t in SEARCH_TOOLS if t in session.search_tools or t == event.tool_name)
        stores.save_session(folder, evolve(session, search_calls=calls, search_tools=used))
    if calls == 0 or calls % config.agent_reminder_every:
        return None
    return Result(additional_context=prompts.AGENT_REMINDER.format(count=calls, tools=", ".join(used)))


def on_session_start(event, ctx, config):
    if not event.session_id or event.source not in ("resume", "compact"):
        return None
    folder = ctx.session_dir(event.session_id)
    parts: list = []
    with fsaccess.home_state_lock(folder):
        session = stores.load_session(folder, ctx.log)
        if event.source == "resume":
            session = _with_transcript_error(session, event, config)
        ralph = stores.load_ralph(ctx.project_dir, event.session_id, ctx.log)
        if session.recovery and event.source == "resume":
            parts.append(_recovery(session, ralph))
            session = evolve(session, recovery=None)
        if event.source == "compact":
            # The compacted conversation may have lost what was injected: give it again when asked.
            session = evolve(session, skills=())
            if ralph is not None and ralph.active:
                parts.append(
                    prompts.MODE_PROMPTS[ralph.mode]
                    + f"\nTask: {ralph.task}\nIteration {ralph.iteration}/{ralph.max_iterations}"
                )
            elif session.mode:
                parts.append(prompts.MODE_PROMPTS[session.mode])
        stores.save_session(folder, session)
    return _context(parts)


def on_stop_failure(event, ctx):
    if not event.session_id:
        return None
    folder = ctx.session_dir(event.session_id)
    error = mask(str(event.error or "unknown"))[:100]
    with fsaccess.home_state_lock(folder):
        session = stores.load_session(folder, ctx.log)
        stores.save_session(folder, evolve(session, recovery={"error": error, "at": now()}))
    ctx.log.info("stop_failure_recorded", error=error, session_id=event.session_id)
    return None


def on_session_end(event, ctx, config):
    """Keep this session's state (a ``--resume`` must remember a cancel, ultrawork, the skills given);
    remove other sessions' state older than ``state_days``."""
    if not event.session_id:
        return None
    folder = ctx.session_dir(event.session_id, create=False)
    removed = fsaccess.prune_home_states(folder.parent, stores.state.SESSION_FILE, config.state_days, keep=folder.name)
    if removed:
        ctx.log.info("old_session_state_removed", sessions=removed)
    return None
