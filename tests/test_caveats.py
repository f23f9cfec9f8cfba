"""Every printed statistic carries its caveat, and long bootstraps show progress.

`agree` at n = 1 printed kappa 0.000 and Fleiss -1.000 as figures; the IRT stability count left
out ability uncertainty and said nothing; `agree` on a large file ran 108-114 s with no progress.
Progress is checked on a real pseudo-terminal (the bar), with CI set and with --format json (none).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import CorpusDir, on_a_terminal
from propeval.cli import cli

REPO = Path(__file__).resolve().parents[1]


def write_labels(path: Path, labels: list[str]) -> Path:
    path.write_text("".join(json.dumps({"item_id": f"i{n}", "tone": t}) + "\n" for n, t in enumerate(labels)))
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.slow  # statsmodels and krippendorff load (about 2 CPU-s)
def test_agree_on_one_unit_prints_no_figure_and_under_the_minimum_marks_each(tmp_path: Path) -> None:
    a = write_labels(tmp_path / "a.jsonl", ["Neutral"])
    b = write_labels(tmp_path / "b.jsonl", ["Loaded"])
    r = invoke("agree", str(a), str(b), "--field", "tone")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert "  cohen_kappa: undefined (only 1 unit: agreement needs at least 2 units)" in lines
    assert (
        "  fleiss_kappa: undefined (only 1 unit: agreement needs at least 2 units; n=1: the 1 of 1 rated unit(s) that every rater rated)"
        in lines
    )
    assert not any("0.000" in ln or "-1.000" in ln for ln in lines)
    assert lines[-1] == (
        "warning: figures on fewer than 30 units (--min-units) are marked TOO FEW UNITS and are not meaningful, "
        "and one on a single unit is undefined: each unit moves observed agreement by 1/n, and the 95% interval of "
        "kappa is still about +-0.3 wide at 30 units (+-0.5 at 10): so few units cannot tell slight agreement from "
        "substantial"
    )
    rng = random.Random(5)
    ten = [rng.choice(["Neutral", "Loaded"]) for _ in range(10)]
    a = write_labels(tmp_path / "a.jsonl", ten)
    b = write_labels(tmp_path / "b.jsonl", [*ten[:8], "Neutral", "Loaded"])
    r = invoke("agree", str(a), str(b), "--field", "tone", "--resamples", "0")
    assert "; TOO FEW UNITS: 10 < 30, not meaningful)" in r.stdout.splitlines()[2]
    doc = json.loads(invoke("agree", str(a), str(b), "--field", "tone", "--resamples", "20", "--format", "json").stdout)
    assert doc["min_units"] == 30 and doc["min_units_reason"].startswith("each unit moves observed agreement")
    assert doc["pairwise"][0]["stats"][0]["caveat"] == "TOO FEW UNITS: 10 < 30, not meaningful"
    r = invoke("agree", str(a), str(b), "--field", "tone", "--resamples", "0", "--min-units", "10")
    assert "TOO FEW" not in r.stdout and "warning:" not in r.stdout


def test_irt_stability_is_labelled_item_only_wherever_it_is_shown(corpus: CorpusDir) -> None:
    from difficulty.difficulty_helpers import HAND, write_hand_runs

    corpus.claim()
    for n, iid in enumerate(HAND):
        corpus.item(iid, language="ru" if n % 2 == 0 else "en")
    write_hand_runs(corpus.root)
    corpus.write("pyproject.toml", '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "irt"\nbootstrap = 20\n')
    r = invoke("difficulty")
    assert r.exit_code == 0
    ledger = json.loads((corpus.root / "ledger/difficulty.json").read_text(encoding="utf-8"))
    assert ledger["stability"]["refit"] == "items" and ledger["stability"]["draws"] == 20
    assert ledger["stability"]["caveat"].startswith("item-only: each bootstrap draw over models refits every item")
    notes = [ln for ln in r.stdout.splitlines() if ln.startswith("note: stability")]
    assert notes and "is item-only: each bootstrap draw over models refits" in notes[0]
    assert "the unstable count likely too low" in notes[0]
    unstable = [ln for ln in r.stdout.splitlines() if "[unstable]" in ln]
    assert all(
        ln.endswith("(stability is item-only: ability uncertainty left out, so this likely undercounts)")
        for ln in unstable
    )
    report = invoke("difficulty", "--report")
    assert report.stdout.splitlines()[-1].startswith("unstable: ")
    assert "bootstrap draws; item-only: each bootstrap draw over models refits" in report.stdout
    assert json.loads(invoke("difficulty", "--report", "--format", "json").stdout)["stability"]["refit"] == "items"


@pytest.mark.slow  # four fresh processes
def test_long_bootstraps_show_a_bar_on_a_terminal_and_nothing_in_ci_or_json(corpus: CorpusDir, tmp_path: Path) -> None:
    rng = random.Random(3)
    labels = ["Neutral", "Loaded", "False balance"]
    a = write_labels(tmp_path / "a.jsonl", [rng.choice(labels) for _ in range(60)])
    b = write_labels(tmp_path / "b.jsonl", [rng.choice(labels) for _ in range(60)])
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO / "tools")
    agree = ["agree", str(a), str(b), "--field", "tone", "--resamples", "400"]
    code, tty = on_a_terminal(agree, corpus.root, env)
    assert code == 0 and b"agree: bootstrap" in tty and b"/1200" in tty  # 3 figures (kappa, Fleiss, alpha) x 400
    code, tty = on_a_terminal(agree, corpus.root, {**env, "CI": "true"})
    assert code == 0 and not tty  # nothing at all on the terminal
    code, tty = on_a_terminal([*agree, "--format", "json"], corpus.root, env)
    assert code == 0 and not tty

    from difficulty.difficulty_helpers import HAND, write_hand_runs

    corpus.claim()
    for iid in HAND:
        corpus.item(iid)
    write_hand_runs(corpus.root)
    corpus.write("pyproject.toml", '[tool.propeval]\n[tool.propeval.difficulty]\nbasis = "irt"\nbootstrap = 100\n')
    code, tty = on_a_terminal(["difficulty"], corpus.root, env)
    assert code == 0 and b"difficulty: bootstrap over models" in tty and b"\x1b[?25l" in tty  # a bar (rich)
    code, tty = on_a_terminal(["difficulty"], corpus.root, {**env, "CI": "1"})
    assert code == 0 and b"\x1b[?25l" not in tty
    assert b"difficulty: bootstrap over models: 100/100 draws (item-only refits)" in tty  # the stage line stays
