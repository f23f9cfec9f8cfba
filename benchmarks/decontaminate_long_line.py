"""Peak memory of `propeval decontaminate` on one very long JSONL line (#35: 200 MB peaked at 3.19 GB).

Run from the repository root:

    python benchmarks/decontaminate_long_line.py [--line-mb 200] [--reps 3] [--baseline PYTHON]

It writes, in a temporary folder (never in the repository), a shard of three lines: a short clean
document, one document whose text is --line-mb MB of English filler with a corpus prompt planted in
it (and its id after the text, as a writer that puts `text` first leaves it), and a short document
holding another plant. Then it runs `propeval decontaminate` on that shard, each run a fresh
process under `/usr/bin/time -v` with an empty state folder and `--jobs 1`, and prints the peak RSS
(`Maximum resident set size`), the wall time and whether both plants were found, median of --reps:

  * `streamed`: the default `--max-line-bytes` (8 MiB): the line is streamed, never read whole;
  * `read whole`: `--max-line-bytes` above the line's length: orjson reads the line whole, and the
    text is scanned in windows (what bounds the tokenizer's arrays);
  * with `--baseline PYTHON` (a python whose propeval is another checkout, e.g. the one before #35):
    the same command with that code, as the reference row, and each row's ratio to it.

The corpus is this repository's starter corpus (`questions/`); the plants are two of its prompts.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def prompts(count: int) -> list[str]:
    """The first ``count`` English prompts of the starter corpus (long enough to hold 13-grams)."""
    sys.path.insert(0, str(REPO / "tools"))
    from propeval.config import load_config
    from propeval.corpus import load_corpus

    corpus = load_corpus(load_config(REPO))
    found = [i.prompt for i in sorted(corpus.active_items(), key=lambda i: i.id) if i.language == "en"]
    return [p for p in found if len(p.split()) >= 15][:count]


def write_shard(folder: Path, line_mb: int, plants: list[str]) -> Path:
    filler = "the quick brown fox jumps over the lazy dog and keeps on running through the field "
    repeats = line_mb * 1_000_000 // len(filler)
    path = folder / "long.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "short-1", "text": "A clean document about the weather."}) + "\n")
        # One JSON string written in pieces, so the benchmark itself never holds the line.
        fh.write('{"text": "')
        half = repeats // 2
        for part in (filler * (half // 1000),) * 1000:
            fh.write(part)
        fh.write(json.dumps(plants[0])[1:-1] + " ")
        for part in (filler * ((repeats - half) // 1000),) * 1000:
            fh.write(part)
        fh.write('", "id": "the-long-one"}\n')
        fh.write(json.dumps({"id": "short-2", "text": f"Quiz: {plants[1]}"}) + "\n")
    return path


def run_once(python: str, shard: Path, state: Path, extra: list[str]) -> dict[str, object]:
    cmd = ["/usr/bin/time", "-v", python, "-m", "propeval", "--root", str(REPO), "decontaminate", str(shard)]
    cmd += ["--state-dir", str(state), "--jobs", "1", "--format", "json", *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))  # type: ignore[union-attr]
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", done.stderr).group(1)  # type: ignore[union-attr]
    seconds = sum(float(x) * 60**i for i, x in enumerate(reversed(wall.split(":"))))
    report = json.loads(done.stdout)
    docs = sorted({f["doc"] for f in report["findings"]})
    return {"peak_mb": peak / 1024, "wall_s": seconds, "found": docs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--line-mb", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--baseline", default="", help="a python whose propeval is the code to compare with")
    args = ap.parse_args()
    plants = prompts(2)
    with tempfile.TemporaryDirectory(prefix="propeval-longline-") as tmp:
        folder = Path(tmp)
        shard = write_shard(folder, args.line_mb, plants)
        size = shard.stat().st_size
        configs: list[tuple[str, str, list[str]]] = []
        if args.baseline:
            configs.append(("baseline (--baseline, its defaults)", args.baseline, []))
        configs.append(("streamed (default --max-line-bytes, 8 MiB)", sys.executable, []))
        configs.append(
            ("read whole (--max-line-bytes above the line)", sys.executable, ["--max-line-bytes", str(size)])
        )
        runs: dict[str, list[dict[str, object]]] = {name: [] for name, _, _ in configs}
        for rep in range(args.reps):  # interleaved rounds: the machine's load moves under all alike
            for name, python, extra in configs:
                state = folder / f"state-{rep}-{name[:4]}"
                runs[name].append(run_once(python, shard, state, extra))
        mb = f"{size / 1e6:.0f} MB"
        print(f"shard: {mb}, one line of about {mb} between two short ones; {args.reps} run(s) each")
        print(f"{'configuration':<48} {'peak RSS MB':>12} {'wall s':>8} {'ratio':>7}  found")
        base = statistics.median(float(r["peak_mb"]) for r in runs[configs[0][0]])  # type: ignore[arg-type]
        for name, _, _ in configs:
            peak = statistics.median(float(r["peak_mb"]) for r in runs[name])  # type: ignore[arg-type]
            wall = statistics.median(float(r["wall_s"]) for r in runs[name])  # type: ignore[arg-type]
            found = runs[name][-1]["found"]
            print(f"{name:<48} {peak:>12.0f} {wall:>8.1f} {peak / base:>7.2f}  {', '.join(found)}")  # type: ignore[arg-type]
        print("peak RSS: /usr/bin/time -v 'Maximum resident set size', median; ratio: peak / the first row's")


if __name__ == "__main__":
    main()
