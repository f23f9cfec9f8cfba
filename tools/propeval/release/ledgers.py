"""The optional ledger inputs of a release, read defensively.

``ledger/difficulty.json`` gives the bands. It is written by another command; a file that
cannot be understood here becomes a warning or an empty summary, never a crash. The dedup record
is read by :mod:`propeval.dedup.record`, the judge and answerability records by
:mod:`propeval.release.evidence`.
"""

from __future__ import annotations

from typing import Any

from propeval.corpus import Corpus
from propeval.difficulty.bands import BANDS
from propeval.result import Problem, Severity


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
