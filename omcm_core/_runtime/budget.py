"""Run a hook's plugin calls one after another, each within a time budget, off the caller's thread.

The caller must answer Claude Code on time even when a plugin hangs, so the
calls run in a worker thread. One worker runs all of them in order and the
caller wakes once, when the last one is done, instead of once per plugin:
each hand-off between threads costs a wake-up on an otherwise idle CPU, and
this runs on every tool call. A call that overruns keeps its worker (Python
cannot stop a thread); it is reported as a timeout and a new worker goes on
with the calls after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

#: (status, value, elapsed ms); status is "ok" (value: what it returned),
#: "raised" (value: the exception) or "timeout" (value: a message).
Outcome = tuple[str, Any, float]


def run_in_order(
    calls: Sequence[Callable[[], Any]],
    budget_s: float,
    on_timeout: Callable[[int], None] = lambda index: None,
) -> list[Outcome]:
    """Run each of ``calls`` in turn, each for at most ``budget_s``; one outcome per call.

    ``on_timeout(index)`` runs in the caller's thread after call ``index``
    overran and before the calls after it start.
    """
    outcomes: list[Outcome | None] = [None] * len(calls)
    first = 0
    while first < len(calls):
        first = _run_from(calls, first, budget_s, outcomes, on_timeout)
    return outcomes  # type: ignore[return-value]


def _run_from(calls, first: int, budget_s: float, outcomes: list, on_timeout) -> int:
    """Start a worker at call ``first``; return where the next worker must start."""
    cond = threading.Condition(threading.Lock())
    state: dict[str, Any] = {"index": first, "started": time.perf_counter(), "done": False, "abandoned": False}

    def work() -> None:
        for index in range(first, len(calls)):
            started = time.perf_counter()
            with cond:
                if state["abandoned"]:
                    return
                state["index"], state["started"] = index, started
            try:
                outcome = ("ok", calls[index]())
            except BaseException as exc:  # isolation: even SystemExit from a plugin
                outcome = ("raised", exc)
            elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
            with cond:
                if state["abandoned"]:
                    return  # too late: the caller has reported this call as a timeout
                outcomes[index] = (*outcome, elapsed_ms)
        with cond:
            state["done"] = True
            cond.notify()

    worker = threading.Thread(target=work, name="omcm-plugins", daemon=True)
    worker.start()
    with cond:
        while not state["done"]:
            remaining = state["started"] + budget_s - time.perf_counter()
            if remaining > 0:
                cond.wait(remaining)
                continue
            state["abandoned"] = True
            index = state["index"]
            elapsed_ms = round((time.perf_counter() - state["started"]) * 1000, 3)
            stuck = stuck_at(worker)
            message = f"overran its {int(budget_s * 1000)} ms budget" + (f"; stuck at:\n{stuck}" if stuck else "")
            outcomes[index] = ("timeout", message, elapsed_ms)
            break
        else:
            return len(calls)
    on_timeout(index)
    return index + 1


#: Frames of these files are omcm's or Python's, not the stuck plugin's.
_OWN = ("/omcm_core/_runtime/", "/omcm_core/_failure_capture.py", "/threading.py")


def stuck_at(worker: threading.Thread, frames: int = 6) -> str:
    """Where ``worker`` is now: the innermost ``frames`` of the plugin's stack, as a traceback prints them.

    A timeout is the one failure with no exception to show; the author needs the
    line the hook was waiting on (a lock, a socket, a loop).
    """
    import sys
    import traceback

    frame = sys._current_frames().get(worker.ident or -1)
    if frame is None:
        return ""
    stack = [f for f in traceback.extract_stack(frame) if not any(p in f.filename.replace("\\", "/") for p in _OWN)]
    return "".join(traceback.format_list(stack[-frames:])).rstrip()
