"""Time reading a machine-written grades file (``runs/<id>/grades-<rubric>.jsonl``).

Writes one grades file of ``--lines`` records shaped as `propeval grade` writes them (with a raw
reply and a verdict each), then times :func:`propeval.judge.runs.latest` (the reader `grade`,
`answer` and `score` use) and :func:`propeval.judge.runs.read_graded` (the joined, validated rows
of `score`, `report` and `difficulty`), best of ``--repeat``. Run from the repository root:

    .venv/bin/python benchmarks/run_read.py [--lines 20000] [--repeat 3]

Run it at two commits (``PYTHONPATH=<worktree>/tools``) to compare readers.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def grade(n: int) -> dict[str, object]:
    facts = {f"f{k}": "stated" if (n + k) % 3 else "missed" for k in range(3)}
    verdict = {"facts": [{"id": k, "state": v} for k, v in facts.items()], "propaganda": 0, "rationale": "x" * 200}
    return {
        "item_id": f"i{n:05d}",
        "model": "bench-model",
        "rubric": "facts-v1",
        "rubric_version": "1.0.0",
        "rubric_hash": "sha256:" + "0" * 64,
        "judge_model": "judge",
        "prompt_hash": "sha256:" + "1" * 64,
        "attempts": 1,
        "fact_states": facts,
        "fact_score": 4,
        "propaganda": 0,
        "propaganda_judged": 0,
        "frame_adopted": None,
        "status": "scored",
        "verdict": verdict,
        "reason": None,
        "raw": json.dumps(verdict),
        "created": "2026-01-01T00:00:00Z",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from propeval.judge import runs

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "runs" / "bench" / "grades-facts-v1.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(grade(n)) + "\n" for n in range(args.lines)), encoding="utf-8")
        size = path.stat().st_size
        timings = {}
        readers = {"runs.latest": lambda: runs.latest(path, root)}
        if hasattr(runs, "read_graded"):
            from propeval.judge.kinds import KINDS

            readers["runs.read_graded"] = lambda: runs.read_graded(path, KINDS["facts"], root=root)
        for name, read in readers.items():
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                read()
                best = min(best, time.perf_counter() - start)
            timings[name] = best
    print(f"{args.lines} lines, {size / 1e6:.1f} MB")
    for name, seconds in timings.items():
        print(f"{name:<18} {seconds:6.2f} s (best of {args.repeat})")


if __name__ == "__main__":
    main()
