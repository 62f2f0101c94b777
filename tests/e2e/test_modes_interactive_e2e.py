"""persistent-mode and notepad in the interactive client (tmux), where it differs from ``-p`` (issue 26 items 1-5).

The ``-p`` scenarios are in test_modes_e2e.py. Here the client stays open
between turns, so what it does after a turn matters: a manual ``/compact``
typed at the prompt, a background agent's answer waking the main loop, a
failed turn that leaves the client running (StopFailure runs, the next prompt
recovers), the limit notice a user reads on screen, and ``/exit`` then
``claude --resume``. Each scenario is bounded (``TURN_TIMEOUT`` per wait) and
runs on the client OMCM_E2E_CLIENT selects (pinned, or ``latest``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import fake_anthropic
import pytest
from e2e_harness import TODO_WRITE_ENV, Harness
from fake_anthropic import FakeAnthropic, text, tool_use
from hook_timing import hook_timings
from interactive import Interactive, wait_until

pytestmark = pytest.mark.e2e

#: The longest wait for one step (a turn, a compaction) of an interactive session.
TURN_TIMEOUT = 60
#: How long to watch for a continuation that should not come.
SETTLE_S = 3
SUBAGENT_TASK = "SUBAGENT-TASK: how do we deploy?"


@pytest.fixture(autouse=True)
def _tmux_needed():
    """Fail under CI (the set-up installs tmux), skip with the reason elsewhere."""
    if shutil.which("tmux") is None and not Path("/usr/bin/tmux").exists():
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed (CI is set, so this fails): apt-get install tmux")
        pytest.skip("tmux is not installed (apt-get install tmux)")


@pytest.fixture
def world_factory(e2e_factory, claude_binary):
    """A harness whose ``omcm install`` sees the client on PATH, as a user's does (StopFailure is version-gated)."""

    def make(**env: str) -> Harness:
        path = f"{claude_binary.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        return e2e_factory(extra_env={"PATH": path, **env})

    return make


def continuations(request) -> list[str]:
    """What Stop hooks told the model to go on with: a block's feedback or a Stop's additional context."""
    found = request.stop_feedback()
    for context in request.hook_contexts("Stop"):
        found.append(context.split("\n</system-reminder>", 1)[0])
    return found


def omcm_log(harness) -> list[dict]:
    """omcm's log lines so far (read while hooks write: a line still being written is left for the next read)."""
    lines = []
    for path in sorted((harness.omcm_home / "logs").glob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                continue
    return lines


def stop_outcomes(harness) -> list:
    return [
        line.get("outcome")
        for line in omcm_log(harness)
        if line.get("event") == "stop" and line.get("plugin") == "persistent-mode"
    ]


def settled(api, tui: Interactive | None = None, stops: int = 0) -> int:
    """The number of loop requests once ``stops`` Stop hooks have finished and no request came for SETTLE_S.

    A continuation is sent right after the Stop hook that asks for it, so a few quiet seconds after it are enough.
    """
    if tui is not None:
        wait_until(
            lambda: finished_hooks(tui).count("Stop") >= stops, TURN_TIMEOUT, f"{stops} Stop hooks to finish", tui
        )
    count = -1
    while count != len(api.main_requests):
        count = len(api.main_requests)
        time.sleep(SETTLE_S)
    return count


def session_ids(harness) -> list[str]:
    """The sessions the client wrote a transcript for, oldest first."""
    found = sorted((harness.home / ".claude" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)
    return [p.stem for p in found]


def exit_client(tui: Interactive) -> None:
    """Type /exit and wait for the client to end (its SessionEnd hooks run before it does)."""
    tui.type("/exit")
    wait_until(
        lambda: tui._tmux("has-session", "-t", tui.name, check=False).returncode != 0,
        TURN_TIMEOUT,
        "the client to exit",
        tui,
    )


def finished_hooks(tui: Interactive) -> list[str]:
    """The events of the hooks the client has run to the end so far, from its debug log."""
    text = tui.debug_log.read_text(errors="replace") if tui.debug_log.exists() else ""
    return [timing.event for timing in hook_timings(text)]


def todo_write(*items: tuple[str, str]) -> dict:
    todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
    return tool_use("TodoWrite", {"todos": todos})


# Item 1: the summary of a /compact typed at the prompt is no subagent's note.


def test_interactive_compact_summary_quoting_an_old_priority_tag_leaves_the_notepad(world_factory, monkeypatch):
    world = world_factory()
    world.omcm("notepad", "--project", str(world.project), "add", "--priority", "NEW-PRIORITY deploy from main")
    summary = "<summary>The agent said <remember priority>OLD-PRIORITY deploy from release</remember>.</summary>"
    monkeypatch.setattr(fake_anthropic, "_SUMMARY", summary)  # the compaction request's answer
    script = [[text("Noted.")], [text("From main.")]]
    with FakeAnthropic(script, final_text="Working.") as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("remember the deploy rule")
        tui.wait_for(lambda s: "Noted." in s, TURN_TIMEOUT, "the first answer")
        tui.type("/compact")
        tui.wait_for(lambda s: "Compacted" in s, TURN_TIMEOUT, "the compaction")
        # The forked summary agent stops: SubagentStop (agent_type "") with the summary as its answer.
        wait_until(
            lambda: "SubagentStop" in finished_hooks(tui), TURN_TIMEOUT, "the summary agent's SubagentStop hook", tui
        )
        assert any(fake_anthropic.is_compaction(r.body) for r in api.requests)
        tui.type("which branch do we deploy from?")
        tui.wait_for(lambda s: "From main." in s, TURN_TIMEOUT, "the answer after the compaction")
        after = api.main_requests[-1]
    notepad = (world.project / ".omc" / "notepad.md").read_text()
    assert "NEW-PRIORITY" in notepad and "OLD-PRIORITY" not in notepad, notepad
    # SessionStart(compact) handed back the newer line, and only that one.
    notes = [c for c in after.hook_contexts("SessionStart") if c.startswith("[notepad]")]
    assert notes and "NEW-PRIORITY deploy from main" in notes[-1] and "OLD-PRIORITY" not in notes[-1], notes
    assert "remember_skipped_untyped_agent" in [line.get("event") for line in omcm_log(world)]


# Item 2: a background agent running at Stop: no continuation; its answer wakes the loop by itself.


def test_interactive_no_continuation_while_a_background_agent_runs(world_factory):
    world = world_factory(**TODO_WRITE_ENV, OMCM__PERSISTENT_MODE__MAX_TODO_ATTEMPTS="1")
    agent = tool_use(
        "Agent", {"description": "check deploys", "prompt": SUBAGENT_TASK, "subagent_type": "general-purpose"}
    )

    def is_subagent(body) -> bool:
        messages = json.dumps(body.get("messages", []))
        return SUBAGENT_TASK in messages and '"name": "Agent"' not in messages

    def slow_agent(body):
        if is_subagent(body):
            # Still running when the main thread stops: answer once persistent-mode has judged that Stop.
            deadline = time.monotonic() + TURN_TIMEOUT
            while not stop_outcomes(world) and time.monotonic() < deadline:
                time.sleep(0.25)
            return [text("Deploys go through CI.")]
        return [text("Waiting for the agent.")]

    script = [[todo_write(("Collect deploy facts", "pending")), agent], slow_agent, slow_agent]
    with FakeAnthropic(script, final_text="Still collecting.") as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("collect the deploy facts")
        wait_until(
            lambda: "todo_attempts_exhausted" in stop_outcomes(world), TURN_TIMEOUT, "the todo continuation to end", tui
        )
        settled(api)
        main = [r for r in api.main_requests if not is_subagent(r.body)]
        screen = tui.screen()
    outcomes = stop_outcomes(world)
    # The first stop comes while the agent runs: no continuation then...
    assert outcomes == ["background_tasks_running", "todo_continue", "todo_attempts_exhausted"], outcomes
    (first,) = [line for line in omcm_log(world) if line.get("outcome") == "background_tasks_running"]
    assert first["background_tasks"] >= 1
    # ...the agent's answer starts the next turn by itself, with no Stop feedback before it...
    woken = next(i for i, r in enumerate(main) if "<task-notification>" in r.all_text())
    assert woken == 2 and continuations(main[woken]) == [], [continuations(r) for r in main]
    # ...and the still-open todo is continued once the agent is done.
    assert len(main) == 4 and "[0/1 completed, 1 remaining]" in continuations(main[3])[-1]
    assert "todo continuation stopped after 1 continuations without a newly completed todo" in " ".join(screen.split())


# Item 3: a Task* list created in the turn is seen at its first Stop.


def test_interactive_task_list_is_seen_at_the_first_stop(world_factory):
    world = world_factory(CLAUDE_CODE_ENABLE_TODO_TOOLS="1")  # the harness's clients offer Task* only with this
    create = [
        tool_use("TaskCreate", {"subject": "Write the parser", "description": "d", "activeForm": "Writing"}),
        tool_use("TaskCreate", {"subject": "Write the tests", "description": "d", "activeForm": "Writing"}),
    ]
    done_one = tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})
    done_two = tool_use("TaskUpdate", {"taskId": "2", "status": "completed"})
    script = [create, [text("Pausing here.")], [done_one], [text("One left.")], [done_two], [text("Both done.")]]
    with FakeAnthropic(script, final_text="Working.") as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("build the parser")
        tui.wait_for(lambda s: "Both done." in s, TURN_TIMEOUT, "the last answer")
        main = api.main_requests[: settled(api, tui, stops=3)]
    # The client ran both calls (a tool it does not offer is refused with an error result).
    assert [main[1].tool_results()[call["id"]][1] for call in create] == [False, False]
    assert len(main) == 6, [continuations(r) for r in main]
    assert [continuations(r) for r in main[:2]] == [[], []]
    (first,) = continuations(main[2])
    assert first.endswith("[0/2 completed, 2 remaining]\nNext task: Write the parser"), first
    assert continuations(main[4])[-1].endswith("[1/2 completed, 1 remaining]\nNext task: Write the tests")
    assert stop_outcomes(world) == ["todo_continue", "todo_continue", "none"]


# Item 4: a failed turn leaves the interactive client open; StopFailure runs and the next prompt recovers.


def test_interactive_api_error_runs_stop_failure_and_the_next_prompt_recovers(world_factory):
    world = world_factory(CLAUDE_CODE_MAX_RETRIES="0")
    assert "StopFailure" in json.loads(world.settings_path.read_text())["hooks"]

    def fail(body):
        raise RuntimeError("planned outage")

    script = [fail, [text("Resumed. <promise>TASK_COMPLETE</promise>")], [text("Checked. <oracle-approved>")]]
    with FakeAnthropic(script, final_text="Working.") as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("ralph-loop: migrate the db")
        tui.wait_for(lambda s: "API Error: 500" in s, TURN_TIMEOUT, "the API error")
        recorded = wait_until(
            lambda: [line for line in omcm_log(world) if line.get("event") == "stop_failure_recorded"],
            TURN_TIMEOUT,
            "persistent-mode's StopFailure hook",
            tui,
        )
        assert tui._tmux("has-session", "-t", tui.name, check=False).returncode == 0  # the client is still open
        failed = len(api.main_requests)
        tui.type("go on")
        tui.wait_for(lambda s: "Checked." in s, TURN_TIMEOUT, "the recovered loop to finish")
        main = api.main_requests[: settled(api, tui, stops=2)]
    assert [line["error"] for line in recorded] == ["server_error"]
    told = [c for c in main[failed].hook_contexts("UserPromptSubmit") if "[persistent-mode: recovery]" in c]
    assert len(told) == 1 and "API error (server_error)" in told[0] and "task: migrate the db" in told[0], told
    # The loop the failed turn started goes on and ends: one verification, then approved.
    assert len(main) == failed + 2 and stop_outcomes(world) == ["ralph_verify", "ralph_verified"]


# Item 5: loop bounds the user can see, and /exit then --resume keeps a cancel.


def test_interactive_flipping_todo_is_bounded_per_goal_and_the_user_is_told(world_factory):
    world = world_factory(**TODO_WRITE_ENV, OMCM__PERSISTENT_MODE__MAX_TODO_CONTINUATIONS="3")
    flip = [todo_write(("Fix the flaky test", "completed"), ("Update the docs", "pending"))]
    flop = [todo_write(("Fix the flaky test", "pending"), ("Update the docs", "pending"))]
    script = [flop, [text("Paused.")]] + [flip, [text("Paused.")], flop, [text("Paused.")]] * 4
    with FakeAnthropic(script, final_text="Paused.") as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("fix the flaky test and update the docs")
        screen = tui.wait_for(
            lambda s: "todo continuation stopped" in " ".join(s.split()), TURN_TIMEOUT, "the limit notice"
        )
        main = api.main_requests[: settled(api)]
    # Progress that flips back buys no more continuations: 3 for this goal, then the stop goes through.
    assert stop_outcomes(world) == ["todo_continue"] * 3 + ["todo_goal_limit"]
    assert len(main) == 8 and len(continuations(main[-1])) == 3, [continuations(r) for r in main]
    notice = "persistent-mode: todo continuation stopped after 3 continuations since your last message"
    assert notice in " ".join(screen.split()), screen


def test_interactive_exit_and_resume_keeps_a_cancel_and_the_skills_given(world_factory):
    world = world_factory(**TODO_WRITE_ENV)
    with FakeAnthropic([[text("Committed.")], [text("Stopping.")]]) as api, Interactive(world, api) as tui:
        tui.ready()
        tui.type("commit the parser to git")
        tui.wait_for(lambda s: "Committed." in s, TURN_TIMEOUT, "the first answer")
        tui.type("/cancel-ralph")
        tui.wait_for(lambda s: "Stopping." in s, TURN_TIMEOUT, "the cancel's answer")
        first = api.main_requests
        exit_client(tui)
    assert "[skill: git-master]" in "\n".join(first[0].hook_contexts("UserPromptSubmit"))
    assert "[persistent-mode] The user cancelled" in "\n".join(first[1].hook_contexts("UserPromptSubmit"))
    (session_id,) = session_ids(world)
    plan = todo_write(("Commit the tests", "pending"))
    resume = ("--dangerously-skip-permissions", "--resume", session_id)
    with (
        FakeAnthropic([[plan], [text("Later.")]], final_text="Working.") as api,
        Interactive(world, api, args=resume, name="resumed") as tui,
    ):
        tui.ready()
        tui.type("now commit the tests to git")
        tui.wait_for(lambda s: "Later." in s, TURN_TIMEOUT, "the resumed session's answer")
        later = api.main_requests[: settled(api, tui, stops=1)]
    # The first client's SessionEnd kept the session's state: no continuation of the open todo, no skill again.
    assert len(later) == 2 and continuations(later[-1]) == [], [continuations(r) for r in later]
    contexts = later[0].hook_contexts("UserPromptSubmit")
    assert sum("[skill: git-master]" in c for c in contexts) == 1, contexts
    assert session_ids(world) == [session_id]


def test_continuations_reads_a_blocked_stop_and_a_stop_context():
    # persistent-mode may answer a Stop with additionalContext instead of a block (issue 26 item 8):
    # the scenarios above hold for either form.
    from api_messages import Request

    reason = "[System Reminder] go on\n[0/1 completed, 1 remaining]"
    blocked = {"role": "user", "content": "Stop hook feedback:\n" + reason}
    context = {
        "role": "user",
        "content": f"<system-reminder>\nStop hook additional context: {reason}\n</system-reminder>",
    }
    for message in (blocked, context):
        assert continuations(Request("POST", "/v1/messages", {}, {"messages": [message]}, True)) == [reason]
