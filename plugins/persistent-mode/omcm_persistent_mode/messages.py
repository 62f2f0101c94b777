"""Continuation messages, rotated so Claude does not learn to skim a fixed sentence. No I/O.

Each mode has its own pool; the variant is ``counter % len(pool)``, where the
counter is the ralph iteration or the session's count of continuations (never
reset by progress or a new prompt), so the rotation is deterministic and a
reset never brings the first variant back. The progress line, the next task and the iteration follow.
"""

from __future__ import annotations

from attrs import frozen

TODO, ULTRAWORK, RALPH, ULTRAWORK_RALPH = "todo", "ultrawork", "ralph-loop", "ultrawork-ralph"

_MARK = " Mark each todo completed as soon as it is done; stop only when none is left open."
_LOOP = " Check the result against the task (tests, the PRD's criteria) before you claim it is done."

POOLS = {
    TODO: (
        ("System Reminder", "The todo list still has unfinished items. Continue with the next one." + _MARK),
        (
            "Boulder Never Stops",
            "Pending todos remain: the boulder is not at the top yet. Pick the next one up and keep going." + _MARK,
        ),
        (
            "Sisyphus Reminder",
            "The work is not finished: the todo list shows open items. Carry on from where you stopped." + _MARK,
        ),
        (
            "Continuation Required",
            "Stopping now would leave todos undone. Continue working through them in order." + _MARK,
        ),
        (
            "Task Persistence Active",
            "Open todos are still on the list. Resume with the next pending task; if one is blocked, say why and move on to the next."
            + _MARK,
        ),
    ),
    ULTRAWORK: (
        (
            "Ultrawork Continues",
            "Ultrawork is on and todos are still pending. Parallelise what is independent (several tool calls, several subagents) and continue."
            + _MARK,
        ),
        (
            "Full Throughput",
            "Pending todos remain in ultrawork mode. Delegate independent todos to parallel subagents and finish the rest yourself."
            + _MARK,
        ),
        (
            "Ultrawork Persistence",
            "The ultrawork task is not done: keep working through the open todos, long runs in the background." + _MARK,
        ),
    ),
    RALPH: (
        (
            "Ralph Loop Continuation",
            "The task is not complete yet. Continue working on it from where you stopped." + _LOOP,
        ),
        ("The Promise Binds You", "No completion promise yet. Keep going until the task is really done." + _LOOP),
        (
            "Persistence Required",
            "The loop continues: pick up where you left off and take the next concrete step." + _LOOP,
        ),
        (
            "Continue or Verify",
            "Continue the task, or, if it is truly finished, check it and make the completion promise." + _LOOP,
        ),
        (
            "Sisyphean Persistence",
            "Another iteration: move the task forward; unfinished PRD stories come first." + _LOOP,
        ),
    ),
    ULTRAWORK_RALPH: (
        ("Maximum Intensity", "Ultrawork and the ralph loop are both on: continue, in parallel where you can." + _LOOP),
        (
            "Ultimate Mode Continues",
            "Not complete yet. Delegate independent parts to parallel subagents and keep the loop moving." + _LOOP,
        ),
        ("Persistence × Intensity", "Keep going at full throughput until the task is done and verified." + _LOOP),
    ),
}

PROMISE_HINT = "When everything is done and checked, end your message with <promise>TASK_COMPLETE</promise>."


@frozen
class Progress:
    """Where the work stands. Counts are None when no todo list or PRD is known."""

    completed: int | None = None
    total: int | None = None
    next_task: str | None = None
    iteration: int | None = None
    max_iterations: int | None = None


def progress_line(progress: Progress) -> str | None:
    if progress.total is None or progress.completed is None:
        return None
    remaining = progress.total - progress.completed
    return f"[{progress.completed}/{progress.total} completed, {remaining} remaining]"


def continuation(mode: str, counter: int, progress: Progress) -> str:
    """The message for ``mode``; ``counter`` chooses the variant."""
    pool = POOLS[mode]
    title, body = pool[counter % len(pool)]
    lines = [f"[{title}] {body}"]
    status = progress_line(progress)
    if status:
        lines.append(status)
    if progress.next_task:
        lines.append(f"Next task: {progress.next_task}")
    if progress.iteration is not None and progress.max_iterations is not None:
        lines.append(f"Iteration {progress.iteration}/{progress.max_iterations}")
    if mode in (RALPH, ULTRAWORK_RALPH):
        lines.append(PROMISE_HINT)
    return "\n".join(lines)
