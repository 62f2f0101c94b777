"""Calls in the warm dispatcher take turns in arrival order; a hung call sends the next callers away."""

import threading
import time

from omcm_core._runtime.turns import Turns

FAR = time.monotonic() + 3600  # a deadline that never comes in these tests


def _wait_queued(turns: Turns, n: int) -> None:
    while len(turns._queue) < n:
        time.sleep(0.001)


def test_callers_get_their_turn_in_arrival_order():
    turns = Turns()
    assert turns.take(10.0, FAR) is not None  # nobody ahead
    order: list[int] = []

    def caller(n: int) -> None:
        assert turns.take(10.0, FAR) is not None
        order.append(n)
        turns.give_back()

    threads = []
    for n in range(6):
        threads.append(threading.Thread(target=caller, args=(n,)))
        threads[-1].start()
        _wait_queued(turns, n + 2)  # each is in the queue before the next arrives
    turns.give_back()
    for thread in threads:
        thread.join(timeout=30)
    assert order == [0, 1, 2, 3, 4, 5]


def test_a_caller_behind_a_hung_call_is_sent_away_without_waiting():
    turns = Turns()
    turns.take(10.0, FAR)
    turns._running_since -= 5.0  # the call running has taken 5 s, far beyond the typical 20 ms
    assert turns.expected_wait(time.monotonic()) > 4.0
    assert turns.take(0.25, FAR) is None
    assert len(turns._queue) == 1  # the refused caller left no trace in the queue


def test_callers_behind_quick_calls_are_admitted():
    turns = Turns()
    turns.take(10.0, FAR)
    turns.typical_s = 0.02
    admitted: list[bool] = []

    def caller() -> None:
        admitted.append(turns.take(60.0, FAR) is not None)
        turns.give_back()

    threads = [threading.Thread(target=caller) for _ in range(6)]
    for n, thread in enumerate(threads):
        thread.start()
        _wait_queued(turns, n + 2)
    # Seven callers at once (one running, six waiting): the next one expects ~0.14 s, under 0.25 s.
    turns._running_since = time.monotonic()  # as if the running call had just begun
    assert 0.1 < turns.expected_wait(time.monotonic()) < 0.25
    turns.give_back()
    for thread in threads:
        thread.join(timeout=30)
    assert admitted == [True] * 6 and not turns._queue
