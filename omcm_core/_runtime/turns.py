"""Calls in the warm dispatcher take turns: one at a time, first come first served.

A call changes process-wide state (umask, working directory, environment; see
``callstate.py``), so only one runs at a time. A plain lock would do that but
lets a late caller overtake one that has waited longer, which under load gives
a few callers very long waits. Here callers queue in arrival order.

A caller whose turn would come too late is told at once, not after waiting in
vain: from the calls ahead of it and the typical time of a call, the queue
estimates its wait, and a caller that would wait longer than the bound answers
in process right away. The call running now counts by how long it has already
run: past the typical time it is expected to run about as long again, so a
plugin that hangs soon sends the next callers away at once.
"""

from __future__ import annotations

import threading
import time
from collections import deque

_TYPICAL_S = 0.02  # before any call has been timed
_WEIGHT = 0.1  # of each new call in the running typical time


class Turns:
    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._queue: deque[object] = deque()
        self._running_since = 0.0
        self.typical_s = _TYPICAL_S

    def expected_wait(self, now: float) -> float:
        """Seconds a caller arriving now would wait for its turn (call with the condition held)."""
        if not self._queue:
            return 0.0
        current = max(self.typical_s - (now - self._running_since), now - self._running_since - self.typical_s, 0.0)
        return current + (len(self._queue) - 1) * self.typical_s

    def take(self, bound_s: float, deadline: float) -> float | None:
        """Wait for this caller's turn; the seconds waited, or None if it would wait too long."""
        me = object()
        with self._ready:
            arrived = time.monotonic()
            if self.expected_wait(arrived) > bound_s:
                return None
            self._queue.append(me)
            limit = min(arrived + bound_s, deadline)
            while self._queue[0] is not me:
                remaining = limit - time.monotonic()
                if remaining > 0:
                    self._ready.wait(remaining)
                elif self._queue[0] is not me:
                    self._queue.remove(me)
                    self._ready.notify_all()
                    return None
            now = time.monotonic()
            self._running_since = now
            return now - arrived

    def give_back(self) -> None:
        """End this caller's turn and learn how long a call typically takes."""
        with self._ready:
            took = time.monotonic() - self._running_since
            self.typical_s += _WEIGHT * (min(took, 1.0) - self.typical_s)
            self._queue.popleft()
            self._running_since = time.monotonic()  # the next caller's turn starts now
            self._ready.notify_all()
