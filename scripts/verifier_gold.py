"""Write rubrics/same-question-v1/gold.jsonl: labelled pairs of prompts for the dedup verifier's
judge gate, from the public data in the shared data folder (its README.md gives the licences).

    python scripts/verifier_gold.py --data ../shared/data            # rewrite the gold set
    python scripts/verifier_gold.py --data ../shared/data --check    # exit 1 when it differs

Each case is one pair (``question``: prompt A, ``answer``: prompt B, as the judge engine fences
them), its languages, a human ``label`` (``judgement`` same / different, and its ``rationale``), its
``tags`` (the kind of hard case), its ``source`` and its ``split``. The label follows from how the
source was made by people, never from a model:

* same, translation: one Tatoeba line and its English; one STS-B sentence in English and in a
  DeepL translation; one TruthfulQA question and its professional translation (es, ca, eu, gl).
  Pairs that carry a number or a date are taken first (the veto's hard positives).
* same, rewording: STS-B pairs that people rated 4.8 or more of 5 ("the same meaning"), in
  English and in a translation.
* different, template collision: two distinct TruthfulQA questions whose wording is nearly the
  same (rapidfuzz ratio >= 75), e.g. "banned in France" / "banned in Canada".
* different, same topic: two distinct TruthfulQA questions of one category, within one language
  and across two.
* different, numbers and dates: STS-B pairs rated 2.0 or less whose numbers differ, the most alike
  wording first ("3 dead, 4 missing in central China..." / "One dead, 8 missing in Vietnam...").
* different, minimal pair: STS-B pairs rated 0.6 or less that share most words ("A woman is
  cutting onions." / "A woman is cutting tofu.").

``split`` is the dedup corpus benchmark's split of the source unit (benchmarks/dedup_corpus.py:
``calibration`` or ``heldout``): revise the rubric's prompt by reading the calibration cases only;
the held-out cases say whether a revision generalises. The judge gate measures every case.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from dedup_corpus import split_of  # noqa: E402

OUT = REPO / "rubrics" / "same-question-v1" / "gold.jsonl"
SEED = "same-question-v1"
TATOEBA = {"ukr": "uk", "rus": "ru", "cmn": "zh"}
STSB_LANGS = ("de", "es", "ru", "zh")
TQA_LANGS = ("es", "ca", "eu", "gl")
# How many cases of each kind (same: 90, different: 90).
QUOTA = {
    ("same", "translation"): 55,
    ("same", "rewording"): 35,
    ("different", "template-collision"): 30,
    ("different", "same-topic"): 25,
    ("different", "numbers-dates"): 20,
    ("different", "minimal-pair"): 15,
}
_DIGITS = re.compile(r"\d+")


def _numbers(text: str) -> set[str]:
    return set(_DIGITS.findall(text))


def _stsb(data: Path) -> dict[str, list[list[str]]]:
    out = {}
    for lang in ("en", *STSB_LANGS):
        with (data / "stsb-multi-mt" / f"stsb-{lang}-test.csv").open(encoding="utf-8", newline="") as f:
            out[lang] = list(csv.reader(f))
    return out


def _tqa(data: Path) -> dict[str, dict[str, dict[str, str]]]:
    out = {}
    for lang in ("en", *TQA_LANGS):
        rows = json.loads((data / "truthfulqa-multi-dev" / f"{lang}_validation_even.json").read_text(encoding="utf-8"))
        out[lang] = {str(r["id"]): r for r in rows}
    return out


def _case(kind: tuple[str, str], a: str, la: str, b: str, lb: str, source: str, unit: str, reason: str) -> dict:
    verdict, tag = kind
    return {
        "question": a,
        "answer": b,
        "language": la if la == lb else f"{la}/{lb}",
        "label": {"judgement": verdict, "rationale": reason},
        "tags": [tag, "cross-language" if la != lb else "one-language"],
        "source": source,
        "split": split_of(unit),
    }


def translations(data: Path, rng: random.Random) -> Iterator[dict]:
    kind = ("same", "translation")
    pool = []
    for code, lang in TATOEBA.items():
        theirs = (data / "tatoeba-dev" / f"tatoeba.{code}-eng.{code}").read_text(encoding="utf-8").splitlines()
        eng = (data / "tatoeba-dev" / f"tatoeba.{code}-eng.eng").read_text(encoding="utf-8").splitlines()
        for i, (t, e) in enumerate(zip(theirs, eng, strict=True)):
            pool.append((e, "en", t, lang, f"Tatoeba {code}-eng line {i + 1}", f"tatoeba:{code}:{i}"))
    stsb = _stsb(data)
    for i, row in enumerate(stsb["en"]):
        lang = STSB_LANGS[i % len(STSB_LANGS)]
        pool.append(
            (row[0], "en", stsb[lang][i][0], lang, f"STS-B test row {i + 1} sentence 1, en/{lang}", f"stsb:{i}")
        )
    tqa = _tqa(data)
    for n, (qid, row) in enumerate(sorted(tqa["en"].items(), key=lambda kv: int(kv[0]))):
        lang = TQA_LANGS[n % len(TQA_LANGS)]
        if qid in tqa[lang]:
            pool.append(
                (
                    row["question"],
                    "en",
                    tqa[lang][qid]["question"],
                    lang,
                    f"TruthfulQA id {qid}, en/{lang}",
                    f"tqa:{qid}",
                )
            )
    rng.shuffle(pool)
    # numbers first (a date or count written another way is the veto's hard case), then by source
    pool.sort(key=lambda p: not (_numbers(p[0]) and _numbers(p[0]) <= _numbers(p[2]) | {"0"}))
    taken: dict[str, int] = {}
    for a, la, b, lb, source, unit in pool:
        src = source.split()[0]
        if taken.get(src, 0) >= 20 or len(a) < 12:
            continue
        taken[src] = taken.get(src, 0) + 1
        yield _case(kind, a, la, b, lb, source, unit, f"B translates A ({lb}); the same question")


def rewordings(data: Path, rng: random.Random) -> Iterator[dict]:
    kind = ("same", "rewording")
    stsb = _stsb(data)
    rows = [i for i, r in enumerate(stsb["en"]) if float(r[2]) >= 4.8 and r[0].strip() != r[1].strip()]
    rng.shuffle(rows)
    for n, i in enumerate(rows):
        lang = "en" if n % 3 else STSB_LANGS[(n // 3) % len(STSB_LANGS)]
        a, b = stsb[lang][i][0], stsb[lang][i][1]
        if a.strip() == b.strip():
            continue
        yield _case(
            kind,
            a,
            lang,
            b,
            lang,
            f"STS-B test row {i + 1}, {lang}, rated {stsb['en'][i][2]}",
            f"stsb:{i}",
            "B rewords A; the same meaning",
        )


def template_collisions(data: Path, rng: random.Random) -> Iterator[dict]:
    from rapidfuzz import fuzz

    kind = ("different", "template-collision")
    tqa = _tqa(data)["en"]
    ids = sorted(tqa, key=int)
    pairs = []
    for x, y in combinations(ids, 2):
        a, b = tqa[x]["question"], tqa[y]["question"]
        score = fuzz.ratio(a.casefold(), b.casefold())
        if score >= 75:
            pairs.append((score, x, y))
    pairs.sort(reverse=True)
    for _, x, y in pairs:
        a, b = tqa[x]["question"], tqa[y]["question"]
        yield _case(
            kind,
            a,
            "en",
            b,
            "en",
            f"TruthfulQA ids {x} and {y}",
            f"tqa:{x}",
            "one template, two questions: the words that differ change what is asked",
        )


def same_topic(data: Path, rng: random.Random) -> Iterator[dict]:
    kind = ("different", "same-topic")
    tqa = _tqa(data)
    by_cat: dict[str, list[str]] = {}
    for qid, row in tqa["en"].items():
        by_cat.setdefault(row["category"], []).append(qid)
    cats = sorted(c for c, ids in by_cat.items() if len(ids) >= 2)
    rng.shuffle(cats)
    for n, cat in enumerate(cats * 3):
        ids = sorted(by_cat[cat], key=int)
        x, y = rng.sample(ids, 2)
        lb = "en" if n % 2 else TQA_LANGS[n % len(TQA_LANGS)]
        if y not in tqa[lb]:
            continue
        a, b = tqa["en"][x]["question"], tqa[lb][y]["question"]
        yield _case(
            kind,
            a,
            "en",
            b,
            lb,
            f"TruthfulQA ids {x} and {y} ({cat}), en/{lb}",
            f"tqa:{x}",
            f"both about {cat.lower()}, but another question",
        )


def numbers_dates(data: Path, rng: random.Random) -> Iterator[dict]:
    from rapidfuzz import fuzz

    kind = ("different", "numbers-dates")
    stsb = _stsb(data)
    rows = [
        (fuzz.ratio(r[0], r[1]), i)
        for i, r in enumerate(stsb["en"])
        if float(r[2]) <= 2.0 and _numbers(r[0]) and _numbers(r[1]) and _numbers(r[0]) != _numbers(r[1])
    ]
    rows.sort(reverse=True)  # the most alike wording first: the numbers are what differs
    for n, (_, i) in enumerate(rows):
        lang = "en" if n % 2 else STSB_LANGS[n % len(STSB_LANGS)]
        a, b = stsb["en"][i][0], stsb[lang][i][1]
        yield _case(
            kind,
            a,
            "en",
            b,
            lang,
            f"STS-B test row {i + 1}, en/{lang}, rated {stsb['en'][i][2]}",
            f"stsb:{i}",
            "the numbers or dates differ: another fact",
        )


def minimal_pairs(data: Path, rng: random.Random) -> Iterator[dict]:
    from rapidfuzz import fuzz

    kind = ("different", "minimal-pair")
    stsb = _stsb(data)
    rows = [i for i, r in enumerate(stsb["en"]) if float(r[2]) <= 0.6 and fuzz.ratio(r[0], r[1]) >= 70]
    rng.shuffle(rows)
    for n, i in enumerate(rows):
        lang = "en" if n % 2 else STSB_LANGS[n % len(STSB_LANGS)]
        a, b = stsb[lang][i][0], stsb[lang][i][1]
        yield _case(
            kind,
            a,
            lang,
            b,
            lang,
            f"STS-B test row {i + 1}, {lang}, rated {stsb['en'][i][2]}",
            f"stsb:{i}",
            "one word changes the meaning",
        )


def build(data: Path) -> list[dict]:
    makers = {
        ("same", "translation"): translations,
        ("same", "rewording"): rewordings,
        ("different", "template-collision"): template_collisions,
        ("different", "same-topic"): same_topic,
        ("different", "numbers-dates"): numbers_dates,
        ("different", "minimal-pair"): minimal_pairs,
    }
    seen: set[frozenset[str]] = set()
    uses: dict[str, int] = {}  # how many cases a text is in: two at most, so no text dominates
    cases: list[dict] = []
    for kind, quota in QUOTA.items():
        rng = random.Random(f"{SEED}:{kind}")
        got = 0
        for case in makers[kind](data, rng):
            key = frozenset((case["question"], case["answer"]))
            if len(key) < 2 or key in seen or any(uses.get(t, 0) >= 2 for t in key):
                continue
            seen.add(key)
            for t in key:
                uses[t] = uses.get(t, 0) + 1
            cases.append(case)
            got += 1
            if got >= quota:
                break
    return [{"id": f"p{n + 1:03d}", **c} for n, c in enumerate(cases)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data folder (stsb-multi-mt/, ...)")
    ap.add_argument("--check", action="store_true", help="compare with the shipped gold set; exit 1 on a difference")
    args = ap.parse_args()
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in build(args.data))
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("gold.jsonl is up to date" if same else "gold.jsonl differs: run scripts/verifier_gold.py")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
