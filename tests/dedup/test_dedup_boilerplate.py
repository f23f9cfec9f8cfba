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


def test_a_narrowed_run_finds_a_new_facts_whole_boilerplate_set(corpus: Any, dedup_config: Any, in_git: Any) -> None:
    """`dedup --changed-since` grows the set from the changed fact outwards (#40: it used to compare
    every fact with every other on each commit) and reports the same set a whole run does."""
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "sentence-transformers"\n'
        "boilerplate_min_claims = 3\nlexical_threshold = 1.0\n",
    )
    topics = ("the Food Safety Law", "the Cybersecurity Law", "the Counter-Espionage Law")
    for n, (variant, topic) in enumerate(zip(VARIANTS, topics, strict=True), start=1):
        if n == 3:
            in_git("add", "-A")
            in_git("commit", "-qm", "two statutes")
        corpus.claim(
            f"c000{n}",
            title=f"Statute {n}",
            source_url=STATUTE.format(n=n),
            facts=f"\n  - id: f1\n    text: {topic} took effect on 1 June 201{n}.\n  - id: f2\n    text: {variant}",
        )
    narrowed = CliRunner().invoke(cli, ["dedup", "--changed-since", "HEAD"], catch_exceptions=False)
    whole = CliRunner().invoke(cli, ["dedup"], catch_exceptions=False)
    lines = [[line for line in r.output.splitlines() if "[dedup-boilerplate]" in line] for r in (narrowed, whole)]
    assert lines[0] == lines[1]
    assert (
        len(lines[0]) == 1
        and "by 3 claims of kind censorship from flk.npc.gov.cn: c0001/f2, c0002/f2, c0003/f2;" in lines[0][0]
    )

    # a change that reaches no boilerplate fact reports none, though the set is still in the corpus
    in_git("add", "-A")
    in_git("commit", "-qm", "third statute")
    corpus.claim("c0004", title="Other", source_url=STATUTE.format(n=4), facts="\n  - id: f1\n    text: A ferry sank.")
    r = CliRunner().invoke(cli, ["dedup", "--changed-since", "HEAD"], catch_exceptions=False)
    assert "[dedup-boilerplate]" not in r.output


def test_a_seeded_search_follows_a_chain_of_links() -> None:
    """a-b and b-c reach the threshold, a-c does not: seeded at c, the set is still {a, b, c}; a fact of
    another set is never compared (its row is never computed)."""
    import numpy as np

    from propeval.dedup import boilerplate
    from propeval.dedup.units import make_unit

    def unit(n: int, claim: str) -> Any:
        return make_unit(f"{claim}/f1", "fact", claim, f"fact {n}", f"questions/{claim}/claim.yaml", 1, 1, "", "", "")

    units = [unit(n, f"c{n}") for n in range(5)]
    x = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    y = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    z = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    mid = (x + y) / np.linalg.norm(x + y)
    vectors = np.stack([x, mid, y, z, z])  # 0-1 and 1-2 at cos 0.71, 0-2 at 0; 3-4 identical
    rows: list[int] = []
    real = boilerplate.similar

    def counted(block: Any, v: Any, threshold: float) -> Any:
        rows.append(len(block))
        return real(block, v, threshold)

    row_of = {i: i for i in range(5)}
    try:
        boilerplate.similar = counted
        seeded = boilerplate._linked_sets(units, range(5), vectors, row_of, 0.7, seeds=[2])
    finally:
        boilerplate.similar = real
    whole = boilerplate._linked_sets(units, range(5), vectors, row_of, 0.7)
    assert sorted(map(sorted, seeded)) == [[0, 1, 2]]
    assert sorted(map(sorted, whole)) == [[0, 1, 2], [3, 4]]
    assert sum(rows) == 3  # the rows of 2, then 1, then 0: never 3 or 4


def test_a_whole_run_compares_only_facts_whose_nearest_reaches_the_threshold() -> None:
    """Given each fact's nearest other-claim cosine (the neighbour search's), the sets are those of the
    full comparison, and facts whose nearest is below the threshold are never compared."""
    import numpy as np

    from propeval.dedup import boilerplate
    from propeval.dedup.units import make_unit

    rng = np.random.default_rng(7)
    n = 300
    base = rng.standard_normal((n, 16)).astype(np.float32)
    base[40:46] = base[3] + 0.05 * rng.standard_normal((6, 16)).astype(np.float32)  # a near-identical set
    base[100:103] = base[99]  # identical texts, one per claim
    base[200] = base[201] * 0.9 + base[202] * 0.1  # a chain 202 - 200 - 201
    vectors = base / np.linalg.norm(base, axis=1, keepdims=True)
    texts = [f"fact {k}" for k in range(n)]
    for k in (100, 101, 102):
        texts[k] = texts[99]
    units = [
        make_unit(f"c{k}/f1", "fact", f"c{k}", texts[k], f"questions/c{k}/claim.yaml", 1, 1, "", "", "")
        for k in range(n)
    ]
    row_of = {i: i for i in range(n)}
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)  # each fact is its own claim: every other fact is another claim's
    nearest = sims.max(axis=1)
    rows: list[int] = []
    real = boilerplate.similar

    def counted(block: Any, v: Any, threshold: float) -> Any:
        rows.append(len(block) * len(v))
        return real(block, v, threshold)

    full = boilerplate._linked_sets(units, range(n), vectors, row_of, 0.95)
    try:
        boilerplate.similar = counted
        pruned = boilerplate._linked_sets(units, range(n), vectors, row_of, 0.95, nearest=nearest)
    finally:
        boilerplate.similar = real
    assert sorted(map(sorted, pruned)) == sorted(map(sorted, full))
    assert len(full) >= 2  # the planted sets are found
    assert sum(rows) < (n - 3) ** 2 / 10  # only the few facts that can link were compared


@pytest.mark.parametrize(
    "url",
    [
        "https://www.Example.org/a/b",
        "HTTP://News.Example.ORG.",
        "https://example.org?q=1",
        "https://example.org#top",
        "https://user@example.org/",
        "https://example.org:8443/x",
        "https://[2001:db8::1]/x",
        " https://example.org/",
        "https://exa\tmple.org/",
        "ftp://files.example.org/x",
        "example.org/no-scheme",
        "https://",
        "",
        "https://www./",
    ],
)
def test_a_source_family_read_without_urlsplit_is_urlsplits(url: str) -> None:
    """The plain-host shortcut (#40: 20k facts' URLs on every commit) gives urlsplit's hostname."""
    from urllib.parse import urlsplit

    from propeval.dedup.boilerplate import source_family

    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        host = ""
    source_family.cache_clear()
    assert source_family(url) == (host.removeprefix("www.") or "(no source)")
