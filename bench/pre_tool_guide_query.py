"""pre-tool-guide: what the guidance adds to a PreToolUse, on a big knowledge base.

    python bench/pre_tool_guide_query.py [--kb 100000] [--events 1000000] [--calls 2000]

Builds a store with ``--kb`` error_kb rows (about half resolved, spread over
20,000 file names) and ``--events`` tool_error events over 5,000 sessions, then
times the plugin's own ``pre_tool`` for Edit (per-file lookup) and Bash
(session's last error + exact match), median and p95. ``populate()`` is also
used by bench/populate_store.py for the whole-hook benchmark.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from omcm_core.config import Config
from omcm_core.context import Context
from omcm_core.records import PreToolEvent
from omcm_core.store import Store


def populate(home: Path, kb_rows: int = 100_000, events: int = 1_000_000, seed: int = 7) -> None:
    import omcm_pre_tool_guide.knowledge as knowledge

    rng = random.Random(seed)
    store = Store(home)
    knowledge.ready(store)
    now = time.time()
    conn = store.conn
    conn.execute("PRAGMA synchronous=OFF")
    with store.transaction():
        batch = []
        for i in range(kb_rows):
            name = f"module_{i % 20_000}.py"
            resolution = (
                json.dumps(
                    {
                        "resolvedBy": f"pytest tests/test_{i % 97}.py",
                        "tool": "Bash",
                        "toolSequence": ["Edit", "Read", "Bash"],
                    }
                )
                if i % 2
                else None
            )
            batch.append(
                (
                    now - i,
                    f"TypeError: bad operand {i} in {name}:<N>",
                    f"raw {i}",
                    "Edit",
                    name,
                    f"/src/{name}",
                    resolution,
                    now - i,
                )
            )
        conn.executemany(
            "INSERT INTO error_kb(ts, error_normalized, error_raw, tool, file_key, file_path, resolution, last_used) VALUES(?,?,?,?,?,?,?,?)",
            batch,
        )
        for start in range(0, events, 100_000):
            rows = []
            for i in range(start, min(events, start + 100_000)):
                k = rng.randrange(kb_rows)
                error = f"TypeError: bad operand {k} in module_{k % 20_000}.py:<N>"
                rows.append(
                    (
                        now - i,
                        f"session-{i % 5000}",
                        "Bash" if i % 3 else "Edit",
                        json.dumps({"tool": "Bash", "error": error}),
                    )
                )
            conn.executemany(
                "INSERT INTO guide_events(type, ts, session_id, tool, data) VALUES('tool_error', ?, ?, ?, ?)", rows
            )
    conn.execute("PRAGMA synchronous=NORMAL")
    store.close()


def measure(home: Path, calls: int) -> dict:
    import omcm_pre_tool_guide as plugin

    config = Config.load(home, None, {})
    rng = random.Random(1)
    results = {}
    for tool in ("Edit", "Bash"):
        samples, answered = [], 0
        for _ in range(calls):
            if tool == "Edit":
                event = PreToolEvent(
                    hook_event_name="PreToolUse",
                    session_id="s",
                    tool_name="Edit",
                    tool_input={"file_path": f"/src/module_{rng.randrange(20_000)}.py"},
                )
            else:
                event = PreToolEvent(
                    hook_event_name="PreToolUse",
                    session_id=f"session-{rng.randrange(5000)}",
                    tool_name="Bash",
                    tool_input={"command": "pytest"},
                )
            ctx = Context("pre-tool-guide", home, None, config, {})
            started = time.perf_counter()
            result = plugin.pre_tool(event=event, ctx=ctx)
            samples.append((time.perf_counter() - started) * 1000)
            ctx.close()
            answered += result is not None
        samples.sort()
        results[tool] = {
            "median_ms": round(statistics.median(samples), 3),
            "p95_ms": round(samples[int(len(samples) * 0.95)], 3),
            "answered": answered,
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        started = time.monotonic()
        populate(home, args.kb, args.events)
        print(f"built {args.kb} error_kb rows and {args.events} events in {time.monotonic() - started:.1f} s")
        for tool, row in measure(home, args.calls).items():
            print(
                f"pre_tool {tool:<5} median {row['median_ms']} ms  p95 {row['p95_ms']} ms  ({row['answered']}/{args.calls} answered)"
            )


if __name__ == "__main__":
    main()
