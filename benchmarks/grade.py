"""Benchmark: 1000 gradings against a loopback server with 100 ms latency per request, concurrency 16.

The peer is the ideal bound: with every request taking the latency and ``concurrency`` in flight,
no client can do better than concurrency / latency gradings per second. Reports the median over
``--repeat`` runs and the share of the ideal (target >= 60%).

    PYTHONPATH=tools python benchmarks/grade.py [--n 1000] [--latency 0.1] [--concurrency 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from propeval.config import load_config  # noqa: E402
from propeval.judge.grade import GradeOptions, grade_run  # noqa: E402
from propeval.judge.loopback import LoopbackServer, default_script  # noqa: E402

CLAIM = """id: {cid}
kind: censorship
title: Benchmark claim {cid}
facts:
  - id: f1
    text: The first fact of the benchmark claim.
  - id: f2
    text: The second fact of the benchmark claim.
source_url: https://example.org/{cid}
anchor: Section 1
categories: [freedom_of_expression]
official_frame_markers:
  - text: the official phrase
    language: en
"""


def build(root: Path, n: int, url: str, concurrency: int) -> None:
    (root / "questions").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f"""[tool.propeval]
[tool.propeval.judge]
concurrency = {concurrency}
timeout = 30.0
judge_endpoint = "loop"
[tool.propeval.judge.endpoints.loop]
base_url = "{url}"
model = "bench"
response_format = "json_schema"
""",
        encoding="utf-8",
    )
    shutil.copytree(ROOT / "rubrics", root / "rubrics")
    run = root / "runs" / "bench"
    run.mkdir(parents=True)
    import json

    from propeval.corpus import load_corpus

    per_claim = 10
    for c in range(n // per_claim):
        cid = f"c{c + 1:04d}"
        folder = root / "questions" / cid
        folder.mkdir()
        (folder / "claim.yaml").write_text(CLAIM.format(cid=cid), encoding="utf-8")
        for i in range(per_claim):
            iid = f"i{c * per_claim + i + 1:04d}"
            (folder / f"{iid}.yaml").write_text(
                f"id: {iid}\nclaim_id: {cid}\nlanguage: en\nframing: neutral\nquestion_type: named_fact\n"
                f"prompt: Benchmark question {iid}?\nstatus: active\n",
                encoding="utf-8",
            )
    corpus = load_corpus(load_config(root))
    with (run / "answers.jsonl").open("w", encoding="utf-8") as fh:
        for item in corpus.items.values():
            claim = corpus.claim_of(item)
            fh.write(
                json.dumps(
                    {
                        "item_id": item.id,
                        "claim_id": item.claim_id,
                        "model": "m",
                        "item_hash": item.hash,
                        "claim_hash": claim.hash if claim else None,
                        "status": "answered",
                        "answer": f"An answer about {item.id}.",
                    }
                )
                + "\n"
            )


def once(n: int, latency: float, concurrency: int) -> float:
    with LoopbackServer(default_script, latency=latency) as srv, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, n, srv.base_url, concurrency)
        config = load_config(root)
        settings = config.settings.judge
        options = GradeOptions(
            run="bench",
            rubric="facts-v1",
            endpoint=settings.endpoint("loop"),
            temperature=0.0,
            max_tokens=256,
            max_reasks=0,
        )
        t0 = time.perf_counter()
        result = grade_run(config, settings, options)
        elapsed = time.perf_counter() - t0
        assert result.counts == {"scored": n}, result.counts
        return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    times = [once(a.n, a.latency, a.concurrency) for _ in range(a.repeat)]
    med = statistics.median(times)
    ideal = a.concurrency / a.latency
    got = a.n / med
    print(f"{a.n} gradings, {a.latency * 1000:.0f} ms latency, concurrency {a.concurrency}, {a.repeat} runs")
    print(f"{'':<28}{'gradings/s':>12}{'median s':>10}")
    print(f"{'ideal (concurrency/latency)':<28}{ideal:>12.1f}{a.n / ideal:>10.2f}")
    print(f"{'propeval grade':<28}{got:>12.1f}{med:>10.2f}")
    print(f"share of ideal: {100 * got / ideal:.1f}% (target >= 60%)")


if __name__ == "__main__":
    main()
