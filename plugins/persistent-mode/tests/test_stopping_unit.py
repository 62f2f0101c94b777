"""The Stop decision, table-driven: which mode wins, what each counter allows, and when it ends."""

import pytest
from omcm_persistent_mode import prd, stopping
from omcm_persistent_mode.state import RalphState, SessionState
from omcm_persistent_mode.todos import Todo, TodoList

L = stopping.Limits()
PENDING = TodoList((Todo("a", "completed"), Todo("b", "pending")))
DONE = TodoList((Todo("a", "completed"),))


def ralph(**kw):
    return RalphState(session_id="s", **kw)


@pytest.mark.parametrize(
    "name, loop, session, message, todos, block, outcome",
    [
        ("ralph beats todos", ralph(), SessionState(mode="ultrawork"), "working", PENDING, True, "ralph_continue"),
        ("ultrawork with pending todos", None, SessionState(mode="ultrawork"), "", PENDING, True, "ultrawork_continue"),
        ("plain todos", None, SessionState(), "", PENDING, True, "todo_continue"),
        ("all todos done", None, SessionState(mode="ultrawork"), "", DONE, False, "none"),
        ("no todo list", None, SessionState(), "", None, False, "none"),
        ("cancelled session", None, SessionState(cancelled=True), "", PENDING, False, "none"),
        (
            "ended loop falls through to todos",
            ralph(status="completed"),
            SessionState(),
            "",
            PENDING,
            True,
            "todo_continue",
        ),
        (
            "attempts used up",
            None,
            SessionState(todo_attempts=5, todo_completed_at_block=1),
            "",
            PENDING,
            False,
            "todo_attempts_exhausted",
        ),
        (
            "progress resets the attempts",
            None,
            SessionState(todo_attempts=5, todo_completed_at_block=0),
            "",
            PENDING,
            True,
            "todo_continue",
        ),
        (
            "promise asks for verification",
            ralph(),
            SessionState(),
            "<promise>DONE</promise>",
            None,
            True,
            "ralph_verify",
        ),
        (
            "approved ends the loop",
            ralph(verification_pending=True, verification_attempts=1),
            SessionState(),
            "<oracle-approved>",
            None,
            False,
            "ralph_verified",
        ),
        (
            "rejected continues",
            ralph(verification_pending=True, verification_attempts=1),
            SessionState(),
            "<oracle-rejected> no",
            None,
            True,
            "ralph_continue",
        ),
        (
            "rejection wins over approval",
            ralph(verification_pending=True, verification_attempts=1),
            SessionState(),
            "<oracle-approved> <oracle-rejected> no",
            None,
            True,
            "ralph_continue",
        ),
        (
            "no verdict asks again",
            ralph(verification_pending=True, verification_attempts=1),
            SessionState(),
            "hm",
            None,
            True,
            "ralph_verify",
        ),
        (
            "no verdict after the cap",
            ralph(verification_pending=True, verification_attempts=3),
            SessionState(),
            "hm",
            None,
            False,
            "ralph_auto_approved",
        ),
        ("the cap", ralph(iteration=50), SessionState(), "working", None, False, "ralph_max_iterations"),
        ("the last allowed iteration", ralph(iteration=49), SessionState(), "working", None, True, "ralph_continue"),
    ],
)
def test_decide(name, loop, session, message, todos, block, outcome):
    decision = stopping.decide(loop, session, message, todos, [], L)
    assert (decision.block, decision.outcome) == (block, outcome), name
    if block:
        assert decision.reason
        assert decision.ralph is not None or decision.session is not None  # every block is counted


def test_ralph_block_counts_an_iteration_and_uses_the_prd_when_there_are_no_todos():
    stories = prd.stories({"userStories": [{"id": "US-1", "title": "a", "passes": True}, {"id": "US-2", "title": "b"}]})
    decision = stopping.decide(ralph(iteration=4), SessionState(), "working", None, stories, L)
    assert decision.ralph.iteration == 5
    assert "[1/2 completed, 1 remaining]" in decision.reason and "Next task: US-2 b" in decision.reason


def test_without_verification_the_promise_completes_at_once():
    decision = stopping.decide(
        ralph(), SessionState(), "<promise>TASK_COMPLETE</promise>", None, [], stopping.Limits(verify=False)
    )
    assert (decision.block, decision.ralph.status) == (False, "completed")


def test_todo_continuation_off_leaves_plain_todos_but_not_ultrawork():
    off = stopping.Limits(todo_continuation=False)
    assert stopping.decide(None, SessionState(), "", PENDING, [], off).block is False
    assert stopping.decide(None, SessionState(mode="ultrawork"), "", PENDING, [], off).block is True


@pytest.mark.parametrize(
    "data, done",
    [
        (
            {
                "userStories": [
                    {"id": "1", "passes": True},
                    {"id": "2", "status": "Completed"},
                    {"id": "3", "status": "todo"},
                ]
            },
            [True, True, False],
        ),
        ({"userStories": "nope"}, []),
        (["not", "a", "prd"], []),
        (None, []),
    ],
)
def test_prd_stories(data, done):
    assert [s.done for s in prd.stories(data)] == done


@pytest.mark.parametrize("value, cap", [(None, 8), ("20", 20), (" 3 ", 3), ("0", 8), ("-1", 8), ("lots", 8)])
def test_client_block_cap(value, cap):
    env = {} if value is None else {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": value}
    assert stopping.client_block_cap(env) == cap


@pytest.mark.parametrize(
    "version, context",
    [("2.1.163", True), ("2.1.330", True), ("2.2.0", True), ("3.0.1", True), ("2.1.162", False), ("2.0.999", False)]
    + [(None, False), ("", False), ("x.y.z", False)],
)
def test_a_continuation_is_context_only_for_a_client_known_to_take_it(version, context):
    assert stopping.continues_with_context(version) is context


def test_the_client_version_is_the_newest_top_level_one_in_the_transcript():
    import json

    from omcm_persistent_mode import todos

    lines = [json.dumps(r).encode() for r in ({"version": "2.1.100"}, {"version": "2.1.330", "x": 1}, {"type": "y"})]
    assert todos.client_version(lines) == "2.1.330"
    assert todos.client_version([b'{"message": "{\\"version\\": \\"2.1.999\\"}"}', b"not json version"]) is None
    assert todos.client_version([]) is None
