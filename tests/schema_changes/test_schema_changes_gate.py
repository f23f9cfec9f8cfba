"""`propeval schema diff --base REF` on real git repositories with schema-changing branches."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from schema_helpers import RENAME_FRAMING, at, edit_schema, write_migration

from propeval.cli import cli
from propeval.config import load_config
from propeval.schemagate import schema_gate
from propeval.workspace import Workspace

CHANGELOG_1 = "# Changelog\n\n## 1.0.0\n\n- First version.\n"
ITEM_NOTES = '"retired_reason": {"$ref": "#/$defs/text"},\n        "notes": {"type": "string"}'
ITEM_REMARKS = '"retired_reason": {"$ref": "#/$defs/text"},\n        "remarks": {"type": "string"}'
ITEM_REVIEWER = ITEM_NOTES + ',\n        "reviewer": {"type": "string"}'
OLD = '"1.0.0"'
NEW_MINOR = '"1.1.0"'
NEW_MAJOR = '"2.0.0"'
REMARKS = '"remarks"'
REVIEWER = '"reviewer"'
VERSION_1 = '"schema_version": "1.0.0"'
FRAMING = '"framing": {"enum": ["neutral", "loaded"]}'
REQUIRED_FRAMING = '"required": ["id", "claim_id", "language", "framing",'


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output.splitlines()


def start(corpus, git: Callable[..., str]) -> None:  # type: ignore[no-untyped-def]
    """A committed corpus on main, and a feature branch checked out."""
    corpus.claim()
    corpus.item()
    corpus.write("CHANGELOG.md", CHANGELOG_1)
    git("add", "-A")
    git("commit", "-qm", "corpus")
    git("checkout", "-qb", "feature")


def test_an_unchanged_schema_passes(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    code, lines = run("schema", "diff", "--base", "main")
    assert lines == ["breaking: 0, additive: 0, docs: 0 -> no version bump needed"]
    assert code == 0


def test_a_breaking_change_without_a_bump_says_what_to_bump_and_why(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    text = edit_schema(good_corpus.root, (ITEM_NOTES, ITEM_REMARKS))
    in_git("commit", "-qam", "rename notes")
    code, lines = run("schema", "diff", "--base", "main")
    assert lines == [
        f"schema.json:{at(text, OLD)} [schema-version] schema_version is still 1.0.0 but the "
        'schema has 1 breaking change(s) since main; a major bump is needed: set "schema_version": "2.0.0" '
        'and add a "## 2.0.0" entry to CHANGELOG.md',
        f"schema.json:{at(text, REMARKS)} [schema-breaking] (notice) #/$defs/item: property 'notes' "
        "renamed to 'remarks'; files that use 'notes' need a migration",
        'CHANGELOG.md:1:1 [schema-changelog] CHANGELOG.md has no entry for schema version 2.0.0; add a "## 2.0.0" '
        "heading with a line per change (and the migration to run, if any)",
        "breaking: 1, additive: 0, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)",
        "2 error(s); the schema change cannot merge until they are fixed",
    ]
    assert code == 1


def test_a_minor_bump_is_not_enough_for_a_breaking_change(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    text = edit_schema(good_corpus.root, (ITEM_NOTES, ITEM_REMARKS), (VERSION_1, '"schema_version": "1.1.0"'))
    good_corpus.write("CHANGELOG.md", CHANGELOG_1 + "\n## 1.1.0\n\n- notes renamed.\n")
    code, lines = run("schema", "diff", "--base", "main")
    assert lines[0] == (
        f"schema.json:{at(text, NEW_MINOR)} [schema-version] schema_version went from 1.0.0 to 1.1.0, "
        "but the schema has 1 breaking change(s) since main, which needs a major bump: "
        'set "schema_version": "2.0.0"'
    )
    assert lines[-2:] == [
        "breaking: 1, additive: 0, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)",
        "2 error(s); the schema change cannot merge until they are fixed",
    ]
    assert code == 1


def test_an_additive_change_with_a_minor_bump_and_changelog_passes(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    text = edit_schema(good_corpus.root, (ITEM_NOTES, ITEM_REVIEWER), (VERSION_1, '"schema_version": "1.1.0"'))
    good_corpus.write("CHANGELOG.md", CHANGELOG_1 + "\n## 1.1.0\n\n- Items may name a reviewer.\n")
    code, lines = run("schema", "diff", "--base", "main")
    assert lines == [
        f"schema.json:{at(text, REVIEWER)} [schema-additive] (notice) #/$defs/item: new optional field 'reviewer'",
        "breaking: 0, additive: 1, docs: 0 -> needs a minor bump (1.0.0 -> 1.1.0)",
    ]
    assert code == 0


def test_a_description_edit_needs_a_patch_bump(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    edit_schema(good_corpus.root, ("Set phrases of the official line", "Set phrases of the official account"))
    code, lines = run("schema", "diff", "--base", "main")
    assert "a patch bump is needed" in lines[0]
    assert lines[-2] == "breaking: 0, additive: 0, docs: 1 -> needs a patch bump (1.0.0 -> 1.0.1)"
    assert code == 1
    edit_schema(good_corpus.root, (VERSION_1, '"schema_version": "1.0.1"'))
    good_corpus.write("CHANGELOG.md", CHANGELOG_1 + "\n## 1.0.1\n\n- Wording.\n")
    assert run("schema", "diff", "--base", "main")[0] == 0


def test_items_that_no_longer_validate_need_a_migration(good_corpus, in_git, migrations_dir: Path) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    text = edit_schema(
        good_corpus.root,
        (FRAMING, '"frame": {"enum": ["neutral", "loaded"]}'),
        (REQUIRED_FRAMING, '"required": ["id", "claim_id", "language", "frame",'),
        (VERSION_1, '"schema_version": "2.0.0"'),
    )
    good_corpus.write("CHANGELOG.md", CHANGELOG_1 + "\n## 2.0.0\n\n- `framing` is now `frame`: propeval migrate.\n")
    code, lines = run("schema", "diff", "--base", "main")
    assert lines[0] == (
        f"schema.json:{at(text, NEW_MAJOR)} [schema-migration] 1 corpus file(s) do not validate under "
        "schema 2.0.0; ship a migration (tools/propeval/migrations/v1_0_0__to__v2_0_0.py) and run "
        "`propeval migrate --to 2.0.0` to rewrite them, or make the change backward compatible"
    )
    # one message for the one mistake: the old name is the missing new one
    assert (
        "questions/c0001/i0001.yaml:4:1 [schema] unknown field 'framing'; did you mean 'frame'? (frame is required)"
    ) in lines
    assert code == 1

    # The migration exists but was not run: the message says to run it.
    write_migration(migrations_dir, "1.0.0", "2.0.0", RENAME_FRAMING)
    code, lines = run("schema", "diff", "--base", "main")
    assert lines[0].endswith(
        "1 corpus file(s) do not validate under schema 2.0.0; run `propeval migrate --to 2.0.0` "
        "to rewrite them, and commit the result"
    )

    # Run it (--from defaults to the version committed at HEAD): the branch now passes.
    code, lines = run("migrate")
    assert lines == [
        "questions/c0001/i0001.yaml:4:1 [migrate] (notice) migrated (1.0.0 -> 2.0.0): renamed 'framing' to 'frame'",
        "migrated 1 file(s) (1.0.0 -> 2.0.0)",
    ]
    code, lines = run("schema", "diff", "--base", "main")
    assert lines[-1] == "breaking: 1, additive: 0, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)"
    assert code == 0


def test_check_changed_since_revalidates_the_whole_corpus_when_the_schema_changed(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    good_corpus.item("i0002", framing="loaded")
    start(good_corpus, in_git)
    edit_schema(good_corpus.root, (FRAMING, '"framing": {"enum": ["neutral"]}'))
    code, lines = run("check", "--changed-since", "main")
    assert lines == [
        "questions/c0001/i0002.yaml:4:10 [schema] 'loaded' is not one of ['neutral']; use one of those values",
        "note: schema.json changed since main: checking the whole corpus",
        "1 error(s), 0 warning(s) in 3 file(s) checked",
    ]
    assert code == 1


def test_json_and_github_formats(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    edit_schema(good_corpus.root, (ITEM_NOTES, ITEM_REMARKS))
    code, lines = run("schema", "diff", "--base", "main", "--format", "json")
    payload = json.loads("\n".join(lines))
    assert code == 1
    assert [p["rule"] for p in payload["problems"]] == ["schema-version", "schema-breaking", "schema-changelog"]
    assert payload["notes"] == ["breaking: 1, additive: 0, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)"]
    code, lines = run("schema", "diff", "--base", "main", "--format", "github")
    assert lines[0].startswith("::error file=schema.json,line=4,col=21,title=schema-version::")
    assert lines[-1] == (
        "::notice title=schema diff::breaking: 1, additive: 0, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)"
    )


def test_schema_gate_is_a_core_function_returning_a_check_result(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    edit_schema(good_corpus.root, (ITEM_NOTES, ITEM_REVIEWER))
    result = schema_gate(Workspace(load_config(good_corpus.root)), "main")
    assert (result.bump, result.old_version, result.new_version, result.expected_version) == (
        "minor",
        "1.0.0",
        "1.0.0",
        "1.1.0",
    )
    assert [c.impact for c in result.changes] == ["additive"]
    assert result.exit_code == 1
    assert {p.rule for p in result.errors} == {"schema-version", "schema-changelog"}


def test_a_missing_base_ref_is_a_tool_failure(good_corpus, in_git) -> None:  # type: ignore[no-untyped-def]
    start(good_corpus, in_git)
    result = CliRunner().invoke(cli, ["schema", "diff", "--base", "nope"], catch_exceptions=False)
    assert result.exit_code == 3
    assert "git ref 'nope' does not exist here" in result.output


def test_the_repository_changelog_has_the_current_version() -> None:
    root = Path(__file__).resolve().parents[2]
    version = json.loads((root / "schema.json").read_text(encoding="utf-8"))["schema_version"]
    from propeval.schemagate import changelog_has

    assert changelog_has((root / "CHANGELOG.md").read_text(encoding="utf-8"), version)
