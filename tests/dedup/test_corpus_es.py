"""The es/ca/eu/gl calibration corpus: every pair of those languages (and each with English) has
planted translations in both splits, and the file is what its script builds from the public data."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FILE = REPO / "tests/dedup/data/corpus/corpus-es-ca-eu-gl.jsonl"
DATA = next((p for p in (REPO.parent / "shared/data", REPO.parents[1] / "shared/data") if p.is_dir()), None)


def test_every_language_pair_has_planted_translations_in_both_splits() -> None:
    rows = [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]
    for split in ("calibration", "heldout"):
        by_meaning: dict[str, list[str]] = defaultdict(list)
        for r in rows:
            if r["corpus"] == "translations-es" and r["split"] == split:
                by_meaning[r["meaning"]].append(r["language"])
        pairs = Counter("-".join(sorted(p)) for langs in by_meaning.values() for p in itertools.combinations(langs, 2))
        for a, b in itertools.combinations(("ca", "en", "es", "eu", "gl"), 2):
            assert pairs[f"{a}-{b}"] >= 70, (split, a, b, pairs[f"{a}-{b}"])
    corpora = {r["corpus"] for r in rows}
    assert {f"templated-{x}" for x in ("es", "ca", "eu", "gl")} <= corpora
    assert {f"no-translation-en-{x}" for x in ("es", "ca", "eu", "gl")} <= corpora


@pytest.mark.slow
@pytest.mark.skipif(DATA is None, reason="the shared data folder is not beside the repository")
def test_the_file_is_what_its_script_builds(tmp_path: Path) -> None:
    out = tmp_path / "corpus.jsonl"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/dedup_corpus_es.py"), "--data", str(DATA), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO / "benchmarks",
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == FILE.read_bytes()
