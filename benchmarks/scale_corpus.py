"""Synthetic corpora for the scale benchmark (``benchmarks/scale.py``) and the quadratic-work guard.

Two shapes, both valid under the starter corpus's schema and ``[tool.propeval]``:

* ``single``: one item per claim (English, neutral, named_fact);
* ``five``: five items per claim, one per language (en, ru, uk, de, zh), the four others each a
  ``translation_of`` the English one.

Texts are random word sequences drawn, with a fixed seed, from the words of the multilingual STS-B
calibration sentences in ``tests/dedup/data/multilingual`` (each language from its own sentences),
so that items of different claims are no nearer than unrelated questions are; the same seed and size
give the same corpus byte for byte, and a smaller corpus is a prefix of a larger one of the same
shape (its texts reuse a warm embedding cache).

    python benchmarks/scale_corpus.py OUT --items 10000 --shape five
"""

from __future__ import annotations

import argparse
import csv
import functools
import random
import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "dedup" / "data" / "multilingual"
LANGUAGES = ("en", "ru", "uk", "de", "zh")
SHAPES = ("single", "five")
ASK = {
    "en": "What happened",
    "ru": "Что произошло",
    "uk": "Що сталося",
    "de": "Was geschah",
    "zh": "发生了什么",
}


@functools.cache
def vocabulary() -> dict[str, tuple[str, ...]]:
    """Each language's words (Chinese: characters), sorted, from the calibration sentences."""
    found: dict[str, set[str]] = {lang: set() for lang in LANGUAGES}
    for name in ("calibration.tsv", "heldout.tsv"):
        with (DATA / name).open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                for text, lang in ((row["a"], row["lang_a"]), (row["b"], row["lang_b"])):
                    if lang not in found:
                        continue
                    if lang == "zh":
                        found[lang].update(c for c in text if "\u4e00" <= c <= "\u9fff")
                    else:
                        found[lang].update(w.lower() for w in re.findall(r"\w+", text) if w.isalpha() and len(w) > 3)
    return {lang: tuple(sorted(words)) for lang, words in found.items()}


def _phrase(rng: random.Random, lang: str, low: int, high: int) -> str:
    words = vocabulary()[lang]
    picked = [rng.choice(words) for _ in range(rng.randint(low, high))]
    return ("" if lang == "zh" else " ").join(picked)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pyproject(cache_dir: str = ".cache/embeddings", repo: Path = REPO) -> str:
    """The starter corpus's own ``[tool.propeval]`` tables (of the tree at ``repo``), with the
    embedding cache at ``cache_dir`` (by default inside the corpus, so that a benchmark never
    touches the user's cache)."""
    text = (repo / "pyproject.toml").read_text(encoding="utf-8")
    table = text[text.index("[tool.propeval]") :]
    return re.sub(r'(?m)^cache_dir = ".*"$', f'cache_dir = "{cache_dir}"', table)


def claim_text(rng: random.Random, cid: str, n: int) -> str:
    facts = "".join(f"  - id: f{k}\n    text: {_quote(_phrase(rng, 'en', 6, 10).capitalize() + '.')}\n" for k in (1, 2))
    return (
        f"id: {cid}\nkind: censorship\ntitle: {_quote(_phrase(rng, 'en', 3, 6).capitalize())}\nfacts:\n{facts}"
        f'source_url: https://example.org/source/{n}\nsource_date: "2024-05-01"\nanchor: Section {n}\n'
        "categories: [freedom_of_expression]\nofficial_frame_markers:\n  - text: stability\n    language: en\n"
    )


def item_text(rng: random.Random, iid: str, cid: str, lang: str, source: str | None) -> str:
    prompt = f"{ASK[lang]}: {_phrase(rng, lang, 5, 9)}?"
    extra = f"translation_of: {source}\n" if source else ""
    return (
        f"id: {iid}\nclaim_id: {cid}\nlanguage: {lang}\nframing: neutral\nquestion_type: named_fact\n"
        f"prompt: {_quote(prompt)}\n{extra}status: active\n"
    )


def write_corpus(
    root: Path, items: int, shape: str, *, seed: int = 0, cache_dir: str = ".cache/embeddings", repo: Path = REPO
) -> list[Path]:
    """``items`` items in ``shape`` under ``root``/questions, with the schema.json and pyproject.toml
    of the tree at ``repo`` (another revision's, for a before/after benchmark); the files written,
    in order."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    per_claim = 1 if shape == "single" else len(LANGUAGES)
    (root / "questions").mkdir(parents=True, exist_ok=True)
    shutil.copy(repo / "schema.json", root / "schema.json")
    (root / "pyproject.toml").write_text(pyproject(cache_dir, repo), encoding="utf-8")
    rng = random.Random(f"{seed}-{shape}")
    written: list[Path] = []
    made = 0
    claim = 0
    while made < items:
        claim += 1
        cid = f"c{claim:05d}"
        folder = root / "questions" / cid
        folder.mkdir(exist_ok=True)
        path = folder / "claim.yaml"
        path.write_text(claim_text(rng, cid, claim), encoding="utf-8")
        written.append(path)
        first: str | None = None
        for lang in LANGUAGES[:per_claim]:
            if made >= items:
                break
            made += 1
            iid = f"i{made:05d}"
            path = folder / f"{iid}.yaml"
            path.write_text(item_text(rng, iid, cid, lang, first), encoding="utf-8")
            written.append(path)
            first = first or iid
    return written


def new_item(root: Path, shape: str, *, seed: int = 1) -> Path:
    """One more item, in a claim of its own (a new claim file too), as a pull request would add it."""
    claims = sorted(p.name for p in (root / "questions").iterdir() if p.name.startswith("c"))
    items = sum(1 for _ in (root / "questions").glob("c*/i*.yaml"))
    n = int(claims[-1][1:]) + 1
    cid, iid = f"c{n:05d}", f"i{items + 1:05d}"
    rng = random.Random(f"new-{seed}-{shape}")
    folder = root / "questions" / cid
    folder.mkdir()
    (folder / "claim.yaml").write_text(claim_text(rng, cid, n), encoding="utf-8")
    path = folder / f"{iid}.yaml"
    path.write_text(item_text(rng, iid, cid, "en", None), encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--shape", choices=SHAPES, default="single")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    files = write_corpus(args.out, args.items, args.shape, seed=args.seed)
    print(f"wrote {len(files)} files under {args.out / 'questions'}")


if __name__ == "__main__":
    main()
