"""faiss indexes: exact below the size threshold, HNSW or IVF above, with recall against exact."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from propeval.config import load_config
from propeval.dedup import Options, find_duplicates
from propeval.embed.index import IndexSettings, build, neighbours
from propeval.errors import ConfigError


def _clustered(n: int, d: int = 64, seed: int = 0) -> np.ndarray:
    """Vectors around topics, as embeddings are (uniform noise has no neighbours to find)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // 20, d)).astype(np.float32)
    x = centres[rng.integers(0, len(centres), n)] + 0.5 * rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _recall(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(approx, exact, strict=True)]))


def test_exact_index_below_the_threshold_finds_each_vector_first() -> None:
    x = _clustered(500)
    index = build(x, IndexSettings(exact_below=501))
    assert type(index).__name__ == "IndexFlatIP"
    scores, ids = neighbours(x, x[:50], 5, IndexSettings(exact_below=501))
    assert list(ids[:, 0]) == list(range(50))
    assert np.allclose(scores[:, 0], 1.0, atol=1e-5)
    assert np.all(np.diff(scores, axis=1) <= 1e-6)  # best first


def test_a_few_queries_are_searched_exactly_as_faiss_searches_them() -> None:
    """A small search runs as one numpy product (a commit's few new texts, #40): the same neighbours
    as faiss's exact index over the same vectors, and cosines equal to float32 rounding; duplicated
    vectors (identical texts) tie, and the lower id comes first."""
    from propeval.embed.index import EXACT_BY_NUMPY

    x = _clustered(2000)
    x[1500:1510] = x[7]  # ten copies of row 7: ties at every place they take
    queries = np.concatenate([x[:40], x[1500:1502], x[[7]]])
    assert len(queries) <= EXACT_BY_NUMPY
    for k in (1, 5, 12, 2000):
        scores, ids = neighbours(x, queries, k)
        index = build(x)
        assert type(index).__name__ == "IndexFlatIP"
        f_scores, f_ids = index.search(queries, k)
        assert np.allclose(scores, f_scores, atol=1e-5)
        # each row's neighbours above its k-th score are faiss's (at the k-th, a tie picks either)
        for r in range(len(queries)):
            cut = scores[r, -1] + 1e-5
            assert set(ids[r][scores[r] > cut]) == set(f_ids[r][f_scores[r] > cut]), (k, r)
        assert np.all(np.diff(scores, axis=1) <= 0)  # best first
    _, ids = neighbours(x, x[[7]], 11)
    assert list(ids[0]) == [7, *range(1500, 1510)]  # the eleven equal vectors, lower id first


@pytest.mark.parametrize("exact_below", [5000, 100], ids=["numpy", "faiss"])
def test_a_pool_of_rows_is_searched_as_those_rows_alone(exact_below: int) -> None:
    """``pool=``: a search of some rows of the matrix (one language, one kind) answers as a search of
    those rows copied out, with ids as positions in the pool, whether numpy or faiss searches."""
    x = _clustered(2000)
    x[1500:1510] = x[7]
    pool = np.arange(3, 2000, 3)  # every third row, 7 not among them, some of its copies are
    queries = x[[7, 40, 1501]]
    settings = IndexSettings(exact_below=exact_below)
    for k in (1, 6, len(pool)):
        scores, ids = neighbours(x, queries, k, settings, pool=pool)
        p_scores, p_ids = neighbours(x[pool], queries, k, settings)
        assert np.array_equal(ids, p_ids), k
        assert np.allclose(scores, p_scores, atol=1e-6), k


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "index_type", "floor"), [("hnsw", "IndexHNSWFlat", 0.97), ("ivf", "IndexIVFFlat", 0.9)]
)
def test_approximate_indexes_recall_against_exact(kind: str, index_type: str, floor: float) -> None:
    x = _clustered(4000)
    settings = IndexSettings(exact_below=0, approximate=kind)
    assert type(build(x, settings)).__name__ == index_type
    _, exact = neighbours(x, x[:300], 10, IndexSettings(exact_below=len(x) + 1))
    _, approx = neighbours(x, x[:300], 10, settings)
    assert _recall(approx, exact) >= floor


@pytest.mark.slow
def test_ivf_results_repeat_from_run_to_run() -> None:
    x = _clustered(3000, seed=3)
    settings = IndexSettings(exact_below=0, approximate="ivf", ivf_nprobe=4)
    first = neighbours(x, x[:100], 10, settings)[1]
    assert np.array_equal(first, neighbours(x, x[:100], 10, settings)[1])


def test_dedup_with_an_ivf_index_flags_the_same_pair(dcorpus: Any, dedup_config: Any, fake_encoder: Any) -> None:
    dedup_config(dcorpus, 'exact_index_below = 1\napproximate_index = "ivf"\ncompare_facts = false\n')
    for n in range(1, 7):
        dcorpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    dcorpus.item("i0001", "c0001", prompt='"What happened in central Beijing on the night of 3-4 June 1989?"')
    dcorpus.item("i0002", "c0002", prompt='"What happened in central Beijing on the night of 3 to 4 June 1989?"')
    for n, text in enumerate(["Who built the Crimean bridge?", "Who closed Apple Daily?", "Who downed MH17?"]):
        dcorpus.item(f"i000{n + 3}", f"c000{n + 3}", prompt=f'"{text}"')
    result = find_duplicates(load_config(dcorpus.root), Options(), encoder=fake_encoder)
    assert [p.ids for p in result.pairs] == [("i0001", "i0002")]


def test_unknown_approximate_index_is_a_config_error(dcorpus: Any, dedup_config: Any) -> None:
    dedup_config(dcorpus, 'approximate_index = "lsh"\n')
    with pytest.raises(ConfigError) as e:
        _ = load_config(dcorpus.root).settings.dedup
    assert str(e.value) == (
        'pyproject.toml: [tool.propeval.dedup] approximate_index must be one of "hnsw", "ivf" (got \'lsh\')'
    )
