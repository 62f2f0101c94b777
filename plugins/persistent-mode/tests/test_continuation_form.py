"""Which form a continuation takes: Stop context for a client known to take it (2.1.163+), else a block.

Every call is a real ``omcm hook`` process; the client's version is read, as
in a real session, from the transcript lines it wrote.
"""

import json

from omcm_core.testing import assert_valid_response

NOTE = "[notepad] Priority context (.omc/notepad.md):\nShip only signed builds."


def client_line(version, **extra) -> dict:
    """A transcript line as the client writes it: every line carries the client's ``version``."""
    return {
        "type": "user",
        "isSidechain": False,
        "version": version,
        "message": {"role": "user", "content": "hi"},
        **extra,
    }


def continuation_of(out) -> str:
    assert_valid_response("Stop", out)
    assert "decision" not in out and "reason" not in out, out
    return out["hookSpecificOutput"]["additionalContext"]


def test_a_client_that_takes_stop_context_gets_the_ralph_continuation_as_context(session):
    s = session()
    s.write_transcript(client_line("2.1.330"))
    s.prompt("/ralph-loop write the parser")
    first = continuation_of(s.stop("working"))
    assert "\nIteration 1/50\n" in first and first.endswith("<promise>TASK_COMPLETE</promise>.")
    assert "\nIteration 2/50\n" in continuation_of(s.stop("working", active=True))
    # The verification request and its verdict take the same form.
    verify = continuation_of(s.stop("Done. <promise>TASK_COMPLETE</promise>", active=True))
    assert verify.startswith("[persistent-mode: ralph verification 1/3]")
    assert s.stop("<oracle-approved>", active=True) is None and s.ralph_state()["status"] == "completed"
    stops = [line for line in s.log_lines() if line.get("event") == "stop"]
    assert [(line.get("form"), line.get("client")) for line in stops][:3] == [("context", "2.1.330")] * 3


def test_todo_continuation_takes_the_context_form_on_the_newest_client(session, todo_write):
    s = session()
    s.write_transcript(client_line("2.1.332"), todo_write([("Write the parser", "completed"), ("Test it", "pending")]))
    text = continuation_of(s.stop())
    assert text.endswith("[1/2 completed, 1 remaining]\nNext task: Test it")


def test_an_older_or_unknown_client_keeps_the_block(session, todo_write):
    todos = todo_write([("Test it", "pending")])
    for name, lines in [
        ("2.1.162", [client_line("2.1.162"), todos]),
        ("none", [todos]),
        ("not a version", [client_line("latest"), todos]),
    ]:
        s = session()
        s.session_id = f"sess-{name.replace(' ', '-')}"
        s.transcript = s.transcript.with_name(f"{s.session_id}.jsonl")
        s.write_transcript(*lines)
        out = s.stop()
        assert out["decision"] == "block" and "Next task: Test it" in out["reason"], name
        assert "hookSpecificOutput" not in out, name


def test_tool_output_cannot_pose_as_the_client(session, todo_write):
    # A tool's result may hold a "version" of its own (toolUseResult, or text): only the client's top-level key counts.
    s = session()
    s.write_transcript(
        client_line("2.1.100"),
        client_line(
            "2.1.100", toolUseResult={"version": "2.1.999"}, message={"role": "user", "content": '"version":"9.9.9"'}
        ),
        todo_write([("Test it", "pending")]),
    )
    assert s.stop()["decision"] == "block"


def test_the_clients_cap_applies_to_context_continuations_too(session):
    # Measured on 2.1.330 and 2.1.332: the client overrides the 9th context continuation in a row as it does a block.
    s = session()
    s.env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "2"
    s.write_transcript(client_line("2.1.330"))
    s.prompt("/ralph-loop x")
    assert "Iteration 1/50" in continuation_of(s.stop("working"))
    assert "Iteration 2/50" in continuation_of(s.stop("working", active=True))
    paused = s.stop("working", active=True)
    assert "hookSpecificOutput" not in paused and "allows 2 Stop continuations in a row" in paused["systemMessage"]
    assert (s.ralph_state()["status"], s.ralph_state()["iteration"]) == ("active", 2)


def test_the_notepad_priority_line_rides_along_with_a_context_continuation(session):
    s = session()
    s.env["OMCM_LOAD_PLUGINS"] = "notepad,persistent-mode"
    (s.project / ".omc").mkdir()
    (s.project / ".omc" / "notepad.md").write_text("## Priority Context\nShip only signed builds.\n")
    s.write_transcript(client_line("2.1.330"))
    s.prompt("ralph-loop: write the parser")
    text = continuation_of(s.stop("working"))
    continuation, _, note = text.partition("\n\n[notepad]")
    assert "Iteration 1/50" in continuation and "[notepad]" + note == NOTE
    # Nobody continues (the loop is over): the note is dropped, Claude stops.
    s.stop("<promise>TASK_COMPLETE</promise>", active=True)
    assert s.stop("<oracle-approved>", active=True) is None
    # An older client: the same note rides along in the block reason instead.
    s.session_id, s.transcript = "sess-old", s.transcript.with_name("sess-old.jsonl")
    s.write_transcript(client_line("2.1.150"))
    s.prompt("ralph-loop: write the parser")
    out = s.stop("working")
    assert out["decision"] == "block" and out["reason"].endswith("\n\n" + NOTE)
    assert json.dumps(out).count("Ship only signed builds.") == 1


def test_the_context_budget_does_not_cut_a_continuation(session):
    # [core] context_budget shares context among plugins; on Stop the context is the continuation itself.
    s = session()
    s.env["OMCM__CORE__CONTEXT_BUDGET"] = "40"
    s.write_transcript(client_line("2.1.330"))
    s.prompt("/ralph-loop write the parser", strict=False)  # the prompt's mode text is cut at 40: not this test's point
    text = continuation_of(s.stop("working"))
    assert "cut to fit" not in text and text.endswith("<promise>TASK_COMPLETE</promise>.") and len(text) > 200
