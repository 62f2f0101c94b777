"""pre-tool-guide learns from the errors no hook reports, read from the transcript."""

import json

import omcm_pre_tool_guide

from omcm_core.store import Store
from omcm_core.testing import assert_valid_response, post_tool_payload, pre_tool_payload, run_hook

NOT_READ = "File has not been read yet. Read it first before writing to it."
OLD = "2026-01-02T03:04:05.678Z"


def entry(kind, session, block):
    return {
        "type": kind,
        "sessionId": session,
        "cwd": "/srv/app",
        "timestamp": OLD,
        "message": {"role": kind, "content": [block]},
    }


def tool_use(session, tool_id, name, **tool_input):
    return entry("assistant", session, {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})


def tool_result(session, tool_id, text, is_error=False):
    return entry(
        "user", session, {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error}
    )


def append(path, *entries):
    with open(path, "a", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e) + "\n")


def context(proc):
    out = json.loads(proc.stdout) if proc.stdout else None
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def test_an_edit_refused_before_it_ran_teaches_the_next_session(tmp_path):
    """No hook fires for "File has not been read yet": the transcript is where the guide learns it."""
    env = {"OMCM_LOAD_PLUGINS": "pre-tool-guide", "LANG": "en_US.UTF-8", "OMCM_HOME": str(tmp_path / "home")}
    project = tmp_path / "app"
    project.mkdir()
    (project / "models.py").write_text("a = 1\n")
    (project / "views.py").write_text("b = 2\n")
    monday = tmp_path / "monday.jsonl"
    edit = {"file_path": str(project / "models.py"), "old_string": "a", "new_string": "c"}
    # Claude Code checked the Edit, refused it, and wrote only the transcript.
    append(
        monday,
        tool_use("monday", "t1", "Edit", **edit),
        tool_result("monday", "t1", f"<tool_use_error>{NOT_READ}</tool_use_error>", True),
    )
    # Then Claude read the file (hooks fire), and the transcript has that too.
    append(monday, tool_use("monday", "t2", "Read", file_path=edit["file_path"]), tool_result("monday", "t2", "a = 1"))
    common = {"session_id": "monday", "transcript_path": str(monday), "cwd": str(project)}
    read = post_tool_payload("Read", {"file_path": edit["file_path"]}, {"type": "text"}, tool_use_id="t2", **common)
    assert run_hook(read, env=env).returncode == 0
    append(monday, tool_use("monday", "t3", "Edit", **edit), tool_result("monday", "t3", "ok"))
    assert (
        run_hook(
            post_tool_payload("Edit", edit, {"filePath": edit["file_path"]}, tool_use_id="t3", **common), env=env
        ).returncode
        == 0
    )

    rows = Store(tmp_path / "home").query("SELECT error_raw, resolution FROM error_kb")
    assert len(rows) == 1 and NOT_READ in rows[0][0]
    assert json.loads(rows[0][1])["toolSequence"] == ["Edit", "Read", "Edit"]

    # Tuesday: an Edit of another file the session has not read gets the lesson.
    tuesday = {"session_id": "tuesday", "transcript_path": str(tmp_path / "tuesday.jsonl"), "cwd": str(project)}
    views = {"file_path": str(project / "views.py"), "old_string": "b", "new_string": "d"}
    proc = run_hook(pre_tool_payload("Edit", views, **tuesday), env={**env, "CLAUDE_PROJECT_DIR": str(project)})
    assert_valid_response("PreToolUse", json.loads(proc.stdout))
    text = context(proc)
    assert "has not read views.py yet" in text and NOT_READ in text and "Edit → Read → Edit" in text
    # Once the session has read it, nothing to say.
    run_hook(post_tool_payload("Read", {"file_path": views["file_path"]}, {"type": "text"}, **tuesday), env=env)
    assert run_hook(pre_tool_payload("Edit", views, **tuesday), env=env).stdout == b""
    # A file that does not exist yet (a Write creating it) needs no reading.
    new = {"file_path": str(project / "new.py"), "content": "x"}
    assert run_hook(pre_tool_payload("Write", new, **tuesday), env=env).stdout == b""


def test_guidance_shows_the_file_as_it_was_not_a_placeholder(omcm_dispatch, tmp_path):
    project = tmp_path / "work"  # under /tmp, which matching replaces with <TMP>
    (project / "pkg").mkdir(parents=True)
    dispatch = omcm_dispatch(
        names={"pre-tool-guide": omcm_pre_tool_guide}, env={"LANG": "en_US.UTF-8", "CLAUDE_PROJECT_DIR": str(project)}
    )
    path = f"{project}/pkg/settings.py"
    edit = {"file_path": path, "old_string": "x", "new_string": "y"}
    dispatch(
        post_tool_payload("Edit", edit, error=f"String to replace not found in file.\nFile: {path}", session_id="s1")
    )
    dispatch(post_tool_payload("Read", {"file_path": path}, {"type": "text"}, session_id="s1"))
    dispatch(post_tool_payload("Edit", edit, {"filePath": path}, session_id="s1"))
    out = dispatch(pre_tool_payload("Edit", edit, session_id="s2"))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "File: pkg/settings.py" in text and "Resolved by: Edit pkg/settings.py (Edit)" in text
    assert "<TMP>" not in text and str(project) not in text
    rows = Store(dispatch.env["OMCM_HOME"]).query("SELECT error_normalized FROM error_kb")
    assert "<TMP>" in rows[0][0]  # matching still ignores where the temporary folder was


def test_real_transcripts_read_incrementally_teach_the_knowledge_base(shared_fixtures, omcm_dispatch, omcm_home):
    """Each real transcript read as the reader does it, at Stop: the lessons the hooks never saw."""
    # A budget load cannot reach: this test is about what is learned, not how fast.
    env = {"LANG": "en_US.UTF-8", "OMCM__CORE__PLUGIN_BUDGET_MS": "120000"}
    dispatch = omcm_dispatch(names={"pre-tool-guide": omcm_pre_tool_guide}, env=env)
    for path in sorted((shared_fixtures / "transcripts").glob("*.jsonl")):
        for _ in range(3):  # at most 1 MB per call: the largest needs two
            stop = {
                "session_id": path.stem,
                "transcript_path": str(path),
                "cwd": "/x",
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
            assert dispatch(stop) is None
    for folder in sorted(p for p in (shared_fixtures / "transcripts").iterdir() if p.is_dir()):
        stop = {
            "session_id": folder.name,
            "transcript_path": str(folder) + ".jsonl",
            "cwd": "/x",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
        dispatch(stop)  # subagents' transcripts beside a main one
    store = Store(omcm_home)
    ((events,),) = store.query("SELECT count(*) FROM guide_events WHERE type = 'tool_error'")
    # The same 30 failures the hook-by-hook replay finds (42 failed results, 12 rejections or sibling errors).
    assert events >= 30
    rows = store.query(
        "SELECT file_key, resolution FROM error_kb WHERE error_normalized LIKE 'File has not been read yet%'"
    )
    assert len({key for key, _ in rows}) >= 5
    resolutions = [json.loads(r) for _, r in rows if r]
    assert any(r["toolSequence"] == ["Edit", "Read", "Edit"] for r in resolutions)
    ((pending,),) = store.query("SELECT count(*) FROM transcript_calls")
    assert pending > 300  # every call read once, whatever the number of consumers
