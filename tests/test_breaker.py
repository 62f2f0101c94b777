"""The circuit breaker's trial call: after the cooldown one call goes through; failing, it reopens."""

import types

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
