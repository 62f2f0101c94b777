"""Cost of the incremental transcript reader on a large transcript.

    .venv/bin/python bench/transcript_reader.py [--mb 50] [--rounds 200]

Builds a transcript of about ``--mb`` megabytes of realistic entries (tool uses,
results, a few failures, long text), lets the reader catch up with it, then
times one reader call per round after 1 KB was appended (one tool call and its
result), and one call when nothing was appended. Prints medians and p95 in ms.
Writes nothing to docs/: copy the figures into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from omcm_core import transcript_tail
from omcm_core._runtime import transcript_reading
from omcm_core.store import Store


def _pair(n: int, size: int) -> bytes:
    """One tool call and its result, about ``size`` bytes together."""
    use = {
        "type": "assistant",
        "sessionId": "bench",
        "cwd": "/srv/app",
        "timestamp": "2026-01-02T03:04:05.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": f"toolu_{n:08d}",
                    "name": "Bash",
                    "input": {"command": f"pytest -k case_{n}"},
                }
            ],
        },
    }
    head = json.dumps(use) + "\n"
    failed = n % 25 == 0
    body = "x" * max(0, size - len(head) - 300)
    result = {
        "type": "user",
        "sessionId": "bench",
        "cwd": "/srv/app",
        "timestamp": "2026-01-02T03:04:06.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n:08d}", "content": body, "is_error": failed}],
        },
    }
    return (head + json.dumps(result) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="omcm-bench-"))
    path = work / "session.jsonl"
    n = 0
    with open(path, "wb") as fh:
        while fh.tell() < args.mb * 1024 * 1024:
            fh.write(_pair(n, 20_000))
            n += 1
    store = Store(work / "home")
    transcript_tail.ready(store)
    catch_up = 0
    started = time.perf_counter()
    while (
        store.query("SELECT 1 FROM transcript_files WHERE path = ? AND offset >= ?", (str(path), path.stat().st_size))
        == []
    ):
        transcript_tail.unreported_calls(store, "bench", [str(path)])
        catch_up += 1
    caught_ms = (time.perf_counter() - started) * 1000
    appended, idle = [], []
    for _ in range(args.rounds):
        with open(path, "ab") as fh:
            fh.write(_pair(n, 1024))
        n += 1
        t0 = time.perf_counter()
        transcript_tail.unreported_calls(store, "bench", [str(path)], settled=True)
        appended.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        transcript_tail.unreported_calls(store, "bench", [str(path)], settled=True)
        idle.append((time.perf_counter() - t0) * 1000)
    size = path.stat().st_size / 1024 / 1024

    def fmt(values: list[float]) -> str:
        values = sorted(values)
        return f"median {statistics.median(values):.3f} ms, p95 {values[int(len(values) * 0.95) - 1]:.3f} ms"

    print(
        f"transcript {size:.1f} MB, {n} tool calls; first sight: {catch_up} calls, {caught_ms:.0f} ms in all "
        f"(only the last {transcript_reading.FIRST_WINDOW >> 20} MB are read)"
    )
    print(f"1 KB appended: {fmt(appended)}")
    print(f"nothing appended: {fmt(idle)}")
    store.close()


if __name__ == "__main__":
    main()
