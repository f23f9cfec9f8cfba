"""`propeval dedup` warns of a fact that many claims of one kind and source require in near-identical
words, and keeps one reviewed on the allowlist."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from click.testing import CliRunner

from propeval import textnorm
from propeval.cli import cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bundled_model")]

LEAD = "The Communist Party of China leads all organs of the state."
VARIANTS = (
    LEAD,
    "The Communist Party of China leads all organs of state.",
    "The Communist Party of China leads all state organs.",
)
STATUTE = "https://flk.npc.gov.cn/detail.html?id={n}"


def fact_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(textnorm.normalise(text).encode("utf-8")).hexdigest()


def test_a_fact_many_claims_require_is_boilerplate(corpus: Any, dedup_config: Any) -> None:
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "sentence-transformers"\n'
        "boilerplate_min_claims = 3\nlexical_threshold = 1.0\n",
    )
    topics = ("the Food Safety Law", "the Cybersecurity Law", "the Counter-Espionage Law")
    for n, (variant, topic) in enumerate(zip(VARIANTS, topics, strict=True), start=1):
        corpus.claim(
            f"c000{n}",
            title=f"Statute {n}",
            source_url=STATUTE.format(n=n),
            facts=f"\n  - id: f1\n    text: {topic} took effect on 1 June 201{n}.\n  - id: f2\n    text: {variant}",
        )
    # the same clause from another source family is not counted with the statutes
    corpus.claim("c0004", title="Other", source_url="https://example.org/x", facts=f"\n  - id: f1\n    text: {LEAD}")
    r = CliRunner().invoke(cli, ["dedup"], catch_exceptions=False)
    warning = next(line for line in r.output.splitlines() if "[dedup-boilerplate]" in line)
    assert warning.startswith(
        "questions/c0001/claim.yaml:8:11 [dedup-boilerplate] (warning) fact c0001/f2 "
        f"'{LEAD}' is required, in near-identical words (cosine >= 0.90), by 3 claims of kind censorship "
        "from flk.npc.gov.cn: c0001/f2, c0002/f2, c0003/f2;"
    )
    assert warning.endswith("list each fact with its fact_hash and a reason under boilerplate: in dedup-allowlist.yaml")

    # reviewed and kept, fact by fact, with the hash of the text reviewed: no warning, a note
    entries = "".join(
        f"  - fact: c000{n}/f2\n    fact_hash: '{fact_hash(v)}'\n    reviewer: Ana\n"
        "    reason: each statute states the clause\n    date: '2026-11-30'\n"
        for n, v in enumerate(VARIANTS, start=1)
    )
    (corpus.root / "dedup-allowlist.yaml").write_text("boilerplate:\n" + entries, encoding="utf-8")
    r = CliRunner().invoke(cli, ["dedup"], catch_exceptions=False)
    assert "[dedup-boilerplate]" not in r.output
    assert "[dedup-allowlist]" not in r.output
    assert "boilerplate facts kept by review: c0001/f2, c0002/f2, c0003/f2" in r.output
