"""Corpus-level calibration data for Spanish, Catalan, Basque and Galician (es, ca, eu, gl), beside
tests/dedup/data/corpus/corpus.jsonl (which has none of them), in its format:

    python benchmarks/dedup_corpus_es.py --data ../shared/data   # tests/dedup/data/corpus/corpus-es-ca-eu-gl.jsonl
    propeval dedup calibrate tests/dedup/data/corpus/corpus-es-ca-eu-gl.jsonl

Built from the same sources, units and split as benchmarks/dedup_corpus.py (its ``load_sources``,
``split_of`` and relabelled pairs), so no unit is calibration in one file and held out in the other:

* ``translations-es``: TruthfulQA questions, each in one to five of en, es, ca, eu, gl (professional
  translations: one meaning), and STS-B sentence 1 rows in en and es (DeepL) with the hard negatives
  of their row (sentence 2 scored <= 2.0) and rewordings (>= 4.5) in es. Recall and precision for
  en-es, en-ca, en-eu, en-gl, es-ca, es-eu, es-gl, ca-eu, ca-gl, eu-gl.
* ``templated-<lang>`` for es, ca, eu, gl: the TruthfulQA questions in that language, all distinct
  and full of minimal pairs ("banned in France / in Canada"): false flags per 100 distinct items;
  for es also STS-B rewordings and minimal pairs in es.
* ``no-translation-en-<lang>``: distinct meanings in English and in that language, none planted.

It writes data only: the shipped thresholds are not changed by it.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from dedup_corpus import (
    ROOT,
    SEED,
    Corpus,
    Text,
    corpus_rows,
    load_sources,
    mark_reviewed,
    read_relabelled,
    split_of,
)

OUT = ROOT / "tests" / "dedup" / "data" / "corpus" / "corpus-es-ca-eu-gl.jsonl"
IBERIAN = ("es", "ca", "eu", "gl")


def build(texts: list[Text], split: str) -> list[Corpus]:
    rng = random.Random(f"{SEED}:es:{split}")
    mine = [t for t in texts if split_of(t.unit, SEED) == split]
    tqa = {(t.unit, t.lang): t for t in mine if t.source == "truthfulqa"}
    questions = sorted({t.unit for t in mine if t.source == "truthfulqa"})
    stsb1 = {t.unit: t for t in mine if t.source == "stsb" and t.role == "sentence1" and t.lang in ("en", "es")}
    s1 = {(t.unit, t.lang): t for t in mine if t.source == "stsb" and t.role == "sentence1"}
    s2 = {(t.unit, t.lang): t for t in mine if t.source == "stsb" and t.role != "sentence1"}
    rows = sorted({u for u in stsb1})
    corpora: list[Corpus] = []

    tr = Corpus("translations-es", split, purpose="recall and precision per language pair")
    langs = ("en", *IBERIAN)
    for n, unit in enumerate(questions):
        k = 1 + n % 5  # in one to five languages, as many of each
        for lang in rng.sample(langs, k):
            if (unit, lang) in tqa:
                tr.texts.append(tqa[(unit, lang)])
    rng.shuffle(rows)
    for n, unit in enumerate(rows[:240]):
        for lang in rng.sample(("en", "es"), 1 + n % 2):
            tr.texts.append(s1[(unit, lang)])
        second = s2[(unit, "es")]
        if second.role == "minimal-pair" or (second.role == "rewording" and n % 2 == 0):
            tr.texts.append(second)
    corpora.append(tr)

    for lang in IBERIAN:
        c = Corpus(f"templated-{lang}", split, purpose="false flags per 100 distinct texts; rewordings found")
        c.texts.extend(tqa[(u, lang)] for u in questions if (u, lang) in tqa)
        if lang == "es":
            for unit in sorted({u for u, _ in s2}):
                second = s2.get((unit, "es"))
                if second is not None and second.role in ("rewording", "minimal-pair"):
                    c.texts.extend([s1[(unit, "es")], second])
        corpora.append(c)

    for lang in IBERIAN:
        c = Corpus(f"no-translation-en-{lang}", split, purpose="flags where no duplicate was planted")
        pool = list(questions)
        rng.shuffle(pool)
        half = len(pool) // 2
        c.texts.extend(tqa[(u, "en")] for u in pool[:half] if (u, "en") in tqa)
        c.texts.extend(tqa[(u, lang)] for u in pool[half:] if (u, lang) in tqa)
        if lang == "es":  # and STS-B rows, one language each
            rest = rows[240:]
            c.texts.extend(s1[(u, "en")] for u in rest[: len(rest) // 2])
            c.texts.extend(s1[(u, "es")] for u in rest[len(rest) // 2 :])
        corpora.append(c)
    return corpora


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data folder (stsb-multi-mt/, ...)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    texts = load_sources(args.data, ROOT / "questions")
    corpora = [c for split in ("calibration", "heldout") for c in build(texts, split)]
    mark_reviewed(corpora, read_relabelled())
    rows = corpus_rows(corpora)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {args.out}: {len(rows)} texts, {len(corpora)} corpora")


if __name__ == "__main__":
    main()
