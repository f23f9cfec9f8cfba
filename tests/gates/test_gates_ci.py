"""`propeval ci --base` on a real git repository with a PR-like branch."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure

from propeval.cli import cli
from propeval.cli.ci import SUMMARY_PROBLEMS, summary_markdown
from propeval.config import load_config
from propeval.pipeline.ci import run_ci
from propeval.pipeline.outcome import StepOutcome
from propeval.pipeline.steps import STEPS
from propeval.result import CheckResult, Problem
from propeval.workspace import Workspace


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def main_with_records(gate_corpus: Any, in_git: Any, loopback: Any, mode: str = "required") -> None:
    """main: a corpus whose items have fresh, signed records; then a branch `pr` is checked out."""
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    configure(gate_corpus, mode=mode)
    gate_corpus.write(".gitignore", "runs/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus with answerability records")
    in_git("checkout", "-qb", "pr")


def test_ci_on_a_clean_pr_branch_passes(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    gate_corpus.write("README.md", "docs only\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "docs")
    res = run("ci", "--base", "main", "--step", "check", "--step", "answerability", "--step", "judge")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "note: policy: [tool.propeval] and the policy files as at main",
        "note: judge: no rubric changed since main; the judge gate has nothing to check",
        "step           status   problems",
        "-------------  -------  --------",
        "policy         ok       0",
        "check          ok       0",
        "answerability  ok       0",
        "judge          skipped  0",
        "skipped: nothing to check; the step's note says why",
        "ci: exit 0",
    ]


@pytest.mark.slow
def test_ci_on_a_pr_that_adds_an_item_and_edits_a_rubric(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    gate_corpus.item("i0004", prompt="How many people died in Beijing in June 1989?")
    tpl = gate_corpus.root / "rubrics/audit-v1/prompt.md"
    tpl.write_text(tpl.read_text(encoding="utf-8") + "\nCode conservatively.\n", encoding="utf-8")
    in_git("add", "-A")
    in_git("commit", "-qm", "new item; stricter audit prompt")
    res = run("ci", "--base", "main", "--skip", "dedup")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert (
        "questions/c0001/i0004.yaml [answerability] i0004: no answerability record "
        "(ledger/answerability/i0004.json); a maintainer records this (propeval gate answerability --online i0004, "
        "from a trusted install: SECURITY.md); nothing for a contributor to run"
    ) in lines
    assert (
        "ledger/judge/audit-v1.json [judge-gate] audit-v1: no judge-agreement record (ledger/judge/audit-v1.json); "
        "a maintainer records this (propeval gate judge --rubric audit-v1 --online, from a trusted install: SECURITY.md)"
    ) in lines
    assert "note: schema: breaking: 0, additive: 0, docs: 0 -> no version bump needed" in lines
    # a rubric is policy: its change needs a maintainer's approval (propeval ledger approve)
    assert any(
        line.startswith(
            "rubrics/audit-v1/prompt.md [policy-change] policy change: needs a maintainer: rubrics/audit-v1/prompt.md "
            "(changed; how answers are graded, and the gold sets judges are held to)"
        )
        for line in lines
    ), res.output
    assert lines[-12:] == [
        "step           status   problems",
        "-------------  -------  ------------------------",
        "policy         failed   1 error(s), 0 warning(s)",
        "check          ok       0",
        "ledger         skipped  0",
        "groups         failed   2 error(s), 0 warning(s)",
        "answerability  failed   1 error(s), 0 warning(s)",
        "judge          failed   1 error(s), 0 warning(s)",
        "schema         ok       0",
        "failed: errors: they fail the run (exit 1)",
        "skipped: nothing to check; the step's note says why",
        "ci: exit 1",
    ]


def test_ci_advisory_answerability_reports_but_passes(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback, mode="advisory")  # the base branch says advisory
    gate_corpus.item("i0004", prompt="How many people died in Beijing in June 1989?")
    in_git("add", "-A")
    in_git("commit", "-qm", "new item")
    res = run("ci", "--base", "main", "--step", "answerability")
    assert res.exit_code == 0
    assert res.output.splitlines()[-5:] == [
        "-------------  --------  ------------------------",
        "policy         ok        0",
        "answerability  advisory  0 error(s), 1 warning(s)",
        "advisory: warnings only (an advisory gate's problems are warnings): reported, and they do not fail the run",
        "ci: exit 0",
    ]


def test_a_missing_ref_is_one_clear_error(gate_corpus: Any, in_git: Any) -> None:
    in_git("add", "-A")
    in_git("commit", "-qm", "init")
    res = run("ci", "--base", "origin/nowhere")
    assert res.exit_code == 3
    assert res.output.startswith("propeval: error: git ref 'origin/nowhere' does not exist here;")


def test_a_step_whose_code_is_missing_is_an_error_not_a_pass(gate_corpus: Any, in_git: Any) -> None:
    in_git("add", "-A")
    in_git("commit", "-qm", "init")

    def needs_absent_area(ws: Any, scope: Any) -> CheckResult:
        import propeval.not_merged_yet  # type: ignore[import-not-found]  # noqa: F401

        return CheckResult()

    registry = {"check": STEPS["check"], "absent": needs_absent_area}
    result = run_ci(Workspace(load_config()), "main", registry=registry)
    assert [(s.name, s.status, s.exit_code) for s in result.steps] == [
        ("policy", "ok", 0),
        ("check", "ok", 0),
        ("absent", "error", 3),
    ]
    assert result.exit_code == 3
    assert result.steps[2].problems[0].message == (
        "step 'absent' cannot run: its module propeval.not_merged_yet is not in this checkout; "
        "merge its branch, or leave it out with --skip absent"
    )


def test_ci_appends_a_markdown_summary(gate_corpus: Any, in_git: Any, loopback: Any, tmp_path: Any) -> None:
    """--summary appends (GitHub's $GITHUB_STEP_SUMMARY holds what earlier steps wrote)."""
    main_with_records(gate_corpus, in_git, loopback)
    gate_corpus.write("README.md", "docs only\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "docs")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    res = run("ci", "--base", "main", "--step", "check", "--step", "judge", "--summary", str(summary))
    assert res.exit_code == 0, res.output
    assert summary.read_text(encoding="utf-8").splitlines() == [
        "earlier step",
        "### propeval ci: exit 0",
        "",
        "| step | status | errors | warnings |",
        "| --- | --- | --- | --- |",
        "| policy | ok | 0 | 0 |",
        "| check | ok | 0 | 0 |",
        "| judge | skipped | 0 | 0 |",
    ]


def test_the_summary_lists_problems_as_inert_markdown() -> None:
    """Messages quote the pull request's files: no link, image, HTML or table cell comes out of them."""
    hostile = Problem(
        "questions/c0001/i0004.yaml", 3, 5, "schema", "bad ![x](https://evil.example/p.png) | <img src=x> [y](z)"
    )
    steps = [StepOutcome("check", "failed", [hostile], exit_code=1)]
    text = summary_markdown(steps, 1)
    assert text.splitlines()[-1] == (
        r"| check | questions/c0001/i0004.yaml:3 | schema | error | bad \!\[x\]\(https://evil.example/p.png\) "
        r"\| &lt;img src=x&gt; \[y\]\(z\) |"
    )
    many = [StepOutcome("check", "failed", [hostile] * (SUMMARY_PROBLEMS + 3), exit_code=1)]
    assert summary_markdown(many, 1).splitlines()[-1] == "3 more problem(s): see the annotations or the log."


def test_ci_does_not_repeat_the_drift_skipped_note_on_every_pull_request(gate_corpus: Any, in_git: Any) -> None:
    """The note "translation drift: skipped" is the same on every run; a pull request's checks do
    not carry it as a ::notice:: (`propeval groups --verbose` still says it)."""
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus")
    in_git("checkout", "-qb", "pr")
    gate_corpus.item("i0004", prompt="How many people died in Beijing in June 1989?")
    in_git("add", "-A")
    in_git("commit", "-qm", "an item")
    res = run("ci", "--base", "main", "--step", "groups", "--format", "github")
    assert res.exit_code in (0, 1), res.output
    assert any(line.startswith("groups  ") for line in res.output.splitlines())  # the step ran ...
    assert "translation drift" not in res.output, res.output  # ... without the note of every run
    verbose = run("groups", "--verbose")
    assert "note: translation drift: skipped, no multilingual encoder is configured" in verbose.output
