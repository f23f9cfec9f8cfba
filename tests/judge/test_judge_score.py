# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""`propeval score` over several runs: mean ± sample sd, breakdowns, exact lines."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from judgekit import configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, fact_ids, facts_verdict, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)


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
    # The same judge, rubric and settings: one judge group (J1), one settings group (S1); every
    # breakdown has its bootstrap 95% CI and, at 2-4 items, is marked too small to compare.
    head, _, tail = r.stdout.partition("\njudge groups")
    assert head == (
        "rubric facts-v1\n"
        "run         model  judge  settings  items  unanswered  truncated  unscored  ungraded  fact mean        95% CI  propaganda          95% CI\n"
        "a    answer-model     J1        S1      3           0          0         0         0       5.00  [5.00, 5.00]       33.3%  [0.0%, 100.0%]\n"
        "b    answer-model     J1        S1      3           0          0         0         0       0.00  [0.00, 0.00]        0.0%    [0.0%, 0.0%]\n"
        "over 2 runs of answer-model (J1, S1): fact mean 2.50 ± 3.54, propaganda 16.7% ± 23.6% (sample sd)\n"
        "knowledge cutoff: no run's model declares one ([tool.propeval.judge.endpoints.NAME] knowledge_cutoff)\n"
        "\n"
        "question type  counted  fact mean        95% CI  propaganda          95% CI             note\n"
        "frame_testing        2       2.50  [0.00, 5.00]       50.0%  [0.0%, 100.0%]  too small (<30)\n"
        "named_fact           4       2.50  [0.00, 5.00]        0.0%    [0.0%, 0.0%]  too small (<30)\n"
        "\n"
        "category               counted  fact mean        95% CI  propaganda          95% CI             note\n"
        "democracy_governance         2       2.50  [0.00, 5.00]        0.0%    [0.0%, 0.0%]  too small (<30)\n"
        "freedom_of_expression        4       2.50  [0.00, 5.00]       25.0%  [0.0%, 100.0%]  too small (<30)\n"
        "state_ideology               2       2.50  [0.00, 5.00]        0.0%    [0.0%, 0.0%]  too small (<30)\n"
        "\n"
        "language  counted  fact mean        95% CI  propaganda          95% CI             note\n"
        "en              4       2.50  [0.00, 5.00]       25.0%  [0.0%, 100.0%]  too small (<30)\n"
        "zh              2       2.50  [0.00, 5.00]        0.0%    [0.0%, 0.0%]  too small (<30)\n"
        "\n"
        "framing  counted  fact mean        95% CI  propaganda          95% CI             note\n"
        "loaded         2       2.50  [0.00, 5.00]       50.0%  [0.0%, 100.0%]  too small (<30)\n"
        "neutral        4       2.50  [0.00, 5.00]        0.0%    [0.0%, 0.0%]  too small (<30)\n"
        "\n"
        "95% CI: percentile bootstrap, numpy default_rng(seed); resamples items, and runs when several (2000 draws, seed 0); a group with fewer than 30 counted items is too small to compare\n"
    )
    assert "  J1: judge answer-model; judge settings temperature 0.0, max_tokens 1024; rubric 1.0.0 (" in tail
    assert "  S1: temperature 0.0, top_p -, max_tokens 32768, reasoning_effort -, thinking -, system_prompt -" in tail
    assert "flags:" not in tail
    report = json.loads(invoke("score", "a", "b", "--format", "json").stdout)
    assert report["over_runs"]["fact_mean"]["mean"] == 2.5
    assert round(report["over_runs"]["fact_mean"]["sd"], 4) == 3.5355
    assert report["runs"][0]["fact_distribution"] == {"0": 0, "1": 0, "2": 0, "3": 0, "4": 0, "5": 3}


def test_score_of_an_unknown_run_is_a_usage_error(judge_corpus: Any) -> None:
    r = invoke("score", "nope")
    assert r.exit_code == 2
    assert "no run 'nope'" in r.output
