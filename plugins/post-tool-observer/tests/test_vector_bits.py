"""The vector cache's sign bits (vectors.bits): made, extended, dropped and rebuilt with the matrix."""

import json
import os
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
            [(i, MODEL, len(v), np.asarray(v, dtype=np.float32).tobytes()) for i, v in zip(ids, vectors, strict=True)],
        )
        conn.executemany(
            "INSERT INTO observer_events(event_id, ts, tool_name, success, output, payload_json, bytes) "
            "VALUES(?, 0, 'Bash', 1, ?, '{}', 0)",
            [(i, f"output of {i}") for i in ids],
        )
    return ids


def _signs(bits, dim: int) -> list[list[bool]]:
    unpacked = np.unpackbits(np.asarray(bits), axis=1)
    assert not unpacked[:, dim:].any()  # the padding to whole 64-bit words is zeros
    return unpacked[:, :dim].astype(bool).tolist()


def _random(rng, rows: int, dim: int = 70) -> list[list[float]]:
    return rng.standard_normal((rows, dim)).astype(np.float32).tolist()


def test_bits_follow_the_matrix_as_rows_are_added_removed_and_masked_again(omcm_home):
    rng = np.random.default_rng(3)
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    first = _add(store, _random(rng, 5))
    ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert bits.shape == (5, 16) and _signs(bits, 70) == (matrix > 0).tolist()
    # New rows: the bits are extended from the rows cached before, not made again.
    with open(cache / "vectors.bits", "r+b") as f:
        f.write(b"\xff")  # what a remake would overwrite
    second = _add(store, _random(rng, 3))
    ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert [i.decode() for i in ids] == first + second
    assert bits[0, 0] == 255 and _signs(bits[1:], 70) == (matrix[1:] > 0).tolist()
    # A call removed (its vector goes, a new epoch): matrix and bits written anew, together.
    with store.transaction() as conn:
        conn.execute("DELETE FROM observer_events WHERE event_id = ?", (first[0],))
    ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert len(ids) == 7 and _signs(bits, 70) == (matrix > 0).tolist()
    # A call masked again loses its vector until embedded again: gone from the bits as from the matrix.
    with store.transaction() as conn:
        conn.execute("UPDATE observer_events SET output = '[REDACTED]' WHERE event_id = ?", (second[0],))
    ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert second[0].encode() not in ids.tolist() and len(bits) == 6
    assert _signs(bits, 70) == (matrix > 0).tolist()
    # The worker's call (map_rows=False) brings the bits up to date too.
    _add(store, _random(rng, 2))
    assert embedder.vector_index(store, MODEL, cache, map_rows=False) == (None, None, None)
    assert json.loads((cache / "vectors.json").read_text())["bits"] == 8
    store.close()


def test_a_cache_made_before_the_bits_gets_them_from_its_matrix(omcm_home):
    rng = np.random.default_rng(4)
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    _add(store, _random(rng, 4))
    embedder.vector_index(store, MODEL, cache)
    # The cache as the version before wrote it: no bits file, no "bits" in its state.
    os.unlink(cache / "vectors.bits")
    state = json.loads((cache / "vectors.json").read_text())
    del state["bits"]
    (cache / "vectors.json").write_text(json.dumps(state))
    with open(cache / "vectors.f32", "r+b") as f:
        f.write(np.full(70, -1, np.float32).tobytes())  # a matrix read again from the store would lose this
    inode = os.stat(cache / "vectors.f32").st_ino
    embedder._MAPS.clear()
    _ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert matrix[0].tolist() == [-1] * 70 and os.stat(cache / "vectors.f32").st_ino == inode
    assert _signs(bits, 70) == (matrix > 0).tolist()
    store.close()


def test_a_writer_killed_halfway_through_the_bits_leaves_a_cache_that_is_completed(omcm_home, monkeypatch):
    rng = np.random.default_rng(5)
    store = Store(omcm_home)
    storage.ready(store)
    cache = embedder.cache_dir(store)
    _add(store, _random(rng, 3))
    embedder.vector_index(store, MODEL, cache)
    _add(store, _random(rng, 7))
    # Bits written in batches of two; the writer dies after the first batch of the new rows.
    monkeypatch.setattr(embedder, "_BATCH", 2)
    real = np.packbits
    calls = []

    def dies_on_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "packbits", dies_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        embedder.vector_index(store, MODEL, cache)
    monkeypatch.setattr(np, "packbits", real)
    state = json.loads((cache / "vectors.json").read_text())
    assert (state["n"], state["bits"]) == (10, 3)  # the matrix was saved; the bits of 3 rows alone are counted
    # Garbage past the counted rows (a torn write) is overwritten, never read as bits.
    with open(cache / "vectors.bits", "ab") as f:
        f.write(b"\xab" * 100)
    embedder._MAPS.clear()
    _ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert len(bits) == 10 and _signs(bits, 70) == (matrix > 0).tolist()
    assert os.path.getsize(cache / "vectors.bits") == 10 * 16
    # A bits file cut short under a state that counts it whole (a disk that filled up): made again.
    with open(cache / "vectors.bits", "r+b") as f:
        f.truncate(24)
    embedder._MAPS.clear()
    _ids, matrix, bits = embedder.vector_index(store, MODEL, cache)
    assert len(bits) == 10 and _signs(bits, 70) == (matrix > 0).tolist()
    store.close()
