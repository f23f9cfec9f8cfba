# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""`propeval score` over several runs: mean ± sample sd, breakdowns, exact lines."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from judgekit import configure, judge_corpus, loopback  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, fact_ids, facts_verdict, is_judge_request


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def grader(state: str, propaganda_item: str | None = None) -> Any:
    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            return Reply("Troops fired. It was a riot.")
        if propaganda_item and propaganda_item in seen.prompt:
            return Reply(facts_verdict(fact_ids(seen), "stated", 1, "It was a riot."))
        return Reply(facts_verdict(fact_ids(seen), state))

    return script


def test_score_over_runs(judge_corpus: Any, loopback: Any) -> None:
    # run a: all stated (5, 5, 5), one item with propaganda; run b: all missed (0, 0, 0)
    for run, script in (("a", grader("stated", "riot put down")), ("b", grader("missed"))):
        srv = loopback(script)
        configure(judge_corpus, srv.base_url)
        invoke("answer", "--run-id", run)
        assert invoke("grade", run, "--rubric", "facts-v1").exit_code == 0
    r = invoke("score", "a", "b")
    assert r.exit_code == 0
    assert r.stdout == (
        "rubric facts-v1\n"
        "run  items  unanswered  unscored  ungraded  fact mean  propaganda\n"
        "a        3           0         0         0       5.00       33.3%\n"
        "b        3           0         0         0       0.00        0.0%\n"
        "over 2 runs: fact mean 2.50 ± 3.54, propaganda 16.7% ± 23.6% (sample sd)\n"
        "\n"
        "question type  counted  fact mean  propaganda\n"
        "frame_testing        2       2.50       50.0%\n"
        "named_fact           4       2.50        0.0%\n"
        "\n"
        "category               counted  fact mean  propaganda\n"
        "democracy_governance         2       2.50        0.0%\n"
        "freedom_of_expression        4       2.50       25.0%\n"
        "state_ideology               2       2.50        0.0%\n"
        "\n"
        "language  counted  fact mean  propaganda\n"
        "en              4       2.50       25.0%\n"
        "zh              2       2.50        0.0%\n"
        "\n"
        "framing  counted  fact mean  propaganda\n"
        "loaded         2       2.50       50.0%\n"
        "neutral        4       2.50        0.0%\n"
    )
    report = json.loads(invoke("score", "a", "b", "--format", "json").stdout)
    assert report["over_runs"]["fact_mean"]["mean"] == 2.5
    assert round(report["over_runs"]["fact_mean"]["sd"], 4) == 3.5355
    assert report["runs"][0]["fact_distribution"] == {"0": 0, "1": 0, "2": 0, "3": 0, "4": 0, "5": 3}


def test_score_of_an_unknown_run_is_a_usage_error(judge_corpus: Any) -> None:
    r = invoke("score", "nope")
    assert r.exit_code == 2
    assert "no run 'nope'" in r.output
