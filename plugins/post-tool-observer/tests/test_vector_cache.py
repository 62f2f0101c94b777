"""Semantic search's memory-mapped vector matrix: persisted, extended by new rows only, rebuilt after a prune."""

import json
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
    # New rows are appended: the rows cached before are not read again.
    with open(cache / "vectors.f32", "r+b") as f:
        f.write(np.array([7, 7, 7, 7], np.float32).tobytes())  # what a re-read would overwrite
    second = _add(store, [[0, 0, 1, 0]])
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == first + second
    assert matrix[0].tolist() == [7, 7, 7, 7] and matrix[2].tolist() == [0, 0, 1, 0]
    # A vector changed in place (by any path) gives the cache a new epoch: written anew from the store.
    with store.transaction() as conn:
        conn.execute(
            "UPDATE observer_vectors SET vector = ? WHERE event_id = ?",
            (np.array([9, 9, 9, 9], np.float32).tobytes(), first[0]),
        )
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert matrix[0].tolist() == [9, 9, 9, 9] and matrix[2].tolist() == [0, 0, 1, 0]
    # Persisted: a new connection (another process's search) maps the same files without reading the vectors.
    other = Store(omcm_home)
    ids, matrix = embedder.vector_matrix(other, MODEL, cache)
    assert matrix.shape == (3, 4) and not matrix.flags.owndata and not matrix.flags.writeable  # mapped
    # Kept mapped for the next search while the files hold the same rows; mapped again when they grow.
    assert embedder.vector_matrix(other, MODEL, cache)[1] is matrix
    extra = _add(store, [[0, 0, 0, 1]])
    # The worker extends the files without mapping them; a search then maps the grown files.
    assert embedder.vector_matrix(store, MODEL, cache, map_rows=False) == (None, None)
    assert json.loads((cache / "vectors.json").read_text())["n"] == 4
    ids, grown = embedder.vector_matrix(other, MODEL, cache)
    assert grown is not matrix and grown.shape == (4, 4) and ids[-1].decode() == extra[0]
    with store.transaction() as conn:
        conn.execute("DELETE FROM observer_vectors WHERE event_id = ?", (extra[0],))
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


def _event(conn, event_id: str, output: str) -> None:
    conn.execute(
        "INSERT INTO observer_events(event_id, ts, tool_name, success, output, payload_json, bytes) "
        "VALUES(?, 0, 'Bash', 1, ?, '{}', 0)",
        (event_id, output),
    )


def test_calls_removed_or_masked_again_leave_the_cache(omcm_home):
    """Whatever path removes a call or changes its text, search's matrix stops offering its old vector."""
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    kept, removed, remasked = _add(store, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    with store.transaction() as conn:
        for event_id in (kept, removed, remasked):
            _event(conn, event_id, f"output of {event_id}")
    ids, _ = embedder.vector_matrix(store, MODEL, cache)
    assert len(ids) == 3
    # Deleted with plain SQL (not through retention, which also bumps the epoch itself).
    with store.transaction() as conn:
        conn.execute("DELETE FROM observer_events WHERE event_id = ?", (removed,))
    ids, matrix = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == [kept, remasked] and matrix.tolist()[1] == [0, 0, 1, 0]
    # Its text masked again: the vector made from the old text goes, and the call waits to be embedded again.
    with store.transaction() as conn:
        conn.execute("UPDATE observer_events SET output = '[REDACTED]' WHERE event_id = ?", (remasked,))
    ids, _ = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == [kept]
    assert store.query("SELECT event_id, status FROM observer_outbox") == [(remasked, "pending")]
    # A change that is not the text (adoption sets the project) keeps the vector.
    with store.transaction() as conn:
        conn.execute("UPDATE observer_events SET project = '/p' WHERE event_id = ?", (kept,))
    before = storage.get_meta(store, "vectors_epoch")
    ids, _ = embedder.vector_matrix(store, MODEL, cache)
    assert [i.decode() for i in ids] == [kept] and storage.get_meta(store, "vectors_epoch") == before
    assert store.query("SELECT count(*) FROM observer_vectors") == [(1,)]
    store.close()
