"""`propeval init`, and the built-in schema and policy a corpus gets with no copied file."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from helpers import REPO, claim_yaml, item_yaml
from propeval import __version__
from propeval.builtin import SCHEMA
from propeval.cli import cli


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_shipped_schema_is_this_repositorys() -> None:
    assert SCHEMA.read_bytes() == (REPO / "schema.json").read_bytes()


def test_init_then_the_builtin_schema_and_blocklist_apply(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    # --rev is pinned as given: no repository is asked (example.invalid does not exist).
    code, out, _ = run(
        "init", "corpus", "--hooks-repo", "https://example.invalid/propeval.git", "--rev", f"v{__version__}"
    )
    assert code == 0
    assert out.splitlines() == [
        "corpus/pyproject.toml",
        "corpus/questions/.gitkeep",
        "corpus/.pre-commit-config.yaml",
        "corpus/.github/workflows/propeval.yml",
        "corpus/.propeval/claim.schema.json",
        "corpus/.propeval/item.schema.json",
        "corpus/.vscode/settings.json",
    ]
    root = tmp_path / "corpus"
    pre_commit = (root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"  - repo: https://example.invalid/propeval.git\n    rev: v{__version__}\n" in pre_commit
    workflow = (root / ".github/workflows/propeval.yml").read_text(encoding="utf-8")
    assert "merge_group:" in workflow and "${{" not in workflow.replace("${{ ", "")  # no broken template
    assert f'pip install "propeval @ git+https://example.invalid/propeval.git@v{__version__}"' in workflow
    monkeypatch.chdir(root)
    assert run("check")[:2] == (0, "ok: 0 file(s) checked, no problems\n")
    (root / "questions/c0001").mkdir()
    (root / "questions/c0001/claim.yaml").write_text(
        claim_yaml(source_url="https://www.globaltimes.cn/page/1.shtml"), encoding="utf-8"
    )
    (root / "questions/c0001/i0001.yaml").write_text(item_yaml(framing="balanced"), encoding="utf-8")
    code, out, _ = run("check")
    assert code == 1
    assert "[sources] source_url is on the source blocklist (globaltimes.cn)" in out
    assert "[schema] 'balanced' is not one of ['neutral', 'loaded']" in out


def test_an_empty_table_gets_the_builtin_defaults_too(corpus) -> None:  # type: ignore[no-untyped-def]
    (corpus.root / "pyproject.toml").write_text("[tool.propeval]\n", encoding="utf-8")
    (corpus.root / "schema.json").unlink()
    corpus.claim(source_url="https://tass.ru/politika/1")
    corpus.item()
    code, out, _ = run("check")
    assert code == 1 and "[sources] source_url is on the source blocklist (tass.ru)" in out
    # A schema named explicitly must exist: no silent fallback.
    (corpus.root / "pyproject.toml").write_text('[tool.propeval]\nschema = "schema.json"\n', encoding="utf-8")
    code, out, _ = run("check")
    assert code == 1 and "schema.json" in out


def test_init_adds_the_table_to_an_existing_pyproject_and_never_overwrites(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text('# ours\n[project]\nname = "x"  # keep\n', encoding="utf-8")
    assert run("init", str(root), "--hooks-repo", "/srv/propeval", "--rev", "v9.9.9")[0] == 0
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert text.startswith('# ours\n[project]\nname = "x"  # keep\n') and "[tool.propeval]" in text
    assert "rev: v9.9.9" in (root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, _, err = run("init", str(root), "--hooks-repo", "/srv/propeval", "--rev", "v9.9.9")
    assert code == 2 and "already has a [tool.propeval] table" in err
    (root / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    code, _, err = run("init", str(root), "--hooks-repo", "/srv/propeval", "--rev", "v9.9.9")
    assert code == 2 and ".pre-commit-config.yaml" in err and "init writes nothing over a file" in err
    assert (root / "pyproject.toml").read_text(encoding="utf-8") == "[project]\n"
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "pyproject.toml"} == {
        p: b for p, b in before.items() if p.name != "pyproject.toml"
    }


def test_the_version_has_its_changelog_entry() -> None:
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == __version__
    assert f"\n## propeval v{__version__} " in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
