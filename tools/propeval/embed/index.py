"""faiss nearest neighbours by inner product (cosine on normalised vectors).

Below ``exact_below`` vectors the index is exact (``IndexFlatIP``); above it, approximate:
HNSW (``IndexHNSWFlat``, the default: no training, recall 1.000 on the benchmark) or IVF
(``IndexIVFFlat`` over sqrt(n) k-means lists, ``nprobe`` of them searched: builds faster than HNSW,
trades some recall). Both use the inner-product metric; ``benchmarks/dedup.py`` measures their
time and recall against exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from propeval.errors import DependencyError


@dataclass(frozen=True)
class IndexSettings:
    exact_below: int = 50_000
    hnsw_m: int = 32
    ef_construction: int = 80
    ef_search: int = 128
    approximate: str = "hnsw"
    ivf_nprobe: int = 16


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as e:
        raise DependencyError("faiss", "dedup") from e
    return faiss


def build(vectors: np.ndarray, settings: IndexSettings = IndexSettings()) -> Any:
    """An index over ``vectors`` (float32, L2-normalised rows)."""
    faiss = _faiss()
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    d = x.shape[1]
    if x.shape[0] < settings.exact_below:
        index = faiss.IndexFlatIP(d)
    elif settings.approximate == "ivf":
        nlist = max(1, int(math.sqrt(x.shape[0])))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = 1234  # the same lists on every run, so results repeat
        index.train(x)
        index.nprobe = min(settings.ivf_nprobe, nlist)
    else:
        index = faiss.IndexHNSWFlat(d, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.ef_construction
        index.hnsw.efSearch = settings.ef_search
    index.add(x)
    return index


def neighbours(
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    settings: IndexSettings = IndexSettings(),
    pool: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids), each (len(queries), k'), best first; id -1 where fewer than k exist.

    ``pool`` (row numbers): search ``vectors[pool]`` (ids are positions in ``pool``), without copying
    those rows out where the search is exact in numpy: a commit's few queries meet the whole
    corpus's matrix, and gathering a 20k-row pool was most of their search."""
    size = len(vectors) if pool is None else len(pool)
    if size == 0 or len(queries) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    k = min(k, size)
    if size < settings.exact_below and len(queries) <= EXACT_BY_NUMPY:
        return _exact(np.asarray(vectors, dtype=np.float32), np.asarray(queries, dtype=np.float32), k, pool)
    if pool is not None:
        vectors = vectors[pool]
    index = build(vectors, settings)
    scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    return scores, ids


# A search of this many queries or fewer, where the index would be exact anyway, is one matrix product
# in numpy: a commit's run searches a handful of new texts, and importing faiss and building a flat
# index costs more than the search. The answer is an exact search's either way: the same
# neighbours (ties broken by the lower id) and cosines equal to float32 rounding
# (tests/dedup/test_index.py compares both on the same vectors).
EXACT_BY_NUMPY = 256


def _exact(
    vectors: np.ndarray, queries: np.ndarray, k: int, pool: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest inner products of each query with ``vectors`` (or its rows ``pool``):
    (scores, ids), best first, equal scores by the lower id."""
    sims = queries @ vectors.T
    if pool is not None:
        sims = sims[:, pool]
    n = sims.shape[1]
    kth = np.partition(sims, n - k, axis=1)[:, n - k]  # each row's k-th highest
    scores = np.empty((len(queries), k), dtype=np.float32)
    ids = np.empty((len(queries), k), dtype=np.int64)
    for r in range(len(queries)):
        cand = np.nonzero(sims[r] >= kth[r])[0]  # every tie at the k-th place too, ids ascending
        best = cand[np.lexsort((cand, -sims[r, cand]))[:k]]
        ids[r] = best
        scores[r] = sims[r, best]
    return scores, ids
