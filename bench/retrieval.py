"""Retrieval quality of omcm's search over real sessions: recall@5 and MRR of full-text, semantic, hybrid.

    .venv/bin/python bench/retrieval.py            # prints a Markdown table (docs/benchmarks.md has one)

The real transcripts in ``../shared/fixtures/transcripts`` are replayed through
post-tool-observer (the PostToolUse payloads Claude Code would have sent, in
process, one store), every observation is embedded, and each hand-labelled
question of ``bench/retrieval_questions.json`` is asked in each mode. A
question is answered when one of its labelled calls is among the hits.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "retrieval_questions.json"
MODES = ("full-text", "semantic", "hybrid")


def questions() -> list[dict]:
    return json.loads(QUESTIONS.read_text())["questions"]


def replay(home: Path, transcripts: Path, embed: bool) -> dict[str, str]:
    """Record every tool call of every transcript; event_id -> '<transcript>#<tool_use_id suffix>'."""
    from omcm_post_tool_observer import storage

    from omcm_core._runtime.dispatch import handle
    from omcm_core.store import Store
    from omcm_core.transcripts import replay_transcript

    env = {
        "OMCM_HOME": str(home),
        "OMCM_LOAD_PLUGINS": "post-tool-observer",
        "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "true" if embed else "false",
        "OMCM__POST_TOOL_OBSERVER__WORKER_INTERVAL_S": "1000000000",
        "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",
        "PATH": os.environ.get("PATH", ""),
    }
    store = Store(home)
    storage.ready(store)
    storage.set_meta(store, "worker_started", time.time())  # this run embeds in process, below
    where: dict[str, str] = {}
    for path in sorted(transcripts.rglob("*.jsonl")):
        name = str(path.relative_to(transcripts))
        for payload in replay_transcript(path):
            if payload["hook_event_name"] != "PreToolUse":
                # Without the transcript: the whole file exists up front here, and the observer's reader
                # would record from it the calls whose hooks are still to come in this replay.
                payload = {k: v for k, v in payload.items() if k != "transcript_path"}
                handle(json.dumps(payload).encode(), env=env)
                where[payload["tool_use_id"]] = name
    rows = store.query("SELECT event_id, tool_use_id FROM observer_events")
    store.close()
    return {event_id: f"{where.get(tool_use_id, '?')}#{tool_use_id[-8:]}" for event_id, tool_use_id in rows}


def embed_all(home: Path) -> int:
    from omcm_post_tool_observer import worker

    from omcm_core import log
    from omcm_core.store import Store

    store = Store(home)
    store.conn  # noqa: B018  (connect: the worker stops when its store is not the one open)
    lock_dir = home / "plugins" / "post-tool-observer"
    lock_dir.mkdir(parents=True, exist_ok=True)
    try:
        return worker.run(store, lock_dir, log.get_logger(component="bench"), idle_s=0, poll_s=0)
    finally:
        store.close()


def targets(question: dict) -> set[str]:
    return {f"{question['t']}#{suffix}" for suffix in question["ids"]}


def hit(found: str, wanted: set[str]) -> bool:
    # "*" labels a question whose calls may sit in any transcript.
    return found in wanted or any(w.startswith("*#") and found.endswith(w[1:]) for w in wanted)


def score(home: Path, names: dict[str, str], modes=MODES, k: int = 5, depth: int = 10) -> dict[str, dict]:
    from omcm_post_tool_observer import search

    from omcm_core.store import Store

    store = Store(home)
    out = {}
    for mode in modes:
        found_at, reciprocal = 0, 0.0
        for question in questions():
            if mode == "full-text":
                hits = search.full_text(store, question["q"], limit=depth)
            elif mode == "semantic":
                hits = search.semantic(store, question["q"], limit=depth) or []
            else:
                hits = search.hybrid(store, question["q"], limit=depth)
            ranks = [n for n, h in enumerate(hits, 1) if hit(names.get(h["event_id"], ""), targets(question))]
            found_at += bool(ranks and ranks[0] <= k)
            reciprocal += 1 / ranks[0] if ranks else 0.0
        total = len(questions())
        out[mode] = {"recall_at_5": round(found_at / total, 3), "mrr_at_10": round(reciprocal / total, 3)}
    store.close()
    return out


def main() -> int:
    from omcm_core.testing import shared_fixtures_dir

    fixtures = shared_fixtures_dir()
    if fixtures is None:
        print("bench/retrieval.py: ../shared/fixtures is not present", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        started = time.perf_counter()
        names = replay(home, fixtures / "transcripts", embed=True)
        embedded = embed_all(home)
        print(f"{len(names)} observations, {embedded} embedded, {time.perf_counter() - started:.1f} s")
        print(f"{len(questions())} questions\n\n| mode | recall@5 | MRR@10 |\n|---|---|---|")
        for mode, figures in score(home, names).items():
            print(f"| {mode} | {figures['recall_at_5']:.3f} | {figures['mrr_at_10']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
