"""post-tool-observer: recording cost on a big store, full-text and semantic search speed.

    python bench/post_tool_observer_bench.py [--rows 1000000] [--search-rows 100000] [--calls 300]

1. Builds a store of ``--rows`` observations (bulk insert through the plugin's
   own schema and triggers) and times the plugin's ``post_tool`` recording one
   more (median, p95): the part a dispatcher adds per PostToolUse.
2. On a store of ``--search-rows`` observations with embeddings, times
   ``full_text`` and ``semantic`` search over assorted queries.
``populate()`` is also used by bench/populate_store.py.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from omcm_core._runtime.payload import parse_event
from omcm_core.config import Config
from omcm_core.context import Context
from omcm_core.store import Store

# A Zipf-distributed vocabulary, like real tool output: a few words everywhere, most words rare.
_BASE = [
    "pytest",
    "npm",
    "build",
    "docker",
    "compose",
    "import",
    "error",
    "module",
    "request",
    "handler",
    "cache",
    "redis",
    "login",
    "auth",
    "migration",
    "index",
    "query",
    "timeout",
    "retry",
    "parse",
    "json",
    "config",
    "deploy",
    "server",
    "client",
    "socket",
    "thread",
    "lock",
    "file",
    "path",
]
WORDS = _BASE + [f"{a}{b}" for a in _BASE for b in ("er", "ing", "s", "ed", "_v2", "-x", "Id", "Map", "List", "Test")]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(WORDS))]


def populate(home: Path, rows: int, vectors: bool = False, seed: int = 3) -> None:
    from omcm_post_tool_observer import storage

    rng = random.Random(seed)
    store = Store(home)
    storage.ready(store)
    conn = store.conn
    conn.execute("PRAGMA synchronous=OFF")
    now = time.time()
    model = None
    if vectors:
        from omcm_post_tool_observer import embedder

        model = embedder.load()
    batch_size = 20_000
    for start in range(0, rows, batch_size):
        events = []
        for i in range(start, min(rows, start + batch_size)):
            words = " ".join(rng.choices(WORDS, WEIGHTS, k=12))
            tool = rng.choice(("Bash", "Read", "Edit", "Grep"))
            event_id = str(uuid.UUID(int=rng.getrandbits(128)))
            payload = json.dumps(
                {"toolName": tool, "toolInput": {"command": words[:40]}, "success": i % 7 != 0, "metadata": {}}
            )
            events.append(
                (
                    event_id,
                    f"session-{i % 3000}",
                    now - (rows - i),
                    tool,
                    i % 7 != 0,
                    f"/src/{rng.choice(WORDS)}/{i % 5000}.py",
                    words[:40],
                    words,
                    payload,
                    len(payload) + len(words),
                )
            )
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO observer_events(event_id, session_id, ts, tool_name, success, file_path, command, output, payload_json, bytes) VALUES(?,?,?,?,?,?,?,?,?,?)",
            events,
        )
        if model is not None:
            # Random unit vectors: the search cost does not depend on their values.
            import numpy as np

            matrix = np.random.default_rng(start).standard_normal((len(events), model.dim)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            conn.executemany(
                "INSERT INTO observer_vectors(event_id, model, dim, vector) VALUES(?, ?, ?, ?)",
                [(e[0], model.name, model.dim, v.tobytes()) for e, v in zip(events, matrix, strict=True)],
            )
        conn.execute("COMMIT")
    conn.execute("PRAGMA synchronous=NORMAL")
    store.close()


def _stats(samples: list[float]) -> str:
    samples = sorted(samples)
    return f"median {statistics.median(samples):.2f} ms  p95 {samples[int(len(samples) * 0.95)]:.2f} ms"


def time_recording(home: Path, calls: int) -> str:
    import omcm_post_tool_observer as plugin

    config = Config.load(home, None, {"OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false"})
    samples = []
    for i in range(calls):
        event = parse_event(
            {
                "hook_event_name": "PostToolUse",
                "session_id": f"bench-{i % 10}",
                "tool_name": "Bash",
                "tool_input": {"command": f"pytest -q tests/test_{i}.py"},
                "tool_use_id": f"toolu_{i}",
                "tool_response": {"stdout": "12 passed in 0.41s\n" * 30, "stderr": ""},
                "duration_ms": 410,
            }
        )
        ctx = Context("post-tool-observer", home, None, config, {})
        started = time.perf_counter()
        plugin.post_tool(event=event, ctx=ctx)
        samples.append((time.perf_counter() - started) * 1000)
        ctx.close()
    return _stats(samples)


def time_search(home: Path, queries: int) -> tuple[str, str]:
    from omcm_post_tool_observer import search

    store = Store(home)
    rng = random.Random(9)
    fts, sem = [], []
    search.semantic(store, "warm up")  # load the model once, as the worker or a long search session would
    for _ in range(queries):
        text = " ".join(rng.choices(WORDS, WEIGHTS, k=2))
        started = time.perf_counter()
        search.full_text(store, text)
        fts.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        search.semantic(store, text)
        sem.append((time.perf_counter() - started) * 1000)
    return _stats(fts), _stats(sem)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--search-rows", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "big"
        started = time.monotonic()
        populate(home, args.rows)
        print(
            f"built {args.rows} observations in {time.monotonic() - started:.0f} s ({Store(home).size_bytes() // 2**20} MB)"
        )
        print(f"record one observation: {time_recording(home, args.calls)}")
        home = Path(tmp) / "search"
        populate(home, args.search_rows, vectors=True)
        fts, sem = time_search(home, 50)
        print(f"full-text search over {args.search_rows}: {fts}")
        print(f"semantic search over {args.search_rows}: {sem}")


if __name__ == "__main__":
    main()
