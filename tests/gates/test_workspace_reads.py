"""One workspace per command: `propeval run` reads each file once and checks each signature once.

The counts come from the loader's one read function and the one signature check, patched in this
process (the run goes through click's CliRunner), never from timing.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure

from propeval import loader, signing
from propeval.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def counted(monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], Counter[str]]:
    """Counters of the files the strict loader reads (by path) and of the records whose signature
    is checked (by digest), for the rest of the test."""
    reads: Counter[str] = Counter()
    verified: Counter[str] = Counter()
    read, verify = loader._read, signing.verify

    def counting_read(path: Path, relpath: str, *args: Any, **kwargs: Any) -> str:
        reads[relpath] += 1
        return read(path, relpath, *args, **kwargs)

    def counting_verify(record: dict[str, Any], *args: Any, **kwargs: Any) -> signing.Verdict:
        verified[str(record.get("digest"))] += 1
        return verify(record, *args, **kwargs)

    monkeypatch.setattr(loader, "_read", counting_read)
    monkeypatch.setattr(signing, "verify", counting_verify)
    return reads, verified


def signed_records(gate_corpus: Any, loopback: Any) -> None:
    """Signed answerability records for every active item and a signed judge-gate record."""
    srv = loopback()
    configure(gate_corpus, srv.base_url, mode="advisory")
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    run("gate", "judge", "--rubric", "facts-v1", "--online")  # its agreement fails: still a record
    configure(gate_corpus, mode="advisory")


def aged(root: Path) -> None:
    """Every file under ``root`` last modified a minute ago: the load cache keeps only files that
    did not change within the last two seconds (an edit in the same clock tick could hide)."""
    import os
    import time

    then = time.time() - 60
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))


@pytest.mark.slow
def test_one_run_reads_each_corpus_file_once_and_checks_each_signature_once(
    gate_corpus: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check, groups, dedup, both gates, difficulty, stats and the report share one workspace. A run
    once loaded the corpus five times and checked each answerability signature three times
    (the gate, then the evidence of stats and of the report)."""
    signed_records(gate_corpus, loopback)
    ledger = gate_corpus.root / "ledger"
    records = sorted(p.relative_to(gate_corpus.root).as_posix() for p in ledger.rglob("*.json"))
    assert records == [
        "ledger/answerability/i0001.json",
        "ledger/answerability/i0002.json",
        "ledger/judge/facts-v1.json",
    ]
    reads, verified = counted(monkeypatch)

    result = run("run", "--record")
    assert "run: exit" in result.output, result.output
    questions = gate_corpus.root / "questions"
    corpus_files = sorted(p.relative_to(gate_corpus.root).as_posix() for p in questions.rglob("*.yaml"))
    assert len(corpus_files) == 4
    assert {f: reads[f] for f in corpus_files} == dict.fromkeys(corpus_files, 1)
    # Every other file a run reads, it reads once too: the schema, the rubrics, gold sets, the ledger.
    assert [f for f, n in reads.items() if n != 1] == []
    assert {"schema.json", "rubrics/facts-v1/rubric.yaml", "rubrics/facts-v1/gold.jsonl", *records} <= set(reads)
    # dedup.json is written by the dedup step (--record) and read back once, for the stats and the report
    assert reads["ledger/dedup.json"] == 1
    digests = {json.loads((gate_corpus.root / r).read_text(encoding="utf-8"))["digest"] for r in records}
    assert {d: verified[d] for d in digests} == dict.fromkeys(digests, 1)


def test_a_warm_run_parses_no_unchanged_file(gate_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load cache: a second command reads no unchanged corpus file; an edited one is read again."""
    aged(gate_corpus.root)
    assert run("check").exit_code == 0
    reads, _ = counted(monkeypatch)
    assert run("check").exit_code == 0
    assert not any(f.startswith("questions/") for f in reads)
    gate_corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was the riot crushed?")
    assert run("check").exit_code == 0
    assert sorted(f for f in reads if f.startswith("questions/")) == ["questions/c0001/i0002.yaml"]


def test_a_load_cache_written_elsewhere_is_never_used(gate_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file whose MAC does not check out under this user's key (another machine's, or edited)
    is not trusted: every file is parsed, as on a first run. The MAC covers the index, which holds
    each file's digest: a forged span changes nothing, its own file is parsed instead."""
    from propeval.config import load_config
    from propeval.loadcache import LoadCache

    aged(gate_corpus.root)
    assert run("check").exit_code == 0
    cache = LoadCache(load_config().root)
    raw = cache.path.read_bytes()
    # forge the blob only: the index (which holds each file's head, its texts too) is MAC'd
    from propeval.loadcache import MAGIC

    blob_at = len(MAGIC) + 32 + 8 + int.from_bytes(raw[len(MAGIC) + 32 : len(MAGIC) + 40], "little")
    forged = raw[:blob_at] + raw[blob_at:].replace(
        b"What happened in central Beijing", b"::add-mask::What happened in cen"
    )
    assert forged != raw
    cache.path.write_bytes(forged)
    reads, _ = counted(monkeypatch)
    result = run("check")
    assert result.exit_code == 0, result.output
    assert "workflow-command" not in result.output
    # the two items whose text was forged (the default prompt), and no other file
    assert sorted(f for f in reads if f.startswith("questions/")) == [
        "questions/c0001/i0001.yaml",
        "questions/c0001/i0003.yaml",
    ]
    # a forged index does not check out: every file is parsed
    raw = cache.path.read_bytes()
    cache.path.write_bytes(raw.replace(b"i0002", b"i0009"))
    reads.clear()
    assert run("check").exit_code == 0
    assert sum(1 for f in reads if f.startswith("questions/")) == 4
    # another user's key: the same file is refused too
    monkeypatch.setenv("PROPEVAL_CACHE_KEY", str(gate_corpus.root.parent / "other-key"))
    reads.clear()
    assert run("check").exit_code == 0
    assert sum(1 for f in reads if f.startswith("questions/")) == 4


def test_a_new_file_too_fresh_to_keep_does_not_rewrite_the_load_cache(gate_corpus: Any) -> None:
    """A commit adds an item seconds old: the load cache cannot keep it yet (its stat may still
    change within the clock tick), and the rest is as it was, so the cache is not written again
    (at 10k items it was rewritten whole, 13 MB, on every commit)."""
    from propeval.config import load_config
    from propeval.loadcache import LoadCache

    aged(gate_corpus.root)
    assert run("check").exit_code == 0
    cache = LoadCache(load_config().root).path
    before = cache.stat()
    gate_corpus.item("i0009", prompt='"Who ordered the army into Beijing?"')
    assert run("check").exit_code == 0
    after = cache.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    aged(gate_corpus.root)  # a minute later: now it is kept
    assert run("check").exit_code == 0
    assert cache.stat().st_mtime_ns != before.st_mtime_ns
