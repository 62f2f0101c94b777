"""A plugin that raises, hangs, prints or returns garbage changes nothing in the others' answers.

For each bad plugin and each answering event, the stdout of ``omcm hook`` with
the good plugins alone must be byte-identical to the stdout with the bad one
added (the good ones sort before and after it); the failure is logged with
the plugin's name and version; three failures open its circuit breaker, which
``omcm doctor --json`` reports, and the good answers still come.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from reliability_harness import PLUGIN_SETS, log_entries, parse_stdout, run_hook

from omcm_core.testing import post_tool_payload, pre_tool_payload, session_start_payload, user_prompt_payload

pytestmark = pytest.mark.slow

GOOD = ["rel-answer", "rel-zz-late"]
SESSION = "5e551011-0000-4000-8000-000000000001"
# Wide enough that a good plugin never overruns on a loaded 2-core machine; short enough to keep the suite quick.
BUDGET_ENV = {"OMCM__CORE__PLUGIN_BUDGET_MS": "700", "REL_HANG_S": "20"}


def _payloads(cwd: str) -> dict[str, dict]:
    stop = {
        "session_id": SESSION,
        "transcript_path": "/x.jsonl",
        "cwd": cwd,
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    return {
        "PreToolUse": {
            **pre_tool_payload("Bash", {"command": "ls"}, session_id=SESSION, cwd=cwd),
            "tool_use_id": "toolu_1",
        },
        "PostToolUse": {
            **post_tool_payload("Bash", {"command": "ls"}, {"stdout": "a"}, session_id=SESSION, cwd=cwd),
            "tool_use_id": "toolu_2",
        },
        "SessionStart": session_start_payload(session_id=SESSION, cwd=cwd),
        "UserPromptSubmit": user_prompt_payload("hello", session_id=SESSION, cwd=cwd),
        "Stop": stop,
    }


BAD = {
    "raises": ("rel-raise", "0.2.0", "raised", {}),
    "hangs": ("rel-hang", "0.3.0", "timeout", {}),
    "garbage-dict": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "dict"}),
    "garbage-string": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "string"}),
    "garbage-list-input": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "list-input"}),
    "garbage-object-input": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "object-input"}),
    "garbage-nan-input": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "nan-input"}),
    "garbage-block-string": ("rel-garbage", "0.4.0", "garbage", {"REL_GARBAGE": "block-string"}),
    "prints": ("rel-print", "0.5.0", None, {}),
}


@pytest.fixture(scope="module")
def rel_baseline(rel_site, tmp_path_factory):
    """stdout of every event with the good plugins alone."""
    world = tmp_path_factory.mktemp("baseline")
    out = {}
    for event, payload in _payloads(str(world)).items():
        env = rel_site.env(world / "home", GOOD, **BUDGET_ENV)
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0
        assert parse_stdout(event, proc.stdout) is not None, f"the good plugins gave no answer to {event}"
        out[event] = proc.stdout
    return out


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_plugin_changes_nothing_in_the_good_answers(rel_site, rel_baseline, tmp_path, case):
    plugin, version, kind, extra = BAD[case]
    home = tmp_path / "home"
    env = rel_site.env(home, GOOD + [plugin], **BUDGET_ENV, **extra, OMCM__CORE__BREAKER_THRESHOLD="100")
    for event, payload in _payloads(str(tmp_path)).items():
        proc = run_hook(json.dumps(payload).encode(), env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        parse_stdout(event, proc.stdout)
        assert proc.stdout == rel_baseline[event], f"{case} changed the answer to {event}"
        if plugin == "rel-print" and event != "Stop":
            assert b"rel-print: raw write to fd 1" in proc.stderr and b"child process output" in proc.stderr
    failures = [e for e in log_entries(home) if e["event"] == "plugin_failed"]
    if kind is None:
        assert failures == []
        return
    assert failures, "the failure was not logged"
    for entry in failures:
        assert (entry["plugin"], entry["version"], entry["kind"], entry["level"]) == (plugin, version, kind, "error")
        assert entry["error"]
    assert {e["plugin"] for e in log_entries(home) if e["level"] == "error"} == {plugin}


def _doctor(env, cwd) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "doctor", "--json"], capture_output=True, env=env, cwd=cwd, timeout=60
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _breaker_rows(report: dict) -> list[dict]:
    return [
        c["data"] for s in report["sections"] for c in s["checks"] if c["id"].startswith("breaker.") and c.get("data")
    ]


def test_three_failures_open_the_breaker_and_doctor_shows_it(rel_site, rel_baseline, tmp_path):
    home = tmp_path / "home"
    env = rel_site.env(home, GOOD + ["rel-raise"], **BUDGET_ENV)
    payload = json.dumps(_payloads(str(tmp_path))["PreToolUse"]).encode()
    for call in range(1, 5):
        proc = run_hook(payload, env)
        assert proc.returncode == 0 and proc.stdout == rel_baseline["PreToolUse"]
        if call == 2:
            report = _doctor(env, tmp_path)
            (row,) = _breaker_rows(report)
            assert (row["plugin"], row["failures"], row["open"]) == ("rel-raise", 2, False)
    entries = log_entries(home)
    assert sum(e["event"] == "plugin_failed" for e in entries) == 3, "the plugin ran again after its breaker opened"
    assert [e["plugin"] for e in entries if e["event"] == "plugin_skipped_breaker_open"] == ["rel-raise"]
    report = _doctor(env, tmp_path)
    (row,) = _breaker_rows(report)
    assert (row["plugin"], row["failures"], row["open"], row["version"]) == ("rel-raise", 3, True, "0.2.0")
    assert "deliberate failure" in row["last_error"]
    assert any("rel-raise" in problem and "circuit breaker" in problem for problem in report["problems"])
    (check,) = [c for s in report["sections"] for c in s["checks"] if c["id"] == "breaker.rel-raise.pre_tool"]
    assert check["fix"] == "omcm plugins reset rel-raise"


@pytest.mark.parametrize("plugin_set", sorted(PLUGIN_SETS))
def test_bad_plugins_together_change_nothing_for_each_plugin_set(rel_site, tmp_path, plugin_set):
    """Every bad test plugin at once beside a plugin set (the project's plugins once listed)."""
    good = sorted(set(GOOD + PLUGIN_SETS[plugin_set]))
    bad = ["rel-garbage", "rel-hang", "rel-print", "rel-raise"]
    for event, payload in _payloads(str(tmp_path)).items():
        raw = json.dumps(payload).encode()
        alone = run_hook(raw, rel_site.env(tmp_path / "home-good", good, **BUDGET_ENV))
        mixed = run_hook(
            raw, rel_site.env(tmp_path / "home-mixed", good + bad, **BUDGET_ENV, REL_GARBAGE="object-input")
        )
        assert alone.returncode == mixed.returncode == 0
        assert parse_stdout(event, alone.stdout) is not None
        assert mixed.stdout == alone.stdout, f"{event}: the bad plugins changed the answer"
