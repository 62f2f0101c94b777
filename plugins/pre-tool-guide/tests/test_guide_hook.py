"""pre-tool-guide through `omcm hook`: guidance after past errors, multi-session learning, real transcripts."""

import json
import sqlite3

import omcm_pre_tool_guide
import pytest
from omcm_pre_tool_guide.normalize import is_mistake

from omcm_core.store import Store
from omcm_core.testing import assert_valid_response, post_tool_payload, pre_tool_payload, run_hook
from omcm_core.transcripts import replay_transcript

ENV = {"OMCM_LOAD_PLUGINS": "pre-tool-guide", "LANG": "en_US.UTF-8"}
NOT_READ = "File has not been read yet. Read it first before writing to it."


def guide(omcm_dispatch, **env):
    return omcm_dispatch(names={"pre-tool-guide": omcm_pre_tool_guide}, env={"LANG": "en_US.UTF-8", **env})


def context(out):
    return out["hookSpecificOutput"]["additionalContext"] if out else None


def learn_edit_fix(dispatch, path="/p/app/server.py", session="s1"):
    edit = {"file_path": path, "old_string": "a", "new_string": "b"}
    dispatch(post_tool_payload("Edit", edit, error=NOT_READ, session_id=session))
    dispatch(post_tool_payload("Read", {"file_path": path}, {"type": "text"}, session_id=session))
    dispatch(post_tool_payload("Edit", edit, {"filePath": path}, session_id=session))


def test_ra_301_1_file_errors_with_resolution_are_shown(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    out = dispatch(pre_tool_payload("Write", {"file_path": "/p/app/server.py", "content": "x"}, session_id="s2"))
    assert context(out).split("\n") == [
        f"⚠️ Past error with this file: {NOT_READ}",
        "Resolved by: Edit /p/app/server.py (Edit)",
        "Resolution path: Edit → Read → Edit",
    ]
    assert_valid_response("PreToolUse", out)


def test_ra_301_2_no_history_no_output(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/p/app/other.py"})) is None


def test_at_most_two_errors_most_recent_first_and_korean(omcm_dispatch):
    dispatch = guide(omcm_dispatch, LANG="ko_KR.UTF-8")
    for n, error in enumerate(["E1 old", "E2 middle", "E3 new"]):
        dispatch(post_tool_payload("Write", {"file_path": "/p/a.py"}, error=error, session_id=f"k{n}"))
        dispatch(post_tool_payload("Write", {"file_path": "/p/a.py"}, {}, session_id=f"k{n}"))
    lines = context(dispatch(pre_tool_payload("Edit", {"file_path": "/p/a.py"}))).split("\n")
    assert [line for line in lines if line.startswith("⚠️")] == [
        "⚠️ 이 파일 관련 과거 에러: E3 new",
        "⚠️ 이 파일 관련 과거 에러: E2 middle",
    ]
    assert "해결 방법: Write /p/a.py (Write)" in lines and "해결 경로: Write → Write" in lines


def test_ra_302_1_last_bash_error_of_the_session_with_its_path(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    error = "Exit code 1\nModuleNotFoundError: No module named 'requests'"
    # Learned in an earlier session ...
    dispatch(post_tool_payload("Bash", {"command": "pytest"}, error=error, session_id="old"))
    dispatch(post_tool_payload("Bash", {"command": "pip install requests"}, {"stdout": "ok"}, session_id="old"))
    # ... the same error now happens in this session.
    dispatch(post_tool_payload("Bash", {"command": "pytest -x"}, error=error, session_id="now"))
    out = dispatch(pre_tool_payload("Bash", {"command": "pytest -x"}, session_id="now"))
    assert context(out).split("\n") == [
        ["💡 Bash error earlier in this session: Exit code 1", "ModuleNotFoundError: No module named 'requests'"][0],
        "ModuleNotFoundError: No module named 'requests'",
        "Resolved by: pip install requests (Bash)",
        "Previous resolution path: Bash → Bash",
    ]
    # Another program than the one that failed: that lesson is not about it.
    assert dispatch(pre_tool_payload("Bash", {"command": "env | grep TOKEN"}, session_id="now")) is None
    assert context(dispatch(pre_tool_payload("Bash", {"command": "FOO=1 pytest tests/"}, session_id="now")))


def test_ra_302_2_and_3_no_session_error_or_no_kb_match_no_output(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    assert dispatch(pre_tool_payload("Bash", {"command": "ls"}, session_id="clean")) is None
    dispatch(post_tool_payload("Bash", {"command": "make"}, error="Exit code 2\nmake: *** no rule", session_id="x"))
    assert dispatch(pre_tool_payload("Bash", {"command": "make"}, session_id="x")) is None  # never resolved


def test_ra_303_1_task_and_agent_get_nothing(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    for tool in ("Task", "Agent", "Read", "Grep"):
        assert dispatch(pre_tool_payload(tool, {"file_path": "/p/app/server.py", "prompt": "x"})) is None


def test_ra_304_items_joined_by_newlines(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    dispatch(post_tool_payload("Edit", {"file_path": "/p/x.py"}, error="first", session_id="a"))
    dispatch(post_tool_payload("Edit", {"file_path": "/p/x.py"}, {}, session_id="a"))
    dispatch(post_tool_payload("Edit", {"file_path": "/p/x.py"}, error="second", session_id="b"))
    dispatch(post_tool_payload("Edit", {"file_path": "/p/x.py"}, {}, session_id="b"))
    assert len(context(dispatch(pre_tool_payload("Edit", {"file_path": "/p/x.py"}))).split("\n")) == 6


def test_unparsable_resolution_is_shown_raw(omcm_dispatch, omcm_home):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    with Store(omcm_home).transaction() as conn:
        conn.execute("UPDATE error_kb SET resolution = 'fixed by hand'")
    out = dispatch(pre_tool_payload("Edit", {"file_path": "/p/app/server.py"}))
    assert "Resolved by: fixed by hand" in context(out)


def test_percent_and_underscore_in_file_names_match_only_themselves(omcm_dispatch):
    dispatch = guide(omcm_dispatch)
    for name, error in (("/p/100%.py", "broke 100%"), ("/p/a_b.py", "broke a_b"), ("/p/1000.py", "broke 1000")):
        dispatch(post_tool_payload("Edit", {"file_path": name}, error=error, session_id=name))
        dispatch(post_tool_payload("Edit", {"file_path": name}, {}, session_id=name))
    assert "broke 100%" in context(dispatch(pre_tool_payload("Edit", {"file_path": "/q/100%.py"})))
    assert "1000" not in context(dispatch(pre_tool_payload("Edit", {"file_path": "/q/100%.py"})))
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/q/axb.py"})) is None
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/q/%.py"})) is None


def test_ra_305_1_store_unusable_means_no_guidance_and_exit_zero(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "omcm.db").mkdir()  # cannot be opened as a database at all
    proc = run_hook(pre_tool_payload("Edit", {"file_path": "/p/a.py"}), env={**ENV, "OMCM_HOME": str(home)})
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert "guidance_failed" in (home / "logs" / "omcm.jsonl").read_text()


def test_a_writer_holding_the_store_does_not_stop_guidance(omcm_dispatch, omcm_home):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    payload = pre_tool_payload("Write", {"file_path": "/p/app/server.py", "content": "x"}, session_id="s2")
    expected = context(dispatch(payload))
    assert expected  # the lesson exists
    writer = sqlite3.connect(omcm_home / "omcm.db", isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # another dispatcher mid-write: WAL readers go on
    try:
        out = dispatch(payload)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert context(out) == expected


def test_store_locked_even_for_readers_means_no_guidance_a_log_line_and_no_plugin_failure(
    omcm_dispatch, omcm_home, monkeypatch
):
    dispatch = guide(omcm_dispatch)
    learn_edit_fix(dispatch)
    payload = pre_tool_payload("Write", {"file_path": "/p/app/server.py", "content": "x"}, session_id="s2")
    assert context(dispatch(payload))  # the lesson exists: an empty answer below is the lock's doing
    # SQLite waits busy_timeout (10 s) before "database is locked"; 200 ms keeps the test fast.
    monkeypatch.setattr(Store.__init__, "__defaults__", (200,))
    holder = sqlite3.connect(omcm_home / "omcm.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # unlike a plain write lock, this blocks WAL readers too
    holder.execute("BEGIN EXCLUSIVE")
    try:
        out = dispatch(payload)
    finally:
        holder.close()
    assert out is None
    entries = [json.loads(line) for line in (omcm_home / "logs" / "omcm.jsonl").read_text().splitlines()]
    failed = [e for e in entries if e["event"] == "guidance_failed"]
    assert len(failed) == 1 and "locked" in failed[0]["error"]
    # Failing open is the plugin's own answer, not a crash the dispatcher caught and counts toward the breaker.
    assert not [e for e in entries if e["event"] == "plugin_failed"]


@pytest.mark.slow
def test_learning_across_sessions_through_omcm_hook(tmp_path):
    env = {**ENV, "OMCM_HOME": str(tmp_path)}
    edit = {"file_path": "/srv/app/models.py", "old_string": "a", "new_string": "b"}
    steps = [
        post_tool_payload("Edit", edit, error=NOT_READ, session_id="monday"),
        post_tool_payload("Read", {"file_path": "/srv/app/models.py"}, {"type": "text"}, session_id="monday"),
        post_tool_payload("Edit", edit, {"filePath": "/srv/app/models.py"}, session_id="monday"),
    ]
    for payload in steps:
        assert run_hook(payload, env=env).stdout == b""
    out = json.loads(run_hook(pre_tool_payload("Edit", edit, session_id="tuesday"), env=env).stdout)
    assert "Resolution path: Edit → Read → Edit" in context(out)


@pytest.mark.slow
def test_real_transcripts_teach_the_knowledge_base(shared_fixtures, omcm_dispatch, omcm_home):
    dispatch = guide(omcm_dispatch)
    failures = ignored = 0
    for path in sorted((shared_fixtures / "transcripts").rglob("*.jsonl")):
        for payload in replay_transcript(path):
            # The replay plays a hook for every call, even those Claude Code fires none for; the
            # transcript reader must not read ahead of it (test_guide_transcripts.py covers the reader).
            del payload["transcript_path"]
            if payload["hook_event_name"] == "PostToolUseFailure":
                failures += 1
                ignored += not is_mistake(payload["error"])
            out = dispatch(payload)
            assert_valid_response(payload["hook_event_name"], out)
    store = Store(omcm_home)
    ((events,),) = store.query("SELECT count(*) FROM guide_events WHERE type = 'tool_error'")
    ((distinct, resolved),) = store.query("SELECT count(*), count(resolution) FROM error_kb")
    # 42 failed results; user rejections and "sibling errored" teach nothing (12 of them).
    assert failures == 42 and ignored == 12 and events == 30
    assert 0 < distinct <= events and resolved > 0
    # "File has not been read yet" happened on many files: one lesson per file, most of them resolved.
    rows = store.query(
        "SELECT file_key, resolution FROM error_kb WHERE error_normalized LIKE 'File has not been read yet%'"
    )
    assert len({key for key, _ in rows}) >= 5
    resolutions = [json.loads(r) for _, r in rows if r]
    assert resolutions and all(r["toolSequence"][0] == r["tool"] and len(r["toolSequence"]) <= 20 for r in resolutions)
    assert any(r["toolSequence"] == ["Edit", "Read", "Edit"] for r in resolutions)
