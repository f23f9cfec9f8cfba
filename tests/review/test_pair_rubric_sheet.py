"""A sheet in a corpus whose rubrics include a kind the review app has no form for (the starter's
pair verifier) is labelled under the rubric that fits, not refused with an internal error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import REPO
from propeval.config import load_config
from propeval.review.workspace import Workspace


def test_a_sheet_beside_a_pair_rubric_gets_the_rubric_that_labels_its_fields(tmp_path: Path) -> None:
    for part in ("questions", "rubrics", "schema.json", "pyproject.toml"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy2)(REPO / part, tmp_path / part)
    kinds = {
        json.dumps(p.read_text(encoding="utf-8").count("kind: pair")) for p in tmp_path.glob("rubrics/*/rubric.yaml")
    }
    assert kinds == {"0", "1"}  # the starter holds a pair rubric beside the others
    sheet = tmp_path / "sheet.jsonl"
    sheet.write_text(json.dumps({"row": "r001", "prompt": "q", "answer": "a", "propaganda": None}) + "\n", "utf-8")
    ws = Workspace(load_config(tmp_path), labels=tmp_path / "labels", sheets=[sheet])
    ws.check_sheets()
    [entry] = [e for e in ws.sources() if getattr(e, "rubric", None)]
    assert entry.rubric == "facts-v1"
