"""The ralph loop through real `omcm hook` processes: start, iterate, verify, cap, cancel, refuse symlinks."""

import json
import os
import subprocess
import sys
import time

from omcm_core.testing import assert_valid_response


def test_ralph_loop_blocks_with_iterations_until_the_promise_then_verifies(session):
    s = session()
    out = s.prompt("/ralph-loop build a todo API")
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "[persistent-mode: ralph loop]" in context and "Task: build a todo API" in context
    assert s.ralph_state()["iteration"] == 0 and s.ralph_state()["status"] == "active"
    first = s.stop("Created the models.")
    assert first["decision"] == "block" and "Iteration 1/50" in first["reason"]
    assert_valid_response("Stop", first)
    # Claude is continuing because of our block (stop_hook_active): the loop still counts on.
    second = s.stop("Added the routes.", active=True)
    assert "Iteration 2/50" in second["reason"] and second["reason"] != first["reason"]  # rotated
    # The completion promise: one verification request, with the PRD's checklist.
    (s.project / ".omc" / "prd.json").write_text(
        json.dumps(
            {
                "userStories": [
                    {
                        "id": "US-001",
                        "title": "CRUD endpoints",
                        "acceptanceCriteria": ["GET /todos lists"],
                        "passes": True,
                    }
                ]
            }
        )
    )
    verify = s.stop("All done. <promise>TASK_COMPLETE</promise>", active=True)
    assert verify["decision"] == "block" and "verification 1/3" in verify["reason"]
    assert "US-001: CRUD endpoints" in verify["reason"] and "GET /todos lists" in verify["reason"]
    assert s.ralph_state()["verification_pending"] is True
    assert s.stop("Checked every criterion. <oracle-approved>", active=True) is None
    assert s.ralph_state()["status"] == "completed" and s.ralph_state()["iteration"] == 2
    assert s.stop("bye") is None  # the loop is over


def test_promise_done_and_rejection_feedback_continue_the_loop(session):
    s = session()
    s.prompt("ralph-loop: port the parser")
    assert "verification 1/3" in s.stop("<promise>DONE</promise>")["reason"]
    rejected = s.stop("<oracle-rejected> the error paths have no tests", active=True)
    assert rejected["decision"] == "block"
    assert "the error paths have no tests" in rejected["reason"] and "Iteration 1/50" in rejected["reason"]
    assert s.ralph_state()["verification_pending"] is False


def test_verification_without_a_verdict_is_auto_approved_after_three_requests(session):
    s = session(max_verification_attempts="3")
    s.prompt("/ralph-loop x")
    for attempt in (1, 2, 3):
        out = s.stop("<promise>TASK_COMPLETE</promise>", active=attempt > 1)
        assert f"verification {attempt}/3" in out["reason"]
    last = s.stop("still no verdict", active=True)
    assert "decision" not in last and "accepted unverified" in last["systemMessage"]
    assert s.ralph_state()["status"] == "auto_approved"


def test_loop_stops_at_the_iteration_cap(session):
    s = session(max_iterations="3")
    s.prompt("/ultrawork-ralph refactor auth")
    assert s.ralph_state()["mode"] == "ultrawork-ralph"
    reasons = [s.stop("working", active=i > 0)["reason"] for i in range(3)]
    assert ["Iteration 1/3" in reasons[0], "Iteration 2/3" in reasons[1], "Iteration 3/3" in reasons[2]] == [True] * 3
    capped = s.stop("working", active=True)
    assert "decision" not in capped and "limit of 3 iterations" in capped["systemMessage"]
    assert s.ralph_state()["status"] == "max_iterations"
    assert s.stop("working", active=True) is None


def test_promise_read_from_the_transcript_when_the_payload_has_no_message(session, assistant_text):
    s = session(verify="false")
    s.prompt("/ralph-loop x")
    s.write_transcript(assistant_text("Finished. <promise>TASK_COMPLETE</promise>"))
    assert s.stop(message=None) is None
    assert s.ralph_state()["status"] == "completed"


def test_cancel_by_prompt(session):
    s = session()
    s.prompt("/ralph-loop x")
    assert s.stop("working")["decision"] == "block"
    out = s.prompt("/cancel-ralph")
    assert "cancelled" in out["hookSpecificOutput"]["additionalContext"]
    assert s.ralph_state()["status"] == "cancelled"
    assert s.stop("working") is None


def test_cancel_by_command_and_status(session):
    s = session()
    s.prompt("/ralph-loop long task")
    s.stop("working")
    status = s.omcm("ralph", "status")
    assert status.returncode == 0 and "active" in status.stdout and "iteration 1/50" in status.stdout
    cancel = s.omcm("ralph", "cancel")
    assert cancel.returncode == 0 and "cancelled sess-1 at iteration 1" in cancel.stdout
    assert s.stop("working") is None
    assert json.loads(s.omcm("ralph", "status", "--json").stdout)["loops"][0]["status"] == "cancelled"


def test_config_switch_turns_everything_off(session):
    s = session()
    s.prompt("/ralph-loop x")
    s.env["OMCM__PERSISTENT_MODE__ENABLED"] = "false"
    assert s.stop("working") is None
    assert s.prompt("/ralph-loop y") is None


def test_subagent_stop_is_never_blocked(session):
    s = session()
    s.prompt("/ralph-loop x")
    assert (
        s.hook(
            "SubagentStop", stop_hook_active=False, agent_id="a1", agent_type="Explore", last_assistant_message="done"
        )
        is None
    )


def test_ralph_state_is_private_and_omc_follows_the_umask(session):
    s = session()
    s.prompt("/ralph-loop x")
    umask = os.umask(0)
    os.umask(umask)
    omc = s.project / ".omc"
    assert oct(omc.stat().st_mode & 0o777) == oct(0o777 & ~umask)  # shared with other plugins
    assert oct((omc / "ralph").stat().st_mode & 0o777) == "0o700"
    assert oct((omc / "ralph" / "sess-1.json").stat().st_mode & 0o777) == "0o600"


def test_symlinked_omc_is_refused(session, tmp_path):
    s = session()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, s.project / ".omc")
    out = s.prompt("/ralph-loop x")
    assert "could not start" in out["hookSpecificOutput"]["additionalContext"]
    assert list(outside.iterdir()) == []
    assert s.stop("working") is None
    assert "project_file_refused" in s.log_events()


def test_symlinked_ralph_folder_and_state_file_are_refused(session, tmp_path):
    s = session()
    outside = tmp_path / "outside"
    outside.mkdir()
    (s.project / ".omc").mkdir()
    os.symlink(outside, s.project / ".omc" / "ralph")
    s.prompt("/ralph-loop x")
    assert list(outside.iterdir()) == []
    os.unlink(s.project / ".omc" / "ralph")
    (s.project / ".omc" / "ralph").mkdir()
    secret = outside / "state.json"
    secret.write_text(json.dumps({"session_id": "sess-1", "status": "active"}))
    os.symlink(secret, s.project / ".omc" / "ralph" / "sess-1.json")
    assert s.stop("working") is None  # a planted state behind a symlink is not read
    assert "project_file_refused" in s.log_events()


def test_hard_linked_prd_and_fifo_state_are_refused(session, tmp_path):
    s = session()
    s.prompt("/ralph-loop x")
    outside = tmp_path / "outside.json"  # another name for a file outside the project
    outside.write_text(json.dumps({"userStories": [{"id": "US-9", "title": "OUTSIDE-SECRET", "passes": True}]}))
    os.link(outside, s.project / ".omc" / "prd.json")
    verify = s.stop("<promise>DONE</promise>")
    assert verify["decision"] == "block" and "OUTSIDE-SECRET" not in verify["reason"]
    refused = [line["why"] for line in s.log_lines() if line.get("event") == "project_file_refused"]
    assert any("prd.json" in why and "2 hard links" in why for why in refused)
    os.unlink(s.project / ".omc" / "ralph" / "sess-1.json")
    os.mkfifo(s.project / ".omc" / "ralph" / "sess-1.json")  # a blocking read would hang the hook
    assert s.stop("working") is None
    assert any(
        "sess-1.json" in line["why"] and "not a regular file" in line["why"]
        for line in s.log_lines()
        if line.get("event") == "project_file_refused"
    )


def test_corrupt_state_fails_open(session):
    s = session()
    (s.project / ".omc" / "ralph").mkdir(parents=True)
    (s.project / ".omc" / "ralph" / "sess-1.json").write_text("{not json")
    assert s.stop("working") is None
    assert "ralph_state_unreadable" in s.log_events()


def test_ralph_loop_through_the_warm_daemon(session):
    def daemon(action):  # through the command a user has: the daemon module is omcm's own business
        env = {**os.environ, **s.env}
        return subprocess.run([sys.executable, "-m", "omcm_core", "daemon", action], env=env, capture_output=True)

    s = session(max_iterations="2")
    s.env["OMCM_DAEMON"] = "1"
    try:
        s.prompt("/ralph-loop x")  # starts the daemon on demand
        deadline = time.monotonic() + 30
        while daemon("status").returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert daemon("status").returncode == 0, "the daemon did not start"
        outs = [s.stop("working", active=i > 0) for i in range(3)]
        assert "Iteration 1/2" in outs[0]["reason"] and "Iteration 2/2" in outs[1]["reason"]
        assert "decision" not in outs[2] and s.ralph_state()["status"] == "max_iterations"
    finally:
        daemon("stop")


def test_loop_pauses_at_the_clients_block_cap_without_counting_the_overridden_block(session):
    s = session()
    s.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "2"
    s.prompt("/ralph-loop x")
    assert "Iteration 1/50" in s.stop("working")["reason"]
    assert "Iteration 2/50" in s.stop("working", active=True)["reason"]
    # A third block in a row would be overridden by the client: let the stop through instead, loop still on.
    paused = s.stop("working", active=True)
    assert "decision" not in paused and "allows 2 Stop continuations in a row" in paused["systemMessage"]
    assert (s.ralph_state()["status"], s.ralph_state()["iteration"]) == ("active", 2)
    # The next turn (stop_hook_active false again) continues the loop where it was.
    assert "Iteration 3/50" in s.stop("working")["reason"]


def test_a_new_turn_after_earlier_blocks_starts_the_client_cap_count_afresh(session):
    # Issue 30 item 8: the client counts blocks in a row from a Stop with stop_hook_active false.
    s = session()
    s.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "3"
    s.prompt("/ralph-loop x")
    assert s.stop("working")["decision"] == "block"
    assert s.stop("working", active=True)["decision"] == "block"
    # A new turn (a background agent's answer, say): stop_hook_active is false, the client's count is 0.
    outs = [s.stop("working", active=i > 0) for i in range(4)]
    assert ["decision" in o for o in outs] == [True, True, True, False]
    assert "allows 3 Stop continuations in a row" in outs[3]["systemMessage"]
    assert s.ralph_state()["iteration"] == 5


def test_a_prd_is_created_from_the_task_when_asked_and_kept_current_from_claudes_reports(session):
    s = session()
    context = s.prompt("/ralph-loop --prd ship the todo API\n- CRUD endpoints\n- auth\n- docs")["hookSpecificOutput"][
        "additionalContext"
    ]
    assert ".omc/prd.json now holds 3 user stories" in context and "--prd" not in context
    data = json.loads((s.project / ".omc" / "prd.json").read_text())
    assert [(u["id"], u["title"], u["passes"]) for u in data["userStories"]] == [
        ("US-001", "CRUD endpoints", False),
        ("US-002", "auth", False),
        ("US-003", "docs", False),
    ]
    out = s.stop("Endpoints work. <story-done>US-001</story-done>\nUS-003: done")
    assert "[2/3 completed, 1 remaining]" in out["reason"] and "Next task: US-002 auth" in out["reason"]
    data = json.loads((s.project / ".omc" / "prd.json").read_text())
    assert [u["passes"] for u in data["userStories"]] == [True, False, True]


def test_an_existing_prd_is_never_overwritten(session):
    s = session()
    (s.project / ".omc").mkdir()
    (s.project / ".omc" / "prd.json").write_text('{"userStories": [{"id": "A-1", "title": "mine"}]}')
    context = s.prompt("ralph-loop: write a PRD and build it")["hookSpecificOutput"]["additionalContext"]
    assert "already exists" in context
    assert json.loads((s.project / ".omc" / "prd.json").read_text())["userStories"][0]["title"] == "mine"


def test_approval_is_refused_while_prd_stories_are_open(session):
    s = session()
    s.prompt("/ralph-loop --prd build it")
    assert "verification 1/3" in s.stop("<promise>TASK_COMPLETE</promise>")["reason"]
    refused = s.stop("Looks fine. <oracle-approved>", active=True)
    assert refused["decision"] == "block"
    assert refused["reason"].startswith("[persistent-mode: ralph loop] The verification approved, but 1 PRD story is")
    assert "US-001 build it" in refused["reason"] and s.ralph_state()["status"] == "active"
    # Done and reported: the next claim and approval end the loop.
    assert (
        "verification 2/3"
        in s.stop("<story-done>US-001</story-done> <promise>TASK_COMPLETE</promise>", active=True)["reason"]
    )
    assert s.stop("All criteria hold. <oracle-approved>", active=True) is None
    assert s.ralph_state()["status"] == "completed"


def test_on_the_plugin_route_the_messages_name_the_plugins_commands(session):
    """Claude Code names a plugin's commands /omcm:NAME: /cancel-ralph there is "Unknown command"."""
    s = session()
    s.env["CLAUDE_PLUGIN_ROOT"] = str(s.project / "plugin-root")  # set by the client for a plugin's hooks
    context = s.prompt("/omcm:ralph-loop build a todo API")["hookSpecificOutput"]["additionalContext"]
    assert "/omcm:cancel-ralph" in context and " /cancel-ralph" not in context
    assert s.ralph_state()["status"] == "active"
    s.prompt("/omcm:cancel-ralph")
    assert s.ralph_state()["status"] != "active"


def test_on_the_install_route_the_messages_keep_the_plain_commands(session):
    s = session()
    context = s.prompt("/ralph-loop build a todo API")["hookSpecificOutput"]["additionalContext"]
    assert "/cancel-ralph" in context and "/omcm:" not in context


def test_a_loop_command_without_a_task_starts_nothing_and_says_how(session):
    # The client completes "/omcm:ral" to the command and Enter sends it with no arguments: "ralph-loop: ".
    s = session()
    for prompt in ("ralph-loop: ", "/ralph-loop", "/omcm:ultrawork-ralph   ", "/ralph-loop --prd"):
        out = s.prompt(prompt)
        context = out["hookSpecificOutput"]["additionalContext"]
        assert "no loop was started" in context and "Usage: /" in context, prompt
        assert not (s.project / ".omc" / "ralph" / f"{s.session_id}.json").exists()
        assert s.stop("Nothing to do.") is None  # no loop blocks the stop
