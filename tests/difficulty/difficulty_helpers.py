"""Helpers for the difficulty tests: graded runs written as the judge writes them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# item -> model -> fact score (None: no grade line at all). The hand-computed example.
HAND = {
    "i0001": {"m1": 5, "m2": 4, "m3": 4, "m4": 5},
    "i0002": {"m1": 5, "m2": 3, "m3": 1, "m4": 0},
    "i0003": {"m1": 0, "m2": 0, "m3": 0, "m4": 0},
    "i0004": {"m1": 4, "m2": 2, "m3": None, "m4": 0},
}


def grade(item: str, model: str, score: int | None, status: str = "scored") -> dict[str, Any]:
    """One line of grades-facts-v1.jsonl (the fields RUNS.md names)."""
    return {
        "item_id": item,
        "model": model,
        "rubric": "facts-v1",
        "rubric_version": "1",
        "rubric_hash": "sha256:0",
        "judge_model": "judge",
        "prompt_hash": "sha256:1",
        "attempts": 1,
        "status": status,
        "verdict": None,
        "reason": None,
        "raw": None,
        "fact_states": None,
        "fact_score": score if status == "scored" else None,
        "propaganda": 0 if status == "scored" else None,
        "frame_adopted": None,
    }


def write_run(root: Path, run_id: str, lines: list[dict[str, Any]]) -> Path:
    """A grades file of facts-v1, and the rubric it is read under (as a corpus that graded holds it)."""
    if not (root / "rubrics/facts-v1").is_dir():
        shutil.copytree(REPO / "rubrics/facts-v1", root / "rubrics/facts-v1")
    path = root / "runs" / run_id / "grades-facts-v1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def write_hand_runs(root: Path, table: dict[str, dict[str, int | None]] = HAND) -> None:
    models = sorted({m for row in table.values() for m in row})
    for model in models:
        lines = [grade(item, model, row[model]) for item, row in table.items() if row.get(model) is not None]
        write_run(root, f"run-{model}", lines)
