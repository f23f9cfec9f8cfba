"""Corpus-level dedup benchmark: every text meets every other, as in a real corpus (#32).

Run from the repository root, with the shared data folder beside you:

    python benchmarks/dedup_corpus.py --data ../shared/data [--out /tmp/dedup-corpus] [--before main]
    python benchmarks/dedup_corpus.py --corpus tests/dedup/data/corpus/corpus-es-ca-eu-gl.jsonl --split heldout

``--corpus`` runs the corpora of a file it (or benchmarks/dedup_corpus_es.py) wrote, instead of building them.

Pair-level calibration (a labelled pair set) does not predict what a maintainer sees: in a corpus
every text meets every other, so precision rests on the far tail of that corpus's negatives. This
script builds corpora of DISTINCT items with planted duplicates (translations, rewordings) and hard
negatives, writes each as a real corpus (questions/<claim>/<item>.yaml, one claim per item) and runs
``propeval dedup`` on it twice in the same run: with the code of ``--before`` (default ``main``: its
scoring, from a ``git archive`` of that ref) and with this tree's code. It then prints recall and
precision per language pair, false flags per 100 distinct items, for the calibration and the
held-out split.

Sources (see ``--data``'s README.md for their licences):

* ``stsb``: STS Benchmark test pairs, DeepL-translated (en de es ru zh). Sentence 1 of a row in
  several languages are translations (one meaning); sentence 2 of a row scored >= 4.5 is a rewording
  of sentence 1 (same meaning); one scored <= 2.0 is a related but different sentence (a hard negative,
  often a minimal pair: "A woman is cutting onions." / "... tofu."); in between is too close to call
  (the pair is not counted either way).
* ``tatoeba``: Tatoeba uk, ru, zh (cmn) lines and their English (first 500 lines of each test file).
* ``truthfulqa``: TruthfulQA questions in en, es, ca, eu, gl (even rows). Distinct questions, full of
  deliberate minimal pairs ("banned in France / Canada"): the templated precision test.
* ``starter``: this repository's starter corpus; items that translate one source (``translation_of``)
  share a meaning, other framings of one claim are too close to call, other claims are negatives.

Near-copies across source rows (STS-B repeats stock sentences; Tatoeba has "We realize that." and
"We understand this.") are found on the English side (rapidfuzz ratio >= NEAR_RATIO of normalised
text) and merged (identical) or left uncounted (near).

Borderline (label noise, #32 round 2): two meanings that some translation renders as the same text
(normalised: case, punctuation and spacing aside) are not two distinct meanings. STS-B has "A man
plays a guitar." and "A man is playing the guitar." in different rows, unlinked; both are "Ein Mann
spielt Gitarre." in German and "一个男人在弹吉他。" in Chinese. The criterion is independent of any
model under test: the translators (DeepL for STS-B, people for Tatoeba and TruthfulQA) made them
identical. A flag between two such meanings is "borderline": counted neither as found nor as false,
reported in its own column, and the "strict" precision counts it as false (so nothing is hidden).
In the calibration file (corpus.jsonl) borderline meanings are listed under ``near`` (not counted)
and under ``borderline``.

Reviewed (label noise, #32 round 4): Tatoeba and STS-B lines of different rows are sometimes
translations or rewordings of each other ("I quite agree." / "I agree completely with that."; "I'll
show you my new car." / "Я покажу вам свою нову машину."). Each flagged "false" pair of the
no-translation corpora (both splits) and of the calibration split was read by a bilingual reviewer;
a pair is a duplicate when one text is a translation or a rewording of the other (the same facts, the
same claim), and such pairs are listed, by meaning id with a one-line reason each, in RELABELLED
(tests/dedup/data/corpus/relabelled.tsv). A flag between two such meanings is "reviewed": counted
neither as found (they were never planted, and only flagged pairs were read, so counting them would
raise recall by selection) nor as false, reported in its own column, and counted as false by the
strict precision. In corpus.jsonl they are listed under ``near`` and ``reviewed``.

Corpora, each built per split:

* ``translations``: STS-B rows (en de ru zh) and Tatoeba lines (uk ru zh against en), each meaning
  in one to three languages, with STS-B's hard negatives; plus the starter corpus (de en ru uk zh).
  Recall and precision per language pair.
* ``templated``: TruthfulQA's English questions (all distinct) with STS-B rewordings (>= 4.5) and
  minimal pairs (<= 2.0) in English: false flags per 100 distinct questions and the share of
  rewordings found; ``same-de``, ``same-ru``, ``same-zh``: the same STS-B pairs in that language
  beside Tatoeba's lines in it (de: STS-B only).
* ``no-translation-<a>-<b>``: 300 texts in a and 300 in b of distinct meanings (no planted
  duplicate): flags in a 600-item corpus.

Split: by source unit (STS-B row, Tatoeba line, TruthfulQA question, starter claim), sha256 of a fixed
seed and the unit: half calibrate (tune), half are held out (never tuned on).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("de", "en", "ru", "uk", "zh")
SEED = "propeval-dedup-corpus-1"
NEAR_RATIO = 80  # rapidfuzz ratio of two normalised English texts at which two meanings are too close to call
SAME_RATIO = 97  # ... at which they are one meaning
STSB_SAME = 4.5  # an STS-B pair scored at least this is a rewording (one meaning)
STSB_DIFFERENT = 2.0  # ... at most this is a different sentence (a hard negative)
TATOEBA = {"ukr": "uk", "rus": "ru", "cmn": "zh"}
TQA_LANGS = ("en", "es", "ca", "eu", "gl")
RELABELLED = ROOT / "tests" / "dedup" / "data" / "corpus" / "relabelled.tsv"


@dataclass(frozen=True)
class Text:
    """One text of a benchmark corpus.

    ``meaning``: texts of one meaning are duplicates of each other (translations, rewordings).
    ``near``: meanings too close to this one's to call either way (a pair with one is not counted).
    ``unit``: what the split goes by (a source row or claim).
    """

    text: str
    lang: str
    meaning: str
    source: str
    unit: str
    near: frozenset[str] = frozenset()
    role: str = ""  # "rewording", "minimal-pair", "framing", ... (for the report)
    border: frozenset[str] = frozenset()  # meanings a translation renders as this one's text (borderline)
    reviewed: frozenset[str] = frozenset()  # meanings a reviewer judged one with this one (RELABELLED)


def split_of(unit: str, seed: str = SEED) -> str:
    """'calibration' or 'heldout', fixed by the seed and the unit."""
    return "calibration" if hashlib.sha256(f"{seed}:{unit}".encode()).digest()[0] % 2 == 0 else "heldout"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.casefold())).strip()


# --------------------------------------------------------------------------- sources


def stsb(folder: Path) -> list[Text]:
    """STS-B test rows: sentence 1 in every language (one meaning per row), sentence 2 as a rewording
    (>= 4.5), a hard negative (<= 2.0) or a near one (in between)."""
    by_lang: dict[str, list[list[str]]] = {}
    for lang in ("en", "de", "es", "ru", "zh"):
        with (folder / f"stsb-{lang}-test.csv").open(encoding="utf-8", newline="") as f:
            by_lang[lang] = list(csv.reader(f))
    out: list[Text] = []
    for i, row in enumerate(by_lang["en"]):
        score = float(row[2])
        unit = f"stsb:{i}"
        m1, m2 = f"stsb:{i}:1", f"stsb:{i}:2"
        if score >= STSB_SAME:
            m2, near, role = m1, frozenset(), "rewording"
        elif score <= STSB_DIFFERENT:
            near, role = frozenset(), "minimal-pair"
        else:
            near, role = frozenset({m1}), "related"
        for lang, rows in by_lang.items():
            out.append(Text(rows[i][0], lang, m1, "stsb", unit, near=frozenset({m2}) - {m1}, role="sentence1"))
            out.append(Text(rows[i][1], lang, m2, "stsb", unit, near=near, role=role))
    return out


def tatoeba(folder: Path) -> list[Text]:
    """Tatoeba lines (uk, ru, zh) and their English, one meaning per line and file."""
    out: list[Text] = []
    for code, lang in TATOEBA.items():
        theirs = (folder / f"tatoeba.{code}-eng.{code}").read_text(encoding="utf-8").splitlines()
        eng = (folder / f"tatoeba.{code}-eng.eng").read_text(encoding="utf-8").splitlines()
        for i, (t, e) in enumerate(zip(theirs, eng, strict=True)):
            meaning = unit = f"tatoeba:{code}:{i}"
            out.append(Text(t, lang, meaning, "tatoeba", unit, role="sentence"))
            out.append(Text(e, "en", meaning, "tatoeba", unit, role="sentence"))
    return out


def truthfulqa(folder: Path) -> list[Text]:
    """TruthfulQA questions, one meaning per question id across languages."""
    out: list[Text] = []
    for lang in TQA_LANGS:
        rows = json.loads((folder / f"{lang}_validation_even.json").read_text(encoding="utf-8"))
        for row in rows:
            meaning = unit = f"tqa:{row['id']}"
            out.append(Text(row["question"], lang, meaning, "truthfulqa", unit, role=str(row.get("category", ""))))
    return out


def starter(questions: Path) -> list[Text]:
    """Active items of the starter corpus: one meaning per translation root; a claim's other
    framings are near (not counted)."""
    import yaml

    items = {}
    for path in sorted(questions.glob("*/i*.yaml")):
        d = yaml.safe_load(path.read_text(encoding="utf-8"))
        if d.get("status", "active") == "active":
            items[d["id"]] = d

    def root(iid: str) -> str:
        seen = set()
        while items.get(iid, {}).get("translation_of") and iid not in seen:
            seen.add(iid)
            iid = items[iid]["translation_of"]
        return iid

    roots_of_claim: dict[str, set[str]] = defaultdict(set)
    for iid, d in items.items():
        roots_of_claim[d["claim_id"]].add(f"starter:{root(iid)}")
    out: list[Text] = []
    for iid, d in sorted(items.items()):
        meaning = f"starter:{root(iid)}"
        near = frozenset(roots_of_claim[d["claim_id"]] - {meaning})
        out.append(Text(d["prompt"], d["language"], meaning, "starter", d["claim_id"], near=near, role="item"))
    return out


def merge_near_copies(texts: list[Text]) -> list[Text]:
    """Meanings whose English texts are near-copies: one meaning (>= SAME_RATIO) or near (>= NEAR_RATIO).

    STS-B repeats stock sentences across rows; a planted 'hard negative' that says the same thing is
    no negative."""
    from rapidfuzz import fuzz, process

    english: dict[str, str] = {}
    for t in texts:
        if t.lang == "en":
            english.setdefault(t.meaning, _norm(t.text))
    meanings = list(english)
    strings = [english[m] for m in meanings]
    scores = process.cdist(strings, strings, scorer=fuzz.ratio, score_cutoff=NEAR_RATIO, workers=1)
    same: dict[str, str] = {}
    near: dict[str, set[str]] = defaultdict(set)
    import numpy as np

    for a, b in zip(*np.nonzero(scores), strict=True):
        if a >= b:
            continue
        ma, mb = meanings[a], meanings[b]
        if scores[a, b] >= SAME_RATIO:
            same.setdefault(mb, same.get(ma, ma))
        else:
            near[ma].add(mb)
            near[mb].add(ma)

    def canon(m: str) -> str:
        while m in same and same[m] != m:
            m = same[m]
        return m

    out = []
    for t in texts:
        m = canon(t.meaning)
        extra = {canon(x) for x in near.get(t.meaning, ())} | {canon(x) for x in t.near}
        out.append(Text(t.text, t.lang, m, t.source, t.unit, near=frozenset(extra - {m}), role=t.role))
    return out


def mark_shared_translations(texts: list[Text]) -> list[Text]:
    """Borderline meanings: two meanings with the same normalised text in some language (in any
    source's texts, including languages no corpus uses, such as STS-B's Spanish) are marked
    ``border`` of each other (see the module docstring)."""
    by_text: dict[tuple[str, str], set[str]] = defaultdict(set)
    for t in texts:
        norm = _norm(t.text)
        if norm:
            by_text[(t.lang, norm)].add(t.meaning)
    border: dict[str, set[str]] = defaultdict(set)
    for meanings in by_text.values():
        for a, b in itertools.combinations(sorted(meanings), 2):
            border[a].add(b)
            border[b].add(a)
    out = []
    for t in texts:
        extra = frozenset(border.get(t.meaning, ())) - t.near - {t.meaning}
        out.append(Text(t.text, t.lang, t.meaning, t.source, t.unit, near=t.near, role=t.role, border=extra))
    return out


def load_sources(data: Path, questions: Path, *, borderline: bool = True) -> list[Text]:
    """Every source's texts, near-copies merged or marked, and (``borderline``) shared translations
    marked borderline."""
    texts = [
        *stsb(data / "stsb-multi-mt"),
        *tatoeba(data / "tatoeba-dev"),
        *truthfulqa(data / "truthfulqa-multi-dev"),
        *starter(questions),
    ]
    merged = merge_near_copies(texts)
    return mark_shared_translations(merged) if borderline else merged


def read_relabelled(path: Path = RELABELLED) -> dict[frozenset[str], str]:
    """Pairs of meanings a reviewer judged duplicates (meaning a, meaning b, reason; ``#`` comments)."""
    out: dict[frozenset[str], str] = {}
    if not path.is_file():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 3 or not all(c.strip() for c in cells):
            raise SystemExit(f"{path}:{n}: expected meaning<TAB>meaning<TAB>reason, found {line!r}")
        a, b, reason = (c.strip() for c in cells)
        if a == b or frozenset((a, b)) in out:
            raise SystemExit(f"{path}:{n}: {a} / {b} is one meaning or listed twice")
        out[frozenset((a, b))] = reason
    return out


def mark_reviewed(corpora: Iterable[Corpus], relabelled: dict[frozenset[str], str]) -> None:
    """Mark, in each corpus's texts, the meanings a reviewer judged duplicates of theirs (after the
    corpora are built, so that the review changes no corpus's texts)."""
    from dataclasses import replace

    with_: dict[str, set[str]] = defaultdict(set)
    for pair in relabelled:
        a, b = sorted(pair)
        with_[a].add(b)
        with_[b].add(a)
    for c in corpora:
        c.texts = [
            replace(t, reviewed=frozenset(with_[t.meaning]) - t.near - t.border) if t.meaning in with_ else t
            for t in c.texts
        ]


# --------------------------------------------------------------------------- corpora


@dataclass
class Corpus:
    name: str
    split: str
    texts: list[Text] = field(default_factory=list)
    purpose: str = ""

    def pairs(self) -> dict[str, int]:
        """Planted duplicate pairs per language pair."""
        out: dict[str, int] = defaultdict(int)
        by_meaning: dict[str, list[Text]] = defaultdict(list)
        for t in self.texts:
            by_meaning[t.meaning].append(t)
        for group in by_meaning.values():
            for a, b in itertools.combinations(group, 2):
                out[lang_pair(a.lang, b.lang)] += 1
        return dict(out)


def lang_pair(a: str, b: str) -> str:
    return "-".join(sorted((a, b)))


def _take(rng: random.Random, pool: list[str], n: int) -> list[str]:
    pool = list(pool)
    rng.shuffle(pool)
    return pool[:n]


def build_corpora(texts: list[Text], split: str, seed: str = SEED) -> list[Corpus]:
    """The benchmark corpora of one split (see the module docstring)."""
    rng = random.Random(f"{seed}:{split}")
    mine = [t for t in texts if split_of(t.unit, seed) == split]
    by: dict[tuple[str, str], dict[str, list[Text]]] = defaultdict(lambda: defaultdict(list))
    for t in mine:
        by[(t.source, t.lang)][t.meaning].append(t)
    corpora: list[Corpus] = []

    # translations: STS-B sentence 1 (de en ru zh) in one to three languages, STS-B hard negatives,
    # Tatoeba lines with and without their English, the starter corpus.
    tr = Corpus("translations", split, purpose="recall and precision per language pair")
    stsb_langs = ("de", "en", "ru", "zh")
    rows = sorted({t.unit for t in mine if t.source == "stsb"})
    rows = _take(rng, rows, 240)
    s1 = {(t.unit, t.lang): t for t in mine if t.source == "stsb" and t.role == "sentence1"}
    s2 = {(t.unit, t.lang): t for t in mine if t.source == "stsb" and t.role != "sentence1"}
    for n, unit in enumerate(rows):
        k = 1 + n % 3  # a third of the rows alone, a third in two languages, a third in three
        for lang in rng.sample(stsb_langs, k):
            tr.texts.append(s1[(unit, lang)])
        second = s2[(unit, rng.choice(stsb_langs))]
        if second.role == "minimal-pair" or (second.role == "rewording" and n % 2 == 0):
            tr.texts.append(second)
    lines = sorted({t.unit for t in mine if t.source == "tatoeba"})
    tat = {(t.unit, t.lang): t for t in mine if t.source == "tatoeba"}
    for n, unit in enumerate(_take(rng, lines, 360)):
        code = unit.split(":")[1]
        theirs = tat[(unit, TATOEBA[code])]
        tr.texts.append(theirs)
        if n % 3 != 0:  # two thirds with their English
            tr.texts.append(tat[(unit, "en")])
    tr.texts.extend(t for t in mine if t.source == "starter")
    corpora.append(tr)

    # templated: TruthfulQA's English questions (distinct), STS-B rewordings and minimal pairs in English.
    # same-<lang>: STS-B rewordings and minimal pairs in de, ru, zh, beside Tatoeba lines in that language.
    pairs_of = sorted({t.unit for t in mine if t.source == "stsb"})
    for lang in ("en", "de", "ru", "zh"):
        name = "templated" if lang == "en" else f"same-{lang}"
        c = Corpus(name, split, purpose="false flags per 100 distinct texts; rewordings found")
        if lang == "en":
            c.texts.extend(t for t in mine if t.source == "truthfulqa" and t.lang == "en")
        else:
            c.texts.extend(t for t in mine if t.source == "tatoeba" and t.lang == lang)
        for unit in pairs_of:
            second = s2[(unit, lang)]
            if second.role in ("rewording", "minimal-pair"):
                c.texts.extend([s1[(unit, lang)], second])
        corpora.append(c)

    # no translation planted: 300 + 300 texts of distinct meanings in two languages.
    pools: dict[str, list[Text]] = defaultdict(list)
    for t in mine:
        if t.lang in LANGS and t.source in ("stsb", "tatoeba") and t.role in ("sentence1", "sentence"):
            pools[t.lang].append(t)
    for a, b in itertools.combinations(LANGS, 2):
        c = Corpus(f"no-translation-{a}-{b}", split, purpose="flags where no duplicate was planted")
        used: set[str] = set()
        for lang in (a, b):
            pool = [t for t in pools[lang] if t.meaning not in used]
            rng.shuffle(pool)
            chosen = pool[:300]
            used.update(t.meaning for t in chosen)
            used.update(m for t in chosen for m in t.near | t.border)
            c.texts.extend(chosen)
        corpora.append(c)
    return corpora


def unique_texts(corpora: Iterable[Corpus]) -> list[Text]:
    seen: dict[tuple[str, str], Text] = {}
    for c in corpora:
        for t in c.texts:
            seen.setdefault((t.text, t.lang), t)
    return list(seen.values())


# --------------------------------------------------------------------------- running propeval on a corpus


def corpus_rows(corpora: Iterable[Corpus]) -> list[dict[str, object]]:
    """The corpora as ``propeval dedup calibrate`` reads them (JSON Lines, one text a line)."""
    rows = []
    for c in corpora:
        for t in c.texts:
            rows.append(
                {
                    "text": t.text,
                    "language": t.lang,
                    "meaning": t.meaning,
                    "near": sorted(t.near | t.border | t.reviewed),
                    "borderline": sorted(t.border),
                    "reviewed": sorted(t.reviewed),
                    "corpus": c.name,
                    "split": c.split,
                    "source": t.source,
                }
            )
    return rows


def read_corpora(path: Path) -> list[Corpus]:
    """The corpora of a file :func:`corpus_rows` wrote (``propeval dedup calibrate``'s format), in its order."""
    corpora: dict[tuple[str, str], Corpus] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        border, reviewed = frozenset(r.get("borderline", [])), frozenset(r.get("reviewed", []))
        text = Text(
            r["text"],
            r["language"],
            r["meaning"],
            r.get("source", ""),
            unit="",
            near=frozenset(r.get("near", [])) - border - reviewed,
            border=border,
            reviewed=reviewed,
        )
        corpora.setdefault((r["split"], r["corpus"]), Corpus(r["corpus"], r["split"])).texts.append(text)
    return list(corpora.values())


def dedup_table(tree: Path, cache: Path) -> dict[str, object]:
    """``[tool.propeval.dedup]`` of a tree's pyproject.toml, with the benchmark's cache and no facts."""
    import tomllib

    doc = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    table = dict(doc.get("tool", {}).get("propeval", {}).get("dedup", {}))
    table.update(cache_dir=str(cache), compare_facts=False, allowlist="dedup-allowlist.yaml")
    return table


def write_corpus(root: Path, corpus: Corpus, table: dict[str, object], schema: Path) -> dict[str, Text]:
    """A real corpus folder: one claim per text, so every text meets every other."""
    import shutil

    import tomlkit

    q = root / "questions"
    q.mkdir(parents=True)
    shutil.copy(schema, root / "schema.json")
    doc = tomlkit.document()
    tool = tomlkit.table(is_super_table=True)
    prop = tomlkit.table()
    prop["questions_dir"] = "questions"
    prop["dedup"] = table
    tool["propeval"] = prop
    doc["tool"] = tool
    (root / "pyproject.toml").write_text(tomlkit.dumps(doc), encoding="utf-8")
    by_id: dict[str, Text] = {}
    for n, t in enumerate(corpus.texts, start=1):
        cid, iid = f"c{n:05d}", f"i{n:05d}"
        folder = q / cid
        folder.mkdir()
        (folder / "claim.yaml").write_text(
            f"id: {cid}\nkind: censorship\ntitle: t\nfacts:\n  - id: f1\n    text: fact {cid} a\n"
            f"  - id: f2\n    text: fact {cid} b\nsource_url: https://example.org/{cid}\nanchor: a\n"
            "categories: [freedom_of_expression]\nofficial_frame_markers: []\n",
            encoding="utf-8",
        )
        (folder / f"{iid}.yaml").write_text(
            f"id: {iid}\nclaim_id: {cid}\nlanguage: {t.lang}\nframing: neutral\nquestion_type: named_fact\n"
            f"prompt: {json.dumps(t.text, ensure_ascii=False)}\nstatus: active\n",
            encoding="utf-8",
        )
        by_id[iid] = t
    return by_id


def run_dedup(tools: Path, root: Path) -> dict[str, object]:
    """``propeval dedup --format json`` of the code under ``tools`` on the corpus at ``root``."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(tools), "HF_HUB_OFFLINE": "1", "CI": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "propeval", "--root", str(root), "dedup", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"propeval dedup ({tools}) failed ({proc.returncode}): {proc.stderr[-3000:]}")
    data: dict[str, object] = json.loads(proc.stdout)
    return data


@dataclass
class Score:
    """Flags of one run on one corpus, against its planted duplicates."""

    planted: dict[str, int] = field(default_factory=dict)  # language pair -> duplicate pairs planted
    found: dict[str, int] = field(default_factory=dict)  # ... of them flagged
    false: dict[str, int] = field(default_factory=dict)  # flags of two different meanings
    uncounted: int = 0  # flags of two meanings too close to call
    borderline: dict[str, int] = field(default_factory=dict)  # flags of two meanings a translation makes one
    reviewed: dict[str, int] = field(default_factory=dict)  # flags of two meanings a reviewer judged one
    false_questions: int = 0  # false flags between two TruthfulQA questions
    questions: int = 0  # TruthfulQA questions in the corpus
    meanings: int = 0  # distinct items
    texts: int = 0
    # (language pair, corpus, meaning a, meaning b, text a, text b) of each false / borderline flag
    false_examples: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    borderline_examples: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    missed_examples: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)  # planted, not flagged
    reviewed_examples: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    # the review band (json "review"; a run of code without it has none): planted duplicates in it, and every pair
    band_found: dict[str, int] = field(default_factory=dict)
    band_size: dict[str, int] = field(default_factory=dict)

    def add(self, other: Score) -> None:
        for mine, theirs in (
            (self.band_found, other.band_found),
            (self.band_size, other.band_size),
            (self.planted, other.planted),
            (self.found, other.found),
            (self.false, other.false),
            (self.borderline, other.borderline),
            (self.reviewed, other.reviewed),
        ):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        self.uncounted += other.uncounted
        self.false_questions += other.false_questions
        self.questions += other.questions
        self.meanings += other.meanings
        self.texts += other.texts
        self.false_examples.extend(other.false_examples)
        self.borderline_examples.extend(other.borderline_examples)
        self.missed_examples.extend(other.missed_examples)
        self.reviewed_examples.extend(other.reviewed_examples)


def score_run(corpus: Corpus, by_id: dict[str, Text], data: dict[str, object]) -> Score:
    out = Score(planted=corpus.pairs(), meanings=len({t.meaning for t in corpus.texts}), texts=len(corpus.texts))
    out.questions = sum(t.source == "truthfulqa" for t in corpus.texts)
    seen: set[tuple[str, str]] = set()
    for pair in data["pairs"]:  # type: ignore[attr-defined]
        ids = [pair["a"]["id"], pair["b"]["id"]]
        group = pair.get("group") or {}
        if group and group.get("size", 2) > 2:
            ids = list(group["ids"])
        for x, y in itertools.combinations(ids, 2):
            key = (min(x, y), max(x, y))
            if key in seen:
                continue
            seen.add(key)
            a, b = by_id[x], by_id[y]
            lp = lang_pair(a.lang, b.lang)
            if a.meaning == b.meaning:
                out.found[lp] = out.found.get(lp, 0) + 1
            elif b.meaning in a.near or a.meaning in b.near:
                out.uncounted += 1
            elif b.meaning in a.reviewed or a.meaning in b.reviewed:
                out.reviewed[lp] = out.reviewed.get(lp, 0) + 1
                out.reviewed_examples.append((lp, corpus.name, a.meaning, b.meaning, a.text, b.text))
            elif b.meaning in a.border or a.meaning in b.border:
                out.borderline[lp] = out.borderline.get(lp, 0) + 1
                out.borderline_examples.append((lp, corpus.name, a.meaning, b.meaning, a.text, b.text))
            else:
                out.false[lp] = out.false.get(lp, 0) + 1
                out.false_examples.append((lp, corpus.name, a.meaning, b.meaning, a.text, b.text))
                out.false_questions += a.source == b.source == "truthfulqa"
    for pair in data.get("review", []):  # type: ignore[attr-defined]
        x, y = pair["a"]["id"], pair["b"]["id"]
        key = (min(x, y), max(x, y))
        if key in seen:
            continue
        a, b = by_id[x], by_id[y]
        lp = lang_pair(a.lang, b.lang)
        out.band_size[lp] = out.band_size.get(lp, 0) + 1
        if a.meaning == b.meaning:
            out.band_found[lp] = out.band_found.get(lp, 0) + 1
    flagged = {(by_id[x].text, by_id[x].lang, by_id[y].text, by_id[y].lang) for x, y in seen}
    by_meaning: dict[str, list[Text]] = defaultdict(list)
    for t in corpus.texts:
        by_meaning[t.meaning].append(t)
    for group in by_meaning.values():
        for a, b in itertools.combinations(group, 2):
            if (a.text, a.lang, b.text, b.lang) not in flagged and (b.text, b.lang, a.text, a.lang) not in flagged:
                lp = lang_pair(a.lang, b.lang)
                out.missed_examples.append((lp, corpus.name, a.meaning, b.meaning, a.text, b.text))
    return out


# --------------------------------------------------------------------------- the report


def _ratio(n: int, d: int) -> str:
    return f"{n / d:.2f}" if d else "  - "


def pair_table(split: str, before: Score, after: Score) -> list[str]:
    pairs = sorted(set(after.planted) | set(after.false) | set(before.false), key=lambda k: (k[:2] != k[3:], k))
    lines = [
        f"per language pair, {split} split (all corpora; recall = planted duplicates flagged, precision = flags "
        "that are planted duplicates; a pair of two meanings too close to call is not counted; border = flags of "
        "two meanings a translation renders as one text, review = flags of two meanings a reviewer judged one "
        "(RELABELLED; neither counted); strict = precision counting both as false):",
        "  pair   planted | before: recall precision strict false border review | after: recall precision strict "
        "false border review | positives",
    ]
    for k in pairs:
        planted = after.planted.get(k, 0)
        cells = []
        for run in (before, after):
            found, false, border = run.found.get(k, 0), run.false.get(k, 0), run.borderline.get(k, 0)
            reviewed = run.reviewed.get(k, 0)
            cells.append(
                f"{_ratio(found, planted):>6} {_ratio(found, found + false):>9} "
                f"{_ratio(found, found + false + border + reviewed):>6} {false:5d} {border:6d} {reviewed:6d}"
            )
        weak = "" if planted >= 50 else ("  (none)" if not planted else "  (weak: < 50)")
        lines.append(f"  {k}  {planted:7d} | {cells[0]} | {cells[1]} |{weak}")
    return lines


def band_table(split: str, before: Score, after: Score) -> list[str]:
    """Per language pair: recall of the duplicate band and of both bands, the duplicate band's precision, and the
    review band's pairs per 100 distinct items (of all corpora of the split)."""
    pairs = sorted(set(after.planted) | set(after.band_size) | set(after.false), key=lambda k: (k[:2] != k[3:], k))
    lines = [
        f"bands per language pair, {split} split ({after.meanings} distinct items; dup = duplicate band, which "
        "blocks; both = duplicate or review band; load = review-band pairs per 100 distinct items):",
        "  pair   planted | before: dup R  both R  dup P  load | after: dup R  both R  dup P  load",
    ]
    for k in pairs:
        planted = after.planted.get(k, 0)
        cells = []
        for run in (before, after):
            found, false = run.found.get(k, 0), run.false.get(k, 0)
            both = found + run.band_found.get(k, 0)
            load = 100 * run.band_size.get(k, 0) / max(run.meanings, 1)
            cells.append(
                f"{_ratio(found, planted):>6} {_ratio(both, planted):>7} {_ratio(found, found + false):>6} {load:5.2f}"
            )
        lines.append(f"  {k}  {planted:7d} | {cells[0]} | {cells[1]}")
    for name, run in (("before", before), ("after", after)):
        total = sum(run.band_size.values())
        lines.append(
            f"  {name}: review band {total} pairs = {100 * total / max(run.meanings, 1):.2f} per 100 distinct items"
        )
    return lines


def templated_table(split: str, before: Score, after: Score) -> list[str]:
    lines = [f"templated English, {split} split ({after.questions} TruthfulQA questions, STS-B pairs):"]
    for name, run in (("before", before), ("after", after)):
        planted = run.planted.get("en-en", 0)
        found = run.found.get("en-en", 0)
        in_band = run.band_found.get("en-en", 0)
        false = sum(run.false.values())
        border = sum(run.borderline.values()) + sum(run.reviewed.values())
        lines.append(
            f"  {name:6}: rewordings found {found}/{planted} = {_ratio(found, planted)} (with the review band "
            f"{found + in_band}/{planted} = {_ratio(found + in_band, planted)}); false flags {false} = "
            f"{100 * false / max(run.meanings, 1):.2f} per 100 distinct items (strict, with {border} borderline or "
            "reviewed: "
            f"{100 * (false + border) / max(run.meanings, 1):.2f}); between questions "
            f"{run.false_questions} = {100 * run.false_questions / max(run.questions, 1):.2f} per 100 questions"
        )
    return lines


def main() -> None:
    import argparse
    import subprocess
    import tempfile
    import time

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="the shared data folder (stsb-multi-mt/, ...)")
    ap.add_argument(
        "--corpus",
        type=Path,
        help="run the corpora of this corpus file (tests/dedup/data/corpus/*.jsonl), not --data's",
    )
    ap.add_argument("--split", choices=("calibration", "heldout"), help="run this split only (default: both)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "propeval-dedup-corpus")
    ap.add_argument("--cache", type=Path, default=None, help="embedding cache folder (default: OUT/cache)")
    ap.add_argument("--before", default="main", help="git ref whose code is the 'before' column (default main)")
    ap.add_argument("--only", default="", help="comma-separated corpus names to run (default: all)")
    ap.add_argument("--examples", type=int, default=0, help="print this many false flags per split and run")
    ap.add_argument(
        "--corpus-only",
        action="store_true",
        help="write OUT/corpus.jsonl (what tests/dedup/data/corpus/corpus.jsonl is) and stop: no dedup run",
    )
    # every false flag is written to OUT/false-flags-<split>-<before|after>.tsv (language pair, corpus,
    # meaning, meaning, text, text)
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    cache = (args.cache or out / "cache").resolve()
    if args.corpus:
        corpora = read_corpora(args.corpus)
    elif args.data:
        texts = load_sources(args.data, ROOT / "questions")
        corpora = [c for split in ("calibration", "heldout") for c in build_corpora(texts, split)]
        mark_reviewed(corpora, read_relabelled())
    else:
        ap.error("give --data (build the corpora) or --corpus (a file of them)")
    if args.split:
        corpora = [c for c in corpora if c.split == args.split]
    if args.only:
        keep = set(args.only.split(","))
        corpora = [c for c in corpora if c.name in keep]
    rows = corpus_rows(corpora)
    (out / "corpus.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if args.corpus_only:
        print(f"wrote {out / 'corpus.jsonl'}: {len(rows)} texts, {len(corpora)} corpora")
        return
    before_tree = out / f"tree-{args.before.replace('/', '_')}"
    if not before_tree.exists():
        before_tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before, "tools", "pyproject.toml", "schema.json"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(before_tree)], input=archive.stdout, check=True)
    trees = {"before": before_tree, "after": ROOT}
    scores: dict[tuple[str, str, str], Score] = {}
    took: dict[str, float] = {"before": 0.0, "after": 0.0}
    for c in corpora:
        for name, tree in trees.items():
            root = out / "corpora" / name / f"{c.split}-{c.name}"
            if root.exists():
                import shutil

                shutil.rmtree(root)
            by_id = write_corpus(root, c, dedup_table(tree, cache), tree / "schema.json")
            t0 = time.perf_counter()
            data = run_dedup(tree / "tools", root)
            took[name] += time.perf_counter() - t0
            scores[(name, c.split, c.name)] = score_run(c, by_id, data)
        print(f"  ran {c.split} {c.name} ({len(c.texts)} texts)", flush=True)
    print()
    print(f"corpus-level benchmark: {len(rows)} texts, {len(corpora)} corpora; before: {args.before}; after: this tree")
    print(f"corpora written to {out}/corpora; `propeval dedup calibrate {out}/corpus.jsonl` calibrates from them")
    print(f"propeval dedup wall time, all corpora: before {took['before']:.0f} s, after {took['after']:.0f} s")
    for split in sorted({c.split for c in corpora}):
        total = {name: Score() for name in trees}
        for (name, sp, _), sc in scores.items():
            if sp == split:
                total[name].add(sc)
        print()
        print("\n".join(pair_table(split, total["before"], total["after"])))
        print("\n".join(band_table(split, total["before"], total["after"])))
        tq = {name: scores.get((name, split, "templated")) for name in trees}
        if tq["before"] and tq["after"]:
            print("\n".join(templated_table(split, tq["before"], tq["after"])))
        print(f"no planted translation, {split} split: flags between the two languages (before -> after), texts")
        line = []
        for name in sorted({c.name for c in corpora if c.split == split and c.name.startswith("no-translation-")}):
            key = (split, name)
            lp = lang_pair(*name.removeprefix("no-translation-").split("-"))
            fb = scores[("before", *key)].false.get(lp, 0)
            fa = scores[("after", *key)].false.get(lp, 0)
            ba = scores[("after", *key)].borderline.get(lp, 0)
            ra = scores[("after", *key)].reviewed.get(lp, 0)
            extra = (f" +{ba} border" if ba else "") + (f" +{ra} review" if ra else "")
            line.append(f"{lp} {fb} -> {fa}{f' ({extra.strip()})' if extra else ''} ({scores[('after', *key)].texts})")
        print("  " + "; ".join(line))
        for name in trees:
            for kind, examples in (
                ("false", total[name].false_examples),
                ("borderline", total[name].borderline_examples),
                ("reviewed", total[name].reviewed_examples),
                ("missed", total[name].missed_examples),
            ):
                dump = out / f"{kind}-flags-{split}-{name}.tsv"
                dump.write_text(
                    "".join("\t".join(row).replace("\r", " ").replace("\n", " ") + "\n" for row in sorted(examples)),
                    encoding="utf-8",
                )
        if args.examples:
            for name in trees:
                print(f"  false flags, {name} (first {args.examples}):")
                for lp, _, _, _, x, y in total[name].false_examples[: args.examples]:
                    print(f"    {lp}: {x[:70]!r} / {y[:70]!r}")
            print(f"  borderline flags, after (first {args.examples}):")
            for lp, _, _, _, x, y in total["after"].borderline_examples[: args.examples]:
                print(f"    {lp}: {x[:70]!r} / {y[:70]!r}")


if __name__ == "__main__":
    main()
