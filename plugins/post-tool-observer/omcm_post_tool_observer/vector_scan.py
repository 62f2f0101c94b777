"""Semantic search's scan of the vector matrix: exact top-k, or a sign-bit shortlist rescored exactly.

numpy is imported inside the functions: search.py, which the fast `omcm search`
route imports, imports this module only when it ranks vectors.
"""

from __future__ import annotations

#: From this many vectors up, the scan is split in two halves on two threads (one BLAS call each: the
#: GIL is released for the whole half, so the threads do not queue for it between small pieces).
SPLIT_ROWS = 400_000


def top_scores(matrix, query, count: int, parts: int | None = None) -> list[tuple[float, int]]:
    """The ``count`` best (score, row) of ``matrix @ query``, best first: exact, in ``parts`` parts.

    At a million rows the product reads 1.5 GB of vectors; with a second core
    free the two halves take about half as long.
    """
    import numpy as np

    n = len(matrix)
    count = min(count, n)
    if count <= 0:
        return []
    query = np.asarray(query, dtype=np.float32)
    parts = parts or (2 if n >= SPLIT_ROWS else 1)
    edges = [n * i // parts for i in range(parts + 1)]
    found: list = [None] * parts

    def scan(part: int) -> None:
        lo, hi = edges[part], edges[part + 1]
        scores = np.asarray(matrix[lo:hi]) @ query
        keep = min(count, hi - lo)
        best = np.argpartition(scores, len(scores) - keep)[len(scores) - keep :]
        found[part] = (scores[best], best + lo)

    _on_threads(scan, parts)
    scores = np.concatenate([f[0] for f in found])
    rows = np.concatenate([f[1] for f in found])
    # Best first; equal scores by row, so the order does not depend on the parts.
    order = np.lexsort((rows, -scores))[:count]
    return [(float(scores[i]), int(rows[i])) for i in order]


#: Below this many vectors every search scores them all (exact); from it, a shortlist by the sign bits first.
EXACT_BELOW = 200_000


def best_rows(matrix, bits, query, count: int) -> list[tuple[float, int]]:
    """The ``count`` best (score, row): exact below EXACT_BELOW rows (or without ``bits``), shortlisted from it."""
    if bits is None or len(matrix) < EXACT_BELOW:
        return top_scores(matrix, query, count)
    return top_scores_shortlisted(matrix, bits, query, count, shortlist(len(matrix), count))


def shortlist(rows: int, count: int) -> int:
    """How many rows the sign bits shortlist for exact scores: 4 % of them, at least 40 per result wanted.

    Generous on purpose (40,000 at a million rows, ~60 MB of the 1.5 GB read).
    On the bench's random vectors, the worst case for sign bits, 4 % kept the
    exact top 10 about 19 times in 20; real embeddings cluster, and do better
    (docs/benchmarks.md, round 2).
    """
    return max(rows // 25, count * 40)


def top_scores_shortlisted(matrix, bits, query, count: int, keep: int, parts: int | None = None):
    """The ``count`` best (score, row) of ``matrix @ query`` among the ``keep`` rows nearest by sign bits.

    ``bits`` holds each row's signs (embedder.vector_index); the rows whose
    signs differ least from the query's are scored exactly, so the order and
    scores are those of the exact scan for every row shortlisted. A differing
    sign counts twice in the half of the dimensions where the query is largest
    (they weigh most in the score): on random vectors that kept the exact top 10
    in 18 queries of 20 instead of 8, for ~40 % more time than plain Hamming.
    Reads ``bits`` (48 MB at a million rows) and ``keep`` rows of the matrix
    instead of all of it.
    """
    import numpy as np

    n = len(matrix)
    count = min(count, n)
    if count <= 0:
        return []
    if keep >= n:
        return top_scores(matrix, query, count, parts)
    query = np.asarray(query, dtype=np.float32)
    signs = np.zeros((2, bits.shape[1] * 8), dtype=bool)
    signs[0, : len(query)] = query > 0
    signs[1, : len(query)] = np.abs(query) > np.median(np.abs(query))
    mine, heavy = np.packbits(signs, axis=1).view(np.uint64)
    words = bits.view(np.uint64)
    distances = np.empty(n, dtype=np.uint16)
    parts = parts or (2 if n >= SPLIT_ROWS else 1)
    edges = [n * i // parts for i in range(parts + 1)]

    def measure(part: int) -> None:
        for lo in range(edges[part], edges[part + 1], 65_536):  # pieces that stay in the CPU's cache
            hi = min(lo + 65_536, edges[part + 1])
            differ = words[lo:hi] ^ mine
            distances[lo:hi] = (_popcount(differ) + _popcount(differ & heavy)).sum(axis=1, dtype=np.uint16)

    _on_threads(measure, parts)
    rows = np.sort(np.argpartition(distances, keep - 1)[:keep])  # in file order: the reads go forwards
    scores = np.empty(keep, dtype=np.float32)
    cuts = [keep * i // parts for i in range(parts + 1)]

    def rescore(part: int) -> None:
        lo, hi = cuts[part], cuts[part + 1]
        scores[lo:hi] = matrix[rows[lo:hi]] @ query

    _on_threads(rescore, parts)
    order = np.lexsort((rows, -scores))[:count]  # as top_scores: best first, equal scores by row
    return [(float(scores[i]), int(rows[i])) for i in order]


def _popcount(words):
    """Set bits in each of ``words`` (uint64): numpy 2's bitwise_count, or bytes through a table on numpy 1."""
    import numpy as np

    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
    return table[words.view(np.uint8)].reshape(*words.shape, 8).sum(axis=-1, dtype=np.uint16)


def _on_threads(work, parts: int) -> None:
    """``work(0)`` here and ``work(1..parts-1)`` on threads meanwhile (numpy releases the GIL in each)."""
    import threading

    helpers = [threading.Thread(target=work, args=(part,), daemon=True) for part in range(1, parts)]
    for helper in helpers:
        helper.start()
    work(0)
    for helper in helpers:
        helper.join()
