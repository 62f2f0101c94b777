"""Semantic search's memory-mapped vector matrix: persisted, extended by new rows only, rebuilt after a prune."""

import uuid

import pytest
from omcm_post_tool_observer import embedder, storage

from omcm_core.store import Store

np = pytest.importorskip("numpy")
MODEL = "all-MiniLM-L6-v2"


def _add(store, vectors) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in vectors]
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO observer_vectors(event_id, model, dim, vector) VALUES(?, ?, ?, ?)",
            [(i, MODEL, 4, np.asarray(v, dtype=np.float32).tobytes()) for i, v in zip(ids, vectors, strict=True)],
        )
    return ids


def test_the_cache_is_extended_with_new_rows_and_rebuilt_after_a_prune(omcm_home):
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    first = _add(store, [[1, 0, 0, 0], [0, 1, 0, 0]])
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == first and matrix.shape == (2, 4)
    # An old row changed behind the cache's back is not read again: only rows past the cached ones are.
    with store.transaction() as conn:
        conn.execute(
            "UPDATE observer_vectors SET vector = ? WHERE event_id = ?",
            (np.array([9, 9, 9, 9], np.float32).tobytes(), first[0]),
        )
    second = _add(store, [[0, 0, 1, 0]])
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == first + second
    assert matrix[0].tolist() == [1, 0, 0, 0] and matrix[2].tolist() == [0, 0, 1, 0]
    # Persisted: a new connection (another process's search) maps the same files without reading the vectors.
    other = Store(omcm_home)
    ids, matrix = embedder.vector_matrix(other, MODEL, cache)
    assert matrix.shape == (3, 4) and isinstance(matrix, np.memmap)
    # A prune deletes vectors and bumps the epoch: the cache is written anew from the store.
    with store.transaction() as conn:
        conn.execute("DELETE FROM observer_vectors WHERE event_id = ?", (first[1],))
    storage.set_meta(store, "vectors_epoch", "after-prune")
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == [first[0], second[0]]
    assert matrix[0].tolist() == [9, 9, 9, 9]
    other.close()
    store.close()


def test_a_cache_whose_files_are_short_is_rebuilt(omcm_home):
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    _add(store, [[1, 0, 0, 0], [0, 1, 0, 0]])
    embedder.vector_matrix(store, MODEL, cache)
    with open(cache / "vectors.f32", "r+b") as f:  # a writer killed halfway, a disk that filled up
        f.truncate(8)
    _ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert matrix.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0]]
    store.close()
