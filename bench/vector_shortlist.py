"""Does the sign-bit shortlist keep semantic search's results? Its top-k against the exact scan's.

    python bench/vector_shortlist.py [--store DIR] [--texts 20000] [--cache FILE] [--random-rows 1000000]

Semantic search scores every vector below ``vector_scan.EXACT_BELOW`` rows; from
there it scores exactly only the rows whose sign bits are nearest the query's
(``vector_scan.shortlist``: 4 % of them). This bench measures how often that
gives the same top 10 / top 50 as the exact scan, for the 30 queries of
bench/observer_year.py and the 38 questions of bench/retrieval.py:

1. on real embeddings (all-MiniLM-L6-v2): the text of the real transcripts in
   ``../shared/fixtures`` (600-character pieces) plus outputs sampled from a
   store built by observer_year.py (``--store``), shortlisting the same 4 % as at
   a million rows (the embeddings are kept in ``--cache`` for the next run);
2. on ``--random-rows`` random unit vectors (what observer_year.py stores): no
   structure at all, the worst case for sign bits.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def transcript_pieces() -> list[str]:
    from omcm_core.testing import shared_fixtures_dir

    fixtures = shared_fixtures_dir()
    if fixtures is None:
        return []
    found: list[str] = []

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in ("text", "content") and isinstance(inner, str):
                    found.append(inner)
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for path in sorted((fixtures / "transcripts").rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    pieces = {p[i : i + 600] for p in found for i in range(0, len(p), 600)}
    return sorted(p for p in pieces if len(p.strip()) > 40)


def store_outputs(home: Path, count: int) -> list[str]:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{home / 'omcm.db'}?mode=ro", uri=True)) as conn:
        ((top,),) = conn.execute("SELECT max(id) FROM observer_events").fetchall()
        rows = random.Random(7).sample(range(1, top + 1), min(count, top))
        texts = []
        for start in range(0, len(rows), 500):
            part = rows[start : start + 500]
            texts += [
                r[0]
                for r in conn.execute(
                    f"SELECT coalesce(command, file_path, '') || ' ' || output FROM observer_events "
                    f"WHERE id IN ({','.join('?' * len(part))})",
                    part,
                )
            ]
    return texts


def agreement(matrix, bits, queries, keep: int) -> dict[str, float]:
    """Share of queries whose shortlisted top 10 / top 50 are the exact scan's (same rows, same order)."""
    from omcm_post_tool_observer import vector_scan

    same10 = same50 = found10 = 0
    for query in queries:
        exact = [row for _, row in vector_scan.top_scores(matrix, query, 50)]
        short = [row for _, row in vector_scan.top_scores_shortlisted(matrix, bits, query, 50, keep)]
        same10 += exact[:10] == short[:10]
        same50 += exact == short
        found10 += len(set(exact[:10]) & set(short[:10]))
    n = len(queries)
    return {"top10_same": same10 / n, "top50_same": same50 / n, "recall_at_10": found10 / (10 * n)}


def bits_of(matrix):
    import numpy as np

    width = (matrix.shape[1] + 63) // 64 * 8
    signs = np.zeros((len(matrix), width * 8), dtype=bool)
    signs[:, : matrix.shape[1]] = matrix > 0
    return np.packbits(signs, axis=1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, help="a store built by observer_year.py, for more texts")
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/omcm-shortlist-embeddings.npy"))
    parser.add_argument("--random-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from omcm_post_tool_observer import embedder

    embedder.limit_threads()
    import numpy as np
    from observer_year import queries as year_queries
    from retrieval import questions

    model = embedder.load()
    if model is None:
        print("the [embeddings] extra is not installed", file=sys.stderr)
        return 2
    words = year_queries(30) + [q["q"] for q in questions()]
    asked = model.encode(words).astype(np.float32)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(words)} queries")
    if args.cache.exists():
        matrix = np.load(args.cache)
    else:
        texts = transcript_pieces()
        real = len(texts)
        if args.store:
            texts += store_outputs(args.store, args.texts - len(texts))
        started = time.perf_counter()
        matrix = np.concatenate([model.encode(texts[i : i + 256]) for i in range(0, len(texts), 256)])
        matrix = matrix.astype(np.float32)
        np.save(args.cache, matrix)
        print(f"embedded {len(texts)} texts ({real} from real transcripts) in {time.perf_counter() - started:.0f} s")
    keep = len(matrix) // 25
    figures = agreement(matrix, bits_of(matrix), asked, keep)
    print(f"real embeddings, {len(matrix)} rows, shortlist {keep} (4 %): {figures}")
    if args.random_rows:
        rng = np.random.default_rng(1)
        vectors = rng.standard_normal((args.random_rows, 384), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        from omcm_post_tool_observer import vector_scan

        keep = vector_scan.shortlist(args.random_rows, 50)
        figures = agreement(vectors, bits_of(vectors), asked, keep)
        print(f"random unit vectors, {args.random_rows} rows, shortlist {keep}: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
