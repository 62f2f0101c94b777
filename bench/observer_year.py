"""A year of history: `omcm search` on a store of N observations (default 1,000,000), with vectors.

    python bench/observer_year.py --rows 1000000 [--home DIR] [--queries 30]
    python bench/observer_year.py --home DIR --skip-build     # measure a store built before

1. Fills ``--home`` through the plugin's own schema and triggers, in batches of
   20,000 in one transaction each: tool calls over 3,000 sessions and one project,
   outputs of 200-2,000 characters drawn from a Zipf vocabulary with paths and
   numbers, each with a 384-dimension unit vector (random: search cost does not
   depend on the values) and the current masking stamp. Prints the build time and
   the bytes per observation (database file after a checkpoint, and the vector cache).
2. Times, as separate processes, `omcm search WORDS --full-text` and `omcm search
   WORDS` (hybrid, the default once calls are embedded) against `/usr/bin/python3 -c pass`,
   interleaved; in process, full text, semantic and hybrid with the model loaded;
   the first semantic search of a new process with the cache the worker keeps
   (model load + mapping), and building that cache from nothing.
3. Records ``--record`` PostToolUse calls on the full store (the plugin's own
   ``post_tool``, in process, as bench/post_tool_observer_bench.py does), then
   deletes them again so the store stays as built.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from post_tool_observer_bench import WEIGHTS, WORDS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "/tmp/omcm-year-project"  # must exist: `omcm search` keeps to the project it runs in


def _output(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(3, 30)):
        kind = rng.random()
        words = " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(3, 9)))
        if kind < 0.3:
            lines.append(
                f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randint(1, 400)}.py:{rng.randint(1, 900)}: {words}"
            )
        elif kind < 0.4:
            lines.append(f"{rng.randint(1, 99)} passed, {rng.randint(0, 3)} failed in {rng.random() * 9:.2f}s")
        else:
            lines.append(words)
    return "\n".join(lines)[: rng.randint(200, 2000)]


def build(home: Path, rows: int, seed: int = 5) -> float:
    import numpy as np
    from omcm_post_tool_observer import storage

    from omcm_core.redact import rules_version
    from omcm_core.store import Store

    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    os.makedirs(PROJECT, exist_ok=True)
    store = Store(home)
    storage.ready(store)
    conn = store.conn
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-400000")  # 400 MB: the event-id indexes take random inserts
    stamp = rules_version()
    now = time.time()
    started = time.monotonic()
    batch = 20_000
    # Indexing row by row through the insert trigger is most of a fill; the bench fills with the trigger
    # off and has FTS5 index everything at once at the end ('rebuild': the same index the trigger makes),
    # then puts the trigger back exactly as the plugin's migration wrote it.
    (trigger,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type='trigger' AND name='observer_events_ai'"
    ).fetchone()
    conn.execute("DROP TRIGGER observer_events_ai")
    for start in range(0, rows, batch):
        events = []
        for i in range(start, min(rows, start + batch)):
            tool = rng.choices(("Bash", "Read", "Edit", "Grep", "Write", "Glob"), (40, 25, 15, 10, 5, 5))[0]
            command = " ".join(rng.choices(WORDS, WEIGHTS, k=3)) if tool in ("Bash", "Grep") else None
            path = f"{PROJECT}/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{i % 5000}.py" if command is None else None
            ok = rng.random() > 0.08
            output = _output(rng)
            error = None if ok else f"Exit code 1\n{rng.choice(WORDS)} error: {' '.join(rng.choices(WORDS, k=5))}"
            meta = {"command": command} if command else {"filePath": path}
            payload = json.dumps(
                {"toolName": tool, "toolInput": meta, "success": ok, "errorMessage": error, "metadata": meta}
            )
            events.append(
                (
                    str(uuid.UUID(int=rng.getrandbits(128))),
                    f"session-{i * 3000 // rows:05}",
                    now - (rows - i) * 30,  # one call every 30 s: a million in a year
                    tool,
                    f"toolu_{i:012}",
                    int(ok),
                    path,
                    command,
                    output,
                    payload,
                    len(payload) + len(output),
                    error,
                    PROJECT,
                    stamp,
                )
            )
        matrix = vectors.standard_normal((len(events), 384)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO observer_events(event_id, session_id, ts, tool_name, tool_use_id, success, file_path, "
            "command, output, payload_json, bytes, error, project, masked_with) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            events,
        )
        conn.executemany(
            "INSERT INTO observer_vectors(event_id, model, dim, vector) VALUES(?, 'all-MiniLM-L6-v2', 384, ?)",
            [(e[0], v.tobytes()) for e, v in zip(events, matrix, strict=True)],
        )
        conn.execute("COMMIT")
        if start and start % 100_000 == 0:
            print(f"  {start} rows, {time.monotonic() - started:.0f} s", flush=True)
    print(f"  rows written in {time.monotonic() - started:.0f} s; indexing the text", flush=True)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO observer_fts(observer_fts) VALUES('rebuild')")
    conn.execute(trigger)
    conn.execute("COMMIT")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return time.monotonic() - started


def _timed(argv: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=PROJECT_DIR)
    return (time.perf_counter() - started) * 1000


def _q(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):7.1f} ms  p95 {ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]:7.1f} ms"


def queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, WEIGHTS, k=rng.choice((1, 2, 2, 3)))) for _ in range(n)]


PROJECT_DIR = "/"


def main() -> int:
    global PROJECT_DIR
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--home", type=Path)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--skip-usual-hybrid", action="store_true", help="time hybrid through the fast route only")
    parser.add_argument("--in-process-only", action="store_true", help="skip the command-line timings")
    parser.add_argument("--compare-search", type=Path, help="a search.py to time against the current one")
    parser.add_argument("--keep-cache", action="store_true", help="keep the vector cache built before")
    parser.add_argument(
        "--record", type=int, default=50, help="PostToolUse calls to record on the full store (0: none)"
    )
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="omcm-year-"))
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    if not args.skip_build:
        took = build(home, args.rows)
        print(f"built {args.rows} observations in {took:.0f} s")
        if args.build_only:
            return 0
    from omcm_post_tool_observer import embedder, search, storage

    from omcm_core.store import Store

    embedder.limit_threads()  # as search does before numpy is imported (the cache below imports it)
    store = Store(home)
    storage.ready(store)
    ((rows,),) = store.query("SELECT max(id) FROM observer_events")
    size = (home / "omcm.db").stat().st_size
    print(f"{rows} observations: database {size / 2**20:.0f} MB, {size / rows:.0f} bytes per observation")
    cache = embedder.cache_dir(store)
    if not args.keep_cache:
        for name in ("vectors.json", "vectors.f32", "vectors-ids.s36", "vectors.bits"):
            (cache / name).unlink(missing_ok=True)
    started = time.perf_counter()
    embedder.vector_matrix(store, "all-MiniLM-L6-v2", cache)
    built = time.perf_counter() - started
    cached = sum((cache / n).stat().st_size for n in ("vectors.f32", "vectors-ids.s36", "vectors.bits"))
    print(
        f"vector cache {'checked' if args.keep_cache else 'built from nothing'} in {built:.1f} s "
        f"({cached / rows:.0f} bytes per observation, {(cache / 'vectors.bits').stat().st_size / rows:.0f} "
        "of them sign bits)"
    )
    # Run from the recorded project's folder, as `omcm search` is: it searches that project.
    os.makedirs(PROJECT, exist_ok=True)
    PROJECT_DIR = PROJECT
    env = {**os.environ, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": PROJECT}
    env.pop("OMCM_LOAD_PLUGINS", None)
    omcm = [str(Path(sys.executable).parent / "omcm"), "search"]
    words = queries(args.queries)
    # The route before the fast one: argparse with every plugin's commands (omcm_core._cli.main.run).
    usual = [sys.executable, "-c", "import sys; from omcm_core._cli.main import run; sys.exit(run(sys.argv[1:]))"]
    cli: dict[str, list[float]] = {
        "python3 -c pass": [],
        "omcm search --full-text": [],
        "  same, every plugin loaded": [],
        "omcm search (hybrid)": [],
        "  same, every plugin loaded ": [],
    }
    _timed([*omcm, "--full-text", "warm up"], env)
    for text in [] if args.in_process_only else words:
        cli["python3 -c pass"].append(_timed(["/usr/bin/python3", "-c", "pass"], env))
        cli["omcm search --full-text"].append(_timed([*omcm, "--full-text", *text.split()], env))
        cli["  same, every plugin loaded"].append(_timed([*usual, "search", "--full-text", *text.split()], env))
        cli["omcm search (hybrid)"].append(_timed([*omcm, *text.split()], env))
        if not args.skip_usual_hybrid:
            cli["  same, every plugin loaded "].append(_timed([*usual, "search", *text.split()], env))
    base = statistics.median(cli["python3 -c pass"] or [1.0])
    for label, values in [(k, v) for k, v in cli.items() if v]:
        print(
            f"{label:28} {_q(values)}  {statistics.median(values) / base:5.1f}x python3 -c pass (p95 {sorted(values)[int(0.95 * len(values))] / base:.1f}x)"
        )
    # The first semantic search of a process: the model loaded, the worker's cache mapped.
    probe = (
        "import time, sys; from pathlib import Path; t = time.perf_counter();"
        "from omcm_core.store import Store; from omcm_post_tool_observer import search;"
        f"search.semantic(Store(Path({str(home)!r})), 'docker compose timeout');"
        "print((time.perf_counter() - t) * 1000)"
    )
    firsts = [float(subprocess.check_output([sys.executable, "-c", probe], env=env, text=True)) for _ in range(3)]
    print(
        f"first semantic search in a new process (model load + cache mapping): {', '.join(f'{f:.0f} ms' for f in firsts)}"
    )
    variants = [("", search)]
    if args.compare_search:  # another version of search.py (`git show REV:...search.py`), interleaved
        import importlib.util

        spec = importlib.util.spec_from_file_location("search_before", args.compare_search)
        assert spec is not None and spec.loader is not None
        before = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(before)
        variants.append((" (before)", before))
    timings: dict[str, list[float]] = {}
    for _suffix, module in variants:
        module.hybrid(store, "warm up", module.Filters(project=PROJECT))
    for text in words:
        reference: dict[str, list] = {}
        for suffix, module in variants:
            filters = module.Filters(project=PROJECT)
            results: dict[str, list] = {}
            for label, function in (
                ("full text", module.full_text),
                ("semantic", module.semantic),
                ("hybrid", module.hybrid),
            ):
                started = time.perf_counter()
                results[label] = [hit["event_id"] for hit in function(store, text, filters) or []]
                timings.setdefault(label + suffix, []).append((time.perf_counter() - started) * 1000)
            if suffix:
                differ = [k for k in results if results[k] != reference[k]]
                print(f"  {text!r}: {'differs in ' + ', '.join(differ) if differ else 'same results'}", flush=True)
            else:
                reference = results
    for label, values in timings.items():
        print(f"in process, {label:10} {_q(values)}")
    if args.record:
        from post_tool_observer_bench import time_recording

        print(f"PostToolUse, one call recorded on the full store: {time_recording(home, args.record)}")
        with store.transaction() as conn:  # the bench's calls (sessions bench-N) go again: the store stays as built
            conn.execute("DELETE FROM observer_events WHERE session_id LIKE 'bench-%'")
    print(f"done: load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
