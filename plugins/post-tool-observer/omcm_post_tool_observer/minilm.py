"""all-MiniLM-L6-v2's encoder in numpy: 6 layers, 384 wide, mean pooling, L2 norm.

A few matrix products, so PyTorch is not needed. Laid out for speed on a CPU
without changing the model's function: texts batched by length, query/key/value
in one product, the feed-forward block in cache-sized slices, whole batches on
separate threads. Loaded through ``embedder.load``.
"""

from __future__ import annotations

import json
import os
import struct

# Tokens embedded per observation. An observation's text starts with what people
# search for (tool, file or command, success, the error), then the output. On 30
# labelled searches over real tool calls, 64 tokens put the target in the top 5
# for 29 (128 tokens: 27, 32 tokens: 24) and first for 25 (128: 20), at half the
# CPU of 128 (bench/observer_worker_bench.py --recall).
MAX_TOKENS = 64
MODEL_NAME = "all-MiniLM-L6-v2"


def _read_safetensors(path: str):
    """The float32 tensors of a safetensors file, as read-only views of a memory map.

    Mapped, not read: the 47 MB word-embedding table is touched only at the rows
    of the tokens actually seen, and pages of the file are shared, not copied.
    """
    import mmap

    import numpy as np

    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        count = (end - start) // 4
        tensors[name] = np.frombuffer(data, np.float32, count, 8 + size + start).reshape(spec["shape"])
    return tensors


#: Tokens per forward pass (texts x padded length): bounds the attention scores and
#: the activations, so memory does not grow with the number of texts.
TOKENS_PER_BATCH = 2048
#: Rows of the feed-forward block done at once: its 1,536-wide activations and the
#: GELU's temporaries then stay in the CPU cache (GELU took twice as long at 2,048 rows).
FFN_ROWS = 256


class MiniLM:
    name = MODEL_NAME
    dim = 384
    heads = 12

    def __init__(self, folder: str, max_tokens: int = MAX_TOKENS) -> None:
        from tokenizers import Tokenizer

        w = _read_safetensors(os.path.join(folder, "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()  # padded per batch of similar lengths, below
        self.word = w["embeddings.word_embeddings.weight"]
        # Position and token type (always 0: one sentence) added once, as one table.
        self.position = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        count = 1 + max(int(k.split(".")[2]) for k in w if k.startswith("encoder.layer."))
        self.layers = [_Layer(w, f"encoder.layer.{i}", self.heads) for i in range(count)]

    def encode(self, texts: list[str], threads: int = 1):
        """Unit-length float32 vectors, one per text, in order.

        Texts are sorted by token count and cut into batches of similar length,
        so little time goes into padding and memory is bounded by
        ``TOKENS_PER_BATCH`` (per thread) whatever the number of texts.
        """
        import numpy as np

        encoded = [e.ids for e in self.tokenizer.encode_batch([t or " " for t in texts])]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        batches = list(_batches(encoded))

        def run(chunk):
            out[chunk] = self._forward([encoded[i] for i in chunk])

        if threads > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(run, batches))
        else:
            for chunk in batches:
                run(chunk)
        return out

    def _forward(self, rows: list[list[int]]):
        import numpy as np

        n, length = len(rows), len(rows[-1])  # sorted: the last is the longest
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, tokens in enumerate(rows):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = self.word[ids.reshape(-1)].reshape(n, length, -1)
        x += self.position[:length]
        x = _layer_norm(x.reshape(n * length, -1), *self.embed_norm)
        bias = ((mask - 1.0) * 1e9)[:, None, None, :]  # padding gets no attention
        for layer in self.layers:
            x = layer(x, n, length, bias)
        x = x.reshape(n, length, -1)
        x *= mask[..., None]
        pooled = x.sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled


def _batches(encoded: list[list[int]]):
    """Indexes of the texts, shortest first, cut so each batch pads to at most ``TOKENS_PER_BATCH``."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    start = 0
    while start < len(order):
        end = start + 1
        # Sorted ascending: the batch's last text sets the padded length.
        while end < len(order) and (end - start + 1) * len(encoded[order[end]]) <= TOKENS_PER_BATCH:
            end += 1
        yield order[start:end]
        start = end


class _Layer:
    """One encoder layer, its weights laid out for row-major products (transposed once, at load)."""

    def __init__(self, w, prefix: str, heads: int) -> None:
        import numpy as np

        def get(name):
            return w[f"{prefix}.{name}"]

        width = get("attention.self.query.weight").shape[0] // heads
        scale = np.float32(width**-0.5)  # folded into the query projection: one pass less per layer
        names = ("query", "key", "value")
        weights = [get(f"attention.self.{n}.weight") for n in names]
        biases = [get(f"attention.self.{n}.bias") for n in names]
        weights[0], biases[0] = weights[0] * scale, biases[0] * scale
        # Query, key and value in one product of 3 x 384 columns.
        self.qkv = (np.ascontiguousarray(np.concatenate(weights).T), np.concatenate(biases))
        self.out = (np.ascontiguousarray(get("attention.output.dense.weight").T), get("attention.output.dense.bias"))
        self.norm1 = (get("attention.output.LayerNorm.weight"), get("attention.output.LayerNorm.bias"))
        self.up = (np.ascontiguousarray(get("intermediate.dense.weight").T), get("intermediate.dense.bias"))
        self.down = (np.ascontiguousarray(get("output.dense.weight").T), get("output.dense.bias"))
        self.norm2 = (get("output.LayerNorm.weight"), get("output.LayerNorm.bias"))
        self.heads, self.width = heads, width

    def __call__(self, x, n: int, length: int, bias):
        import numpy as np

        qkv = x @ self.qkv[0]
        qkv += self.qkv[1]
        q, k, v = qkv.reshape(n, length, 3, self.heads, self.width).transpose(2, 0, 3, 1, 4)
        scores = q @ k.transpose(0, 1, 3, 2)  # (texts, heads, length, length), the largest array
        scores += bias
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, -1)
        del scores, qkv
        attended = context @ self.out[0]
        attended += self.out[1]
        attended += x
        x = _layer_norm(attended, *self.norm1)
        out = np.empty_like(x)
        for start in range(0, len(x), FFN_ROWS):
            part = slice(start, start + FFN_ROWS)
            hidden = x[part] @ self.up[0]
            hidden += self.up[1]
            _gelu(hidden)
            np.matmul(hidden, self.down[0], out=out[part])
        out += self.down[1]
        out += x
        return _layer_norm(out, *self.norm2)


def _layer_norm(x, weight, bias, eps=1e-12):
    """Over the last axis of a 2-D array, in place."""
    import numpy as np

    x -= x.mean(-1, keepdims=True)
    var = np.square(x).mean(-1, keepdims=True)
    var += eps
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


def _gelu(h) -> None:
    """GELU with the exact erf, in place: ``h * (1 + erf(h / sqrt 2)) / 2``.

    erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7; numpy has no erf, scipy
    is not needed for it). Python-float constants keep it float32: a numpy float64
    scalar would turn the whole pass into float64 (numpy 2 promotion).
    """
    import numpy as np

    z = h * 0.7071067811865476
    t = np.abs(z)
    decay = np.square(t)
    np.negative(decay, out=decay)
    np.exp(decay, out=decay)
    t *= 0.3275911
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * 1.061405429
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += c
        poly *= t
    poly *= decay  # 1 - erf(|z|)
    np.subtract(1.0, poly, out=poly)
    np.copysign(poly, z, out=poly)  # erf(z)
    poly += 1.0
    h *= poly
    h *= 0.5
