"""`propeval keys new|add|list` and `propeval ledger sign|resign`; no private key in the repository."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from gatekit import REPO, configure, maintainer_key

from propeval.cli import cli
from propeval.policy import changed_keys
from propeval.signing import default_key_path, load_key, new_key, verify
from propeval.trusted import running_package

# Built from parts, so that this file is not itself a match.
PRIVATE_MARKERS = (b"PRIVATE" + b" KEY-----", b"openssh-key" + b"-v1", b"PuTTY-User-Key" + b"-File")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_no_private_key_material_is_committed() -> None:
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    )
    assert len(tracked) > 100
    for rel in filter(None, tracked):
        path = REPO / rel
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            for marker in PRIVATE_MARKERS:
                assert marker not in data, f"{rel} holds private key material"


def test_keys_new_writes_a_private_file_outside_the_repository(good_corpus: Any, in_git: Any) -> None:
    res = run("keys", "new")
    assert res.exit_code == 0, res.output
    path = default_key_path()
    lines = res.output.splitlines()
    assert lines[0] == f"private key: {path} (mode 0600; never commit it, never share it)"
    assert lines[1].startswith("public key: ssh-ed25519 AAAA")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.resolve().is_relative_to(good_corpus.root.resolve())
    key = load_key()
    assert key is not None and lines[1] == f"public key: {key.public}"
    again = run("keys", "new")  # never over an existing key
    assert again.exit_code == 2
    assert (
        again.output == f"propeval: error: {path} already exists; propeval never overwrites a key (give --out PATH)\n"
    )
    inside = run("keys", "new", "--out", str(good_corpus.root / "keys/me.pem"))
    assert inside.exit_code == 2
    assert "a private key never enters a repository" in inside.output
    assert not (good_corpus.root / "keys").exists()


def test_keys_new_outside_any_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the user config folder is below the current one; no repository here
    res = run("keys", "new")
    assert res.exit_code == 0, res.output
    assert default_key_path().is_file()


def test_keys_add_edits_pyproject_and_keeps_its_comments(good_corpus: Any, tmp_path: Path) -> None:
    pyproject = good_corpus.root / "pyproject.toml"
    pyproject.write_text("# corpus settings\n" + pyproject.read_text(), encoding="utf-8")
    key = new_key(tmp_path / "alice.pem", forbidden=[])
    res = run("keys", "add", "alice", key.public + " alice@laptop")
    assert res.exit_code == 0, res.output
    text = pyproject.read_text(encoding="utf-8")
    assert text.startswith("# corpus settings\n[tool.propeval]\n")
    assert "[tool.propeval.signers]\n# Maintainer keys that sign ledger records" in text
    assert f'alice = "{key.public}"\n' in text
    listed = run("keys", "list")
    assert listed.output.splitlines()[0] == f"alice  {key.public}"
    assert listed.output.splitlines()[1].startswith("you hold no signing key (")
    dup = run("keys", "add", "bob", key.public)
    assert dup.exit_code == 2 and "that key is already listed as 'alice'" in dup.output
    bad = run("keys", "add", "carol", "ssh-rsa AAAAB3NzaC1yc2E")
    assert bad.exit_code == 2 and "a public key is one line 'ssh-ed25519 AAAA...'" in bad.output


def test_a_malformed_signer_is_a_config_error(gate_corpus: Any) -> None:
    path = gate_corpus.root / "pyproject.toml"
    path.write_text(path.read_text().replace('maintainer = "ssh-ed25519 ', 'maintainer = "ssh-ed25519 x'))
    res = run("gate", "answerability", "--all")
    assert res.exit_code == 2
    assert res.output.startswith(
        "propeval: error: pyproject.toml: [tool.propeval.signers] maintainer: not a valid ssh-ed25519 public key"
    )


@pytest.mark.slow
def test_ledger_sign_and_resign(gate_corpus: Any, loopback: Any, tmp_path: Path) -> None:
    srv = loopback()
    configure(gate_corpus, srv.base_url)
    made = run("gate", "answerability", "--online", "--all", "--no-sign")
    assert made.exit_code == 1  # unsigned records do not count
    assert "note: records written are unsigned (--no-sign); ci counts only signed records" in made.output
    assert "[ledger-unsigned]" in made.output
    signed = run("ledger", "sign", "--all")
    assert signed.exit_code == 0, signed.output
    assert signed.output.splitlines() == [
        "note: signed 2 record(s) with maintainer",
        f"note: no --base: this propeval ({running_package()}) was not compared with the base branch's code, and "
        "the records were checked under this tree's [tool.propeval]; sign a pull request's records from a trusted "
        "install of the base, with --base and --pr (SECURITY.md)",
        "ok: 2 file(s) checked, no problems",
    ]
    assert run("gate", "answerability", "--all").exit_code == 0
    again = run("ledger", "sign", "ledger/answerability/i0001.json")
    assert "note: ledger/answerability/i0001.json: already signed (signed); left alone" in again.output
    # A new maintainer key (rotation): resign replaces the signatures.
    old = maintainer_key()
    default_key_path().unlink()
    rotated = new_key(default_key_path(), forbidden=[])
    configure(gate_corpus, srv.base_url)  # lists the new key
    assert run("gate", "answerability", "--all").exit_code == 1  # signed by a key no longer listed
    res = run("ledger", "resign", "--all")
    assert res.exit_code == 0, res.output
    rec = json.loads((gate_corpus.root / "ledger/answerability/i0001.json").read_text())
    assert rec["signature"]["key"] == rotated.public != old.public
    assert verify(rec, {"maintainer": rotated.public}).state == "signed"
    assert run("gate", "answerability", "--all").exit_code == 0
    stale = gate_corpus.item("i0001", prompt="What happened in Beijing in 1989?")
    assert stale.exists()
    refused = run("ledger", "resign", "ledger/answerability/i0001.json")
    assert refused.exit_code == 1
    assert refused.output.startswith(
        "ledger/answerability/i0001.json [ledger-sign] not signed: stale (the item changed (its prompt or fields): "
    )


def test_policy_diff_names_dotted_keys() -> None:
    base = {"gates": {"answerability": "required", "min_fact_score": 4}, "source_blocklist": ["rt.com"]}
    tree = {"gates": {"answerability": "advisory", "min_fact_score": 4}, "source_blocklist": [], "signers": {}}
    assert changed_keys(base, tree) == ["gates.answerability", "source_blocklist"]
    assert "signers.eve" in changed_keys(base, {**tree, "signers": {"eve": "ssh-ed25519 AAAA"}})
