"""post-tool-observer answers first and records after, loses no call, stores no raw secret, and search
masks again only rows masked under older rules."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import omcm_post_tool_observer
import pytest
from omcm_post_tool_observer import search, storage

from omcm_core.redact import rules_version
from omcm_core.store import Store
from omcm_core.testing import hook_payload, post_tool_payload, run_hook

ENV = {"OMCM_LOAD_PLUGINS": "post-tool-observer", "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"}
SECRET = "ghp_" + "Zq9Xw8Vu" * 5  # a GitHub token's shape
OLD = "2026-01-02T03:04:05.678Z"


def _entry(kind, block):
    return {
        "type": kind,
        "sessionId": "s1",
        "cwd": "/srv",
        "timestamp": OLD,
        "message": {"role": kind, "content": [block]},
    }


def _transcript(path: Path, use_id: str, command: str, output: str) -> Path:
    lines = [
        _entry("assistant", {"type": "tool_use", "id": use_id, "name": "Bash", "input": {"command": command}}),
        _entry("user", {"type": "tool_result", "tool_use_id": use_id, "content": output, "is_error": False}),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _observations(home: Path, use_id: str) -> list:
    if not (home / "omcm.db").exists():
        return []
    store = Store(home)
    try:
        storage.ready(store)
        return store.query("SELECT output, masked_with FROM observer_events WHERE tool_use_id = ?", (use_id,))
    finally:
        store.close()


def _wait_for(check, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _no_raw_secret_under(home: Path) -> None:
    for path in home.rglob("*"):
        if path.is_file() and not path.is_socket():
            assert SECRET.encode() not in path.read_bytes(), path


def _daemon(env, action: str) -> str:
    """`omcm daemon ACTION` (the dispatcher's own module is private to omcm)."""
    argv = [sys.executable, "-m", "omcm_core", "daemon", action]
    return subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True).stdout


def _daemon_pid(env) -> int | None:
    found = re.search(r"pid (\d+)", _daemon(env, "status"))
    return int(found.group(1)) if found else None


@pytest.fixture
def warm(tmp_path):
    env = {**ENV, "OMCM_HOME": str(tmp_path / "home"), "OMCM_DAEMON": "1"}
    # The first call answers in process and starts the dispatcher; wait until it listens.
    run_hook(hook_payload("SessionStart", source="startup"), env=env, event="SessionStart")
    _wait_for(lambda: _daemon_pid(env))
    yield env
    _daemon(env, "stop")


def _held_write_lock(home: Path) -> sqlite3.Connection:
    """The store's write lock, held: a hook that wrote before answering would wait for it."""
    Store(home).query("SELECT 1")  # the file exists, in WAL mode
    conn = sqlite3.connect(home / "omcm.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


@pytest.mark.slow
def test_the_answer_is_out_before_the_call_is_recorded_and_a_killed_dispatcher_loses_nothing(warm, tmp_path):
    home = Path(warm["OMCM_HOME"])
    use_id = "toolu_answer_first"
    output = f"export GITHUB_TOKEN={SECRET}\n" + "build line\n" * 5000  # ~60 KB, a secret in it
    transcript = _transcript(tmp_path / "s1.jsonl", use_id, "env | grep TOKEN", output)
    payload = post_tool_payload(
        "Bash",
        {"command": "env | grep TOKEN"},
        {"stdout": output, "stderr": ""},
        tool_use_id=use_id,
        session_id="s1",
        transcript_path=str(transcript),
    )
    pid = _daemon_pid(warm)
    lock = _held_write_lock(home)
    try:
        started = time.monotonic()
        proc = run_hook(payload, env=warm, timeout=60)
        answered_s = time.monotonic() - started
        # Answered (exit 0, nothing to say) while the store could not be written: nothing was written first.
        assert (proc.returncode, proc.stdout) == (0, b"")
        assert answered_s < 9.0  # the store's busy timeout is 10 s: an answer that waited for the lock would not be
        assert _observations(home, use_id) == []
        # The dispatcher dies with the recording still queued (it waits for the lock we hold).
        os.kill(pid, signal.SIGKILL)
        _wait_for(lambda: _daemon_pid(warm) is None)
    finally:
        lock.rollback()
        lock.close()
    assert _observations(home, use_id) == []  # lost with the dispatcher...
    # ... and recovered at the turn's end from the transcript, masked, once.
    stop = hook_payload("Stop", session_id="s1", transcript_path=str(transcript), stop_hook_active=False)
    assert run_hook(stop, env={**warm, "OMCM_DAEMON": "0"}, event="Stop").returncode == 0
    ((stored, stamp),) = _observations(home, use_id)
    assert "[REDACTED" in stored and SECRET not in stored and stamp == rules_version()
    # The recovered call is reported now: another turn's end does not record it twice.
    run_hook(stop, env={**warm, "OMCM_DAEMON": "0"}, event="Stop")
    assert len(_observations(home, use_id)) == 1
    _no_raw_secret_under(home)


@pytest.mark.slow
def test_a_warm_call_is_recorded_after_its_answer_masked(warm, tmp_path):
    home = Path(warm["OMCM_HOME"])
    use_id = "toolu_warm"
    payload = post_tool_payload(
        "Bash", {"command": f"curl -H 'Authorization: token {SECRET}' x"}, {"stdout": SECRET}, tool_use_id=use_id
    )
    assert run_hook(payload, env=warm).returncode == 0
    ((stored, stamp),) = _wait_for(lambda: _observations(home, use_id))
    assert SECRET not in stored and stamp == rules_version()
    _no_raw_secret_under(home)


def test_a_call_recorded_twice_is_stored_once(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    payload = post_tool_payload("Bash", {"command": "ls"}, {"stdout": "a"}, tool_use_id="toolu_twice")
    dispatch(payload)
    dispatch(payload)
    assert len(_observations(omcm_home, "toolu_twice")) == 1


class _Counting:
    def __init__(self, real):
        self.real, self.calls = real, 0

    def __call__(self, text, *args, **kwargs):
        self.calls += 1
        return self.real(text, *args, **kwargs)


def test_search_masks_again_only_rows_masked_under_older_rules(omcm_dispatch, omcm_home, monkeypatch):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ENV)
    dispatch(post_tool_payload("Bash", {"command": "make deploy"}, {"stdout": "deployed fine"}, tool_use_id="new"))
    dispatch(post_tool_payload("Bash", {"command": "make deploy"}, {"stdout": "deployed old"}, tool_use_id="old"))
    store = Store(omcm_home)
    # A row stored before a rule existed: its secret is in the clear, stamped with other rules.
    with store.transaction() as conn:
        conn.execute(
            "UPDATE observer_events SET output = ?, masked_with = 'older-rules' WHERE tool_use_id = 'old'",
            (f"deployed old {SECRET}",),
        )
    masker = _Counting(search.mask)
    monkeypatch.setattr(search, "mask", masker)
    current = search.full_text(store, "fine")
    assert [hit["output"] for hit in current] == ["deployed fine"]
    assert masker.calls == 0  # masked under today's rules: returned as stored
    older = search.full_text(store, "old")
    assert masker.calls > 0 and SECRET not in older[0]["output"] and "[REDACTED" in older[0]["output"]
    store.close()


def test_a_word_in_many_calls_ranks_the_newest_and_filters_reach_older_slices(
    omcm_dispatch, omcm_home, tmp_path, monkeypatch
):
    old_project, new_project = tmp_path / "old", tmp_path / "new"
    old_project.mkdir()
    new_project.mkdir()
    for project, count in ((old_project, 2), (new_project, 8)):
        env = {**ENV, "CLAUDE_PROJECT_DIR": str(project)}
        dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=env)
        for i in range(count):
            dispatch(post_tool_payload("Bash", {"command": f"make step{i}"}, {"stdout": f"alpha {project.name} {i}"}))
    monkeypatch.setattr(search, "MAX_RANKED", 3)
    store = Store(omcm_home)
    newest = search.full_text(store, "alpha", limit=2)
    # Ten calls match, more than MAX_RANKED: the newest three are ranked, so both hits are among them.
    assert {hit["output"] for hit in newest} <= {"alpha new 5", "alpha new 6", "alpha new 7"} and len(newest) == 2
    # The old project's calls are the oldest matches, four slices back: the filter still finds them.
    older = search.full_text(store, "alpha", search.Filters(project=str(old_project)), limit=5)
    assert sorted(hit["output"] for hit in older) == ["alpha old 0", "alpha old 1"]
    assert search.full_text(store, "alpha", search.Filters(project=str(tmp_path / "elsewhere"))) == []
    store.close()
