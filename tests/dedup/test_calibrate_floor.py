"""Choosing the precision floor of ``dedup calibrate`` by cross-validation on the calibration split
(:func:`propeval.dedup.calibrate_corpus.cross_validate_floor`), on candidates whose scores are set by hand."""

from __future__ import annotations

from propeval.dedup.calibrate_corpus import FLOORS, Candidate, cross_validate_floor


def _pair(key: str, positives: list[float], negatives: list[float]) -> list[Candidate]:
    out = [Candidate(key, s, False, False, 1, "c", "calibration", group=f"{key}:p{n}") for n, s in enumerate(positives)]
    out += [
        Candidate(key, s, False, False, 0, "c", "calibration", group=f"{key}:n{n}") for n, s in enumerate(negatives)
    ]
    return out


def test_the_floor_that_meets_the_targets_in_the_most_pairs_wins_then_the_higher() -> None:
    # en-ru: 100 duplicates spread over [0.30, 0.80), 100 non-duplicates over [0.00, 0.40): the higher the
    # floor, the fewer duplicates its threshold keeps (cross-validated recall 0.98 at 0.80, 0.87 at 0.90,
    # 0.83 at 0.925); de-en separates cleanly (every floor meets the targets)
    en_ru = _pair("en-ru", [0.30 + 0.005 * n for n in range(100)], [0.004 * n for n in range(100)])
    de_en = _pair("de-en", [0.50 + 0.004 * n for n in range(100)], [0.003 * n for n in range(100)])
    weak = _pair("de-uk", [0.9] * 10, [0.1] * 10)  # fewer than 50 duplicates: no vote
    by_pair = {"en-ru": en_ru, "de-en": de_en, "de-uk": weak}
    chosen, rows = cross_validate_floor(by_pair, "recall")
    assert [r.min_precision for r in rows] == list(FLOORS)
    assert all(set(r.recall) == {"en-ru", "de-en"} for r in rows)
    met = {r.min_precision: r.met for r in rows}
    assert met == {0.8: 2, 0.825: 2, 0.85: 2, 0.875: 2, 0.9: 2, 0.925: 1, 0.95: 1}
    assert chosen == 0.9  # of the floors that meet both targets in both pairs, the highest
    at = {r.min_precision: r for r in rows}
    assert at[0.8].recall["en-ru"] > at[0.9].recall["en-ru"] >= 0.85 > at[0.925].recall["en-ru"]
