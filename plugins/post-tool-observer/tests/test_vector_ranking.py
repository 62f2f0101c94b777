"""Semantic ranking's exact top-k: in parts on threads, the same rows as scoring the whole matrix at once."""

import pytest
from omcm_post_tool_observer import vector_scan

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
    found = vector_scan.top_scores(matrix, query, count, parts)
    assert [row for _, row in found] == _whole(matrix, query, count)
    assert [score for score, _ in found] == pytest.approx([float(matrix[r] @ query) for _, r in found], abs=1e-4)


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_equal_scores_come_in_row_order_whatever_the_parts(parts):
    matrix = np.ones((10, 4), dtype=np.float32)
    rows = [row for _, row in vector_scan.top_scores(matrix, np.ones(4, np.float32), 5, parts)]
    assert len(set(rows)) == 5 and rows == sorted(rows)  # which of ten equals is kept is the partition's choice


def test_nothing_to_rank():
    assert vector_scan.top_scores(np.zeros((0, 4), np.float32), np.ones(4, np.float32), 5) == []


def _bits(matrix):
    width = (matrix.shape[1] + 63) // 64 * 8
    signs = np.zeros((len(matrix), width * 8), dtype=bool)
    signs[:, : matrix.shape[1]] = matrix > 0
    return np.packbits(signs, axis=1)


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_a_shortlist_holding_the_best_rows_gives_the_exact_ranking(parts):
    rng = np.random.default_rng(parts)
    query = rng.standard_normal(96).astype(np.float32)
    # Rows near the query share most of its signs; the rest point away from it.
    near = query + 0.3 * rng.standard_normal((40, 96)).astype(np.float32)
    far = -np.abs(rng.standard_normal((3000, 96)).astype(np.float32)) * np.sign(query)
    matrix = np.concatenate([far[:1000], near, far[1000:]])
    found = vector_scan.top_scores_shortlisted(matrix, _bits(matrix), query, 10, keep=60, parts=parts)
    assert found == vector_scan.top_scores(matrix, query, 10)
    assert all(1000 <= row < 1040 for _, row in found)


def test_the_shortlist_keeps_rows_by_sign_agreement_then_scores_them_exactly():
    query = np.array([1, 1, 1, 1], np.float32)
    # Row 0 agrees in every sign but scores low; row 1 scores highest but disagrees in two signs.
    matrix = np.array([[0.1, 0.1, 0.1, 0.1], [9, 9, -0.1, -0.1], [0.2, 0.2, 0.2, -5], [0.3, 0.3, 0.3, 0.3]], np.float32)
    found = vector_scan.top_scores_shortlisted(matrix, _bits(matrix), query, 2, keep=2)
    assert [row for _, row in found] == [3, 0]
    assert [score for score, _ in found] == pytest.approx([1.2, 0.4])
    # A shortlist as large as the matrix is the exact scan.
    assert vector_scan.top_scores_shortlisted(matrix, _bits(matrix), query, 2, keep=4)[0][1] == 1


def test_a_sign_differing_where_the_query_is_large_counts_more():
    query = np.array([4, 4, 0.1, 0.1], np.float32)
    # Each row differs from the query in one sign: row 0 in a large dimension, row 1 in a small one.
    matrix = np.array([[-0.1, 0.1, 9, 9], [0.1, 0.1, -0.1, 0.1]], np.float32)
    assert [row for _, row in vector_scan.top_scores_shortlisted(matrix, _bits(matrix), query, 1, keep=1)] == [1]


def test_below_the_threshold_every_row_is_scored_whatever_the_bits_say():
    rng = np.random.default_rng(9)
    matrix = rng.standard_normal((5000, 32)).astype(np.float32)
    query = rng.standard_normal(32).astype(np.float32)
    wrong = np.zeros((5000, 8), np.uint8)  # bits that would shortlist arbitrary rows
    assert vector_scan.best_rows(matrix, wrong, query, 50) == vector_scan.top_scores(matrix, query, 50)
    assert vector_scan.best_rows(matrix, None, query, 50) == vector_scan.top_scores(matrix, query, 50)


def test_from_the_threshold_the_shortlist_is_used(monkeypatch):
    rng = np.random.default_rng(10)
    matrix = rng.standard_normal((5000, 32)).astype(np.float32)
    query = rng.standard_normal(32).astype(np.float32)
    monkeypatch.setattr(vector_scan, "EXACT_BELOW", 1000)
    found = vector_scan.best_rows(matrix, _bits(matrix), query, 5)
    keep = vector_scan.shortlist(5000, 5)
    assert found == vector_scan.top_scores_shortlisted(matrix, _bits(matrix), query, 5, keep)
    assert keep == 200  # 40 per result wanted: more than 4 % of 5,000


@pytest.mark.parametrize("words", [1, 6])
def test_popcount_without_numpy_2_counts_the_same(monkeypatch, words):
    values = np.random.default_rng(words).integers(0, 2**63, size=(50, words), dtype=np.uint64)
    counted = vector_scan._popcount(values).astype(int)
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert vector_scan._popcount(values).astype(int).tolist() == counted.tolist()
    assert counted.tolist() == [[bin(int(v)).count("1") for v in row] for row in values]
