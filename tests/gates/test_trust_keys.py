"""Keys and signatures: unknown fields in a signature, a signing key anyone
could read, swap or commit, and a private key anywhere in a pull request."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import configure, maintainer_key

from propeval.cli import cli
from propeval.signing import KEY_ENV, user_config_dir


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def private_pem(fmt: str = "PKCS8") -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, getattr(serialization.PrivateFormat, fmt), serialization.NoEncryption()
    )


def main_with_records(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    assert run("gate", "answerability", "--online", "--all").exit_code == 0
    configure(gate_corpus)
    gate_corpus.write(".gitignore", "runs/\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "main: signed records")
    in_git("checkout", "-qb", "pr")


@pytest.mark.slow  # an --online run against a loopback server
def test_unknown_fields_in_a_signature_are_refused(gate_corpus: Any, in_git: Any, loopback: Any) -> None:
    main_with_records(gate_corpus, in_git, loopback)
    rel = "ledger/answerability/i0001.json"
    path = gate_corpus.root / rel
    record = json.loads(path.read_text(encoding="utf-8"))
    record["signature"]["reviewed_by"] = "the whole security team"  # not covered by the signature
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    in_git("commit", "-qam", "a note in the signature")
    res = run("ci", "--base", "main", "--step", "answerability")
    assert res.exit_code == 1, res.output
    assert (
        f"{rel} [ledger-signature] i0001: the signature is malformed: unknown field(s) 'reviewed_by' in it; a "
        "signature holds only alg, key, value (nothing in it is signed)"
    ) in res.output


@pytest.mark.parametrize("flaw", ["world-readable", "group-writable", "symlink", "in-repository"])
def test_a_signing_key_others_could_read_swap_or_commit_is_refused(
    gate_corpus: Any, in_git: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flaw: str
) -> None:
    key = maintainer_key().path  # mode 0600, outside any repository
    assert run("keys", "list").exit_code == 0
    if flaw == "world-readable":
        key.chmod(0o644)
        want = f"the signing key {key} has mode 0644: others can read or change it; run: chmod 600 {key}"
    elif flaw == "group-writable":
        key.chmod(0o620)
        want = f"the signing key {key} has mode 0620: others can read or change it; run: chmod 600 {key}"
    elif flaw == "symlink":
        link = tmp_path / "link.pem"
        link.symlink_to(key)
        monkeypatch.setenv(KEY_ENV, str(link))
        want = (
            f"the signing key {link} is a symbolic link (to {key}); a link can be pointed at another key behind your "
            f'back: point {KEY_ENV} at the key file itself (export {KEY_ENV}="$(realpath {link})")'
        )
    else:
        inside = gate_corpus.root / "keys/me.pem"
        inside.parent.mkdir()
        os.replace(key, inside)
        monkeypatch.setenv(KEY_ENV, str(inside))
        want = (
            f"the signing key {inside} is inside the git repository at {gate_corpus.root}, one `git add -A` from "
            f"being committed: move it out (mv {inside} {user_config_dir() / 'signing-key.pem'})"
        )
    for argv in (("ledger", "sign", "--all"), ("keys", "list")):
        res = run(*argv)
        assert res.exit_code == 2, (argv, res.output)
        assert res.output.startswith(f"propeval: error: {want}"), res.output


def test_a_private_key_anywhere_in_the_pull_request_fails_ci(gate_corpus: Any, in_git: Any) -> None:
    configure(gate_corpus, mode="advisory")
    in_git("add", "-A")
    in_git("commit", "-qm", "main")
    in_git("checkout", "-qb", "pr")
    # a key in a file that is still there, inside YAML that is otherwise a fine item
    gate_corpus.write("notes/deploy.txt", b"how to deploy:\n\n" + private_pem())
    # and a key committed, then deleted: the branch's history still holds it
    gate_corpus.write("tmp/id_ed25519", private_pem("OpenSSH"))
    in_git("add", "-A")
    in_git("commit", "-qm", "deploy notes")
    in_git("rm", "-q", "tmp/id_ed25519")
    in_git("commit", "-qm", "oops, remove the key")
    commit = in_git("rev-parse", "HEAD~1").strip()
    res = run("ci", "--base", "main", "--step", "check")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert (
        "notes/deploy.txt:3:1 [private-key] a private key (PRIVATE KEY) is in this file: remove it from every commit "
        "of the branch (rewrite them, or squash), and treat the key as leaked: revoke it and make a new one. "
        "propeval keys live outside the repository (propeval keys new)"
    ) in lines
    assert (
        f"tmp/id_ed25519 [private-key] a private key (OPENSSH PRIVATE KEY) is in this file as commit {commit[:12]} "
        "wrote it (the branch's history holds it): remove it from every commit"
    ) in res.output.replace("\n", " ")
    assert "policy  failed  2 error(s), 0 warning(s)" in lines
    # a public key is fine
    in_git("reset", "-q", "--hard", "main")
    gate_corpus.write("keys.pub", maintainer_key().public + "\n")
    in_git("add", "-A")
    in_git("commit", "-qm", "a public key")
    assert run("ci", "--base", "main", "--step", "check").exit_code == 0
