"""The corpus-level calibration file and its reviewed labels agree: every pair of meanings that
``tests/dedup/data/corpus/relabelled.tsv`` lists is in ``corpus.jsonl`` and is marked there as
near and reviewed (not counted), and nothing else is (``benchmarks/dedup_corpus.py`` writes both)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "dedup" / "data" / "corpus"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dedup_corpus", REPO / "benchmarks" / "dedup_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


@pytest.mark.slow
def test_every_reviewed_pair_is_marked_in_the_calibration_file() -> None:
    relabelled = _benchmark().read_relabelled(DATA / "relabelled.tsv")
    assert len(relabelled) == 17 and all(reason.strip() for reason in relabelled.values())
    rows = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    meanings = {r["meaning"] for r in rows}
    for pair in relabelled:
        assert pair <= meanings, f"{sorted(pair)} is not in corpus.jsonl"
    marked = {frozenset((r["meaning"], m)) for r in rows for m in r.get("reviewed", [])}
    assert marked == set(relabelled)
    for r in rows:
        assert set(r.get("reviewed", [])) <= set(r["near"])


def test_a_bad_line_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "relabelled.tsv"
    bad.write_text("# header\nstsb:1:1\tstsb:2:1\tthe same\nstsb:3:1\tstsb:4:1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"relabelled.tsv:3: expected meaning<TAB>meaning<TAB>reason"):
        _benchmark().read_relabelled(bad)
