"""`propeval ci` reports each step as the step's own command does: the same rule ids, places,
messages and severities, in SARIF and in GitHub annotations, on one broken pull request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from gatekit import configure

from propeval.cli import cli

# Each step of ci, and the command a contributor runs for it on the same branch. `ledger` has no
# command of its own (deleted records are only a pull request's matter); `policy` is ci's.
COMMANDS = {
    "check": ["check", "--changed-since", "main"],
    "groups": ["groups", "--changed-since", "main"],
    "dedup": ["dedup", "--changed-since", "main"],
    "answerability": ["gate", "answerability", "--changed-since", "main"],
    "judge": ["gate", "judge", "--rubric", "audit-v1"],
    "schema": ["schema", "diff", "--base", "main"],
}


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return res.exit_code, res.output


def make_broken_pr(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    """main: a corpus with signed answerability records; branch pr: one problem for every step."""
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    assert run("gate", "answerability", "--online", "--all")[0] == 0
    configure(gate_corpus, mode="required")
    gate_corpus.write(".gitignore", "runs/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main")
    in_git("checkout", "-qb", "pr")
    # check: a value the schema refuses
    gate_corpus.item("i0004", framing="sideways")
    # groups: a second item asking c0001 in en, neutral, named_fact (and answerability: no record)
    gate_corpus.item("i0005", prompt="Who fired on the crowds in Beijing in June 1989, and where?")
    # dedup: another claim asks i0001's question word for word
    gate_corpus.claim("c0002", source_url="https://example.org/other-source", title="Another claim")
    gate_corpus.item("i0006", "c0002", prompt="What happened in central Beijing on the night of 3-4 June 1989?")
    # judge: a rubric's prompt changed, and its record no longer matches
    tpl = gate_corpus.root / "rubrics/audit-v1/prompt.md"
    tpl.write_text(tpl.read_text(encoding="utf-8") + "\nCode conservatively.\n", encoding="utf-8")
    # schema: a breaking change (a shorter prompt limit) with no version bump
    schema = json.loads((gate_corpus.root / "schema.json").read_text(encoding="utf-8"))
    schema["$defs"]["item"]["properties"]["prompt"]["maxLength"] = 3000
    (gate_corpus.root / "schema.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    in_git("add", "-A")
    in_git("commit", "-qm", "a pull request with a problem for every step")
    # The rubric and the schema are policy files: a maintainer approved these exact changes, so the
    # policy step has nothing to say and every other step runs with the tree's schema.
    assert run("ledger", "approve", "--base", "main")[0] == 0
    in_git("add", "-A")
    in_git("commit", "-qm", "approved by a maintainer")


def sarif_results(output: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(output)["runs"][0]["results"]
    return sorted(results, key=lambda r: json.dumps(r, sort_keys=True))


def annotations(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if line.startswith(("::error ", "::warning ")))


@pytest.mark.slow
def test_ci_reports_each_step_as_its_own_command(gate_corpus: Any, in_git: Any, loopback: Any, tmp_path: Any) -> None:
    make_broken_pr(gate_corpus, in_git, loopback)
    seen_rules = set()
    every: list[dict[str, Any]] = []
    for step, argv in COMMANDS.items():
        own_code, own = run(*argv, "--format", "sarif")
        every += sarif_results(own)
        ci_code, in_ci = run("ci", "--base", "main", "--step", step, "--format", "sarif")
        assert own_code == ci_code == 1, (step, own, in_ci)
        assert sarif_results(in_ci) == sarif_results(own), step
        seen_rules |= {r["ruleId"] for r in sarif_results(own)}
        _, own_github = run(*argv, "--format", "github")
        _, ci_github = run("ci", "--base", "main", "--step", step, "--format", "github")
        assert annotations(ci_github) == annotations(own_github), step
    # The workflow's one run: annotations on standard output, and the same problems as SARIF in a file
    # (policy and ledger have none here).
    sarif = tmp_path / "propeval.sarif"
    code, out = run("ci", "--base", "main", "--format", "github", "--sarif", str(sarif))
    assert code == 1 and annotations(out)
    assert sarif_results(sarif.read_text(encoding="utf-8")) == sorted(
        every, key=lambda r: json.dumps(r, sort_keys=True)
    )
    # every step met its problem: the comparison above is not of empty lists
    assert {"schema", "groups-conflict", "dedup-exact", "answerability", "judge-gate"} <= seen_rules, seen_rules
