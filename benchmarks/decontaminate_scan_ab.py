"""The scan of ordinary shards (short lines), this tree against another checkout, as a ratio.

Run from the repository root:

    python benchmarks/decontaminate_scan_ab.py --baseline-tools OTHER/tools [--size-mb 60] [--rounds 5]

It writes one synthetic JSONL shard (short English documents, about 1 in 50 holding a planted
corpus prompt, 2% Chinese) to a temporary folder, and times `scan_shard` on it in a fresh process
for each tree, alternating the two trees `--rounds` times (the machine's load moves under both
alike). It prints the CPU seconds of the scan (process time, as `ShardResult.cpu_seconds`), MB per
CPU-second, the medians and their ratio, and checks both found the same documents. What it
measures: what #35's changes to the line reader (a length cap on each line, the raw-text path of
bad lines) cost on shards that have neither.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROMPT = "What did the army do in central Beijing on the night of 3-4 June 1989, and how many people died?"
ZH = "1989年6月3日至4日夜间，军队在北京市中心做了什么？"
WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
]

SCAN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from propeval.decontam.index import build
from propeval.decontam.scan import Shard, scan_shard
index = build([("p", "prompt", "i1", sys.argv[3]), ("z", "prompt", "i2", sys.argv[4])])
result = scan_shard(Shard("s.jsonl", sys.argv[2], "jsonl", "text", "id"), index)
print(json.dumps({"cpu": result.cpu_seconds, "bytes": result.bytes, "docs": sorted(result.flagged.values())}))
"""


def write_shard(path: Path, size_mb: int) -> None:
    rng = random.Random(11)
    target = size_mb * 1_000_000
    written = 0
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            n += 1
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))
            if n % 50 == 0:
                text += " " + PROMPT
            if n % 50 == 25:
                text = ZH + text
            line = json.dumps({"id": f"d{n}", "text": text}, ensure_ascii=False) + "\n"
            fh.write(line)
            written += len(line.encode("utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-tools", required=True, help="the tools/ folder of the checkout to compare with")
    ap.add_argument("--size-mb", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    trees = {"baseline": str(Path(args.baseline_tools).resolve()), "this tree": str(REPO / "tools")}
    with tempfile.TemporaryDirectory(prefix="propeval-scan-ab-") as tmp:
        shard = Path(tmp) / "s.jsonl"
        write_shard(shard, args.size_mb)
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        found: dict[str, list[str]] = {}
        size = 0
        for _ in range(args.rounds):
            for name, tools in trees.items():
                out = subprocess.run(
                    [sys.executable, "-c", SCAN, tools, str(shard), PROMPT, ZH],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                got = json.loads(out.stdout)
                cpu[name].append(got["cpu"])
                found[name], size = got["docs"], got["bytes"]
    print(f"shard: {size / 1e6:.0f} MB of short documents; {args.rounds} alternating round(s); scan CPU-s (median)")
    print(f"{'tree':<10} {'CPU s':>8} {'MB/CPU-s':>9}  rounds")
    for name in trees:
        med = statistics.median(cpu[name])
        rounds = ", ".join(f"{c:.2f}" for c in cpu[name])
        print(f"{name:<10} {med:>8.2f} {size / 1e6 / med:>9.1f}  {rounds}")
    ratio = statistics.median(cpu["this tree"]) / statistics.median(cpu["baseline"])
    same = found["this tree"] == found["baseline"]
    print(f"ratio (this tree / baseline CPU): {ratio:.3f}; same documents found: {same} ({len(found['this tree'])})")


if __name__ == "__main__":
    main()
