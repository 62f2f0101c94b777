"""What ``omcm stats`` and the fair context budget cost a hook call (run by hand; figures in docs/benchmarks.md).

    .venv/bin/python bench/stats_overhead.py

- ``note``: what every call pays on the hook path (an append in memory);
- ``fit``: the fair share, when plugins answered with context (fits / must cut);
- ``flush``: the one transaction a one-call process (no warm dispatcher) writes
  after answering; the warm dispatcher does this from a thread every 5 s.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from omcm_core._runtime.context_budget import fit
from omcm_core._runtime.stats import Recorder
from omcm_core.store import Store

TIMINGS = {
    "tool-counter": 0.3,
    "pre-tool-guide": 0.5,
    "post-tool-observer": 0.8,
    "memory-rotation": 0.2,
    "persistent-mode": 0.1,
    "notepad": 0.1,
}


def per_call_us(function, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def report(name: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p95 = samples[int(len(samples) * 0.95)]
    print(f"{name:<28} median {statistics.median(samples):7.1f} us   p95 {p95:7.1f} us")


def main() -> None:
    recorder = Recorder()
    recorder.deferred = True
    report("note (6 plugins)", per_call_us(lambda: recorder.note("s", "PreToolUse", TIMINGS), 20_000))
    small = [("a", "x" * 300), ("b", "y" * 200)]
    report("fit, everything fits", per_call_us(lambda: fit(small, 10_000), 20_000))
    big = [("a", "line\n" * 2000), ("b", "y\n" * 5000), ("c", "z" * 400)]
    report("fit, two plugins cut", per_call_us(lambda: fit(big, 10_000), 5_000))
    store = Store(Path(tempfile.mkdtemp()))
    recorder.note("s", "PreToolUse", TIMINGS)
    recorder.flush(store)

    def flush() -> None:
        recorder.note("s", "PreToolUse", TIMINGS)
        recorder.flush(store)

    report("note + flush (one-call path)", per_call_us(flush, 500))


if __name__ == "__main__":
    main()
