"""The circuit breaker's trial call: after the cooldown one call goes through; failing, it reopens."""

import types
from pathlib import Path

import pytest

from omcm_core import Result, hookimpl
from omcm_core._runtime import breaker as breaker_module
from omcm_core.testing import pre_tool_payload


class Clock:
    """The breaker's wall clock, moved by the test instead of waiting out a cooldown."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(breaker_module, "time", types.SimpleNamespace(time=fake.time))
    return fake


def counting_plugin(calls, broken):
    class Flaky:
        @hookimpl
        def pre_tool(self, event):
            calls.append(event.tool_name)
            if broken[0]:
                raise ValueError("still broken")
            return Result(additional_context="back")

    return Flaky()


def test_a_failed_trial_call_reopens_the_breaker_for_a_full_cooldown(omcm_dispatch, clock):
    calls, broken = [], [True]
    dispatch = omcm_dispatch(
        names={"flaky": counting_plugin(calls, broken)}, env={"OMCM__CORE__BREAKER_COOLDOWN_S": "300"}, strict=False
    )
    for _ in range(5):
        dispatch(pre_tool_payload("Bash"))
    assert len(calls) == 3  # opened after the third failure

    clock.now += 301  # the cooldown is over: one trial call, which fails again
    for _ in range(3):
        dispatch(pre_tool_payload("Bash"))
    assert len(calls) == 4, "the failed trial call did not reopen the breaker"

    clock.now += 299  # still inside the new cooldown, counted from the trial call
    dispatch(pre_tool_payload("Bash"))
    assert len(calls) == 4

    clock.now += 2  # the new cooldown is over: a trial that succeeds closes the breaker
    broken[0] = False
    assert dispatch(pre_tool_payload("Bash"))["hookSpecificOutput"]["additionalContext"] == "back"
    assert dispatch(pre_tool_payload("Bash"))["hookSpecificOutput"]["additionalContext"] == "back"
    assert len(calls) == 6


def test_a_guards_failing_post_tool_does_not_switch_off_its_pre_tool(omcm_dispatch, omcm_home, clock, tmp_path):
    """Breakers are per plugin and hook: a fail-closed guard's broken harmless hook leaves its gate working."""
    from omcm_core.testing import post_tool_payload

    omcm_home.mkdir(parents=True)
    (omcm_home / "config.toml").write_text('[core]\nfail_closed = ["guard"]\n')
    checked = []

    class Guard:
        @hookimpl
        def pre_tool(self, event):
            checked.append(event.tool_input["command"])
            return Result(permission="deny", reason="no") if "rm -rf" in event.tool_input["command"] else None

        @hookimpl
        def post_tool(self, event):
            raise ValueError("a bug in the bookkeeping")

    dispatch = omcm_dispatch(names={"guard": Guard()}, env={"CLAUDE_PROJECT_DIR": str(tmp_path)}, strict=False)
    for _ in range(5):
        dispatch(post_tool_payload("Bash", {"command": "ls"}, "ok"))
    assert dispatch(pre_tool_payload("Bash", {"command": "ls"})) is None  # allowed: the gate itself works
    denied = dispatch(pre_tool_payload("Bash", {"command": "rm -rf ~/work"}))
    assert denied["hookSpecificOutput"]["permissionDecisionReason"] == "no"
    assert checked == ["ls", "rm -rf ~/work"]


def test_failures_in_one_project_do_not_switch_a_plugin_off_in_another(omcm_dispatch, omcm_home, clock, tmp_path):
    """One store serves every project: a repository that makes a plugin fail opens that plugin's breaker there only."""
    hostile, other = tmp_path / "hostile", tmp_path / "other"
    hostile.mkdir(), other.mkdir()
    (hostile / "trap").write_text("")
    calls = []

    class Observer:
        @hookimpl
        def pre_tool(self, event):
            calls.append(event.cwd)
            if (Path(event.cwd) / "trap").exists():
                raise ValueError("tripped by the repository")
            return Result(additional_context="seen")

    dispatch = omcm_dispatch(names={"observer": Observer()}, strict=False)
    dispatch.env.pop("CLAUDE_PROJECT_DIR", None)
    for _ in range(5):
        dispatch(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(hostile)))
    assert calls == [str(hostile)] * 3  # its breaker opened there
    answer = dispatch(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(other)))
    assert answer["hookSpecificOutput"]["additionalContext"] == "seen"
