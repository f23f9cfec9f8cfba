"""The `score` table of issue 21's note: two loopback "models" under two judges and two settings,
on a copy of the starter corpus, with every pitfall flagged.

Both models and both judges are one scripted loopback server (``propeval.judge.loopback``), so
the numbers say nothing about any real model: they show what `score` checks and prints.

* model-a answers every item in full, at the default settings (S1);
* model-b (endpoint ``b``: its own max_tokens 512 and knowledge_cutoff 2022-06) answers at
  temperature 0.7, top_p 0.9, seed 7, reasoning effort high, thinking off, a system prompt (S2);
  about one answer in eight stops at the cap (finish_reason length), and about one in thirty
  carries hostile usage (a boolean, a negative count);
* judge-x finds a fact stated with probability 0.8 (model-a) or 0.6 (model-b); judge-y, stricter,
  0.5 and 0.35 (seeded by item and fact), and answers a propaganda score of 1 with a verbatim
  quote for one item in ten.

    PYTHONPATH=tools python benchmarks/score_pitfalls.py [--out score_table.txt]

It prints `score` refusing the mixed runs (stderr, exit 1), then the `--allow-mixed` table.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from click.testing import CliRunner  # noqa: E402

from propeval.cli import cli  # noqa: E402
from propeval.judge.loopback import LoopbackServer, Reply, Seen, fact_ids, is_judge_request  # noqa: E402

ANSWER = "Troops fired on civilians; the government never published a death toll."
ANSWER_B = "Soldiers opened fire on civilians; no official death toll was ever released."
TOML = """
[tool.propeval]
questions_dir = "questions"

[tool.propeval.judge]
concurrency = 8
max_attempts = 2
backoff_base = 0.01
answer_endpoint = "a"
judge_endpoint = "a"

[tool.propeval.judge.prices]
model-a = [0.15, 0.60]
model-b = [3.00, 15.00]
judge-x = [2.50, 10.00]
judge-y = [1.10, 4.40]

[tool.propeval.judge.endpoints.a]
base_url = "{url}"
model = "model-a"

[tool.propeval.judge.endpoints.b]
base_url = "{url}"
model = "model-b"
max_tokens = 512
knowledge_cutoff = "2022-06"
"""


def draw(*parts: str) -> float:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def script(seen: Seen) -> Reply:
    model = str(seen.body.get("model"))
    if not is_judge_request(seen):
        question = seen.last
        if model == "model-a":
            return Reply(ANSWER)
        if draw("cut", question) < 0.125:
            return Reply("Soldiers opened fire", finish_reason="length")
        if draw("usage", question) < 0.03:
            return Reply(ANSWER_B, usage={"prompt_tokens": True, "completion_tokens": -3})
        return Reply(ANSWER_B)
    answered_by = "model-b" if "Soldiers opened fire" in seen.prompt else "model-a"
    p = {
        ("judge-x", "model-a"): 0.8,
        ("judge-x", "model-b"): 0.6,
        ("judge-y", "model-a"): 0.5,
        ("judge-y", "model-b"): 0.35,
    }[(model, answered_by)]
    ids = fact_ids(seen)
    # the question, as fenced in the judge prompt (the fence token changes per call): the same draw every run
    question = re.search(r"<<<QUESTION-[0-9A-F]+\n(.*?)\nQUESTION-", seen.prompt, re.DOTALL)
    key = question.group(1) if question else ""
    facts = [{"id": i, "state": "stated" if draw(model, key, i) < p else "missed", "evidence": None} for i in ids]
    prop = 1 if draw("prop", model, key) < 0.1 and "Troops fired on civilians" in seen.prompt else 0
    return Reply(
        json.dumps(
            {
                "rationale": "scripted",
                "facts": facts,
                "propaganda": prop,
                "frame_adopted": "Troops fired on civilians" if prop else None,
            }
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="also write the --allow-mixed table here")
    args = ap.parse_args()
    runner = CliRunner()

    def run(*argv: str) -> object:
        return runner.invoke(cli, list(argv), catch_exceptions=False)

    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(script) as srv:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # the response cache stays in the temp dir
        root = Path(tmp) / "corpus"
        shutil.copytree(ROOT / "questions", root / "questions")
        shutil.copytree(ROOT / "rubrics", root / "rubrics")
        shutil.copy(ROOT / "schema.json", root / "schema.json")
        (root / "pyproject.toml").write_text(TOML.format(url=srv.base_url), encoding="utf-8")
        os.chdir(root)
        with contextlib.redirect_stderr(sys.stderr):
            run("answer", "--run-id", "a")
            run(
                *("answer", "--endpoint", "b", "--run-id", "b", "--temperature", "0.7", "--top-p", "0.9"),
                *("--seed", "7", "--reasoning-effort", "high", "--thinking", "off"),
                *("--system-prompt", "Answer briefly."),
            )
            for model in ("a", "b"):
                runs = root / "runs"
                shutil.copytree(runs / model, runs / f"{model}-y", ignore=shutil.ignore_patterns(".*"))
                shutil.move(root / "runs" / model, root / "runs" / f"{model}-x")
                run("grade", f"{model}-x", "--rubric", "facts-v1", "--judge-model", "judge-x")
                run("grade", f"{model}-y", "--rubric", "facts-v1", "--judge-model", "judge-y")
        refused = run("score", "a-x", "b-x", "a-y", "b-y")
        print(f"$ propeval score a-x b-x a-y b-y    (exit {refused.exit_code})")  # type: ignore[attr-defined]
        print(refused.stderr)  # type: ignore[attr-defined]
        mixed = run("score", "a-x", "b-x", "a-y", "b-y", "--allow-mixed")
        text = f"$ propeval score a-x b-x a-y b-y --allow-mixed    (exit {mixed.exit_code})\n" + mixed.output  # type: ignore[attr-defined]
        print(text)
        if args.out:
            args.out.write_text(
                f"$ propeval score a-x b-x a-y b-y    (exit {refused.exit_code})\n{refused.stderr}\n{text}",  # type: ignore[attr-defined]
                encoding="utf-8",
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
