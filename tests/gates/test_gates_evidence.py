"""The dataset card's curation evidence, made by the gates themselves on a loopback judge.

A signed judge-gate record that passes makes the judge's answerability records count; the same
records behind a judge that fails the judge gate are "not checked". Nothing here depends on a
model's name: both runs use the same models, only the judge's agreement differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure
from test_gates_judge import perfect

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, fact_ids, facts_verdict, is_judge_request


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def judge_then_answer(flip: int) -> Any:
    """Gold cases graded as the humans did (the first ``flip`` wrong); reference answers judged all stated."""
    gold = perfect("facts-v1", flip=flip)

    def script(seen: Seen) -> Reply:
        if is_judge_request(seen) and "An answer to:" not in seen.prompt:
            return gold(seen)
        if is_judge_request(seen):
            return Reply(facts_verdict(fact_ids(seen)))
        return default_script(seen)

    return script


@pytest.mark.slow
def test_card_counts_answerability_behind_a_passing_judge(gate_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    # The failing side (records behind a judge at chance level are "not checked") is in
    # tests/release, on the committed Gemma 3 270M records; this is the side only a real run makes.
    srv = loopback(judge_then_answer(0))
    configure(gate_corpus, srv.base_url)
    assert run("gate", "judge", "--rubric", "facts-v1", "--online").exit_code == 0
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    lines = card.splitlines()
    assert "**facts-v1**: ok: judge agreement with humans is at or above every threshold." in lines
    row = next(line for line in lines if line.startswith("| facts-v1 | judge-model | 57 |"))
    assert row.endswith("| judge_min_kappa 0.6 | ok |") or row.endswith("| judge_min_alpha 0.6 | ok |"), row
    assert "| ref-model | judge-model | facts-v1: ok | 2 | 2 | 2 of 2 (100.0%) | - |" in lines
    assert "2 of 2 active item(s) have answerability evidence that counts; 2 of them pass." in card
    # audit-v1 has no record: named, with the command that makes one
    # in the words `propeval run` uses for the judge gate (required here: a missing record fails it)
    assert "| audit-v1 | - | - | - | - | failed |" in lines
    assert "- Judge for audit-v1: no judge-gate record: scores from this judge are not validated" in card
