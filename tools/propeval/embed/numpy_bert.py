"""A BERT encoder forward pass in numpy, for sentence-transformers models of the plain shape
``Transformer(BertModel) -> Pooling(mean) -> Normalize``, such as all-MiniLM-L6-v2.

Why it exists: importing sentence-transformers costs seconds (transformers and torch), which a
pre-commit hook that embeds one new prompt cannot afford. This reads the same ``model.safetensors``
and ``tokenizer.json`` and computes the same embeddings (cosine >= 0.999 with
sentence-transformers is tested), in a few hundred milliseconds including imports.
Bulk encoding still goes through sentence-transformers (torch is faster on big batches).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

SUPPORTED_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]


def supported(path: Path) -> bool:
    """True when ``path`` is a local sentence-transformers folder this module can run."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        [m.get("type") for m in modules] == SUPPORTED_MODULES
        and config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and pooling.get("pooling_mode_mean_tokens") is True
        and not any(v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens")
        and (path / "model.safetensors").is_file()
        and (path / "tokenizer.json").is_file()
    )


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps)) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # The exact (erf) GELU that BERT's "gelu" means, not the tanh approximation.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf and scipy is an extra import; the Numerical Recipes erfc approximation
    # (|error| < 1.2e-7) is well inside float32 precision.
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))
                    )
                )
            )
        )
    )
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r).astype(x.dtype)


class NumpyBert:
    """Loads the weights once; ``encode(texts)`` returns L2-normalised mean-pooled embeddings."""

    def __init__(self, path: Path, max_seq_length: int) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.config: dict[str, Any] = json.loads((path / "config.json").read_text(encoding="utf-8"))
        raw = load_file(str(path / "model.safetensors"))
        # Some exports prefix every tensor with "bert." or "model."; strip it once.
        self.w = {k.removeprefix("bert.").removeprefix("model."): v.astype(np.float32) for k, v in raw.items()}
        # Linear weights transposed once, contiguous, so each layer is a plain (n, d) @ (d, d') product.
        for k in [k for k in self.w if k.endswith(".weight") and self.w[k].ndim == 2 and k.startswith("encoder.")]:
            self.w[k] = np.ascontiguousarray(self.w[k].T)
        self.max_seq_length = max_seq_length
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.tokenizer.no_padding()
        self.heads = int(self.config["num_attention_heads"])
        self.layers = int(self.config["num_hidden_layers"])
        self.eps = float(self.config.get("layer_norm_eps", 1e-12))

    def encode(self, texts: list[str]) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        out = np.zeros((len(texts), int(self.config["hidden_size"])), dtype=np.float32)
        # One BLAS thread: these matrices are small, and a threaded OpenBLAS spinning on a busy
        # machine is ten times slower than one thread.
        with threadpool_limits(limits=1, user_api="blas"):
            for i, text in enumerate(texts):
                ids = np.asarray(self.tokenizer.encode(text).ids, dtype=np.int64)
                out[i] = self._embed(ids)
        return out

    def _embed(self, ids: np.ndarray) -> np.ndarray:
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        d = x.shape[1]
        hd = d // self.heads
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def lin(name: str, h: np.ndarray, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

            q = lin("attention.self.query", x).reshape(n, self.heads, hd).transpose(1, 0, 2)
            k = lin("attention.self.key", x).reshape(n, self.heads, hd).transpose(1, 0, 2)
            v = lin("attention.self.value", x).reshape(n, self.heads, hd).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(1, 0, 2).reshape(n, d)
            x = _layer_norm(
                lin("attention.output.dense", ctx) + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                self.eps,
            )
            h = _gelu(lin("intermediate.dense", x))
            x = _layer_norm(
                lin("output.dense", h) + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps
            )
        pooled = x.mean(0)
        norm = float(np.linalg.norm(pooled))
        return pooled / norm if norm > 0 else pooled
