"""``sentence-transformers``: the bundled all-MiniLM-L6-v2 (English only), or any sentence-transformers model,
run through onnxruntime or torch."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.embed.protocol import Encoder
from propeval.embed.registry import Thresholds

if TYPE_CHECKING:
    from propeval.settings import DedupSettings

NAME = "sentence-transformers"
DESCRIPTION = "the bundled MiniLM compares English only"
OPTIONS = ("model", "max_seq_length", "batch_size", "runtime", "onnx_dir", "cache_dir")
RUNTIMES = ("auto", "onnx", "torch")
DISPLAY = "all-MiniLM-L6-v2"
EXTRA = "dedup"
NEEDS: tuple[str, ...] = ()
KNOWN: frozenset[str] | None = None  # the languages its model was trained on (None: not recorded)
SECOND = ""  # no second model
MARGIN_PRIOR = (0.438, 0.438)
# Cosine: tests/dedup/data/labelled-pairs.tsv (F1 1.000 from 0.78; 0.80 keeps a margin); facts above the
# closest distinct facts of the starter corpus (0.814). Margin: en-en calibrated, the rest conservative.
THRESHOLDS: Mapping[str, Thresholds] = {
    "sentence-transformers-cosine": Thresholds((0.80, 0.80, 0.90)),
    "sentence-transformers-margin": Thresholds(
        (0.52, 0.52, 0.55),
        {"en-en": 0.5025},
        "sentence-transformers-margin (the bundled all-MiniLM-L6-v2) en-en at corpus level: propeval dedup calibrate "
        "on the English texts of tests/dedup/data/corpus/corpus.jsonl (round 1: its corpus file before the "
        "borderline labels; best F1 at precision >= 0.90, `--objective f1 --min-precision 0.9`, calibration split), "
        "2026-12-01",
    ),
}


def languages(model: str) -> tuple[str, ...]:
    # The bundled all-MiniLM-L6-v2 is English-only: its cosines between Russian or Chinese texts are
    # noise. A multilingual model compares every language.
    from propeval.embed.models import BUNDLED

    return ("en",) if model in BUNDLED else ()


def encoder(model: str, **options: Any) -> Encoder:
    from propeval.embed.models import load_sentence_transformer

    return load_sentence_transformer(model, **options)


def second_model(settings: DedupSettings) -> str:
    return ""


def second_encoder(settings: DedupSettings, root: Path, announce: Any = None) -> Encoder | None:
    return None


def arrange_second(space: Any, settings: DedupSettings) -> None:
    return None


def lender(settings: DedupSettings, lang_a: str, lang_b: str) -> str:
    return ""


def encoder_name(settings: DedupSettings) -> str:
    return f"{NAME} {settings.model}"
