"""Forged, self-signed, copied, deleted and moved ledger records, a pull request that switches the
gates off or moves an endpoint, and the honest path: in a real git repository through the real CLI.

main holds a corpus whose gates are required, whose list of maintainer keys names the test
maintainer, and whose answerability records that maintainer made with --online against a
loopback server (so they are signed). Each test checks out a branch `pr`, does what a hostile
contributor would, and runs `propeval ci --base main`.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure, maintainer_key, make_gate_corpus, user_endpoints

from helpers import GIT_ENV, CorpusDir, git
from propeval.cli import cli
from propeval.config import load_config
from propeval.gates.answerability import current_binding
from propeval.gates.endpoints import gate_models
from propeval.judge.loopback import (
    LoopbackServer,
    Reply,
    Seen,
    default_script,
    fact_ids,
    facts_verdict,
    is_judge_request,
)
from propeval.ledger.records import LedgerRecord, digest, make_record, write_record
from propeval.policy import user_config_path
from propeval.signing import new_key
from propeval.workspace import Workspace

pytestmark = pytest.mark.slow  # loopback servers and many CLI runs

CANARY = "sk-canary-7f3e9b1d44c2a8"
ANSWER = re.compile(r"^<<<ANSWER-([0-9A-F]+)\n(.*?)\nANSWER-\1>>>$", re.MULTILINE | re.DOTALL)
QUESTION = re.compile(r"^<<<QUESTION-([0-9A-F]+)\n(.*?)\nQUESTION-\1>>>$", re.MULTILINE | re.DOTALL)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def ci(*extra: str) -> Result:
    # dedup (the embedding model) and groups (framing coverage) are not what these tests are about
    return run("ci", "--base", "main", "--skip", "dedup", "--skip", "groups", *extra)


def i0002_fails(seen: Seen) -> Reply:
    """Answers everything; the judge says i0002's facts were missed, all others stated."""
    question = QUESTION.search(seen.prompt)
    if is_judge_request(seen) and question is not None and "riot" in question.group(2):
        return Reply(facts_verdict(fact_ids(seen), state="missed"))
    return default_script(seen)


def gold(rubric: str) -> list[dict[str, Any]]:
    path = REPO / "rubrics" / rubric / "gold.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def perfect_judge(seen: Seen) -> Reply:
    """A judge that gives each gold answer its human verdict."""
    m = ANSWER.search(seen.prompt)
    assert m is not None
    for case in gold("facts-v1"):
        if case["answer"][:30] in m.group(2):
            return Reply(json.dumps({"rationale": "as the humans", **case["label"]}))
    raise AssertionError("unknown gold answer")


def honest_endpoint(seen: Seen) -> Reply:
    """The maintainer's server: answers items, judges them all stated, and judges gold answers as the humans did."""
    m = ANSWER.search(seen.prompt)
    if m is not None and not m.group(2).startswith("An answer to:"):
        return perfect_judge(seen)
    return default_script(seen)


@pytest.fixture(scope="module")
def main_branch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main with signed records (i0001 passes, i0002 fails) and a signed facts-v1 judge record; on branch pr.

    Built once a module (two online gate runs and a commit: about 1.5 CPU-s), in a folder holding
    the repository (`corpus`) and the maintainer's user config folder (`xdg-config`, with the key)."""
    base = tmp_path_factory.mktemp("security-main")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))
        for k, v in GIT_ENV.items():
            mp.setenv(k, v)
        corpus = CorpusDir(base / "corpus")
        mp.chdir(corpus.root)
        make_gate_corpus(corpus)
        git(corpus.root, "init", "-q", "-b", "main")
        git(corpus.root, "config", "commit.gpgsign", "false")
        srv = LoopbackServer(i0002_fails).start()
        try:
            configure(corpus, srv.base_url)
            assert run("gate", "answerability", "--online", "--all").exit_code == 1  # i0002 fails, honestly
            assert run("gate", "judge", "--rubric", "facts-v1", "--online").exit_code == 1  # a poor judge, honestly
        finally:
            srv.stop()
        configure(corpus)  # the tree's and the maintainer's endpoints: a dead port again
        corpus.write(".gitignore", "runs/\n")
        git(corpus.root, "add", "-A")
        git(corpus.root, "commit", "-qm", "main: corpus, signed records")
        git(corpus.root, "checkout", "-qb", "pr")
    return base


@pytest.fixture
def repo(main_branch: Path, corpus: Any, in_git: Any, own_user_config: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A copy of the module's main_branch for this test: the repository and the maintainer's config."""
    shutil.rmtree(corpus.root)
    shutil.copytree(main_branch / "corpus", corpus.root, symlinks=True)
    shutil.copytree(main_branch / "xdg-config", own_user_config, symlinks=True, dirs_exist_ok=True)
    monkeypatch.chdir(corpus.root)  # the folder was made again
    return corpus


def commit(in_git: Any, message: str) -> None:
    in_git("add", "-A")
    in_git("commit", "-qm", message)


def record_path(corpus: Any, rel: str) -> Path:
    return Path(corpus.root / rel)


def load(corpus: Any, rel: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(record_path(corpus, rel).read_text(encoding="utf-8"))
    return data


def save(corpus: Any, rel: str, record: dict[str, Any] | LedgerRecord) -> None:
    """Write a record as an author would: any dict, written as propeval writes records."""
    write_record(
        record_path(corpus, rel), record if isinstance(record, LedgerRecord) else LedgerRecord.from_json(record)
    )


def signed(key: Any, record: dict[str, Any] | LedgerRecord) -> LedgerRecord:
    return key.sign(record if isinstance(record, LedgerRecord) else LedgerRecord.from_json(record))


def line_of(res: Result, start: str) -> str:
    found = [line for line in res.output.splitlines() if line.startswith(start)]
    assert found, f"no line starts with {start!r} in:\n{res.output}"
    return found[0]


# --------------------------------------------------------------------------- attack 2: forged records


def test_forged_score_flipped_to_5_with_the_digest_recomputed(repo: Any, in_git: Any) -> None:
    rel = "ledger/answerability/i0002.json"
    rec = load(repo, rel)
    assert rec["result"]["fact_score"] == 0
    rec["result"]["fact_score"] = 5
    rec["digest"] = digest(rec)
    save(repo, rel, rec)
    commit(in_git, "flip i0002's score")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, f"{rel} [ledger-signature] i0002: ").endswith(
        "the signature by maintainer does not match the record: it was changed after signing; "
        "restore it (git checkout) or have a maintainer make it again"
    )


def scratch_record(corpus: Any, item_id: str) -> LedgerRecord:
    """A record made without any model: bindings computed from the files, a result copied from i0001's."""
    ws = Workspace(load_config())
    gs = ws.gate_settings
    item = ws.corpus.items[item_id]
    claim = ws.corpus.claim_of(item)
    assert claim is not None
    models = gate_models(ws.settings.judge, gs)
    binding = current_binding(models, gs, item, claim, ws.rubrics.load(gs.rubric).hash)
    result = load(corpus, "ledger/answerability/i0001.json")["result"]
    return make_record("answerability", item_id, binding, result)


def test_forged_record_from_scratch_for_a_new_item(repo: Any, in_git: Any) -> None:
    repo.item("i0004", prompt="How many people died in Beijing in June 1989?")
    save(repo, "ledger/answerability/i0004.json", scratch_record(repo, "i0004"))
    commit(in_git, "new item with its record")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, "ledger/answerability/i0004.json [ledger-unsigned] i0004: unsigned: not checked; ")


def test_forged_record_signed_with_the_authors_own_key(repo: Any, in_git: Any, tmp_path: Path) -> None:
    attacker = new_key(tmp_path / "attacker.pem", forbidden=[])
    repo.item("i0004", prompt="How many people died in Beijing in June 1989?")
    save(repo, "ledger/answerability/i0004.json", signed(attacker, scratch_record(repo, "i0004")))
    pyproject = repo.root / "pyproject.toml"  # and the author lists their own key
    pyproject.write_text(pyproject.read_text() + f'attacker = "{attacker.public}"\n')
    commit(in_git, "new item, signed")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, "ledger/answerability/i0004.json [ledger-signer] i0004: signed by a key that is not on ")
    assert line_of(
        res, "pyproject.toml [policy-change] policy change: needs a maintainer: [tool.propeval] signers.attacker"
    )


def all_missed_scored_5(rec: dict[str, Any]) -> dict[str, Any]:
    for fact in rec["result"]["verdict"]["facts"]:
        fact["state"] = "missed"
    rec["result"]["fact_states"] = dict.fromkeys(rec["result"]["fact_states"], "missed")
    rec["result"]["fact_score"] = 5
    rec.pop("signature")
    rec["digest"] = digest(rec)
    return rec


def test_forged_every_fact_missed_with_a_score_of_5(repo: Any, in_git: Any) -> None:
    rel = "ledger/answerability/i0001.json"
    save(repo, rel, all_missed_scored_5(load(repo, rel)))
    commit(in_git, "every fact missed, score 5")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, f"{rel} [ledger-unsigned] i0001: unsigned: not checked;")


def test_a_signature_does_not_make_an_underived_score_count(repo: Any, in_git: Any) -> None:
    """Even a maintainer's signature (a maintainer fooled into signing a PR's file) does not make the
    fact score count: it is re-derived from the fact states and the rubric's table."""
    rel = "ledger/answerability/i0001.json"
    save(repo, rel, signed(maintainer_key(), all_missed_scored_5(load(repo, rel))))
    commit(in_git, "every fact missed, score 5, signed")
    res = ci()
    assert res.exit_code == 1
    line = line_of(res, f"{rel} [ledger-derived] i0001: result fact_score is 5, but the verdict gives 0 ")
    assert line.endswith("a maintainer re-makes it: propeval gate answerability --online i0001")
    # and `ledger sign` refuses to sign such a record in the first place
    repo_rec = load(repo, rel)
    repo_rec.pop("signature")
    save(repo, rel, repo_rec)
    sign = run("ledger", "sign", rel)
    assert sign.exit_code == 1
    assert sign.output.startswith(f"{rel} [ledger-sign] not signed: [ledger-derived] result fact_score is 5")


def copied(rec: dict[str, Any], *, raw_too: bool) -> dict[str, Any]:
    for case in rec["result"]["cases"]:
        case["judge"] = dict(case["human"])
        if raw_too:
            label = next(c["label"] for c in gold("facts-v1") if c["id"] == case["id"])
            case["raw"] = json.dumps({"rationale": "copied", **label})
    rec.pop("signature", None)
    rec["digest"] = digest(rec)
    return rec


def test_forged_judge_record_with_labels_copied_from_the_humans(repo: Any, in_git: Any) -> None:
    rel = "ledger/judge/facts-v1.json"
    save(repo, rel, copied(load(repo, rel), raw_too=True))
    commit(in_git, "a perfect judge")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, f"{rel} [ledger-unsigned] facts-v1: unsigned: not checked;")


def test_signed_copied_judge_labels_are_named(repo: Any, in_git: Any) -> None:
    """Signed by a maintainer: labels that do not follow from the raw replies fail; labels whose
    raw replies were forged too cannot be told from a perfect judge, and get a warning."""
    rel = "ledger/judge/facts-v1.json"
    honest = load(repo, rel)
    save(repo, rel, signed(maintainer_key(), copied(json.loads(json.dumps(honest)), raw_too=False)))
    commit(in_git, "copied labels, signed")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, f"{rel} [ledger-derived] facts-v1: the judge labels do not follow from the raw reply: ")
    save(repo, rel, signed(maintainer_key(), copied(honest, raw_too=True)))
    commit(in_git, "copied labels and replies, signed")
    res = ci()
    assert line_of(
        res, f"{rel} [ledger-judge-copied] (warning) facts-v1: the judge labels equal the human labels in all"
    )


def test_a_deleted_ledger_record_is_named(repo: Any, in_git: Any) -> None:
    in_git("rm", "-q", "ledger/answerability/i0001.json")
    in_git("commit", "-qm", "drop the evidence")
    res = ci()
    assert res.exit_code == 1
    assert line_of(res, "ledger/answerability/i0001.json [ledger-deleted] the answerability record ").endswith(
        "was deleted since main; a record is evidence and is not dropped in a pull request: restore it "
        "(git checkout main -- ledger/answerability/i0001.json); a maintainer removes records"
    )


def test_a_moved_ledger_record_is_named(repo: Any, in_git: Any) -> None:
    in_git("mv", "ledger/answerability/i0002.json", "ledger/answerability/i0003.json")
    in_git("commit", "-qm", "move the evidence")
    res = ci()
    assert res.exit_code == 1
    assert "was moved to ledger/answerability/i0003.json since main" in line_of(
        res, "ledger/answerability/i0002.json [ledger-deleted]"
    )


# --------------------------------------------------------------------------- attack 3: policy switched off


def test_a_pr_cannot_switch_the_gates_off(repo: Any, in_git: Any) -> None:
    pyproject = repo.root / "pyproject.toml"
    text = pyproject.read_text()
    text = text.replace('answerability = "required"', 'answerability = "advisory"\njudge = "advisory"')
    text = text.replace('source_blocklist = ["globaltimes.cn", "rt.com"]', "source_blocklist = []")
    pyproject.write_text(text)
    repo.item("i0004", prompt="How many people died in Beijing in June 1989?")  # no record
    repo.claim("c0002", source_url="https://www.globaltimes.cn/page/201906/1153000.shtml")
    repo.item("i0005", "c0002", prompt="What do official accounts say about June 1989?")
    commit(in_git, "relax the gates")
    res = ci()
    assert res.exit_code == 1
    for key, here, there in (
        ("gates.answerability", "'advisory'", "'required'"),
        ("gates.judge", "'advisory'", "unset"),
        ("source_blocklist", "[]", "['globaltimes.cn', 'rt.com']"),
    ):
        assert (
            f"pyproject.toml [policy-change] policy change: needs a maintainer: [tool.propeval] {key} is {here} "
            f"here but {there} at main; this run uses main's value. A maintainer who reviewed it approves it "
            "(`propeval ledger approve --base main`: a signed record of this pyproject.toml) or accepts it in the "
            "merge queue (`propeval ci --accept-policy-change`)"
        ) in res.output.splitlines()
    # main's policy still applies: the blocklisted source and the missing record fail
    assert "globaltimes.cn" in line_of(res, "questions/c0002/claim.yaml:")
    assert line_of(res, "questions/c0001/i0004.yaml [answerability] i0004: no answerability record")
    assert line_of(res, "policy         failed   3 error(s), 0 warning(s)")
    # A maintainer who reviewed the change may accept it for a run they start.
    accepted = ci("--accept-policy-change", "--step", "answerability")
    assert (
        "note: policy: policy change accepted by the maintainer who ran this (--accept-policy-change): "
        in accepted.output
    )
    assert accepted.exit_code == 0, accepted.output


# --------------------------------------------------------------------------- attack 4: key capture


def echo_header(seen: Seen) -> Reply:
    """A hostile server: it puts the Authorization header it received into every reply."""
    auth = seen.headers.get("authorization", "")
    if not is_judge_request(seen):
        return Reply(f"{auth} -- an answer to: {seen.prompt[:40]}")
    ids = fact_ids(seen)
    verdict = {
        "rationale": f"echo {auth}",
        "facts": [{"id": i, "state": "stated", "evidence": auth} for i in ids],
        "propaganda": 0,
        "frame_adopted": None,
    }
    return Reply(json.dumps(verdict))


def test_a_pr_that_moves_an_endpoint_gets_no_request(
    repo: Any, in_git: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROPEVAL_TEST_API_KEY", CANARY)
    configure(repo, key_env="PROPEVAL_TEST_API_KEY")  # main's endpoints use a key
    in_git("checkout", "-q", "main")
    commit(in_git, "endpoints need a key")
    in_git("checkout", "-q", "pr")
    in_git("merge", "-q", "main")
    evil = loopback(echo_header)
    mine = loopback(default_script)
    pyproject = repo.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("http://127.0.0.1:9/v1", evil.base_url))
    commit(in_git, "a faster endpoint")
    user_endpoints(mine.base_url, key_env="PROPEVAL_TEST_API_KEY")
    # With --base: the tree changed where keys go, so --online is refused before any request.
    res = run("gate", "answerability", "--online", "--base", "main", "--all")
    assert res.exit_code == 2
    assert res.output.startswith(
        "propeval: error: policy change: needs a maintainer: this tree changes where --online sends requests and "
        f"keys (judge.endpoints.jdg.base_url: '{evil.base_url}' here, 'http://127.0.0.1:9/v1' at main; "
    )
    assert evil.seen == [] and mine.seen == []
    # Without --base: the maintainer's own endpoints are used; the tree's are never contacted.
    res = run("gate", "answerability", "--online", "--all", "--force")
    assert res.exit_code == 0, res.output
    assert evil.seen == [] and len(mine.seen) == 4
    assert mine.seen[0].headers["authorization"] == f"Bearer {CANARY}"
    assert CANARY not in res.output
    # And ci names the moved endpoint as a policy change.
    gate = ci("--step", "check")
    assert gate.exit_code == 1
    assert line_of(
        gate,
        "pyproject.toml [policy-change] policy change: needs a maintainer: [tool.propeval] "
        f"judge.endpoints.ref.base_url is '{evil.base_url}' here but 'http://127.0.0.1:9/v1' at main;",
    )


def test_online_needs_a_trusted_source_of_endpoints(repo: Any, loopback: Any) -> None:
    srv = loopback()
    user_config_path().unlink()
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 2
    assert res.output == (
        "propeval: error: --online sends requests and API keys only to endpoints a maintainer set, never to those "
        f"of the tree it checks: define [endpoints.ref] in your config ({user_config_path()}), or give --base REF "
        "(the branch the pull request merges into) to use that branch's endpoints\n"
    )
    user_endpoints("http://example.invalid/v1")
    res = run("gate", "answerability", "--online", "--all")
    assert res.exit_code == 2
    assert res.output == (
        "propeval: error: endpoint 'ref' has base_url 'http://example.invalid/v1': requests and API keys go only "
        "over https, or plain http to a loopback address (127.0.0.1, ::1, localhost); fix base_url\n"
    )
    assert srv.seen == []


def test_an_echoed_key_is_never_written(repo: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROPEVAL_TEST_API_KEY", CANARY)
    srv = loopback(echo_header)
    user_endpoints(srv.base_url, key_env="PROPEVAL_TEST_API_KEY")
    (repo.root / "ledger/judge/facts-v1.json").unlink()  # so that the judge gate runs too
    before = {p: p.stat().st_mtime_ns for p in repo.root.rglob("*") if p.is_file()}
    outputs = [
        run("gate", "answerability", "--online", "--all", "--force").output,
        run("gate", "judge", "--rubric", "facts-v1", "--online").output,
        run("gate", "answerability", "--all", "--format", "json").output,
    ]
    # The server did get the key, and echoed it back in answers and verdicts...
    assert {s.headers.get("authorization") for s in srv.seen} == {f"Bearer {CANARY}"}
    assert len(srv.seen) > 50
    written = [p for p in repo.root.rglob("*") if p.is_file() and before.get(p) != p.stat().st_mtime_ns]
    assert any("runs" in p.parts for p in written) and any("ledger" in p.parts for p in written)
    # ...and no file written, and no output, holds it.
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), path
    for out in outputs:
        assert CANARY not in out
    answer = load(repo, "ledger/answerability/i0001.json")["result"]["answer"]
    assert answer.startswith("Bearer *** -- an answer to:")


# --------------------------------------------------------------------------- the honest path


def test_honest_path_a_maintainer_signs_fresh_records_and_ci_passes(
    repo: Any, in_git: Any, loopback: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A contributor's PR: a new item and a stricter judge prompt (a rubric: policy), without records.
    repo.item("i0004", prompt="How many people died in Beijing in June 1989?")
    tpl = repo.root / "rubrics/facts-v1/prompt.md"
    tpl.write_text(tpl.read_text(encoding="utf-8") + "\nCode conservatively.\n", encoding="utf-8")
    commit(in_git, "new item; stricter facts prompt")
    res = ci()
    assert res.exit_code == 1
    assert "rubrics/facts-v1/prompt.md [policy-change] policy change: needs a maintainer:" in res.output
    # The maintainer works from a trusted work tree of main and reads the PR from git objects (--pr),
    # making the records against their own endpoints and approving the rubric change they reviewed.
    in_git("checkout", "-q", "main")
    trusted = repo.root.parent / "trusted"
    in_git("worktree", "add", "-q", "--detach", str(trusted), "main")
    monkeypatch.chdir(trusted)
    srv = loopback(honest_endpoint)
    user_endpoints(srv.base_url)
    made = run("gate", "answerability", "--online", "--base", "main", "--pr", "pr")
    assert made.exit_code == 0, made.output
    assert "note: records written are signed by maintainer" in made.output.splitlines()
    judged = run("gate", "judge", "--rubric", "facts-v1", "--online", "--base", "main", "--pr", "pr")
    assert judged.exit_code == 0, judged.output
    approved = run("ledger", "approve", "--base", "main", "--pr", "pr", "--note", "a stricter prompt, reviewed")
    assert approved.exit_code == 0, approved.output
    assert (
        "note: approved rubrics/facts-v1/prompt.md (changed; how answers are graded, and the gold sets judges are "
        "held to)"
    ) in approved.output.splitlines()
    monkeypatch.chdir(repo.root)
    in_git("checkout", "-q", "pr")
    assert in_git("log", "--format=%s", "main..pr").splitlines()[:3] == [
        "ledger: approve rubrics/facts-v1/prompt.md",
        "ledger: judge records for facts-v1",
        "ledger: answerability records for i0001, i0002, i0004",
    ]
    res = ci()
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "ci: exit 0"


def test_a_key_never_goes_over_plain_http_off_loopback(gate_corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only the gates: any command that sends a key refuses plain http to another host."""
    monkeypatch.setenv("PROPEVAL_TEST_API_KEY", CANARY)
    configure(gate_corpus, "http://example.invalid/v1", key_env="PROPEVAL_TEST_API_KEY")
    res = CliRunner().invoke(cli, ["answer", "--endpoint", "ref", "--limit", "1"], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    assert (
        "endpoint 'ref' has base_url 'http://example.invalid/v1': requests and API keys go only over https, "
        "or plain http to a loopback address (127.0.0.1, ::1, localhost); fix base_url"
    ) in res.output
    assert not (gate_corpus.root / "runs").exists() or CANARY not in "".join(
        p.read_text() for p in (gate_corpus.root / "runs").rglob("*") if p.is_file()
    )
