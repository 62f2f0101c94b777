"""Semantic ranking's exact top-k: in parts on threads, the same rows as scoring the whole matrix at once."""

import pytest
from omcm_post_tool_observer import search

np = pytest.importorskip("numpy")


def _whole(matrix, query, count):
    scores = matrix @ query
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:count]
    return [int(i) for i in order]


@pytest.mark.parametrize(
    ("rows", "parts", "count"),
    [(1, 1, 50), (10, 3, 3), (1000, 2, 50), (1000, 1, 50), (1000, 7, 150), (999, 2, 999), (5, 5, 5)],
)
def test_top_scores_match_a_full_sort(rows, parts, count):
    rng = np.random.default_rng(rows + parts)
    matrix = rng.standard_normal((rows, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    found = search.top_scores(matrix, query, count, parts)
    assert [row for _, row in found] == _whole(matrix, query, count)
    assert [score for score, _ in found] == pytest.approx([float(matrix[r] @ query) for _, r in found], abs=1e-4)


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_equal_scores_come_in_row_order_whatever_the_parts(parts):
    matrix = np.ones((10, 4), dtype=np.float32)
    rows = [row for _, row in search.top_scores(matrix, np.ones(4, np.float32), 5, parts)]
    assert len(set(rows)) == 5 and rows == sorted(rows)  # which of ten equals is kept is the partition's choice


def test_nothing_to_rank():
    assert search.top_scores(np.zeros((0, 4), np.float32), np.ones(4, np.float32), 5) == []
