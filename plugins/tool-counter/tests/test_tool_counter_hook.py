"""tool-counter through the real dispatcher, in process and as `omcm hook` subprocesses."""

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import omcm_tool_counter
import pytest

from omcm_core.testing import (
    assert_valid_response,
    pre_tool_payload,
    run_hook,
    session_end_payload,
    session_start_payload,
)

ENV = {"OMCM_LOAD_PLUGINS": "tool-counter", "LANG": "en_US.UTF-8"}


def context_of(out):
    return out["hookSpecificOutput"]["additionalContext"] if out else None


def counters(home, session):
    return json.loads((Path(home) / "sessions" / session / "tool-counters.json").read_text())


def test_non_read_tools_say_nothing(omcm_dispatch):
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter}, env={"LANG": "C"})
    assert dispatch(pre_tool_payload("Edit", {"file_path": "/a"})) is None
    assert dispatch(pre_tool_payload("Read", {"file_path": "/a"})) is None


def test_fifth_read_suggests_once_to_claude_only(omcm_dispatch):
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter}, env={"LANG": "C"})
    outs = [dispatch(pre_tool_payload("Read", {"file_path": f"/f{i}"})) for i in range(7)]
    assert [o is not None for o in outs] == [False, False, False, False, True, False, False]
    assert "5 consecutive Read calls" in context_of(outs[4])
    assert "systemMessage" not in outs[4]
    assert_valid_response("PreToolUse", outs[4])


def test_third_bash_suggests_and_show_user_adds_a_system_message(omcm_dispatch, omcm_home):
    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text("[tool-counter]\nshow_user = true\nbash_threshold = 2\n")
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter}, env={"LANG": "C"})
    outs = [dispatch(pre_tool_payload("Bash", {"command": "ls"})) for _ in range(3)]
    assert outs[0] is None and outs[2] is None
    assert outs[1]["systemMessage"] == context_of(outs[1])
    assert "2 consecutive Bash calls" in outs[1]["systemMessage"]


def test_korean_from_locale_and_from_config(omcm_dispatch, omcm_home):
    korean = omcm_dispatch(names={"tool-counter": omcm_tool_counter}, env={"LANG": "ko_KR.UTF-8"})
    outs = [korean(pre_tool_payload("Bash", {"command": "ls"}, session_id="ko")) for _ in range(3)]
    assert context_of(outs[2]).startswith("연속 Bash 호출이 3회 감지되었습니다.")
    omcm_home.mkdir(parents=True, exist_ok=True)
    (omcm_home / "config.toml").write_text('[core]\nlanguage = "ko"\n')
    english_locale = omcm_dispatch(names={"tool-counter": omcm_tool_counter}, env={"LANG": "en_US.UTF-8"})
    outs = [english_locale(pre_tool_payload("Bash", {"command": "ls"}, session_id="ko2")) for _ in range(3)]
    assert context_of(outs[2]).startswith("연속 Bash")


def test_sessions_count_separately_and_session_end_cleans_up(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter})
    for _ in range(4):
        dispatch(pre_tool_payload("Read", session_id="a"))
    for _ in range(2):
        dispatch(pre_tool_payload("Read", session_id="b"))
    assert counters(omcm_home, "a")["read"] == 4 and counters(omcm_home, "b")["read"] == 2
    dispatch(session_end_payload(session_id="a"))
    assert not (omcm_home / "sessions" / "a").exists()
    assert (omcm_home / "sessions" / "b" / "tool-counters.json").exists()


def test_no_session_id_uses_the_global_file(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter})
    payload = pre_tool_payload("Read")
    del payload["session_id"]
    dispatch(payload)
    assert json.loads((omcm_home / "tool-counters.json").read_text())["read"] == 1


def test_stale_sessions_age_out_at_session_start(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"tool-counter": omcm_tool_counter})
    dispatch(pre_tool_payload("Read", session_id="stale"))
    state = omcm_home / "sessions" / "stale" / "tool-counters.json"
    os.utime(state, (state.stat().st_mtime - 30 * 86400,) * 2)
    dispatch(session_start_payload(session_id="fresh"))
    assert not state.exists()


def test_hostile_session_ids_stay_inside_omcm_home(tmp_path):
    home = tmp_path / "home"
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    for session in ["../../escape", "/etc/passwd", "a/../../b", "..", "nul\x00byte", "x" * 500]:
        proc = run_hook(pre_tool_payload("Read", session_id=session), env={**ENV, "OMCM_HOME": str(home)})
        assert proc.returncode == 0 and proc.stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == outside_before + (
        ["home"] if "home" not in outside_before else []
    )
    for path in home.rglob("tool-counters.json"):
        assert home.resolve() in path.resolve().parents
        assert path.parent.parent == home / "sessions"
    assert len(list((home / "sessions").iterdir())) == 6


@pytest.mark.slow
def test_read_and_bash_runs_through_omcm_hook(tmp_path):
    env = {**ENV, "OMCM_HOME": str(tmp_path)}
    # non-Read tool: nothing
    assert run_hook(pre_tool_payload("Bash", {"command": "ls"}, session_id="r"), env=env).stdout == b""
    outs = [run_hook(pre_tool_payload("Read", {"file_path": "/x"}, session_id="r"), env=env) for _ in range(5)]
    assert all(o.returncode == 0 for o in outs)
    assert [o.stdout != b"" for o in outs] == [False, False, False, False, True]
    assert "5 consecutive Read calls" in context_of(json.loads(outs[4].stdout))
    # invalid JSON: nothing, exit 0
    bad = run_hook(b"{not json", env=env)
    assert (bad.returncode, bad.stdout) == (0, b"")
    outs = [run_hook(pre_tool_payload("Bash", {"command": "ls"}, session_id="b"), env=env) for _ in range(3)]
    assert [o.stdout != b"" for o in outs] == [False, False, True]


@pytest.mark.slow
def test_forty_parallel_reads_count_forty_and_suggest_once(tmp_path):
    # Forty processes queue for the counter's lock; on a loaded machine (the tox matrix
    # on two cores) the fifth could overrun the 1.5 s budget and, failing open, say
    # nothing. This is about counting under concurrency, so the budget is out of reach.
    env = {**ENV, "OMCM_HOME": str(tmp_path), "OMCM__CORE__PLUGIN_BUDGET_MS": "60000"}
    payloads = [pre_tool_payload("Read", {"file_path": f"/f{i}"}, session_id="parallel") for i in range(40)]
    with ThreadPoolExecutor(max_workers=40) as pool:
        procs = list(pool.map(lambda p: run_hook(p, env=env), payloads))
    assert all(p.returncode == 0 for p in procs)
    assert sum(1 for p in procs if p.stdout) == 1
    assert counters(tmp_path, "parallel")["read"] == 40


@pytest.mark.slow
def test_real_payloads_give_nothing_or_valid_json(shared_fixtures, tmp_path):
    env = {**ENV, "OMCM_HOME": str(tmp_path)}
    for path in sorted((shared_fixtures / "hook-payloads").glob("PreToolUse-*.json")):
        proc = run_hook(path.read_bytes(), env=env)
        assert proc.returncode == 0
        assert_valid_response("PreToolUse", json.loads(proc.stdout) if proc.stdout else None)
