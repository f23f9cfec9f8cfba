"""Time `propeval check` against check-jsonschema on the same files with the same schema.

Prints a table of median wall times (seconds) over repeated runs, and the ratio
propeval / check-jsonschema (below 1 means propeval is faster). Run from the repository root:

    .venv/bin/python benchmarks/check.py [--repeat 5] [--sizes 1000,10000]

Both tools run as fresh processes, as a pre-commit hook or CI would run them. check-jsonschema
validates only the schema; propeval also runs its cross-file rules, so the ratio is conservative.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LANGS = ["en", "ru", "uk", "de", "zh"]


def make_corpus(root: Path, n_items: int) -> list[Path]:
    """n_items items, three or four per claim, every file valid."""
    (root / "questions").mkdir(parents=True)
    shutil.copy(REPO / "schema.json", root / "schema.json")
    (root / "pyproject.toml").write_text("[tool.propeval]\nmax_claims_per_source = 13\n", encoding="utf-8")
    files = []
    item = 0
    claim = 0
    while item < n_items:
        claim += 1
        cid = f"c{claim:05d}"
        folder = root / "questions" / cid
        folder.mkdir()
        path = folder / "claim.yaml"
        path.write_text(
            f"id: {cid}\nkind: censorship\ntitle: Synthetic claim number {claim}\nfacts:\n"
            f"  - id: f1\n    text: Event {claim} took place on {1 + claim % 28} May {1950 + claim % 70}.\n"
            f"  - id: f2\n    text: It was reported by {claim % 97} independent observers.\n"
            f'source_url: https://example.org/source/{claim}\nsource_date: "2024-05-01"\nanchor: Section {claim}\n'
            f"categories: [freedom_of_expression]\nofficial_frame_markers:\n  - text: stability\n    language: en\n",
            encoding="utf-8",
        )
        files.append(path)
        first = None
        for k in range(4 if claim % 2 else 3):
            if item >= n_items:
                break
            item += 1
            iid = f"i{item:05d}"
            lang = LANGS[k % len(LANGS)]
            extra = f"translation_of: {first}\n" if first else ""
            path = folder / f"{iid}.yaml"
            path.write_text(
                f"id: {iid}\nclaim_id: {cid}\nlanguage: {lang}\nframing: neutral\nquestion_type: named_fact\n"
                f"prompt: What happened during event {claim}, and who reported it? ({lang})\n{extra}status: active\n",
                encoding="utf-8",
            )
            first = first or iid
            files.append(path)
    return files


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def bench(label: str, root: Path, files: list[Path], repeat: int) -> tuple[str, int, float, float]:
    ours = [timed([str(BIN / "propeval"), "check"], root) for _ in range(repeat)]
    rel = [str(f.relative_to(root)) for f in files]
    peer = [timed([str(BIN / "check-jsonschema"), "--schemafile", "schema.json", *rel], root) for _ in range(repeat)]
    return label, len(files), statistics.median(ours), statistics.median(peer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    rows = []
    real = sorted((REPO / "questions").rglob("*.yaml"))
    rows.append(bench("starter corpus", REPO, real, args.repeat))
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            files = make_corpus(root, size)
            rows.append(bench(f"synthetic {size} items", root, files, args.repeat))
    print(f"{'corpus':<24} {'files':>6} {'propeval s':>11} {'check-jsonschema s':>19} {'ratio':>6}")
    for label, n, ours, peer in rows:
        print(f"{label:<24} {n:>6} {ours:>11.3f} {peer:>19.3f} {ours / peer:>6.2f}")
    print(f"(median of {args.repeat} runs each; ratio = propeval / check-jsonschema, lower is better)")


if __name__ == "__main__":
    main()
