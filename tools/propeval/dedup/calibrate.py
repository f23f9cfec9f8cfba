"""``propeval dedup calibrate``: precision, recall and F1 per threshold, for each pass, on labelled pairs.

Input is TSV with a header ``a<TAB>b<TAB>label`` or JSON Lines ``{"a": ..., "b": ..., "label": 1}``;
label 1 (or true) marks a duplicate (a paraphrase), 0 (or false) a related but different question.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propeval import textnorm
from propeval.errors import UsageError
from propeval.loader import LoadError, load_jsonl

GRID = tuple(round(0.50 + 0.01 * n, 2) for n in range(50))  # 0.50 .. 0.99


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


@dataclass
class Calibration:
    pairs: int
    positives: int
    passes: list[PassCalibration] = field(default_factory=list)


def _label(value: Any, where: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip().lower() in {"0", "1", "true", "false"}:
        return int(value.strip().lower() in {"1", "true"})
    raise UsageError(f"{where}: label must be 1/0 or true/false, not {value!r}")


def read_pairs(path: Path) -> list[tuple[str, str, int]]:
    """(a, b, label) rows from a TSV or JSONL file."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give a TSV (a, b, label) or JSONL file of labelled pairs")
    out: list[tuple[str, str, int]] = []
    if path.suffix.lower() in {".jsonl", ".json"}:
        try:
            for line, obj in load_jsonl(path):
                where = f"{path}:{line}"
                a, b = obj.get("a"), obj.get("b")
                if not isinstance(a, str) or not isinstance(b, str) or not a.strip() or not b.strip():
                    raise UsageError(f"{where}: each line needs non-empty strings 'a' and 'b'")
                out.append((a, b, _label(obj.get("label"), where)))
        except LoadError as e:
            raise UsageError(str(e)) from e
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"{path}: cannot read it as UTF-8 text: {e}") from e
        reader = csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or [h.strip().lower() for h in header[:3]] != ["a", "b", "label"]:
            raise UsageError(f"{path}:1: the first line must be the header a<TAB>b<TAB>label")
        for n, row in enumerate(reader, start=2):
            if not row or not any(c.strip() for c in row):
                continue
            if len(row) != 3 or not row[0].strip() or not row[1].strip():
                raise UsageError(f"{path}:{n}: expected 3 tab-separated columns (a, b, label), found {len(row)}")
            out.append((row[0], row[1], _label(row[2], f"{path}:{n}")))
    if not out:
        raise UsageError(f"{path}: no labelled pairs in it")
    labels = {r[2] for r in out}
    if labels != {0, 1}:
        raise UsageError(f"{path}: needs both positive (1) and negative (0) pairs to calibrate")
    return out


def _sweep(name: str, scores: np.ndarray, labels: np.ndarray, current: float | None) -> PassCalibration:
    from sklearn.metrics import precision_recall_fscore_support

    rows = []
    for t in GRID:
        pred = (scores >= t - 1e-9).astype(int)
        p, r, f, _ = precision_recall_fscore_support(labels, pred, average="binary", zero_division=0)
        rows.append(Row(t, float(p), float(r), float(f), int(pred.sum())))
    # Best F1; among ties, the higher threshold (fewer false alarms for the same F1).
    best = max(rows, key=lambda row: (round(row.f1, 6), round(row.precision, 6), row.threshold))
    return PassCalibration(name, rows, best, current)


def calibrate(path: Path, settings: Any, encoder: Any, *, cross_lingual: bool = False) -> Calibration:
    """Score every labelled pair with the lexical and semantic passes and sweep the thresholds.

    ``cross_lingual``: the pairs are in two languages; only the semantic pass applies, and its
    threshold is ``cross_lingual_threshold``.
    """
    from rapidfuzz import fuzz

    pairs = read_pairs(path)
    labels = np.array([p[2] for p in pairs])
    a_norm = [textnorm.normalise(p[0]) for p in pairs]
    b_norm = [textnorm.normalise(p[1]) for p in pairs]
    result = Calibration(pairs=len(pairs), positives=int(labels.sum()))
    if cross_lingual:
        va, vb = encoder.encode(a_norm), encoder.encode(b_norm)
        semantic = np.sum(np.asarray(va) * np.asarray(vb), axis=1)
        result.passes.append(_sweep("cross_lingual", semantic, labels, settings.semantic_limit(False)))
        return result
    exact = np.array([float(x == y) for x, y in zip(a_norm, b_norm, strict=True)])
    result.passes.append(_sweep("exact", exact, labels, None))
    lexical = np.array([fuzz.token_sort_ratio(x, y) / 100.0 for x, y in zip(a_norm, b_norm, strict=True)])
    result.passes.append(_sweep("lexical", lexical, labels, settings.lexical_threshold))
    va = encoder.encode(a_norm)
    vb = encoder.encode(b_norm)
    semantic = np.sum(np.asarray(va) * np.asarray(vb), axis=1)
    result.passes.append(_sweep("semantic", semantic, labels, settings.semantic_limit(True)))
    return result
