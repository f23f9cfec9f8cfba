"""The optional ledger inputs of a release, read defensively.

``ledger/difficulty.json`` gives the bands, the dedup report its passes and pairs, and
``ledger/judge/*.json`` the judge gates' agreement. Each is written by another command; a file
that cannot be understood here becomes a warning or an empty summary, never a crash.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.corpus import Corpus
from propeval.difficulty.bands import BANDS
from propeval.result import Problem, Severity

# Numbers worth showing from a judge-gate record, wherever they sit in it.
_AGREEMENT_KEYS = (
    "kappa",
    "cohen_kappa",
    "weighted_kappa",
    "alpha",
    "krippendorff_alpha",
    "f1",
    "positive_f1",
    "macro_f1",
    "accuracy",
    "agreement",
    "percent_agreement",
)


@dataclass
class DedupReport:
    path: str
    passes: list[dict[str, Any]]
    similarities: list[float]
    thresholds: dict[str, float]


@dataclass
class JudgeRecord:
    rubric: str
    path: str
    status: str | None
    n: int | None
    metrics: dict[str, float]
    # name -> (labels, matrix); rows are the human labels, columns the judge's
    confusions: dict[str, tuple[list[str], list[list[int]]]]


def _warn(path: str, message: str) -> Problem:
    return Problem(path, 0, 0, "release-input", message, severity=Severity.WARNING)


def read_bands(
    corpus: Corpus, data: dict[str, Any] | None, rel: str, warnings: list[Problem]
) -> tuple[dict[str, str | None], int]:
    """Each corpus item's band (None when unknown or stale), and the number of stale entries."""
    bands: dict[str, str | None] = {i: None for i in corpus.items}
    if data is None:
        return bands, 0
    entries = data.get("items")
    if not isinstance(entries, dict):
        warnings.append(_warn(rel, "has no 'items' mapping of item id -> {band, item_hash}; bands left empty"))
        return bands, 0
    stale = 0
    for item_id, entry in entries.items():
        item = corpus.items.get(item_id)
        if item is None or not isinstance(entry, dict):
            continue
        band = entry.get("band")
        if band not in BANDS:
            continue
        if entry.get("item_hash") != item.hash:
            stale += 1  # the item changed since its difficulty was measured
            continue
        bands[item_id] = band
    return bands, stale


def _floats(values: Any) -> list[float]:
    out = []
    for v in values if isinstance(values, list) else []:
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            out.append(float(v))
        elif isinstance(v, dict):
            for key in ("similarity", "score", "cosine", "sim"):
                x = v.get(key)
                if isinstance(x, (int, float)) and not isinstance(x, bool):
                    out.append(float(x))
                    break
    return out


def read_dedup(data: dict[str, Any] | None, rel: str) -> DedupReport | None:
    """The passes, pair similarities and thresholds of a dedup report, whatever of them it has."""
    if data is None:
        return None
    passes = (
        [p for p in data.get("passes") or [] if isinstance(p, dict)] if isinstance(data.get("passes"), list) else []
    )
    similarities = _floats(data.get("similarities")) or _floats(data.get("pairs"))
    thresholds: dict[str, float] = {}
    raw = data.get("thresholds")
    if isinstance(raw, dict):
        thresholds = {
            str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
    elif isinstance(data.get("threshold"), (int, float)):
        thresholds = {"threshold": float(data["threshold"])}
    for i, p in enumerate(passes, start=1):
        t = p.get("threshold")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            thresholds.setdefault(str(p.get("name") or p.get("pass") or f"pass {i}"), float(t))
    return DedupReport(rel, passes, similarities, thresholds)


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    if isinstance(node, dict):
        for k in sorted(node):
            yield path, str(k), node[k]
            yield from _walk(node[k], f"{path}.{k}" if path else str(k))


def _confusion(value: Any) -> tuple[list[str], list[list[int]]] | None:
    if isinstance(value, dict) and isinstance(value.get("labels"), list) and isinstance(value.get("matrix"), list):
        labels = [str(x) for x in value["labels"]]
        rows = value["matrix"]
        if len(rows) == len(labels) and all(
            isinstance(r, list) and len(r) == len(labels) and all(isinstance(c, int) for c in r) for r in rows
        ):
            return labels, [list(r) for r in rows]
        return None
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        labels = sorted({str(k) for k in value} | {str(k) for v in value.values() for k in v})
        try:
            matrix = [[int(value.get(h, {}).get(j, 0)) for j in labels] for h in labels]
        except (TypeError, ValueError):
            return None
        return labels, matrix
    return None


def read_judge(path: Path, rel: str, data: dict[str, Any]) -> JudgeRecord:
    """The agreement numbers and confusion matrices of a judge-gate record, wherever they sit in it."""
    metrics: dict[str, float] = {}
    confusions: dict[str, tuple[list[str], list[list[int]]]] = {}
    for parent, key, value in _walk(data):
        name = f"{parent}.{key}" if parent else key
        if key.lower() in _AGREEMENT_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[name] = float(value)
        elif "confusion" in key.lower():
            found = _confusion(value)
            if found is not None:
                confusions[parent or path.stem] = found
    status = data.get("status")
    if status is None and isinstance(data.get("passed"), bool):
        status = "passed" if data["passed"] else "failed"
    n = data.get("n") if isinstance(data.get("n"), int) else None
    rubric = data.get("rubric") if isinstance(data.get("rubric"), str) else path.stem
    return JudgeRecord(str(rubric), rel, str(status) if status is not None else None, n, metrics, confusions)
