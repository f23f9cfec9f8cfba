"""``propeval init``: scaffold a new corpus repository.

It writes the ``[tool.propeval]`` table (into an existing pyproject.toml, keeping its comments,
or a new one), ``questions/``, a ``.pre-commit-config.yaml`` that pins propeval's hooks to a
release tag, and a GitHub workflow. The defaults that need no copied file (schema, blocklist)
come built in (:mod:`propeval.builtin`). Nothing is overwritten: every target is checked before
the first write, so a refused init leaves the folder as it was.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from propeval import __version__
from propeval.builtin import DATA
from propeval.errors import UsageError
from propeval.fsutil import atomic_write

TEMPLATES = DATA / "init"
PRE_COMMIT = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/propeval.yml"


def default_rev() -> str:
    """The release tag of this propeval: ``v0.2.0``."""
    return f"v{__version__}"


@dataclass(frozen=True)
class InitResult:
    root: Path
    written: tuple[str, ...]


def _template(name: str, **values: str) -> str:
    # safe_substitute: a workflow's own ${{ ... }} expressions stay as they are.
    return string.Template((TEMPLATES / name).read_text(encoding="utf-8")).safe_substitute(values)


def init_corpus(root: Path, hooks_repo: str, rev: str | None = None) -> InitResult:
    """Scaffold a corpus at ``root``; raises UsageError, having written nothing, when it cannot."""
    import tomlkit

    rev = rev or default_rev()
    if not hooks_repo.strip() or any(c.isspace() for c in hooks_repo):
        raise UsageError(f"--hooks-repo {hooks_repo!r}: give the URL (or path) of propeval's git repository")
    root.mkdir(parents=True, exist_ok=True)
    pyproject = root / "pyproject.toml"
    table_text = (TEMPLATES / "pyproject.toml").read_text(encoding="utf-8")
    if pyproject.is_file():
        from propeval.config import parse_toml

        existing = pyproject.read_text(encoding="utf-8")
        if "propeval" in (parse_toml(existing.encode("utf-8"), "pyproject.toml").get("tool") or {}):
            raise UsageError(f"{pyproject} already has a [tool.propeval] table: this is a corpus already")
        doc = tomlkit.parse(existing)
        doc.update(tomlkit.parse(table_text))
        pyproject_text = tomlkit.dumps(doc)
    else:
        pyproject_text = table_text
    files = {
        "pyproject.toml": pyproject_text,
        "questions/.gitkeep": "",
        PRE_COMMIT: _template("pre-commit-config.yaml", hooks_repo=hooks_repo, rev=rev),
        WORKFLOW: _template("workflow.yml", hooks_repo=hooks_repo, rev=rev),
    }
    taken = [rel for rel in files if rel != "pyproject.toml" and (root / rel).exists()]
    if taken:
        raise UsageError(f"{', '.join(taken)} already exist(s) in {root}; init writes nothing over a file")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return InitResult(root, tuple(files))
