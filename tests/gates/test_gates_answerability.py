"""The answerability gate: records, freshness, tampering, advisory mode, and --online on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure

from propeval.cli import cli
from propeval.judge.loopback import Reply, Seen, default_script, fact_ids, facts_verdict, is_judge_request
from propeval.policy import user_config_path
from propeval.trusted import running_package

NO_RECORD = (
    "questions/c0001/{i}.yaml [answerability] {i}: no answerability record (ledger/answerability/{i}.json); "
    "a maintainer records this (propeval gate answerability --online {i}, from a trusted install: SECURITY.md); "
    "nothing for a contributor to run"
)

# A contributor cannot make a record (--online needs a maintainer's endpoint and key): the advice says who does.
AGAIN = (
    "a maintainer records this again (propeval gate answerability --online {i}, from a trusted install: "
    "SECURITY.md); nothing for a contributor to run"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def record(corpus: Any, item_id: str = "i0001") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((corpus.root / f"ledger/answerability/{item_id}.json").read_text())
    return data


def online_all(corpus: Any, loopback: Any, script: Any = default_script) -> Result:
    srv = loopback(script)
    configure(corpus, srv.base_url)
    return run("gate", "answerability", "--online", "--all")


def test_offline_without_records_names_each_item_and_the_command(gate_corpus: Any) -> None:
    res = run("gate", "answerability", "--all")
    assert res.exit_code == 1
    assert res.output.splitlines() == [
        NO_RECORD.format(i="i0001"),
        NO_RECORD.format(i="i0002"),
        "2 error(s), 0 warning(s) in 2 file(s) checked",
    ]


def test_offline_needs_a_selection(gate_corpus: Any) -> None:
    res = CliRunner().invoke(cli, ["gate", "answerability"])
    assert res.exit_code == 2
    assert "say which items to gate: item ids, --changed-since REF, or --all" in res.output


@pytest.mark.slow
def test_online_all_against_loopback_writes_passing_records(gate_corpus: Any, loopback: Any) -> None:
    res = online_all(gate_corpus, loopback)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "note: answered and graded 2 item(s): i0001, i0002"
    # Where the requests went, and who signed the records, are said.
    assert lines[1] == f"note: --online endpoints from {user_config_path()}"
    assert lines[2:] == [
        "note: records written are signed by maintainer",
        f"note: no --base: this propeval ({running_package()}) was not compared with the base branch's code; make "
        "records for a pull request from a trusted install of the base, with --base and --pr (SECURITY.md)",
        "ok: 2 file(s) checked, no problems",
    ]
    rec = record(gate_corpus)
    assert rec["binding"]["answer_model"] == "ref-model"
    assert rec["binding"]["judge_model"] == "judge-model"
    assert rec["binding"]["rubric"] == "facts-v1"
    assert rec["result"]["fact_score"] == 5
    assert rec["result"]["answer"].startswith("An answer to: What happened in central Beijing")
    assert rec["result"]["verdict"]["facts"][0]["state"] == "stated"
    assert not (gate_corpus.root / "ledger/answerability/i0003.json").exists()  # retired
    # Offline now passes, and a second --online has nothing to do.
    assert run("gate", "answerability", "--all").exit_code == 0
    again = run("gate", "answerability", "--all", "--online")
    assert again.output.splitlines() == ["ok: 2 file(s) checked, no problems"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("item", "i0001: answerability record is stale: the item changed (its prompt or fields): item_hash sha256:"),
        ("claim", "i0001: answerability record is stale: the claim changed (its facts or source): claim_hash sha256:"),
        ("rubric", "i0001: answerability record is stale: the rubric changed: rubric_hash sha256:"),
        ("model", "i0001: answerability record is stale: the reference model changed: 'ref-model' -> 'bigger-model'"),
        ("judge", "i0001: answerability record is stale: the judge model changed: 'judge-model' -> 'other-judge'"),
    ],
)
def test_each_way_a_record_goes_stale(gate_corpus: Any, loopback: Any, change: str, expected: str) -> None:
    assert online_all(gate_corpus, loopback).exit_code == 0
    if change == "item":
        gate_corpus.item("i0001", prompt="What happened in Beijing in June 1989?")
    elif change == "claim":
        gate_corpus.claim(anchor="Casualties")
    elif change == "rubric":
        tpl = gate_corpus.root / "rubrics/facts-v1/prompt.md"
        tpl.write_text(tpl.read_text(encoding="utf-8") + "\nBe strict.\n", encoding="utf-8")
    elif change == "model":
        configure(gate_corpus, answer_model="bigger-model")
    else:
        configure(gate_corpus, judge_model="other-judge")
    res = run("gate", "answerability", "i0001")
    assert res.exit_code == 1
    line = res.output.splitlines()[0]
    assert line.startswith(f"questions/c0001/i0001.yaml [answerability] {expected}")
    assert line.endswith("; " + AGAIN.format(i="i0001"))


def test_settings_change_names_the_setting(gate_corpus: Any, loopback: Any) -> None:
    assert online_all(gate_corpus, loopback).exit_code == 0
    configure(gate_corpus, extra="")
    path = gate_corpus.root / "pyproject.toml"
    path.write_text(path.read_text().replace("max_reasks = 1\n", "max_reasks = 1\ntemperature = 0.7\n"))
    res = run("gate", "answerability", "i0001")
    assert "the model settings changed: temperature 0.0 -> 0.7" in res.output


def test_a_hand_edited_record_is_reported_not_trusted(gate_corpus: Any, loopback: Any) -> None:
    srv_script = _scored(state="missed")
    assert online_all(gate_corpus, loopback, srv_script).exit_code == 1
    path = gate_corpus.root / "ledger/answerability/i0001.json"
    data = json.loads(path.read_text())
    data["result"]["fact_score"] = 5  # make a failing item pass by hand
    path.write_text(json.dumps(data, indent=2))
    res = run("gate", "answerability", "i0001")
    assert res.exit_code == 1
    line = res.output.splitlines()[0]
    assert line.startswith("ledger/answerability/i0001.json:")  # the line of the digest
    assert line.endswith(
        " [ledger-digest] i0001: ledger record was edited by hand: its digest does not match its content; "
        "restore it (git checkout) or make it again; " + AGAIN.format(i="i0001")
    )


def test_a_corrupt_record_is_reported(gate_corpus: Any) -> None:
    gate_corpus.write("ledger/answerability/i0001.json", '{"kind": "answerability", "format": 1,')
    res = run("gate", "answerability", "i0001")
    assert res.exit_code == 1
    line = res.output.splitlines()[0]
    assert line.startswith("ledger/answerability/i0001.json:1:")
    assert "[ledger-format] i0001: ledger record is corrupt (" in line


def test_a_ledger_record_whose_fields_are_not_of_their_types_is_named(gate_corpus: Any, loopback: Any) -> None:
    """A record that passes its digest but carries a field of the wrong type is a problem at its
    file, with the rule and the fix; it is never read as evidence."""
    from propeval.ledger.records import digest

    assert online_all(gate_corpus, loopback).exit_code == 0
    path = gate_corpus.root / "ledger/answerability/i0001.json"
    data = json.loads(path.read_text())
    data.pop("signature", None)
    data["created"] = 5
    data["digest"] = digest(data)
    path.write_text(json.dumps(data, indent=2))
    res = run("gate", "answerability", "i0001")
    assert res.exit_code == 1
    line = res.output.splitlines()[0]
    assert line.startswith("ledger/answerability/i0001.json:1:1 [ledger-format] i0001: ")
    assert "the ledger record's 'created' is 5; make the record again" in line


def test_a_record_copied_to_another_item_is_refused(gate_corpus: Any, loopback: Any) -> None:
    assert online_all(gate_corpus, loopback).exit_code == 0
    root = gate_corpus.root / "ledger/answerability"
    (root / "i0002.json").write_text((root / "i0001.json").read_text())
    res = run("gate", "answerability", "i0002")
    assert "ledger record is for 'answerability' 'i0001', but this file is for 'answerability' 'i0002'" in res.output


def _scored(state: str) -> Any:
    def script(seen: Seen) -> Reply:
        if not is_judge_request(seen):
            return Reply("I would rather not go into that.")
        return Reply(facts_verdict(fact_ids(seen), state=state))

    return script


def test_a_failing_item_says_why_and_what_to_do(gate_corpus: Any, loopback: Any) -> None:
    res = online_all(gate_corpus, loopback, _scored("missed"))
    assert res.exit_code == 1
    assert res.output.splitlines()[0] == (
        "questions/c0001/i0001.yaml [answerability] i0001: fact score 0 is below 4 (f1 missed, f2 missed): the "
        "reference model could not answer it from public information; read the answer in "
        "ledger/answerability/i0001.json, reword the prompt or fix the facts, then " + AGAIN.format(i="i0001")
    )
    assert record(gate_corpus)["result"]["answer"] == "I would rather not go into that."


def test_a_judge_failure_is_unscored_not_a_verdict(gate_corpus: Any, loopback: Any) -> None:
    def script(seen: Seen) -> Reply:
        return Reply("no json here") if is_judge_request(seen) else Reply("An answer.")

    res = online_all(gate_corpus, loopback, script)
    assert res.exit_code == 1
    line = res.output.splitlines()[0]
    assert line.startswith("questions/c0001/i0001.yaml [answerability] i0001: the reference answer was not scored (")
    assert "a judge failure is not a verdict; " + AGAIN.format(i="i0001") in line
    assert record(gate_corpus)["result"]["status"] == "unscored"


def test_advisory_mode_reports_but_does_not_fail(gate_corpus: Any) -> None:
    configure(gate_corpus, mode="advisory")
    res = run("gate", "answerability", "--all")
    assert res.exit_code == 0
    assert res.output.splitlines() == [
        NO_RECORD.format(i="i0001").replace("[answerability]", "[answerability] (warning)"),
        NO_RECORD.format(i="i0002").replace("[answerability]", "[answerability] (warning)"),
        'note: the answerability gate is advisory ([tool.propeval.gates] answerability = "advisory"): '
        "2 problem(s) reported, none fails the run",
        "0 error(s), 2 warning(s) in 2 file(s) checked",
    ]


def test_fork_pr_without_a_key(gate_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key: offline still gives a clear verdict; --online exits 2 naming the variable, never a value:
    the same error as `answer` and `grade` give for an unset key (the gate used to exit 3)."""
    configure(gate_corpus, key_env="PROPEVAL_TEST_API_KEY")
    monkeypatch.delenv("PROPEVAL_TEST_API_KEY", raising=False)
    before = gate_corpus.snapshot()
    offline = run("gate", "answerability", "--all")
    assert offline.exit_code == 1
    assert offline.output.splitlines()[0] == NO_RECORD.format(i="i0001")
    online = run("gate", "answerability", "--all", "--online")
    assert online.exit_code == 2
    assert online.output == (
        "propeval: error: endpoint 'ref' reads its API key from the environment variable "
        "PROPEVAL_TEST_API_KEY, which is not set; export it first, or run without --online to check the ledger\n"
    )
    assert gate_corpus.snapshot() == before


def test_the_key_value_never_reaches_the_ledger(
    gate_corpus: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROPEVAL_TEST_API_KEY", "sk-test-secret-value")
    srv = loopback()
    configure(gate_corpus, srv.base_url, key_env="PROPEVAL_TEST_API_KEY")
    res = run("gate", "answerability", "--all", "--online")
    assert res.exit_code == 0, res.output
    assert srv.seen[0].headers.get("authorization") == "Bearer sk-test-secret-value"
    for path in Path(gate_corpus.root).rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert b"sk-test-secret-value" not in path.read_bytes(), path


def test_changed_since_checks_only_changed_items(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    assert online_all(gate_corpus, loopback).exit_code == 0
    configure(gate_corpus)  # the loopback port is not part of any binding
    in_git("add", "-A")
    in_git("commit", "-qm", "corpus with records")
    in_git("checkout", "-qb", "pr")
    gate_corpus.item("i0002", framing="loaded", question_type="frame_testing", prompt="Why was order restored?")
    in_git("commit", "-qam", "reword i0002")
    res = run("gate", "answerability", "--changed-since", "main")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert len(lines) == 2 and lines[0].startswith("questions/c0001/i0002.yaml [answerability] i0002: answerability")
    assert lines[1] == "1 error(s), 0 warning(s) in 1 file(s) checked"


@pytest.mark.slow  # the plumbing stub on loopback, a gate run and a sign
def test_a_record_made_against_the_plumbing_stub_says_so_is_not_checked_and_is_never_signed(
    gate_corpus: Any,
) -> None:
    """`serve-local --stub` answers with the item's facts, so every record it makes scores 5. Its
    replies name it (propeval-stub), the record keeps who answered and who judged, and such a
    record counts nowhere: the gate reports it and `ledger sign` refuses it."""
    from propeval.config import load_config
    from propeval.judge.prompt import Case
    from propeval.judge.stub import STUB_MODEL, stub_server
    from propeval.workspace import Workspace

    ws = Workspace(load_config())
    items = [
        {"id": i.id, "prompt": i.prompt, "required_facts": [t for _, t in Case.of(i, c).facts]}
        for i in ws.corpus.active_items()
        if (c := ws.corpus.claim_of(i)) is not None
    ]
    server, _script = stub_server(items)
    with server:
        configure(gate_corpus, server.base_url, answer_model="gemma-3-270m", judge_model="gemma-3-270m")
        res = run("gate", "answerability", "--online", "--all", "--no-sign")
    rec = record(gate_corpus)
    assert rec["binding"]["answer_model"] == "gemma-3-270m"  # what was asked for
    assert rec["result"]["answered_by"] == rec["result"]["judged_by"] == STUB_MODEL  # who answered
    again = run("gate", "answerability", "--all")
    assert again.exit_code == 1, again.output
    assert "made against the plumbing stub (propeval-stub: answered_by and judged_by), not a model: not checked" in (
        again.output
    ), (res.output, again.output)
    signed = run("ledger", "sign", "ledger/answerability/i0001.json")
    assert "made against the plumbing stub" in signed.output, signed.output
    assert "signature" not in record(gate_corpus)
