"""The rule registry (propeval.rules) is the one list of rule ids.

Every problem the commands emit on bad input uses a registered id; the check and groups
registries, the file-type rules and the ci step names agree with it; the rule reference
(docs/rules.md), CONTRIBUTING's error tables and `check --help` list what it lists.
"""

from __future__ import annotations

import json
import re
import shutil
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import REPO, claim_yaml, item_yaml
from propeval.cli import cli
from propeval.result import Severity
from propeval.rules import RULES, in_area

NEGATIVE = REPO / "tests" / "fixtures" / "check" / "negative"


def run_json(*args: str, fmt: str = "sarif") -> tuple[int, Any]:
    result = CliRunner().invoke(cli, [*args, "--format", fmt], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def rule_ids(doc: Any) -> set[str]:
    """The rule ids of every problem in a SARIF log (every problem a command found, dedup's pairs
    and ci's steps included), or in the json problem document of a command without sarif."""
    if "runs" in doc:
        return {r["ruleId"] for r in doc["runs"][0]["results"]}
    return {p["rule"] for p in doc["problems"]}


@pytest.mark.slow  # over 0.5 CPU-s: out of the fast lane, in make test
def test_check_emits_only_registered_rules_on_every_bad_fixture(good_corpus: Any) -> None:
    """Every negative fixture at once (items and claims in files of their own), then each bad schema."""
    seen: set[str] = set()
    for n, fixture in enumerate(sorted(NEGATIVE.iterdir())):
        if fixture.name.startswith("json-"):
            continue
        if fixture.name.startswith("claim-"):
            good_corpus.write(f"questions/c{n + 100:04d}/claim.yaml", fixture.read_bytes())
        else:
            good_corpus.write(f"questions/c0001/i{n + 100:04d}{fixture.suffix}", fixture.read_bytes())
    code, doc = run_json("check")
    assert code == 1
    seen |= rule_ids(doc)
    for fixture in sorted(NEGATIVE.glob("json-*")):
        shutil.copy(fixture, good_corpus.root / "schema.json")
        code, doc = run_json("check")
        assert code == 1, fixture.name
        seen |= rule_ids(doc)
    assert seen - set(RULES) == set()
    # The fixtures reach most of the file and check areas: the run above is not vacuous.
    assert {"schema", "hidden-text", "ids", "encoding", "yaml-syntax", "json-syntax", "schema-meta"} <= seen


def test_groups_dedup_gate_and_agree_emit_only_registered_rules(corpus: Any) -> None:
    corpus.claim("c0001")
    corpus.claim("c0002", source_url="https://example.org/other", title="Another claim")
    corpus.item("i0001", "c0001", framing="loaded", prompt="Why was it a counter-revolutionary riot?")
    corpus.item(
        "i0002", "c0002", language="ru", prompt="What happened in central Beijing on the night of 3-4 June 1989?"
    )
    corpus.item("i0003", "c0002", prompt="What happened in central Beijing on the night of 3-4 June 1989?")
    corpus.item("i0004", "c0002", translation_of="i0004")
    corpus.item("i0005", "c0001", question_type="frame_testing")  # the same prompt as i0003, another claim
    corpus.write("dedup-allowlist.yaml", "pairs: 3\n")
    shutil.copytree(REPO / "rubrics", corpus.root / "rubrics")
    seen: set[str] = set()
    for args in (["groups"], ["dedup", "--pass", "exact"], ["gate", "answerability", "--all"]):
        code, doc = run_json(*args)
        assert code == 1, args
        seen |= rule_ids(doc)
    labels = corpus.write("labels.jsonl", '{"item_id": "i0001", "tone": "Neutral"}\n{"tone": "Loaded"}\n')
    code, doc = run_json("agree", str(labels), str(labels), "--field", "tone", fmt="json")
    assert code == 1
    seen |= rule_ids(doc)
    matrix = corpus.write("scores.csv", "item_id,m1,m2\ni0001,5,x\ni0001,9,1\n")
    code, doc = run_json("difficulty", "--matrix", str(matrix), "--out", str(corpus.root / "d.json"))
    seen |= rule_ids(doc)
    assert seen - set(RULES) == set()
    assert {
        "groups-translation-cycle",
        "dedup-exact",
        "dedup-allowlist",
        "answerability",
        "labels",
        "difficulty-input",
    } <= seen


def test_ci_emits_only_registered_rules(corpus: Any, in_git: Any) -> None:
    """A pull request that changes policy, deletes a ledger record and breaks an item."""
    corpus.claim()
    corpus.item()
    corpus.write("ledger/answerability/i0001.json", "{}\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    in_git("checkout", "-qb", "pr")
    (corpus.root / "ledger/answerability/i0001.json").unlink()
    pyproject = corpus.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8").replace("13", "14"), encoding="utf-8")
    corpus.write("questions/c0001/i0002.yaml", item_yaml("i0002", framing="sideways"))
    corpus.write("questions/c0003/claim.yaml", claim_yaml("c0004"))
    in_git("add", "-A")
    in_git("commit", "-qm", "pr")
    code, doc = run_json("ci", "--base", "main", "--skip", "dedup")
    assert code == 1
    seen = rule_ids(doc)
    assert seen - set(RULES) == set()
    assert {"policy-change", "ledger-deleted", "schema", "ids"} <= seen


def test_check_registry_is_the_check_area() -> None:
    from propeval.checks import CHECKS

    assert set(CHECKS) == set(in_area("check"))


def test_groups_and_file_type_rules_are_registered() -> None:
    from propeval.filetypes import RULES as FILE_RULES
    from propeval.groups import RULES as GROUPS_RULES

    assert set(GROUPS_RULES) == set(in_area("groups"))
    assert set(FILE_RULES) <= set(in_area("file"))


def test_every_ci_and_run_step_has_its_rule() -> None:
    """A step that cannot run is reported as ``ci-<step>``: one registered id per step."""
    from propeval.pipeline.steps import STEPS

    assert set(in_area("ci")) == {f"ci-{name}" for name in ("policy", *STEPS)}


def _table_rules(doc: str) -> set[str]:
    """The ids in the first column of a page's error tables (tables headed ``| rule |``)."""
    ids: set[str] = set()
    in_table = False
    for line in (REPO / doc).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("| rule |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if in_table and not line.startswith("| ---"):
            ids |= set(re.findall(r"`([a-z0-9<>-]+)`", line.split("|")[1]))
    return ids


def _reference() -> dict[str, str]:
    """docs/rules.md: rule id -> its entry (from its ``### `id` `` heading to the next heading)."""
    entries: dict[str, str] = {}
    current = ""
    for line in (REPO / "docs/rules.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            found = re.fullmatch(r"### `([a-z0-9-]+)`", line)
            current = found.group(1) if found else ""
            if current:
                assert current not in entries, f"docs/rules.md has two entries for {current}"
                entries[current] = ""
        elif current:
            entries[current] += line + "\n"
    return entries


def test_the_rule_reference_has_one_entry_per_registered_rule_with_its_texts() -> None:
    """Each entry's heading is the id alone (its anchor, which SARIF's helpUri names), and holds
    the registry's severity, description, what-is-wrong and fix: the page is generated, and this
    fails when it is stale or hand-edited."""
    entries = _reference()
    assert list(entries) == list(RULES)
    for rule in RULES.values():
        entry = entries[rule.id]
        assert f"**{rule.severity.value}" in entry and rule.description in entry, rule.id
        assert f"**What is wrong:** {rule.wrong}." in entry and f"**How to fix it:** {rule.fix}." in entry, rule.id


def test_contributing_error_tables_list_registered_rules_and_every_hook_rule() -> None:
    """CONTRIBUTING shows an item author what the hooks will say: every rule of the areas a hook
    reports (reading files, check, groups, dedup), and nothing the registry does not hold."""
    documented = _table_rules("CONTRIBUTING.md")
    hooks = {r for area in ("file", "check", "groups", "dedup") for r in in_area(area)}
    assert hooks - documented - {"files"} == set(), "a hook's rule is not in CONTRIBUTING's error tables"
    assert documented - set(RULES) == set(), "in CONTRIBUTING's error tables but not registered"


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_says_what_is_wrong_and_how_to_fix_it(rule: str) -> None:
    r = RULES[rule]
    assert r.wrong and r.fix and "|" not in r.wrong + r.fix and "\n" not in r.wrong + r.fix
    assert r.help_text == f"What is wrong: {r.wrong.replace('`', '')}.\nHow to fix it: {r.fix.replace('`', '')}."
    assert r.fix in r.help_markdown and r.wrong in r.help_markdown


@pytest.mark.parametrize("command", ["check", "groups", "decontaminate"])
def test_help_lists_every_rule_of_its_area_with_its_description(command: str) -> None:
    """The commands whose help carries a rule list (``with_rules``): each lists its whole area."""
    out = CliRunner().invoke(cli, [command, "--help"], terminal_width=200, catch_exceptions=False).output
    assert in_area(command)
    for rule in in_area(command).values():
        assert re.search(rf"^\s+{re.escape(rule.id)}\s+(\(\w+\) )?{re.escape(rule.description)}$", out, re.M), rule.id


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_has_one_line(rule: str) -> None:
    d = RULES[rule].description
    assert d and "\n" not in d and len(d) <= 100


def _written_severities() -> list[tuple[str, str, str]]:
    """(where, rule id, severity written) of every problem the package builds with a literal rule id
    and a literal severity (or none, which is an error): ``Problem(path, line, col, "id", ...)``,
    ``doc.problem(pointer, "id", ...)``, and those wrapped in ``_warning(...)`` (ingest's downgrade)."""
    import ast

    out: list[tuple[str, str, str]] = []
    package = REPO / "tools" / "propeval"
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrapped = {
            id(arg)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_warning"
            for arg in node.args
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "Problem":
                at = 3
            elif isinstance(func, ast.Attribute) and func.attr == "problem" and ast.unparse(func.value) != "RULE":
                at = 1  # doc.problem(pointer, rule, message); RULE.problem takes its severity from the Rule
            else:
                continue
            if (
                len(node.args) <= at
                or not isinstance(node.args[at], ast.Constant)
                or not isinstance(node.args[at].value, str)
            ):
                continue
            written = [ast.unparse(k.value) for k in node.keywords if k.arg == "severity"]
            if written and not re.fullmatch(r"Severity\.[A-Z]+", written[0]):
                continue  # chosen at run time (a gate's mode)
            severity = written[0].split(".")[1].lower() if written else "error"
            if id(node) in wrapped:
                severity = "warning"
            out.append((f"{path.relative_to(package)}:{node.lineno}", node.args[at].value, severity))
    return out


def test_every_problem_s_severity_is_one_its_rule_declares() -> None:
    sites = _written_severities()
    assert len(sites) > 50  # the scan found the package's problems
    wrong = [
        f"{where} [{rule_id}] {severity}, but the rule declares "
        + (", ".join(s.value for s in (RULES[rule_id].severity, *RULES[rule_id].also)) if rule_id in RULES else "none")
        for where, rule_id, severity in sites
        if rule_id not in RULES
        or severity not in {RULES[rule_id].severity.value, *(s.value for s in RULES[rule_id].also)}
    ]
    assert not wrong, "\n".join(wrong)


def test_a_rule_refuses_a_severity_it_does_not_declare() -> None:
    from propeval.checks import sources

    assert sources.RULE.problem("c.yaml", 1, 1, "opaque", severity=Severity.WARNING).severity is Severity.WARNING
    with pytest.raises(ValueError, match="rule 'sources' declares no notice problems"):
        sources.RULE.problem("c.yaml", 1, 1, "m", severity=Severity.NOTICE)
