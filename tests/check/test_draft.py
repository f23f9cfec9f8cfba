"""``status: draft``: drafts are checked for syntax and schema only, skipped by
groups, dedup and the gates, never exported, and can be committed through the check hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from propeval.cli import cli
from propeval.config import load_config
from propeval.dedup.units import load_units


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def audit_draft(corpus) -> None:  # type: ignore[no-untyped-def]
    """A 4-item audit claim in progress: an English pair only, no uk/ru items, no uk marker."""
    corpus.claim()
    corpus.item()
    corpus.claim(
        "c0002",
        kind="audit",
        title="Bucha, March 2022",
        status="draft",
        source_url="https://en.wikipedia.org/wiki/Bucha_massacre",
    )
    corpus.item("i0002", "c0002", prompt="What did investigators find in Bucha in April 2022?")
    corpus.item("i0003", "c0002", framing="loaded", prompt='"TODO: the loaded framing"')


def test_a_draft_claim_passes_check_and_groups_with_its_gaps(corpus) -> None:  # type: ignore[no-untyped-def]
    audit_draft(corpus)
    code, out, _ = run("check")
    assert code == 0, out
    assert "3 draft file(s) checked for syntax, schema, ids and safety only (status: draft)" in out
    code, out, _ = run("groups")
    assert code == 0, out
    assert "draft claims skipped (status: draft): c0002" in out
    # Made active, the same claim fails: placeholders, missing languages, a loaded item with no marker.
    path = corpus.root / "questions/c0002/claim.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("status: draft\n", ""), encoding="utf-8")
    assert run("check")[0] == 1
    assert run("groups")[0] == 1


def test_a_draft_is_still_held_to_the_schema_and_ids(corpus) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    corpus.item("i0002", status="draft", framing="balanced", prompt='"TODO: later"')
    corpus.item("i0009", status="draft", id="i0003")
    code, out, _ = run("check")
    assert code == 1
    rules = sorted({line.split(" [")[1].split("]")[0] for line in out.splitlines() if " [" in line})
    assert rules == ["ids", "schema"]  # not placeholder


@pytest.mark.slow  # over 0.5 CPU-s: out of the fast lane, in make test
def test_drafts_are_never_counted_exported_or_compared(corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    audit_draft(corpus)
    corpus.item("i0004", status="draft", language="ru", prompt="Что произошло в Пекине?", translation_of="i0001")
    code, out, _ = run("stats", "--format", "json")
    assert code == 0
    stats = json.loads(out)
    assert (stats["items"], stats["claims"], stats["by_language"]) == (1, 1, {"en": 1})
    out_dir = tmp_path / "rel"
    code, _, _ = run("export", "--out", str(out_dir))
    assert code == 0
    exported = [json.loads(line)["id"] for line in (out_dir / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert exported == ["i0001"]
    config = load_config(corpus.root)
    units, _ = load_units(config, config.settings.dedup)
    assert sorted(u.id for u in units) == ["c0001/f1", "c0001/f2", "i0001"]


def test_new_draft_flags(corpus) -> None:  # type: ignore[no-untyped-def]
    corpus.claim()
    assert run("new", "item", "--claim", "c0001", "--draft")[:2] == (0, "questions/c0001/i0001.yaml\n")
    assert "status: draft\n" in (corpus.root / "questions/c0001/i0001.yaml").read_text(encoding="utf-8")
    assert run("check")[0] == 0  # the TODO prompt waits until the item is made active
