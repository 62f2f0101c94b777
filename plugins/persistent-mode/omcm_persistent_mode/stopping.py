"""Whether a Stop is blocked, and with which message: the decision, free of I/O.

Priority: an active ralph loop, then ultrawork with pending todos, then plain
todo continuation. ``stop_hook_active`` (Claude is already continuing because a
Stop hook blocked) does not by itself end a mode, because every mode here is
bounded by a counter that only a real step forward resets:

- ralph: each block is one iteration; at ``max_iterations`` the loop ends.
  A completion claim costs one verification block; after
  ``max_verification_attempts`` requests without a verdict the claim is
  accepted with a warning.
- todos: each block is one attempt; ``max_todo_attempts`` blocks in a row
  without a newly completed todo end the continuation until the user writes
  again (UserPromptSubmit resets the count).
"""

from __future__ import annotations

import re

from attrs import evolve, frozen

from omcm_persistent_mode import messages, prd, prompts
from omcm_persistent_mode.state import RalphState, SessionState, now
from omcm_persistent_mode.todos import TodoList

PROMISE = re.compile(r"<promise>\s*(?:TASK_COMPLETE|DONE)\s*</promise>", re.I)
APPROVED = re.compile(r"<oracle-approved\s*/?>", re.I)
REJECTED = re.compile(r"<oracle-rejected\s*/?>", re.I)
MAX_FEEDBACK = 2000


@frozen
class Limits:
    max_todo_attempts: int = 5
    max_verification_attempts: int = 3
    verify: bool = True
    todo_continuation: bool = True
    max_todo_continuations: int = 20
    max_session_continuations: int = 200


@frozen
class Decision:
    block: bool = False
    reason: str | None = None
    #: A warning for the user (loop ended at a limit, claim auto-approved).
    system_message: str | None = None
    ralph: RalphState | None = None
    session: SessionState | None = None
    #: What happened, for the log.
    outcome: str = "none"


def _progress(todos: TodoList | None, stories: list, ralph: RalphState | None = None) -> messages.Progress:
    iteration = (ralph.iteration, ralph.max_iterations) if ralph else (None, None)
    if todos is not None and todos.total:
        return messages.Progress(todos.completed, todos.total, todos.next_task(), *iteration)
    if stories:
        done = sum(1 for s in stories if s.done)
        return messages.Progress(done, len(stories), prd.next_story(stories), *iteration)
    return messages.Progress(None, None, None, *iteration)


def _end(ralph: RalphState, status: str, outcome: str, warning: str | None = None) -> Decision:
    return Decision(
        ralph=evolve(ralph, status=status, verification_pending=False, updated_at=now()),
        system_message=warning,
        outcome=outcome,
    )


def _continue(ralph: RalphState, todos, stories, prefix: str = "") -> Decision:
    step = evolve(ralph, iteration=ralph.iteration + 1, verification_pending=False, updated_at=now())
    if step.iteration > ralph.max_iterations:
        return _end(
            ralph, "max_iterations", "ralph_max_iterations", prompts.MAX_ITERATIONS.format(max=ralph.max_iterations)
        )
    text = messages.continuation(ralph.mode, step.iteration, _progress(todos, stories, step))
    return Decision(block=True, reason=prefix + text, ralph=step, outcome="ralph_continue")


def _verify(ralph: RalphState, limits: Limits, stories) -> Decision:
    if ralph.verification_attempts >= limits.max_verification_attempts:
        warning = prompts.AUTO_APPROVED.format(attempts=ralph.verification_attempts)
        return _end(ralph, "auto_approved", "ralph_auto_approved", warning)
    attempt = ralph.verification_attempts + 1
    text = prompts.VERIFY.format(
        attempt=attempt, max_attempts=limits.max_verification_attempts, prd=prd.describe(stories)
    )
    step = evolve(ralph, verification_pending=True, verification_attempts=attempt, updated_at=now())
    return Decision(block=True, reason=text, ralph=step, outcome="ralph_verify")


def ralph_step(ralph: RalphState, message: str | None, limits: Limits, todos, stories) -> Decision:
    """One Stop of an active ralph loop."""
    text = message or ""
    if ralph.verification_pending:
        rejected = REJECTED.search(text)
        if rejected:
            feedback = text[rejected.end() :].strip()[:MAX_FEEDBACK] or "(no details given)"
            return _continue(ralph, todos, stories, prompts.REJECTED.format(feedback=feedback) + "\n\n")
        if APPROVED.search(text):
            unfinished = prd.open_stories(stories)
            if unfinished:
                # The PRD is the contract: an approval while stories are open is not the end.
                listed = ", ".join(f"{s.id} {s.title}".strip() for s in unfinished[:10])
                plural = "y is" if len(unfinished) == 1 else "ies are"
                refusal = prompts.APPROVAL_REFUSED.format(count=len(unfinished), plural=plural, stories=listed)
                return _continue(ralph, todos, stories, refusal + "\n\n")
            return _end(ralph, "completed", "ralph_verified")
        return _verify(ralph, limits, stories)
    if PROMISE.search(text):
        if not limits.verify:
            return _end(ralph, "completed", "ralph_completed")
        return _verify(ralph, limits, stories)
    return _continue(ralph, todos, stories)


def _give_up(session: SessionState, todos: TodoList, why: str, outcome: str) -> Decision:
    """The todo continuation ends for this goal: say so once (the seed prints a limit notice too)."""
    if session.todo_gave_up:
        return Decision(outcome=outcome)
    notice = prompts.TODO_LIMIT.format(why=why, pending=todos.pending, total=todos.total)
    return Decision(system_message=notice, session=evolve(session, todo_gave_up=True), outcome=outcome)


def todo_step(session: SessionState, todos: TodoList | None, limits: Limits) -> Decision:
    """Ultrawork or plain todo continuation, bounded per goal and by attempts without progress.

    Progress is a completed count higher than any seen in this goal, so a todo
    flipping between done and pending does not buy more continuations; and the
    goal (one user prompt) has a budget of continuations whatever the progress.
    """
    ultrawork = session.mode == "ultrawork"
    if session.cancelled or todos is None or todos.pending == 0:
        return Decision(outcome="none")
    if not ultrawork and not limits.todo_continuation:
        return Decision(outcome="none")
    best = session.todo_completed_at_block
    moved = best is not None and todos.completed > best
    attempts = 0 if moved else session.todo_attempts
    if attempts >= limits.max_todo_attempts:
        why = f"{attempts} continuations without a newly completed todo"
        return _give_up(session, todos, why, "todo_attempts_exhausted")
    if session.todo_goal_blocks >= limits.max_todo_continuations:
        why = f"{session.todo_goal_blocks} continuations since your last message"
        return _give_up(session, todos, why, "todo_goal_limit")
    mode = messages.ULTRAWORK if ultrawork else messages.TODO
    # Rotated by the session's count, which no progress or new prompt resets: no variant comes back first.
    text = messages.continuation(mode, session.session_blocks, _progress(todos, []))
    step = evolve(
        session,
        todo_attempts=attempts + 1,
        todo_completed_at_block=max(todos.completed, best or 0),
        todo_goal_blocks=session.todo_goal_blocks + 1,
        todo_gave_up=False,
    )
    return Decision(block=True, reason=text, session=step, outcome=f"{mode}_continue")


def session_limit(limits: Limits) -> Decision:
    """The session's budget of continuations is spent: let the stop through and say so."""
    notice = prompts.SESSION_LIMIT.format(limit=limits.max_session_continuations)
    return Decision(system_message=notice, outcome="session_limit")


#: Claude Code overrides a Stop hook that blocks more often than this in a row (v2.1.143).
CLIENT_BLOCK_CAP = 8


def client_block_cap(env) -> int:
    """The client's cap on consecutive Stop blocks: ``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`` in its environment, else 8."""
    try:
        value = int(str(env.get("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", CLIENT_BLOCK_CAP)).strip())
    except ValueError:
        return CLIENT_BLOCK_CAP
    return value if value > 0 else CLIENT_BLOCK_CAP


def pause_at_client_cap(cap: int) -> Decision:
    """A block the client would override: let the stop through with the state unchanged, and tell the user.

    Blocking anyway would end the turn just the same, with a "stop hook problem"
    notice, and count an iteration the model never saw.
    """
    return Decision(system_message=prompts.CLIENT_CAP.format(cap=cap), outcome="client_block_cap")


#: The first client that takes Stop's additionalContext as a continuation (non-error feedback).
CONTEXT_CLIENT = (2, 1, 163)


def continues_with_context(version: str | None) -> bool:
    """Whether a continuation can be Stop context instead of a block: the client is known to take it.

    A block shows the user a hook error at every continuation ("stop hook
    problem"); context does not. An older client ignores Stop's context and
    would stop, and an unknown one may be older, so both get the block.
    """
    if not version:
        return False
    try:
        parts = tuple(int(p) for p in version.split(".")[:3])
    except ValueError:
        return False
    return parts >= CONTEXT_CLIENT


#: Statuses of a background task that no longer runs (anything else, or none given, counts as running).
_FINISHED = ("completed", "complete", "done", "failed", "error", "killed", "cancelled", "canceled", "stopped")


def running_background_tasks(tasks) -> int:
    """How many of Stop's ``background_tasks`` still run; 0 for an absent or unreadable field.

    The shape is taken loosely (a list of objects with a ``status`` or ``state``,
    or of bare ids): a client that adds fields must not make us block.
    """
    if isinstance(tasks, dict):
        tasks = list(tasks.values())
    if not isinstance(tasks, list):
        return 0
    running = 0
    for task in tasks[:1000]:
        status = None
        if isinstance(task, dict):
            status = task.get("status", task.get("state"))
        if not isinstance(status, str) or status.strip().lower() not in _FINISHED:
            running += 1
    return running


def wait_for_background() -> Decision:
    """No continuation while background work runs: its result starts the next turn by itself."""
    return Decision(outcome="background_tasks_running")


def decide(
    ralph: RalphState | None, session: SessionState, message: str | None, todos, stories, limits: Limits
) -> Decision:
    if ralph is not None and ralph.active:
        return ralph_step(ralph, message, limits, todos, stories)
    return todo_step(session, todos, limits)
