"""``omcm stats`` after a replayed session: calls, time, context and breaker openings per plugin and event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from omcm_core._runtime.stats import BUCKETS_MS, quantile
from omcm_core.testing import run_hook, user_prompt_payload

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = "tool-counter,pre-tool-guide,post-tool-observer,memory-rotation,persistent-mode,notepad"
SESSION = "stats-session-1"


def omcm(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env)


def stats(env: dict, *args: str) -> list[dict]:
    proc = omcm(env, "stats", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["rows"]


def demo_payloads(project: Path, transcript: Path) -> list[dict]:
    out = []
    for line in (ROOT / "demo" / "session.jsonl").read_text().splitlines():
        text = line.replace("{{PROJECT}}", str(project)).replace("{{SESSION}}", SESSION)
        out.append(json.loads(text.replace("{{TRANSCRIPT}}", str(transcript))))
    return out


@pytest.fixture
def replayed(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("")
    env = {**os.environ, "OMCM_HOME": str(home), "OMCM_LOAD_PLUGINS": PLUGINS, "CLAUDE_PROJECT_DIR": str(project)}
    env["OMCM__POST_TOOL_OBSERVER__EMBEDDINGS"] = "false"
    payloads = demo_payloads(project, transcript)
    for payload in payloads:
        proc = run_hook(payload, env=env, strict=False, cwd=str(project))
        assert proc.returncode in (0, 2), proc.stderr
    return env, payloads


def test_stats_after_a_replayed_session_count_every_call_of_every_plugin(replayed):
    env, payloads = replayed
    rows = stats(env)
    events = Counter(p["hook_event_name"] for p in payloads)
    by_key = {(r["plugin"], r["event"]): r for r in rows}
    # post-tool-observer answers PostToolUse: one call each time Claude Code sent one.
    assert by_key[("post-tool-observer", "PostToolUse")]["calls"] == events["PostToolUse"]
    assert by_key[("tool-counter", "PreToolUse")]["calls"] == events["PreToolUse"]
    assert {r["sessions"] for r in rows} == {1}
    for row in rows:
        assert row["median_ms"] is not None and row["p95_ms"] >= row["median_ms"]
    # What reached the model: memory at SessionStart, the counter's suggestion, persistent-mode's loop.
    assert sum(r["context_chars"] for r in rows) > 0
    assert by_key[("persistent-mode", "UserPromptSubmit")]["context_chars"] > 0


def test_stats_filter_by_session_and_days_and_print_a_table(replayed):
    env, _ = replayed
    assert stats(env, "--session", "another-session") == []
    assert {r["sessions"] for r in stats(env, "--session", SESSION)} == {1}
    assert stats(env, "--days", "1")
    table = omcm(env, "stats").stdout
    assert table.splitlines()[0].split()[:3] == ["plugin", "event", "calls"]
    assert "post-tool-observer" in table and "In front of the model:" in table


def test_stats_count_breaker_openings_and_calls_kept_out(tmp_path):
    home = tmp_path / "home"
    env = {
        **os.environ,
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": "tool-counter",
        "OMCM__CORE__BREAKER_THRESHOLD": "2",
        # Every call of tool-counter fails: its state folder is a file.
    }
    home.mkdir()
    (home / "sessions").write_text("not a folder")
    for _ in range(4):
        run_hook(user_prompt_payload("hi"), env=env, strict=False)
        run_hook(
            {**user_prompt_payload("x"), "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}},
            env=env,
            strict=False,
        )
    rows = {(r["plugin"], r["event"]): r for r in stats(env)}
    pre = rows[("tool-counter", "PreToolUse")]
    if pre["failures"] == 0:
        pytest.fail(f"tool-counter did not fail as the test arranged: {pre}")
    assert pre["breaker_openings"] == 1
    assert pre["skipped_by_breaker"] == 4 - pre["calls"]


def test_the_warm_dispatcher_writes_its_stats_off_the_answer_path(tmp_path):
    from omcm_core._runtime import daemon

    env = {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "home"),
        "OMCM_LOAD_PLUGINS": "tool-counter",
        "OMCM_DAEMON": "1",
    }
    try:
        for n in range(6):
            payload = {**user_prompt_payload("x"), "hook_event_name": "PreToolUse", "tool_name": "Read"}
            proc = run_hook({**payload, "tool_input": {"file_path": f"/f{n}"}}, env=env)
            assert proc.returncode == 0
    finally:
        daemon.stop(env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the daemon writes what is pending as it exits
        rows = stats(env)
        if rows and sum(r["calls"] for r in rows) == 6:
            break
        time.sleep(0.2)
    assert [(r["plugin"], r["event"], r["calls"]) for r in rows] == [("tool-counter", "PreToolUse", 6)]


def test_stats_never_create_a_store(tmp_path):
    env = {**os.environ, "OMCM_HOME": str(tmp_path / "home")}
    assert omcm(env, "stats").stdout.strip() == "No hook calls recorded yet."
    assert not (tmp_path / "home" / "omcm.db").exists()


@pytest.mark.parametrize(
    ("histogram", "q", "expected"),
    [
        ([0] * (len(BUCKETS_MS) + 1), 0.5, None),
        ([0, 0, 0, 10] + [0] * (len(BUCKETS_MS) - 3), 0.5, BUCKETS_MS[3]),
        ([0, 0, 0, 95, 5] + [0] * (len(BUCKETS_MS) - 4), 0.95, BUCKETS_MS[3]),
        ([0, 0, 0, 94, 6] + [0] * (len(BUCKETS_MS) - 4), 0.95, BUCKETS_MS[4]),
        ([0] * len(BUCKETS_MS) + [3], 0.5, float("inf")),
    ],
)
def test_quantiles_read_from_the_buckets(histogram, q, expected):
    assert quantile(histogram, q) == expected


def test_small_counts_show_their_measured_times_and_the_span(tmp_path):
    from omcm_core._runtime.stats import Recorder, summary
    from omcm_core.store import Store

    store = Store(tmp_path)
    recorder = Recorder()
    for ms in (3.2, 3.4, 7.9):  # all in the 2-5 and 5-10 ms buckets: their bounds would read 5 and 10
        recorder.note("s1", "PreToolUse", {"tool-counter": ms})
    recorder.flush(store)
    (row,) = summary(store)
    assert row["exact"] is True and row["median_ms"] == 3.4 and row["p95_ms"] == 7.9
    assert row["first_ts"] <= row["last_ts"] and time.time() - row["first_ts"] < 600
    # Past the kept times the buckets answer, and say so.
    for _ in range(40):
        recorder.note("s2", "PreToolUse", {"tool-counter": 1.5})
    recorder.flush(store)
    (row,) = summary(store)
    assert row["exact"] is False and row["median_ms"] == 2
    store.close()
    env = {**os.environ, "OMCM_HOME": str(tmp_path)}
    table = omcm(env, "stats").stdout
    assert "≤2" in table and "Calls from " in table, table
