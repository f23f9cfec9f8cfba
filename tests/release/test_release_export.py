"""``propeval export``: determinism, hand-counted card numbers, atomic writes, datasets loading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from release_helpers import write_json

from propeval.cli import cli


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_twice_is_byte_identical(ledgers: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    first = run("export", "--out", str(a))
    assert first.exit_code == 0
    # check's warnings (here: a stale and missing difficulty bands) are shown, and do not stop the export
    assert f"wrote {a}: 4 item(s), 1 tombstone(s), 18 file(s)" in first.output.splitlines()
    assert "[difficulty] (warning) i0002 changed since its difficulty band (hard) was computed" in first.output
    assert run("export", "--out", str(b)).exit_code == 0
    assert tree(a) == tree(b)
    assert sorted(tree(a)) == [
        "README.md",
        "SHA256SUMS",
        "data/en/test.parquet",
        "data/ru/test.parquet",
        "data/test.parquet",
        "data/zh/test.parquet",
        "items.jsonl",
        *(f"rubrics/{r}/{f}" for r in ("audit-v1", "facts-v1") for f in ("gold.jsonl", "prompt.md", "rubric.yaml")),
        *(f"rubrics/same-question-v1/{f}" for f in ("PROVENANCE.md", "gold.jsonl", "prompt.md", "rubric.yaml")),
        "tombstones.jsonl",
    ]
    # re-exporting into an existing release replaces it with the same bytes and leaves no temp folders
    before = tree(a)
    assert run("export", "--out", str(a)).exit_code == 0
    assert tree(a) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "corpus"]


def test_items_rows_and_tombstones(ledgers: Any, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    items = rows(out / "items.jsonl")
    assert [r["id"] for r in items] == ["i0001", "i0002", "i0003", "i0005"]
    first = items[0]
    assert first["required_facts"] == [
        "Troops fired on civilians in Beijing on 3-4 June 1989.",
        "The government has never published a full death toll.",
    ]
    assert first["fact_ids"] == ["f1", "f2"]
    assert first["question_description"] == "named fact"
    assert first["official_frame_markers"] == ["counter-revolutionary riot"]
    assert first["source_date"] == "2024-05-01"
    assert first["difficulty_band"] == "easy"
    assert items[1]["question_description"] == "frame testing"
    assert items[1]["difficulty_band"] is None  # its ledger entry is stale
    assert items[3]["question_description"] == "closed exit"
    assert items[3]["source_date"] is None
    assert items[2]["translation_of"] == "i0001"
    assert rows(out / "tombstones.jsonl") == [
        {"claim_id": "c0001", "id": "i0004", "retired_reason": "duplicate of i0001"}
    ]
    line = (out / "items.jsonl").read_text(encoding="utf-8").splitlines()[2]
    assert "1989年" in line  # UTF-8, not \u escapes


def test_card_numbers_match_hand_count(ledgers: Any, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["language"] == ["en", "ru", "zh"]
    assert front["multilinguality"] == ["multilingual"]
    assert front["size_categories"] == ["n<1K"]
    assert front["version"] == "0.1.0"
    for key in ("license", "task_categories", "tags", "annotations_creators", "language_creators", "pretty_name"):
        assert front[key], key
    assert [(c["config_name"], c["data_files"]) for c in front["configs"]] == [
        ("default", [{"split": "test", "path": "data/test.parquet"}]),
        *((lang, [{"split": "test", "path": f"data/{lang}/test.parquet"}]) for lang in ("en", "ru", "zh")),
    ]
    features = front["dataset_info"][0]["features"]
    assert {"name": "required_facts", "list": "string"} in features
    assert {
        "name": "frame_markers",
        "list": [{"name": "language", "dtype": "string"}, {"name": "text", "dtype": "string"}],
    } in features
    for line in [
        "| active items | 4 |",
        "| claims | 2 |",
        "| retired items | 1 |",
        "| named_fact | 2 | 50.0% |",
        "| frame_testing | 1 | 25.0% |",
        "| closed_exit | 1 | 25.0% |",
        "| freedom_of_expression | 3 | 75.0% |",
        "| state_ideology | 1 | 25.0% |",
        "| democracy_governance | 1 | 25.0% |",
        "| education_policy | 0 | 0.0% |",
        "| en | 2 | 50.0% |",
        "| ru | 1 | 25.0% |",
        "| zh | 1 | 25.0% |",
        "| neutral | 3 | 75.0% |",
        "| loaded | 1 | 25.0% |",
        "| easy | 1 | 25.0% |",
        "| hard | 0 | 0.0% |",
        "| unbanded | 3 | 75.0% |",
        "Bands from `ledger/difficulty.json`: 1 item(s) banded, 1 stale entry(ies) ignored.",
        "| distinct source URLs | 2 |",
        "| distinct source domains | 2 |",
        "| most items from one URL | 3 (https://en.wikipedia.org/wiki/A) |",
        "| items with a source_date | 3 of 4 (75.0%) |",
        "| earliest source_date | 2024-05-01 |",
        "| 2024 | 3 |",
        "| exact | 1.000 | 2 | 0 | 2 |",  # c0002 has c0001's facts (the test corpus's default facts)
        "| facts-v1 | gemma-3-270m | 57 | fact_state cohen_kappa 0.066 | judge_min_kappa 0.6 | failed |",
        "| fact_score cohen_kappa_quadratic | 0.023 | 57 | 0.6 | no |",
        "| gemma-3-270m | gemma-3-270m | facts-v1: failed | 1 | 0 | not checked | 1: judge gemma-3-270m fails the judge gate |",
        "- Judge for facts-v1 (gemma-3-270m): judge agreement with humans is at chance level: scores from this "
        "judge are not meaningful (the record is unsigned: no maintainer vouches for it).",
        "| c0002 | loaded |",
        "| state_ideology | en |",
    ]:
        assert line in card.splitlines(), line
    gap_section = card.split("Category × language cells with no item:")[1].split("Claims missing")[0]
    gap_rows = [ln for ln in gap_section.splitlines() if ln.startswith("| ") and not ln.startswith(("| ---", "| cat"))]
    assert len(gap_rows) == 7 * 3 - 4  # 7 categories × 3 languages, 4 cells filled
    assert "Built with `propeval export` from a working tree that is not a git repository." in card


def test_card_without_ledgers_says_not_run(small: Any, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Not recorded: no `ledger/dedup.json`. A maintainer records a whole-corpus run" in card
    # the gate's word, as `propeval run` says it: the judge gate is required here, and has no record
    assert "| facts-v1 | - | - | - | - | failed |" in card
    assert (
        "0 of 4 active item(s) have answerability evidence that counts; 0 of them pass. 4 item(s) have no record."
        in card
    )
    assert "Difficulty: not measured (no difficulty ledger)." in card
    assert all(r["difficulty_band"] is None for r in rows(out / "items.jsonl"))


def test_git_commit_is_the_only_provenance(small: Any, in_git: Any, tmp_path: Path) -> None:
    in_git("add", "-A")
    in_git("commit", "-q", "-m", "corpus")
    sha = in_git("rev-parse", "HEAD").strip()
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"Built from commit `{sha}` (" in card
    assert "uncommitted" not in card
    small.item("i0006", "c0002", framing="loaded", prompt="Another?")
    assert run("export", "--out", str(out)).exit_code == 0
    assert "plus uncommitted changes" in (out / "README.md").read_text(encoding="utf-8")


def test_check_errors_stop_the_export(small: Any, tmp_path: Path) -> None:
    small.item("i0007", "c0002", framing="sideways")
    out = tmp_path / "rel"
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout == (
        "questions/c0002/i0007.yaml:4:10 [schema] 'sideways' is not one of ['neutral', 'loaded']; "
        "use one of those values\n"
    )
    assert f"export stopped: fix the errors above, then run it again; {out} was not written" in result.stderr
    assert not out.exists()


def test_refuses_a_folder_that_is_not_a_release(small: Any, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 2
    assert "is not a propeval release (no SHA256SUMS); choose a new or empty folder" in result.stderr
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_failed_export_leaves_the_old_release(small: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    old = tree(out)
    small.item("i0006", "c0002", framing="loaded", prompt="Another?")
    import propeval.release.export as release_export

    real_rename = release_export.os.rename
    calls = []

    def failing_rename(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:  # the new release moving into place
            raise OSError(28, "No space left on device")
        real_rename(src, dst)

    monkeypatch.setattr(release_export.os, "rename", failing_rename)
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 3  # a tool failure, said in one line, not a traceback
    assert result.stderr == (
        "propeval: error: a file operation failed: No space left on device (ENOSPC); "
        "free some disk space and run the command again\n"
    )
    assert tree(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "rel"]


NO_URL = "the card's citation has no URL: set [tool.propeval.release] url or hub_id (or give the repository an origin remote)"


def test_malformed_ledger_is_a_warning(small: Any, tmp_path: Path) -> None:
    (small.root / "ledger").mkdir()
    (small.root / "ledger/difficulty.json").write_text("{not json", encoding="utf-8")
    write_json(small.root / "ledger/dedup.json", {"passes": "three"})
    out = tmp_path / "rel"
    result = CliRunner().invoke(cli, ["export", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0
    assert "ledger/difficulty.json:1:2 [release-input] (warning) expected a double-quoted key" in result.stdout
    # a dedup record that propeval did not write is shown as not checked, never as evidence
    assert "ledger/dedup.json [release-input] (warning) dedup record is not checked" in result.stdout
    wrote = f"wrote {out}: 4 item(s), 1 tombstone(s), 18 file(s)"
    assert result.stdout.rstrip().endswith(wrote)
    # --format json: one document on stdout, the warnings in it and the "wrote" line among its notes
    doc = json.loads(run("export", "--out", str(out), "--format", "json").stdout)
    assert doc["errors"] == 0 and doc["warnings"] == len(doc["problems"]) >= 2
    assert {p["path"] for p in doc["problems"]} == {"ledger/difficulty.json", "ledger/dedup.json"}
    assert doc["notes"] == [NO_URL, wrote]
    assert "Record `ledger/dedup.json`: **not checked** (ledger record format is None" in (out / "README.md").read_text(
        encoding="utf-8"
    )


@pytest.mark.slow
def test_datasets_loads_items_offline(ledgers: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    import datasets

    cache = str(tmp_path / "hf" / "cache")
    # the folder itself, as the card's Loading section says: the default config's one split is "test"
    loaded = datasets.load_dataset(str(out), cache_dir=cache)
    assert list(loaded) == ["test"]
    ds = loaded["test"]
    assert ds.num_rows == 4
    assert ds["id"] == ["i0001", "i0002", "i0003", "i0005"]
    assert ds["difficulty_band"] == ["easy", None, None, None]
    assert ds[0]["frame_markers"] == [{"language": "en", "text": "counter-revolutionary riot"}]
    # a per-language config: its own Parquet file, the same features
    zh = datasets.load_dataset(str(out), "zh", split="test", cache_dir=cache)
    assert zh["id"] == ["i0003"] and zh.features == ds.features
    assert {
        "prompt",
        "required_facts",
        "question_description",
        "categories",
        "source_url",
        "source_date",
        "anchor",
        "official_frame_markers",
        "language",
        "framing",
        "claim_id",
        "fact_ids",
    } <= set(ds.column_names)


def test_dedup_record_is_current_then_not_current(small: Any, tmp_path: Path) -> None:
    # the exact pass only: no model is loaded, the record is the same as a full run's in shape
    result = run("dedup", "--record", "--pass", "exact")
    assert "note: recorded this run in ledger/dedup.json (unsigned; there is no record yet)" in result.output
    # a second run with the same findings leaves the record (and the tree) as it is
    again = run("dedup", "--record", "--pass", "exact")
    assert "note: ledger/dedup.json already records this result (made " in again.output
    record = json.loads((small.root / "ledger/dedup.json").read_text(encoding="utf-8"))
    assert (record["kind"], record["subject"]) == ("dedup", "corpus")
    assert record["result"]["passes"] == [
        {"name": "exact", "threshold": 1.0, "found": 2, "allowlisted": 0, "unreviewed": 2}
    ]
    out = tmp_path / "rel"
    assert run("export", "--out", str(out)).exit_code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Record `ledger/dedup.json`: **current**; unsigned. Run " in card
    assert "| exact | 1.000 | 2 | 0 | 2 |" in card
    # an item changes after the run: the record no longer describes the corpus
    small.item("i0001", "c0001", prompt="What happened in Beijing on the night of 3 June 1989, in detail?")
    result = run("export", "--out", str(out))
    assert result.exit_code == 0
    assert "ledger/dedup.json [release-input] (warning) dedup record is not current: the corpus changed" in (
        result.stdout
    )
    # ... and says how a maintainer makes it current
    assert (
        "; a maintainer records it with `propeval run --record` (or `propeval dedup --record`) and commits it\n"
        in result.stdout
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Record `ledger/dedup.json`: **not current** (the corpus changed" in card
    assert "- Dedup: not current (the corpus changed" in card
    # a record edited by hand (fewer pairs found) is not evidence
    record["result"]["passes"][0]["found"] = 0
    (small.root / "ledger/dedup.json").write_text(json.dumps(record), encoding="utf-8")
    assert run("export", "--out", str(out)).exit_code == 0
    assert "Record `ledger/dedup.json`: **not checked** (ledger record was edited by hand" in (
        out / "README.md"
    ).read_text(encoding="utf-8")


def test_dedup_record_needs_the_whole_corpus(small: Any) -> None:
    result = CliRunner().invoke(cli, ["dedup", "--record", "--changed-since", "HEAD"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "--record records a whole-corpus run; leave out --changed-since" in result.output
    assert not (small.root / "ledger/dedup.json").exists()


@pytest.mark.slow  # export runs as a real process (killed twice), and three times in this one
def test_a_killed_export_leaves_nothing_the_next_export_does_not_clean_up(small: Any, tmp_path: Path) -> None:
    """Once, a killed export left its `.tmp` folder behind. SIGTERM now undoes the build; what a
    kill -9 leaves is removed (or put back) by the next export, which says so."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "rel"
    cmd = [sys.executable, "-m", "propeval", "--root", str(small.root), "export", "--out", str(out)]

    def killed(sig: int) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.Popen(
            cmd, env={**os.environ, "PROPEVAL_TEST_EXPORT_PAUSE": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while not any((p / "SHA256SUMS").is_file() for p in tmp_path.glob(".rel.*.tmp")):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.kill(proc.pid, sig)
        stdout, stderr = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)

    def leftovers() -> list[str]:
        return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".rel."))

    done = killed(signal.SIGTERM)
    assert done.returncode == 130 and b"propeval: interrupted" in done.stderr
    assert leftovers() == [] and not out.exists()
    done = killed(signal.SIGKILL)
    assert done.returncode == -signal.SIGKILL
    [left] = leftovers()
    assert left.endswith(".tmp")
    first = run("export", "--out", str(out))
    assert first.exit_code == 0
    assert f"note: removed {left}, left by an export that was killed" in first.output.splitlines()
    assert leftovers() == [] and (out / "SHA256SUMS").is_file()
    # A kill between the two renames (the old release moved aside, the new one not yet in place):
    # the next export puts the old release back before it replaces it.
    release = tree(out)
    aside = tmp_path / ".rel.x1y2.old"
    aside.mkdir()
    out.rename(aside / "release")
    again = run("export", "--out", str(out))
    assert again.exit_code == 0
    assert "note: put back the release that a killed export had moved aside to .rel.x1y2.old" in again.output
    assert leftovers() == [] and tree(out) == release
