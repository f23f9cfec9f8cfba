# ruff: noqa: F811  (pytest fixtures imported from judgekit are redefined as parameters)
"""The typed records write the same bytes as the dict-built records they replaced.

``tests/judge/data/records/`` holds the run files that ``answer`` and ``grade`` wrote before the
records were typed (answered, unanswered and error answers; scored, unanswered, unscored and error
grades of one judge; a panel of two that ties), made by :func:`make_runs` with that code:

    PYTHONPATH=OLD/tools:tests:tests/judge python tests/judge/test_run_records.py OUT_DIR

Only the clock (``created``) and the loopback ports are normalised. The ledger's own records
(``ledger/``, written by the dict-built ``make_record``) are the ledger's fixture.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judgekit import add_rubrics, configure, judge_corpus  # noqa: F401  (fixtures)

from propeval.judge.loopback import _FENCED, LoopbackServer, Reply, Seen, default_script, fact_ids, is_judge_request
from serverkit import loopback  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[2]
# Answerability records as the starter corpus shipped them (it ships none now): typed-record fixtures
LEDGER_FIXTURES = REPO / "tests/fixtures/ledger"
FIXTURE = Path(__file__).parent / "data" / "records"
RUN_FILES = (
    "r1/answers.jsonl",
    "r1/grades-facts-v1.jsonl",
    "r1/grades-audit-v1.jsonl",
    "r2/answers.jsonl",
    "r2/grades-facts-v1.jsonl",
    "r2/grades-audit-v1.jsonl",
    "r3/answers.jsonl",
)
_CREATED = re.compile(r'"created":"[0-9TZ:-]+"')
_PORT = re.compile(r"127\.0\.0\.1:[0-9]+")


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(__import__("propeval.cli", fromlist=["cli"]).cli, list(args), catch_exceptions=False)
    return result


def normalised(text: str) -> str:
    return _PORT.sub("127.0.0.1:PORT", _CREATED.sub('"created":"CLOCK"', text))


def answers(seen: Seen) -> Reply:
    """i0002 gets an empty reply (unanswered); every other item a sentence."""
    if "riot" in seen.prompt:
        return Reply("")
    return default_script(seen)


def judge(states: dict[str, str], propaganda: int = 0) -> Any:
    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            return default_script(seen)
        if "propaganda_inclusion" in _FENCED.sub("", seen.prompt):
            return Reply("not a verdict")  # audit: never valid, so unscored after the re-asks
        verdict = {
            "rationale": "scripted",
            "facts": [{"id": i, "state": states.get(i, "stated"), "evidence": None} for i in fact_ids(seen)],
            "propaganda": propaganda,
            "frame_adopted": "An answer to" if propaganda else None,
        }
        return Reply(json.dumps(verdict))

    return script


def refuse(seen: Seen) -> Reply:
    return Reply(status=400, body=b'{"error": {"message": "refused by the test"}}')


def make_runs(corpus: Any, start: Any) -> None:
    """r1: one judge (scored, unanswered; audit unscored); r2: a panel of two that ties, and an
    audit judge that refuses (error); r3: an answer endpoint that refuses (error answers)."""
    ans, a, b, down = start(answers), start(judge({})), start(judge({"f1": "missed"}, 2)), start(refuse)
    configure(corpus, ans.base_url, concurrency=1, max_attempts=1, max_reasks=1)  # one at a time: lines in order
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        for name, srv in (("a", a), ("b", b), ("down", down)):
            fh.write(f'\n[tool.propeval.judge.endpoints.{name}]\nbase_url = "{srv.base_url}"\nmodel = "model-{name}"\n')
    for args in (
        ("answer", "--run-id", "r1"),
        ("grade", "r1", "--rubric", "facts-v1", "--judge", "a", "--no-cache"),
        ("grade", "r1", "--rubric", "audit-v1", "--judge", "a", "--no-cache"),
        ("answer", "--run-id", "r2"),
        ("grade", "r2", "--rubric", "facts-v1", "--judge", "a", "--judge", "b", "--no-cache"),
        ("grade", "r2", "--rubric", "audit-v1", "--judge", "down", "--no-cache"),
    ):
        invoke(*args)
    configure(corpus, down.base_url, concurrency=1, max_attempts=1)
    invoke("answer", "--run-id", "r3")


@pytest.mark.slow
def test_answer_and_grade_write_the_bytes_the_dict_records_wrote(judge_corpus: Any, loopback: Any) -> None:
    make_runs(judge_corpus, loopback)
    for rel in RUN_FILES:
        new = normalised((judge_corpus.root / "runs" / rel).read_text(encoding="utf-8"))
        old = normalised((FIXTURE / rel).read_text(encoding="utf-8"))
        assert new == old, rel


def test_each_fixture_record_reads_into_its_type_and_writes_back_byte_identical() -> None:
    from propeval.judge.kinds import KINDS
    from propeval.judge.records import AnswerRecord, GradeRecord
    from propeval.judge.runs import dump

    seen: set[str] = set()
    for rel in RUN_FILES:
        for line in (FIXTURE / rel).read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            if rel.endswith("answers.jsonl"):
                record: Any = AnswerRecord.from_json(d)
            else:
                record = GradeRecord.from_json(d, KINDS[rel.split("-", 1)[1].split("-v")[0]].record_fields)
                seen.add(f"{record.status}{' panel' if record.judges else ''}")
            assert dump(record.to_json()) == line, rel
    assert seen >= {"scored", "unanswered", "unscored", "error", "scored panel"}


def test_a_ledger_record_reads_into_its_type_and_writes_back_byte_identical(tmp_path: Path) -> None:
    from propeval.ledger.records import LedgerRecord, write_record

    files = [*sorted((REPO / "ledger").rglob("*.json")), *sorted(LEDGER_FIXTURES.glob("*.json"))]
    assert len(files) >= 4
    for path in files:
        record = LedgerRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
        write_record(tmp_path / "out.json", record)
        assert (tmp_path / "out.json").read_bytes() == path.read_bytes(), path.name


def test_a_typed_ledger_record_is_signed_as_the_dict_was(tmp_path: Path) -> None:
    from propeval.ledger.records import LedgerRecord, digest
    from propeval.signing import message, new_key, verify

    key = new_key(tmp_path / "key.pem", forbidden=[])
    d = json.loads((LEDGER_FIXTURES / "answerability-i0141.json").read_text(encoding="utf-8"))
    old = {k: v for k, v in d.items() if k != "signature"}
    old["signature"] = key.signature(message(d))  # what SigningKey.sign did to the dict
    new = key.sign(LedgerRecord.from_json(d)).to_json()
    assert new == old and digest(new) == d["digest"]
    assert verify(new, {"me": key.public}).state == "signed"


if __name__ == "__main__":  # regenerate the fixture with the code on PYTHONPATH
    import tempfile

    from judgekit import small_corpus

    from helpers import CorpusDir

    out = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ["PROPEVAL_RESPONSE_CACHE"] = str(Path(tmp) / "cache")
        corpus = small_corpus(CorpusDir(Path(tmp) / "corpus"))
        servers: list[LoopbackServer] = []

        def start(script: Any) -> LoopbackServer:
            servers.append(LoopbackServer(script).start())
            return servers[-1]

        os.chdir(corpus.root)
        try:
            make_runs(corpus, start)
        finally:
            for srv in servers:
                srv.stop()
        for rel in RUN_FILES:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes((corpus.root / "runs" / rel).read_bytes())
