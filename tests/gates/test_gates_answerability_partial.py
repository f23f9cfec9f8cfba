"""`gate answerability --online` writes each record as its item is graded: a failure in the batch
keeps the others, the message gives the exact tally, and a rerun does only what is left."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, is_judge_request

RIOT = "Why was the riot put down?"  # i0002's prompt


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def ledger(corpus: Any) -> list[str]:
    folder = corpus.root / "ledger/answerability"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def test_one_failed_answer_keeps_the_other_records(gate_corpus: Any, loopback: Any) -> None:
    broken = {"on": True}
    asked: list[str] = []

    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            asked.append(seen.prompt)
            if broken["on"] and seen.prompt == RIOT:
                return Reply(status=500)
        return default_script(seen)

    srv = loopback(script)
    configure(gate_corpus, srv.base_url)
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 3
    assert res.output.splitlines()[-1] == (
        "propeval: error: 1 of 2 item(s) got no record (i0002: answer: HTTP 500; gave up after 2 attempt(s)); "
        "the 1 other(s) were recorded as each finished; rerun the same command to do the 1 left"
    )
    assert ledger(gate_corpus) == ["i0001"]

    broken["on"] = False
    asked.clear()
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    assert (out[0], out[-1]) == ("note: answered and graded 1 item(s): i0002", "ok: 2 file(s) checked, no problems")
    assert asked == [RIOT]  # i0001 was not asked again
    assert ledger(gate_corpus) == ["i0001", "i0002"]


@pytest.mark.slow
def test_a_judge_that_goes_away_keeps_what_was_graded(gate_corpus: Any, loopback: Any) -> None:
    first = gate_corpus.root / "ledger/answerability/i0001.json"

    def script(seen: Seen) -> Reply:
        if is_judge_request(seen) and RIOT in seen.prompt:
            # refused only once i0001's record is on disk: an order of events, not a guessed delay
            until = time.monotonic() + 30
            while not first.is_file() and time.monotonic() < until:
                time.sleep(0.01)
            return Reply(status=401)
        return default_script(seen)

    srv = loopback(script)
    configure(gate_corpus, srv.base_url)
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 3
    assert res.output.splitlines()[-1] == (
        "propeval: error: 1 of 2 item(s) got no record (i0002: endpoint 'jdg' refused the request with HTTP 401: "
        "check the key in $(none configured) and its permissions); the 1 other(s) were recorded as each "
        "finished; rerun the same command to do the 1 left"
    )
    assert ledger(gate_corpus) == ["i0001"]
    res = run("gate", "answerability", "--all")
    assert res.exit_code == 1
    assert [line.split(" [")[0] for line in res.output.splitlines()[:-1]] == ["questions/c0001/i0002.yaml"]


def test_a_failed_grade_is_named_as_such(gate_corpus: Any, loopback: Any) -> None:
    def script(seen: Seen) -> Reply:
        if is_judge_request(seen) and RIOT in seen.prompt:
            return Reply(body=b"{}")
        return default_script(seen)

    srv = loopback(script)
    configure(gate_corpus, srv.base_url)
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 3
    assert "1 of 2 item(s) got no record (i0002: grade: malformed reply: the reply is not a chat completion" in (
        res.output
    )
    assert ledger(gate_corpus) == ["i0001"]


@pytest.mark.slow
def test_the_run_deadline_keeps_what_finished(gate_corpus: Any, loopback: Any) -> None:
    release = threading.Event()  # i0002's question is held past the deadline, until the rerun

    def script(seen: Seen) -> Reply:
        if seen.prompt == RIOT:
            release.wait(30)
        return default_script(seen)

    srv = loopback(script)
    configure(gate_corpus, srv.base_url)
    path = gate_corpus.root / "pyproject.toml"
    path.write_text(path.read_text().replace("max_reasks = 1\n", "max_reasks = 1\nrun_deadline = 0.5\n"))
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 3
    assert res.output.splitlines()[-1] == (
        "propeval: error: 1 of 2 item(s) got no record (i0002: not answered within the 0.5s run deadline); "
        "the 1 other(s) were recorded as each finished; rerun the same command to do the 1 left"
    )
    assert ledger(gate_corpus) == ["i0001"]
    release.set()
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    assert ledger(gate_corpus) == ["i0001", "i0002"]
