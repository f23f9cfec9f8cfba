"""A pull request cannot approve its own duplicates.

main holds two claims whose items i0001 and i0005 ask the same question word for word, kept by an
allowlist entry that is on main (reviewed by the merge that brought it: it counts, unsigned). The
pull request adds a third claim whose item i0006 duplicates i0001 again, and its author writes the
allowlist entry with ``propeval dedup allow``. ``ci`` reports the pair as unreviewed, and the
entry as a policy change, until a maintainer signs it from a trusted install of the base.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure, make_gate_corpus

from helpers import git
from propeval.cli import cli

pytestmark = pytest.mark.slow  # the bundled embedding model

QUESTION = "What happened in central Beijing on the night of 3-4 June 1989?"
RIOT = "Why was the riot put down?"  # i0002's prompt


FACTS = {
    2: ("The Kerch bridge was opened to road traffic in May 2018.", "Its rail section followed in December 2019."),
    3: ("Flight MH17 was shot down over eastern Ukraine in July 2014.", "A Buk missile launcher fired the missile."),
}


def facts(n: int) -> str:
    one, two = FACTS[n]
    return f"\n  - id: f1\n    text: {one}\n  - id: f2\n    text: {two}"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_prs_own_allowlist_entry_does_not_make_its_duplicate_reviewed(
    corpus: Any, in_git: Any, bundled_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_gate_corpus(corpus)
    configure(corpus, mode="advisory")
    corpus.claim("c0002", source_url="https://example.org/second", title="A second claim", facts=facts(2))
    corpus.item("i0005", "c0002", prompt=QUESTION)
    assert run("dedup", "allow", "i0001", "i0005", "--reason", "kept on main", "--reviewer", "ml").exit_code == 0
    corpus.write(".gitignore", "runs/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main: a reviewed pair")
    in_git("checkout", "-qb", "pr")
    corpus.claim("c0003", source_url="https://example.org/third", title="A third claim", facts=facts(3))
    corpus.item("i0006", "c0003", prompt=RIOT, framing="loaded", question_type="frame_testing")
    mine = run("dedup", "allow", "i0002", "i0006", "--reason", "trust me", "--reviewer", "contributor")
    assert mine.exit_code == 0, mine.output
    assert "unsigned: in a pull request it counts once a maintainer signs it" in mine.output
    in_git("add", "-A")
    in_git("commit", "-qm", "a new claim, and its review")

    res = run("ci", "--base", "main", "--step", "dedup")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    # the pair is unreviewed, saying why; the pair kept on main is still reviewed
    flagged = [line for line in lines if line.startswith("questions/c0003/i0006.yaml") and "[dedup-exact]" in line]
    assert flagged and flagged[0].endswith(
        "unreviewed: its entry in dedup-allowlist.yaml:11 does not count: it is new or changed since main and not "
        "signed by a maintainer; a maintainer signs it: propeval ledger sign <allowlist> (or writes it with "
        "propeval dedup allow --sign)"
    ), res.output
    assert not any("i0005" in line and "[dedup-" in line for line in lines), res.output
    assert any(
        line.startswith(
            "dedup-allowlist.yaml:11:1 [policy-change] policy change: needs a maintainer: the allowlist entry"
        )
        and "i0002 / i0006" in line
        for line in lines
    ), res.output
    # The maintainer signs the entry from a trusted work tree of main, for the pull request as data.
    trusted = corpus.root.parent / "trusted"
    git(corpus.root, "worktree", "add", "-q", "--detach", str(trusted), "main")
    in_git("checkout", "-q", "main")
    monkeypatch.chdir(trusted)
    signed = run("ledger", "sign", "dedup-allowlist.yaml", "--base", "main", "--pr", "pr")
    assert signed.exit_code == 0, signed.output
    assert "note: signed 1 entry of dedup-allowlist.yaml with maintainer" in signed.output.splitlines()
    assert "note: dedup-allowlist.yaml:4 i0001 / i0005: already counts (on main); left alone" in signed.output
    monkeypatch.chdir(corpus.root)
    in_git("checkout", "-q", "pr")
    text = (corpus.root / "dedup-allowlist.yaml").read_text(encoding="utf-8")
    assert text.count("signature:") == 1  # the pull request's entry; main's counts as it is
    res = run("ci", "--base", "main", "--step", "dedup")
    assert res.exit_code == 0, res.output
    assert (
        "note: policy: dedup-allowlist.yaml: every new or changed entry is signed by a maintainer on main"
        in res.output.splitlines()
    )
    # An edit to a signed entry (its reason) breaks the signature: unreviewed again.
    (corpus.root / "dedup-allowlist.yaml").write_text(text.replace("trust me", "trust me, really"), encoding="utf-8")
    in_git("commit", "-qam", "a better reason")
    res = run("ci", "--base", "main", "--step", "dedup")
    assert res.exit_code == 1
    assert "its signature by maintainer does not match the entry (changed after signing)" in res.output


def test_dedup_allow_sign_writes_a_signed_entry(corpus: Any, in_git: Any, bundled_model: None, tmp_path: Path) -> None:
    make_gate_corpus(corpus)
    configure(corpus, mode="advisory")
    in_git("add", "-A")
    in_git("commit", "-qm", "main")
    in_git("checkout", "-qb", "pr")
    corpus.claim("c0002", source_url="https://example.org/second", title="A second claim", facts=facts(2))
    corpus.item("i0005", "c0002", prompt=QUESTION)
    res = run("dedup", "allow", "i0001", "i0005", "--reason", "both belong", "--reviewer", "ml", "--sign")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "signed by maintainer"
    in_git("add", "-A")
    in_git("commit", "-qm", "signed review")
    assert run("ci", "--base", "main", "--step", "dedup").exit_code == 0
