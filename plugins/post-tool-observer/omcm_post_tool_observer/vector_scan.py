"""Semantic search's scan of the vector matrix: exact top-k, or a bit-plane shortlist scored exactly.

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


#: Below this many vectors every search scores them all (exact); from it, a shortlist by the bit planes first.
EXACT_BELOW = 200_000


def best_rows(matrix, bits, query, count: int) -> list[tuple[float, int]]:
    """The ``count`` best (score, row): exact below EXACT_BELOW rows (or without ``bits``), shortlisted from it."""
    if bits is None or len(matrix) < EXACT_BELOW:
        return top_scores(matrix, query, count)
    return top_scores_shortlisted(matrix, bits, query, count, shortlist(len(matrix), count))


def shortlist(rows: int, count: int) -> int:
    """How many rows the bits shortlist for exact scores: 4 % of them, at least 40 per result wanted.

    Generous on purpose (40,000 at a million rows, 60 MB of the 1.5 GB an
    exact scan reads): on the bench's random vectors, the worst case for bits,
    and on real embeddings, 4 % kept the exact top 10 for every query measured;
    2 % missed one in 68 (bench/vector_shortlist.py, docs/benchmarks.md round 2).
    """
    return max(rows // 25, count * 40)


#: The estimate's weights, in whole numbers: a differing sign costs 12 where the query is small (and 12 + 18
#: where it is large: 2.5x), 28 (+42) more where the row's value is large; a large value of the row gains
#: 14 (+21). From a two-bit code of each value (sign; size 0.45 or 1.5), scored against the query's signs
#: with its values weighed 1 or 2.5 (below or above their median): q . code, up to a constant.
_WEIGHTS = {
    "differ": 12,
    "differ_heavy": 18,
    "differ_large": 28,
    "differ_large_heavy": 42,
    "large": -14,
    "large_heavy": -21,
}


def bit_planes(matrix):
    """Two bit planes a row of ``matrix`` (uint8, whole 64-bit words each): signs, then the large values.

    A value is large when its magnitude is over its row's root mean square
    (about a third of a Gaussian row's values; one pass, where a median took
    two thirds of the time), so a row's planes never depend on other rows:
    the cache only appends.
    """
    import numpy as np

    rows, dim = matrix.shape
    planes = np.zeros((rows, 2, (dim + 63) // 64 * 64), dtype=bool)
    planes[:, 0, :dim] = matrix > 0
    square = np.square(matrix)
    planes[:, 1, :dim] = square > square.mean(axis=1, keepdims=True)
    return np.packbits(planes, axis=2).reshape(rows, -1)


#: Rows estimated at a time: under 1 MB of temporaries each (8,192 rows: 50 ms a million at load 3, 32,768: 61).
_PIECE = 8_192


def top_scores_shortlisted(matrix, bits, query, count: int, keep: int, parts: int | None = None):
    """The ``count`` best (score, row) of ``matrix @ query`` among the ``keep`` rows estimated best by ``bits``.

    ``bits`` holds two planes a row (embedder.vector_index): each value's sign,
    and whether it is large. The product of the query with a two-bit code of
    each row (sign, and size 0.45 or 1.5) is estimated with popcounts, the
    query's values weighed 1 or 2.5 (below or above their median); the ``keep``
    rows estimated best are scored exactly, so the order and scores are those
    of the exact scan for every row shortlisted. On a million random vectors and
    68 queries, 4 % shortlisted by signs alone (the query weighed) kept the exact
    top 10 for 76 % of the queries; with the size plane, for all of them
    (bench/vector_shortlist.py, docs/benchmarks.md round 2).
    Reads the bits (96 MB at a million rows) and ``keep`` rows of the matrix.
    """
    import numpy as np

    n = len(matrix)
    count = min(count, n)
    if count <= 0:
        return []
    if keep >= n:
        return top_scores(matrix, query, count, parts)
    query = np.asarray(query, dtype=np.float32)
    width = bits.shape[1] // 2  # bytes a plane
    masks = np.zeros((2, width * 8), dtype=bool)
    masks[0, : len(query)] = query > 0
    masks[1, : len(query)] = np.abs(query) > np.median(np.abs(query))
    mine, heavy = np.packbits(masks, axis=1).view(np.uint64)
    words = bits.view(np.uint64).reshape(-1)  # row after row: its sign words, then its large-value words
    plane = width // 8
    piece = min(_PIECE, n)
    # Flat, whole-row operations: numpy is slow on rows of a few words, fast on long runs.
    against = np.tile(np.concatenate([mine, np.zeros(plane, np.uint64)]), piece)
    heavy_both = np.tile(np.concatenate([heavy, heavy]), piece)
    w = _WEIGHTS
    per_word = np.array(
        [
            [w["differ"]] * plane + [w["large"]] * plane,
            [w["differ_heavy"]] * plane + [w["large_heavy"]] * plane,
            [w["differ_large"]] * plane + [0] * plane,
            [w["differ_large_heavy"]] * plane + [0] * plane,
        ],
        dtype=np.float32,
    )
    distances = np.empty(n, dtype=np.float32)
    parts = parts or (2 if n >= SPLIT_ROWS else 1)
    edges = [n * i // parts for i in range(parts + 1)]

    def measure(part: int) -> None:
        for lo in range(edges[part], edges[part + 1], piece):  # pieces that stay in the CPU's cache
            hi = min(lo + piece, edges[part + 1])
            size = (hi - lo) * 2 * plane
            # Each row becomes: the words where its signs differ from the query's, then its large-value words.
            both = words[lo * 2 * plane : hi * 2 * plane] ^ against[:size]
            # Shifted by a plane, AND gives "differs and is large" in each row's first half (the second half
            # pairs a row with the next one: weighed 0).
            pairs = np.zeros_like(both)
            np.bitwise_and(both[:-plane], both[plane:], out=pairs[:-plane])
            total = np.zeros(hi - lo, dtype=np.float32)
            for values, weights in (
                (both, per_word[0]),
                (both & heavy_both[:size], per_word[1]),
                (pairs, per_word[2]),
                (pairs & heavy_both[:size], per_word[3]),
            ):
                total += _popcount(values).astype(np.float32).reshape(hi - lo, -1) @ weights
            distances[lo:hi] = total
        lo, hi = edges[part], edges[part + 1]
        chosen[part] = lo + _nearest(distances[lo:hi], keep)

    chosen: list = [None] * parts
    _on_threads(measure, parts)
    # The best ``keep`` of each part hold the best ``keep`` of all; ties go to the lower row, so the parts
    # do not change which rows are kept.
    both = np.concatenate(chosen)
    rows = np.sort(both[_nearest(distances[both], keep, order=both)])  # in file order: the reads go forwards
    scores = np.empty(len(rows), dtype=np.float32)
    cuts = [len(rows) * i // parts for i in range(parts + 1)]

    def rescore(part: int) -> None:
        lo, hi = cuts[part], cuts[part + 1]
        scores[lo:hi] = matrix[rows[lo:hi]] @ query

    _on_threads(rescore, parts)
    order = np.lexsort((rows, -scores))[:count]  # as top_scores: best first, equal scores by row
    return [(float(scores[i]), int(rows[i])) for i in order]


def _nearest(values, keep: int, order=None):
    """Indexes of the ``keep`` smallest ``values``; among equal values, those first in ``order`` (default: index)."""
    import numpy as np

    if len(values) <= keep:
        return np.arange(len(values))
    edge = np.partition(values, keep - 1)[keep - 1]
    below = np.flatnonzero(values < edge)
    tied = np.flatnonzero(values == edge)
    if order is not None:
        tied = tied[np.argsort(order[tied], kind="stable")]
    return np.concatenate([below, tied[: keep - len(below)]])


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
