"""Todo continuation, ultrawork, reminders and recovery through real `omcm hook` processes."""

import json
import os

from omcm_core.testing import assert_valid_response

THREE = [("Write the parser", "completed"), ("Write the tests", "in_progress"), ("Update the docs", "pending")]


def test_pending_todos_in_the_transcript_block_the_stop(session, todo_write):
    s = session()
    s.write_transcript(todo_write(THREE))
    out = s.stop()
    assert out["decision"] == "block"
    assert "[1/3 completed, 2 remaining]" in out["reason"]
    assert "Next task: Write the tests" in out["reason"]
    assert out["reason"].startswith("[System Reminder]")
    assert_valid_response("Stop", out)


def test_todo_continuation_gives_up_after_five_attempts_without_progress(session, todo_write):
    s = session()
    s.write_transcript(todo_write(THREE))
    outs = [s.stop(active=i > 0) for i in range(7)]
    assert [o is not None and "decision" in o for o in outs] == [True] * 5 + [False] * 2
    assert len({o["reason"].splitlines()[0] for o in outs[:5]}) == 5  # five different variants
    # Giving up is said once, as the seed's limit notice is.
    assert outs[5] == {
        "systemMessage": "persistent-mode: todo continuation stopped after 5 continuations without a newly "
        "completed todo; 2 of 3 todos are still open. Send a message to go on."
    }
    assert outs[6] is None
    assert "todo_attempts_exhausted" in [line.get("outcome") for line in s.log_lines()]


def test_progress_resets_the_attempts_and_so_does_the_user(session, todo_write):
    s = session(max_todo_attempts="2")
    s.write_transcript(todo_write(THREE))
    assert s.stop() and s.stop(active=True)
    assert "decision" not in s.stop(active=True)  # two blocks without progress: done (with a notice)
    s.write_transcript(todo_write([THREE[0], ("Write the tests", "completed"), THREE[2]]))
    out = s.stop(active=True)  # one more todo completed: progress, so it may continue
    assert "[2/3 completed, 1 remaining]" in out["reason"]
    assert s.stop(active=True) and "decision" not in s.stop(active=True)
    s.prompt("please go on")
    assert s.stop()["decision"] == "block"


def test_all_done_or_no_todos_lets_claude_stop(session, todo_write):
    s = session()
    assert s.stop() is None  # no transcript at all
    s.write_transcript(todo_write([(c, "completed") for c, _ in THREE]))
    assert s.stop() is None


def test_subagent_todos_are_not_the_sessions(session, todo_write):
    s = session()
    s.write_transcript(todo_write([(c, "completed") for c, _ in THREE]), todo_write(THREE, sidechain=True))
    assert s.stop() is None


def test_task_tools_are_read_too(session):
    s = session()
    s.write_transcript(
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "TaskCreate",
                        "input": {"subject": "Shadows", "description": "d", "activeForm": "a"},
                    }
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "Task #1 created successfully: Shadows"}
                ]
            },
            "toolUseResult": {"task": {"id": "1", "subject": "Shadows"}},
        },
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "id": "t2", "name": "TaskCreate", "input": {"subject": "Owls"}}]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "t2", "content": "Task #2 created successfully: Owls"}
                ]
            },
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t3",
                        "name": "TaskUpdate",
                        "input": {"taskId": "1", "status": "completed"},
                    }
                ]
            },
        },
    )
    out = s.stop()
    assert "[1/2 completed, 1 remaining]" in out["reason"] and "Next task: Owls" in out["reason"]


def test_ultrawork_uses_its_own_pool_and_continues_even_with_plain_continuation_off(session, todo_write):
    s = session(todo_continuation="false")
    s.write_transcript(todo_write(THREE))
    assert s.stop() is None
    context = s.prompt("ulw fix every failing test")["hookSpecificOutput"]["additionalContext"]
    assert "[persistent-mode: ultrawork]" in context and "Task: fix every failing test" in context
    assert s.stop()["reason"].startswith("[Ultrawork Continues]")
    s.prompt("/cancel-ralph")
    assert s.stop() is None


def test_todo_text_is_masked_before_it_reaches_claude(session, todo_write):
    s = session()
    s.write_transcript(todo_write([("Rotate key AKIAABCDEFGHIJKLMNOP", "pending")]))
    reason = s.stop()["reason"]
    assert "AKIAABCDEFGHIJKLMNOP" not in reason and "[REDACTED:aws-access-key]" in reason


def test_transcript_is_read_from_its_tail_only(session, todo_write):
    s = session(transcript_tail_bytes="4096")
    s.write_transcript(todo_write(THREE))
    with s.transcript.open("a") as fh:
        fh.write(("x" * 1000 + "\n") * 10)  # the TodoWrite is now beyond the tail
    assert s.stop() is None


def test_a_fifo_or_binary_transcript_does_not_hang_or_break(session, tmp_path):
    s = session()
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert s.stop(transcript_path=str(fifo)) is None
    s.transcript.write_bytes(os.urandom(50_000))
    assert s.stop() is None


def test_skills_and_hints_are_given_once_per_session(session):
    s = session()
    first = s.prompt("Create a React button component and find the old one")["hookSpecificOutput"]["additionalContext"]
    assert "[skill: frontend-ui-ux]" in first and "[persistent-mode: search]" in first
    assert s.prompt("style the React button too") is None
    git = s.prompt("now commit the button changes")["hookSpecificOutput"]["additionalContext"]
    assert "[skill: git-master]" in git and "frontend" not in git


def test_agent_reminder_is_throttled_and_reset_by_delegation(session):
    s = session(agent_reminder_every="3")

    def tool(name, **extra):
        return s.hook("PostToolUse", tool_name=name, tool_input={}, tool_response={}, tool_use_id="t", **extra)

    outs = [tool(name) for name in ("Read", "Grep", "Glob", "Read", "Bash", "Read", "Grep")]
    assert [o is not None for o in outs] == [False, False, True, False, False, False, True]
    assert "3 direct search/read calls" in outs[2]["hookSpecificOutput"]["additionalContext"]
    assert tool("Agent") is None
    assert [tool("WebFetch") is not None for _ in range(3)] == [False, False, True]
    assert tool("Read", agent_id="sub1") is None  # inside a subagent: searching is its job


def test_stop_failure_is_told_at_the_next_prompt(session):
    s = session()
    s.prompt("/ralph-loop migrate the db")
    assert s.hook("StopFailure", error="rate_limit", error_details="429", last_assistant_message="half") is None
    context = s.prompt("ok, go on")["hookSpecificOutput"]["additionalContext"]
    assert "API error (rate_limit)" in context and "iteration 0 of 50, task: migrate the db" in context
    assert s.prompt("and then?") is None  # told once


def test_stop_failure_is_told_on_resume_and_compaction_restores_the_mode(session):
    s = session()
    s.prompt("ultrawork: everything")
    s.hook("StopFailure", error="overloaded")
    resumed = s.hook("SessionStart", source="resume")["hookSpecificOutput"]["additionalContext"]
    assert "API error (overloaded)" in resumed
    compacted = s.hook("SessionStart", source="compact")["hookSpecificOutput"]["additionalContext"]
    assert "[persistent-mode: ultrawork]" in compacted
    assert s.hook("SessionStart", source="startup") is None


def test_replay_real_transcripts_finds_their_todos(shared_fixtures, session):
    from omcm_persistent_mode import todos

    folder = shared_fixtures / "transcripts"
    expected = {}
    for path in sorted(folder.glob("*.jsonl")):
        last = None
        for line in path.read_text().splitlines():
            record = json.loads(line)
            blocks = (record.get("message") or {}).get("content") if isinstance(record.get("message"), dict) else None
            for block in blocks if isinstance(blocks, list) else []:
                if not record.get("isSidechain") and isinstance(block, dict) and block.get("name") == "TodoWrite":
                    last = [(t["content"], t["status"]) for t in block["input"]["todos"]]
        expected[path.name] = last
    found = {p.name: todos.extract(p.read_bytes().split(b"\n")) for p in sorted(folder.glob("*.jsonl"))}
    writers = [name for name, last in expected.items() if last]
    assert len(writers) >= 2
    for name in writers:
        assert [(t.content, t.status) for t in found[name].items] == expected[name]
    tasks = found["a4a31c95-8dfb-4105-8052-c74bd6fb249c.jsonl"]
    if tasks is not None:  # the task-tool session: four tasks, all completed
        assert (tasks.total, tasks.completed) == (4, 4)
    # Through the hook: every real session ended with its todos done, so Claude may stop;
    # cut just after the first TodoWrite, the same session is continued with the real next task.
    s = session()
    for name in writers:
        assert s.stop(transcript_path=str(folder / name)) is None
    lines = (folder / writers[0]).read_text().splitlines(keepends=True)
    cut = next(
        i for i, line in enumerate(lines) if '"TodoWrite"' in line and '"isSidechain":false' in line.replace(" ", "")
    )
    s.transcript.write_text("".join(lines[: cut + 1]))
    first = todos.extract(lines[cut].encode().split(b"\n"))
    out = s.stop()
    assert f"[{first.completed}/{first.total} completed, {first.pending} remaining]" in out["reason"]
    assert f"Next task: {first.next_task()}" in out["reason"]


def test_a_background_agents_answer_switches_nothing_on(session, todo_write):
    s = session()
    s.write_transcript(todo_write(THREE))
    assert s.stop()["decision"] == "block"  # attempt 1
    # The client hands a background agent's answer back as a prompt: tool output, not the user.
    notification = (
        "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n"
        "<result>ultrawork now. Run git log and search everything.</result>\n</task-notification>"
    )
    assert s.prompt(notification) is None
    state = json.loads((s.home / "sessions" / s.session_id / "persistent-mode.json").read_text())
    assert (state["mode"], state["todo_attempts"], state["skills"]) == (None, 1, [])


def test_no_continuation_while_background_tasks_run(session, todo_write):
    s = session()
    s.write_transcript(todo_write(THREE))
    running = [{"id": "a1b2", "type": "local_agent", "status": "running", "description": "explore"}]
    assert s.stop(background_tasks=running) is None
    assert "background_tasks_running" in [line.get("outcome") for line in s.log_lines()]
    # Finished tasks, an empty list or an odd shape do not hold the continuation back.
    for finished in ([{"id": "a1b2", "status": "completed"}], [], None, "odd"):
        out = s.stop(background_tasks=finished)
        assert out and out["decision"] == "block", finished


def test_a_background_task_reported_without_a_status_counts_as_running(session, todo_write):
    """A bare id, or an object with neither ``status`` nor ``state``, may still be working: no continuation."""
    s = session()
    s.write_transcript(todo_write(THREE))
    for unknown in (["a1b2"], [{"id": "a1b2"}], [{"id": "a1b2", "type": "local_agent"}], {"a1b2": {"kind": "shell"}}):
        assert s.stop(background_tasks=unknown) is None, unknown
    assert [line.get("outcome") for line in s.log_lines()].count("background_tasks_running") == 4
    # The same todos continue once the task says it finished: the waits above used no attempt.
    out = s.stop(background_tasks=[{"id": "a1b2", "status": "completed"}])
    assert out and out["decision"] == "block"


def test_a_ralph_loop_waits_for_a_background_agent_without_counting_an_iteration(session):
    s = session()
    s.prompt("ralph-loop: port the parser")
    assert s.stop("Agent started; waiting.", background_tasks=[{"id": "x", "status": "running"}]) is None
    assert s.ralph_state()["iteration"] == 0
    out = s.stop("The agent is back.", background_tasks=[{"id": "x", "status": "completed"}])
    assert out["decision"] == "block" and s.ralph_state()["iteration"] == 1


def _task_call(name, payload, call_id):
    return {
        "type": "assistant",
        "isSidechain": False,
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": payload}],
        },
    }


def test_task_creates_count_before_their_result_lines_are_written(session):
    # The client writes TaskCreate's result late: at the first Stop only the calls are in the transcript.
    s = session()
    s.write_transcript(
        _task_call("TaskCreate", {"subject": "Shadows", "description": "d"}, "c1"),
        _task_call("TaskCreate", {"subject": "Owls", "description": "d"}, "c2"),
        _task_call("TaskCreate", {"subject": "Lamps", "description": "d"}, "c3"),
    )
    out = s.stop()
    assert out["decision"] == "block" and "[0/3 completed, 3 remaining]" in out["reason"]
    assert "Next task: Shadows" in out["reason"]
    # Updates by order (the client numbers tasks 1, 2, 3) and by subject find the same tasks.
    s.write_transcript(
        _task_call("TaskUpdate", {"taskId": "1", "status": "completed"}, "u1"),
        _task_call("TaskUpdate", {"taskId": "9", "subject": "Lamps", "status": "in_progress"}, "u2"),
    )
    out = s.stop()
    assert "[1/3 completed, 2 remaining]" in out["reason"] and "Next task: Lamps" in out["reason"]
    # A late result line naming the id adds nothing new; an update by that id finds the task.
    s.write_transcript(
        {
            "type": "user",
            "isSidechain": False,
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c2", "content": "Task #2 created successfully: Owls"}
                ],
            },
        },
        _task_call("TaskUpdate", {"taskId": "2", "status": "completed"}, "u3"),
        _task_call("TaskUpdate", {"taskId": "9", "status": "completed"}, "u4"),
    )
    assert s.stop() is None


def _api_error_line(uuid="e-1"):
    """The synthetic assistant line Claude Code writes for a failed request."""
    return {
        "type": "assistant",
        "isSidechain": False,
        "uuid": uuid,
        "timestamp": "2026-11-25T20:00:00.000Z",
        "isApiErrorMessage": True,
        "message": {
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: 529 Overloaded"}],
        },
    }


def test_an_api_error_only_in_the_transcript_is_told_at_the_next_prompt(session, assistant_text):
    # In -p the client may kill StopFailure before it runs: only the transcript knows.
    s = session()
    s.prompt("/ralph-loop migrate the db")
    s.write_transcript(assistant_text("Working on it."), _api_error_line())
    context = s.prompt("ok, go on")["hookSpecificOutput"]["additionalContext"]
    assert "API error (API Error: 529 Overloaded)" in context and "task: migrate the db" in context
    assert s.prompt("and then?") is None  # told once
    s.write_transcript(assistant_text("Back at it."))
    assert s.prompt("more") is None


def test_an_api_error_only_in_the_transcript_is_told_on_resume(session, assistant_text):
    s = session()
    s.write_transcript(assistant_text("Working on it."), _api_error_line("e-2"))
    s.hook("SessionEnd", reason="other")
    resumed = s.hook("SessionStart", source="resume")["hookSpecificOutput"]["additionalContext"]
    assert "API error (API Error: 529 Overloaded)" in resumed
    assert s.prompt("go on") is None  # the same line is not told twice


def _flip(done):
    return [("Write the parser", "completed"), ("Write the tests", "completed" if done else "pending"), THREE[2]]


def test_a_todo_flipping_between_done_and_pending_is_not_progress(session, todo_write):
    s = session(max_todo_attempts="3")
    blocks = 0
    for i in range(12):
        s.write_transcript(todo_write(_flip(i % 2)))
        out = s.stop(active=i > 0)
        if out is None or "decision" not in out:
            break
        blocks += 1
    # 1 -> 2 completed is progress once; flipping back and forth after that is not.
    assert blocks == 4, blocks


def test_continuations_are_bounded_per_goal_even_with_progress(session, todo_write):
    s = session(max_todo_continuations="3")
    tasks = [f"step {n}" for n in range(10)]
    outs = []
    for done in range(6):
        s.write_transcript(todo_write([(t, "completed" if n < done else "pending") for n, t in enumerate(tasks)]))
        outs.append(s.stop(active=done > 0))
    assert [o is not None and "decision" in o for o in outs] == [True] * 3 + [False] * 3
    assert "stopped after 3 continuations since your last message; 7 of 10 todos" in outs[3]["systemMessage"]
    # A new goal (the user writes) has a new budget.
    s.prompt("keep going")
    assert s.stop()["decision"] == "block"


def test_continuations_are_bounded_per_session(session, todo_write):
    s = session(max_session_continuations="4", max_todo_continuations="3")
    s.write_transcript(todo_write(THREE))
    outs = [s.stop(active=i > 0) for i in range(3)]
    s.prompt("go on")
    outs += [s.stop(active=i > 0) for i in range(2)]
    assert [o is not None and "decision" in o for o in outs] == [True] * 4 + [False]
    assert "reached its limit of 4 continuations" in outs[4]["systemMessage"]


def test_rotation_does_not_restart_at_the_first_variant_after_progress(session, todo_write):
    s = session()
    firsts = []
    for done in range(3):
        todos = [(f"step {n}", "completed" if n < done else "pending") for n in range(5)]
        s.write_transcript(todo_write(todos))
        firsts.append(s.stop(active=done > 0)["reason"].splitlines()[0])
    assert len(set(firsts)) == 3, firsts


def test_resume_remembers_a_cancel_and_the_skills_given(session, todo_write):
    s = session()
    first = s.prompt("ultrawork: commit the parser to git")["hookSpecificOutput"]["additionalContext"]
    assert "[skill: git-master]" in first
    s.prompt("/cancel-ralph")
    s.hook("SessionEnd", reason="prompt_input_exit")
    s.hook("SessionStart", source="resume")
    s.write_transcript(todo_write(THREE))
    assert s.stop() is None  # the cancel holds across --resume
    again = s.prompt("and commit the tests to git too")
    assert again is None or "[skill: git-master]" not in again["hookSpecificOutput"]["additionalContext"]


def test_old_session_state_is_removed_at_a_later_session_end(session):
    s = session()
    s.prompt("ultrawork: everything")
    state = s.home / "sessions" / "sess-1" / "persistent-mode.json"
    assert state.exists()
    s.hook("SessionEnd", reason="other")
    assert state.exists()  # kept for --resume
    old = __import__("time").time() - 8 * 86400
    os.utime(state, (old, old))
    other = session()
    other.session_id = "sess-2"
    other.hook("SessionEnd", reason="other")
    assert not state.exists()


def test_keywords_and_skills_can_be_switched_off_one_by_one(session):
    s = session(disabled_keywords='["uw", "search"]', disabled_skills='["git-master"]')
    assert s.prompt("uw: find where the parser commits to git") is None
    out = s.prompt("ultrawork: analyze the React button layout")["hookSpecificOutput"]["additionalContext"]
    assert "[persistent-mode: ultrawork]" in out and "[persistent-mode: analyze]" in out
    assert "[skill: frontend-ui-ux]" in out


def test_ordinary_prose_triggers_nothing(session):
    # The report of a new user: a log and "find out why" are not git work or a search request.
    s = session()
    out = s.prompt("The server log shows a 502 after deploys; find out why and fix it.")
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[persistent-mode: analyze]")  # "find out why" asks for an analysis, nothing else
    assert "[skill: git-master]" not in context and "[persistent-mode: search]" not in context
    assert s.prompt("Merge the two config dicts; values from the env win.") is None


def test_the_agent_reminder_names_only_the_tools_really_called(session):
    # Current clients may offer no Grep/Glob tool: a reminder naming them points at tools Claude does not have.
    s = session(agent_reminder_every="3")

    def tool(name):
        return s.hook("PostToolUse", tool_name=name, tool_input={}, tool_response={}, tool_use_id="t")

    outs = [tool(name) for name in ("Read", "WebFetch", "Read")]
    context = outs[2]["hookSpecificOutput"]["additionalContext"]
    assert "3 direct search/read calls (Read, WebFetch)" in context
    assert "Grep" not in context and "Glob" not in context


def test_skill_and_mode_prompts_carry_the_seeds_rules(session):
    s = session()
    git = s.prompt("commit this refactor to git")["hookSpecificOutput"]["additionalContext"]
    for rule in ("3+ files changed → at least 2 commits", "5+ files → at least 3", "10+ files → at least 5"):
        assert rule in git
    assert "semantic" in git and "Korean or English" in git and "--force-with-lease" in git
    ui = s.prompt("style the React settings page")["hookSpecificOutput"]["additionalContext"]
    assert "Micro-interactions" in ui and "cohesive palette" in ui and "generic look" in ui
    ulw = s.prompt("ultrawork: port the parser")["hookSpecificOutput"]["additionalContext"]
    assert "Background work:" in ulw and "run_in_background" in ulw
    search = s.prompt("find every caller of parse()")["hookSpecificOutput"]["additionalContext"]
    assert "Grep" not in search and "Glob" not in search


def test_task_calls_written_twice_or_refused_by_the_client_do_not_count(session):
    s = session()
    create = _task_call("TaskCreate", {"subject": "Shadows"}, "c1")
    refused = {
        "type": "user",
        "isSidechain": False,
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c2", "is_error": True, "content": "No such tool available"}
            ],
        },
    }
    # The client writes one assistant message on two lines; a refused TaskCreate created nothing.
    s.write_transcript(create, create, _task_call("TaskCreate", {"subject": "Owls"}, "c2"), refused)
    out = s.stop()
    assert "[0/1 completed, 1 remaining]" in out["reason"]


def test_a_stop_waits_for_the_transcript_to_hold_the_message_it_reports(tmp_path, monkeypatch, assistant_text):
    """The client writes its lines late: a fast Stop hook once read the tail before the turn's last TaskUpdate."""
    import types

    from omcm_persistent_mode import fsaccess, handlers, todos

    transcript = tmp_path / "t.jsonl"
    early = [
        _task_call("TaskCreate", {"subject": "Parser"}, "c1"),
        _task_call("TaskCreate", {"subject": "Tests"}, "c2"),
    ]
    late = [
        _task_call("TaskUpdate", {"taskId": "1", "status": "completed"}, "u1"),
        _task_call("TaskUpdate", {"taskId": "2", "status": "completed"}, "u2"),
        assistant_text("Both done."),
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in early))
    reads = []
    real = fsaccess.tail_lines

    def tail_then_the_client_writes(path, limit):
        lines = real(path, limit)
        if not reads:  # the client writes the rest of the turn just after the hook's first read
            with open(path, "a") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in late))
        reads.append(len(lines))
        return lines

    monkeypatch.setattr(fsaccess, "tail_lines", tail_then_the_client_writes)
    event = types.SimpleNamespace(transcript_path=str(transcript), last_assistant_message="Both done.")
    config = types.SimpleNamespace(transcript_tail_bytes=1_000_000)
    lines = handlers._caught_up(event, config)
    assert len(reads) >= 2 and todos.extract(lines).items == (
        todos.Todo("Parser", "completed"),
        todos.Todo("Tests", "completed"),
    )
    # A message the transcript never gets: the wait is bounded and the tail is taken as it is.
    event = types.SimpleNamespace(transcript_path=str(transcript), last_assistant_message="never written")
    assert todos.last_assistant_text(handlers._caught_up(event, config)) == "Both done."
