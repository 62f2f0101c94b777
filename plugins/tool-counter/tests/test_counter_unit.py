"""tool-counter unit tests, on the pure counting rule and the state file."""

import json
import os

import pytest
from omcm_tool_counter import state
from omcm_tool_counter.counter import Counters, step
from omcm_tool_counter.messages import suggestion

from omcm_core.log import get_logger

LOG = get_logger(plugin="tool-counter")


def run(tools, counters=None, read=5, bash=3):
    counters = counters or Counters()
    steps = []
    for tool in tools:
        result = step(counters, tool, "t", read, bash)
        counters = result.counters
        steps.append(result)
    return steps


def test_defaults_when_no_file(tmp_path):
    assert state.load(tmp_path / state.STATE_FILE, LOG) == Counters()


def test_write_creates_the_camel_case_state_file(tmp_path):
    state.update(tmp_path, lambda c: step(c, "Read", "2026-11-23T00:00:00Z", 5, 3), LOG)
    data = json.loads((tmp_path / state.STATE_FILE).read_text())
    assert data == {"read": 1, "bash": 0, "lastTool": "Read", "lastUpdated": "2026-11-23T00:00:00Z"}
    assert oct(os.stat(tmp_path / state.STATE_FILE).st_mode & 0o777) == "0o600"


def test_one_read_counts_one_without_suggestion():
    (only,) = run(["Read"])
    assert (only.count, only.suggest) == (1, None)


def test_fifth_read_suggests_and_sixth_does_not():
    steps = run(["Read"] * 6)
    assert [s.count for s in steps] == [1, 2, 3, 4, 5, 6]
    assert [s.suggest for s in steps] == [None, None, None, None, "Read", None]


def test_bash_resets_the_read_run_and_third_bash_suggests():
    steps = run(["Read", "Read", "Bash", "Bash", "Bash", "Bash"])
    assert steps[2].counters.read == 0
    assert [s.suggest for s in steps] == [None, None, None, None, "Bash", None]


def test_read_resets_bash():
    steps = run(["Bash", "Bash", "Read"])
    assert steps[-1].counters.bash == 0 and steps[-1].counters.read == 1


@pytest.mark.parametrize("other", ["Task", "Agent", "Grep", "Edit", "mcp__x__y"])
def test_any_other_tool_resets_both(other):
    steps = run(["Read", "Read", "Read", "Read", other, "Read"])
    assert steps[4].counters == Counters(read=0, bash=0, last_tool=other, last_updated="t")
    assert steps[5].count == 1  # the run starts over: no suggestion at the old fifth position
    steps = run(["Bash", "Bash", other, "Bash", "Bash"])
    assert all(s.suggest is None for s in steps)


def test_thresholds_are_configurable():
    assert [s.suggest for s in run(["Read"] * 3, read=2)] == [None, "Read", None]
    assert [s.suggest for s in run(["Bash"], bash=1)] == ["Bash"]


def test_explicit_reset_removes_only_counter_files(tmp_path):
    folder = tmp_path / "sessions" / "s1"
    folder.mkdir(parents=True)
    state.update(folder, lambda c: step(c, "Read", "t", 5, 3), LOG)
    (folder / "other-plugin.json").write_text("{}")
    state.remove(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["other-plugin.json"]
    (folder / "other-plugin.json").unlink()
    state.update(folder, lambda c: step(c, "Read", "t", 5, 3), LOG)
    state.remove(folder)
    assert not folder.exists()


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"read": "five"}', b'{"read": -1}', b"\xff\xfe"])
def test_corrupt_state_is_moved_aside_and_counting_restarts(tmp_path, content):
    (tmp_path / state.STATE_FILE).write_bytes(content)
    result = state.update(tmp_path, lambda c: step(c, "Read", "t", 5, 3), LOG)
    assert result.count == 1
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(state.STATE_FILE + ".corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content


def test_age_out_removes_only_stale_sessions(tmp_path):
    sessions = tmp_path / "sessions"
    for name in ("old", "new"):
        (sessions / name).mkdir(parents=True)
        state.update(sessions / name, lambda c: step(c, "Read", "t", 5, 3), LOG)
    old = sessions / "old" / state.STATE_FILE
    os.utime(old, (old.stat().st_mtime - 8 * 86400,) * 2)
    assert state.age_out(sessions, 7) == 1
    assert not (sessions / "old").exists() and (sessions / "new" / state.STATE_FILE).exists()


def test_messages_in_both_languages_follow_the_threshold():
    assert suggestion("Read", 5, "ko").startswith("연속 Read 호출이 5회 감지되었습니다.")
    assert "grep -rn" in suggestion("Read", 5, "ko") and "Bash" in suggestion("Read", 5, "ko")
    assert suggestion("Bash", 4, "ko").startswith("연속 Bash 호출이 4회 감지되었습니다.")
    assert suggestion("Read", 7, "en").startswith("7 consecutive Read calls")
    assert "one grep -rn or find in a single Bash call" in suggestion("Read", 7, "en")
