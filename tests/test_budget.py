"""Plugin calls run in order, each within its budget, and an overrun never holds up the rest."""

import threading
import time

import pytest

from omcm_core._runtime.budget import run_in_order


def returns(value):
    return lambda: value


def raises(exc):
    def call():
        raise exc

    return call


def sleeps(seconds, value="slept"):
    def call():
        time.sleep(seconds)
        return value

    return call


@pytest.mark.parametrize(
    "calls, expected",
    [
        ([], []),
        ([returns(1), returns(None), returns("x")], [("ok", 1), ("ok", None), ("ok", "x")]),
        ([raises(ValueError("bad")), returns(2)], [("raised", ValueError), ("ok", 2)]),
        (
            [raises(SystemExit(3)), raises(KeyboardInterrupt()), returns(4)],
            [("raised", SystemExit), ("raised", KeyboardInterrupt), ("ok", 4)],
        ),
        ([returns(1), sleeps(5), returns(3)], [("ok", 1), ("timeout", str), ("ok", 3)]),
        ([sleeps(5), sleeps(5), returns(3)], [("timeout", str), ("timeout", str), ("ok", 3)]),
        ([returns(1), sleeps(5)], [("ok", 1), ("timeout", str)]),
    ],
)
def test_outcomes_in_order(calls, expected):
    outcomes = run_in_order(calls, budget_s=0.3)
    got = []
    for (status, value, elapsed_ms), (_, want) in zip(outcomes, expected, strict=True):
        assert elapsed_ms >= 0
        if status == "raised" or want is str:
            got.append((status, type(value) if status == "raised" else str))
        else:
            got.append((status, value))
    assert len(outcomes) == len(expected) and got == expected


def test_timeout_is_reported_on_time_and_named():
    started = time.perf_counter()
    (status, message, elapsed_ms), (after, value, _) = run_in_order([sleeps(5), returns("next")], budget_s=0.2)
    took = time.perf_counter() - started
    assert status == "timeout" and "200 ms" in message and 150 <= elapsed_ms < 1500
    assert (after, value) == ("ok", "next") and took < 2


def test_each_call_gets_its_own_budget():
    # Three calls of 0.15 s each fit a 0.3 s budget each, though together they take longer.
    outcomes = run_in_order([sleeps(0.15, i) for i in range(3)], budget_s=0.3)
    assert [(s, v) for s, v, _ in outcomes] == [("ok", 0), ("ok", 1), ("ok", 2)]


def test_on_timeout_runs_before_the_later_calls():
    events = []

    def later():
        events.append("later ran")

    run_in_order([sleeps(5), later], budget_s=0.2, on_timeout=lambda i: events.append(f"timeout {i}"))
    assert events == ["timeout 0", "later ran"]


def test_calls_share_one_worker_until_one_overruns():
    idents = []

    def who():
        idents.append(threading.get_ident())

    run_in_order([who, who, sleeps(5), who], budget_s=0.2)
    assert idents[0] == idents[1] != idents[2]
    assert threading.get_ident() not in idents  # never on the caller's thread


def test_late_answer_of_an_overrun_call_is_ignored():
    done = threading.Event()

    def slow():
        time.sleep(0.4)
        done.set()
        return "late"

    outcomes = run_in_order([slow], budget_s=0.1)
    assert done.wait(5)
    time.sleep(0.05)
    assert outcomes[0][0] == "timeout"
