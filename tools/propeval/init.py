"""``propeval init``: scaffold a new corpus repository.

It writes the ``[tool.propeval]`` table (into an existing pyproject.toml, keeping its comments,
or a new one), ``questions/``, a ``.pre-commit-config.yaml`` that pins propeval's hooks to a
revision the hooks repository has, a GitHub workflow, and the editor settings that give the
claim and item files the schema (``.vscode/settings.json`` for the YAML language server, and
``.propeval/claim.schema.json`` and ``item.schema.json``, the built-in schema's view of each kind
of file, which ``propeval schema show --kind claim`` prints and ``check`` says are stale when they
differ from the schema it uses). The
defaults that need no copied file (schema, blocklist) come built in (:mod:`propeval.builtin`).
Nothing is overwritten: every target is checked before the first write, so a refused init leaves
the folder as it was.

The pin (:func:`resolve_pin`): ``--rev`` as given; else this release's tag (``v0.2.0``) when the
hooks repository has it (``git ls-remote --tags``); else the commit its ``HEAD`` points at, and
the command says so (``pre-commit autoupdate`` moves a commit pin to the newest tag once there
is one). A local path is written as an absolute path for pre-commit and as a
``git+file://localhost/...`` URL for pip, which takes no bare path (and, up to pip 23, no file URL
without a host in ``propeval @ URL``).
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from pathlib import Path

from propeval import __version__
from propeval.builtin import DATA
from propeval.errors import GitError, UsageError
from propeval.fsutil import atomic_write

TEMPLATES = DATA / "init"
PRE_COMMIT = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/propeval.yml"
# The editor's copies of the built-in schema, one per kind of file as `check` tells them apart (by
# name), and the settings that point the YAML language server (VS Code's YAML extension, and any
# editor that runs yaml-language-server) at them.
EDITOR_SCHEMAS = {"claim": ".propeval/claim.schema.json", "item": ".propeval/item.schema.json"}
EDITOR_GLOBS = {"claim": "questions/*/claim.yaml", "item": "questions/*/i*.yaml"}
VSCODE_SETTINGS = ".vscode/settings.json"
# scp-like git addresses: git@github.com:ORG/propeval.git
_SCP = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>(?!/).+)$")


def default_rev() -> str:
    """The release tag of this propeval: ``v0.2.0``."""
    return f"v{__version__}"


@dataclass(frozen=True)
class Pin:
    """Where the hooks come from, and the revision pinned."""

    repo: str  # as .pre-commit-config.yaml's ``repo:`` (a URL, or an absolute path)
    pip_url: str  # as pip's ``git+`` URL, without the revision
    rev: str
    how: str  # "given" | "tag" | "commit"
    note: str = ""


@dataclass(frozen=True)
class InitResult:
    root: Path
    written: tuple[str, ...]
    pin: Pin | None = None
    notes: tuple[str, ...] = ()


def hooks_source(hooks_repo: str) -> tuple[str, str]:
    """(pre-commit's ``repo:``, pip's ``git+`` URL) for a URL, an scp-like address or a local path."""
    value = hooks_repo.strip()
    if not value or any(c.isspace() for c in value) or value.startswith("-"):
        raise UsageError(f"--hooks-repo {hooks_repo!r}: give the URL (or path) of propeval's git repository")
    if "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme not in ("https", "http", "ssh", "git", "file"):
            raise UsageError(f"--hooks-repo {hooks_repo!r}: use an https, ssh, git or file URL, or a local path")
        return value, f"git+{_pip_file_url(value) if scheme == 'file' else value}"
    m = _SCP.match(value)
    if m:  # pip takes ssh:// only
        return value, f"git+ssh://{m['user']}@{m['host']}/{m['path']}"
    path = Path(value).expanduser().resolve()
    return str(path), f"git+{_pip_file_url(path.as_uri())}"


def _pip_file_url(url: str) -> str:
    """``file:///srv/propeval`` as ``file://localhost/srv/propeval``: the same repository to git, and
    the form every pip takes in ``propeval @ git+file://...`` (pip up to 23 refuses a file URL with
    no host in a name @ URL requirement: "Invalid requirement")."""
    return "file://localhost/" + url[len("file:///") :] if url.lower().startswith("file:///") else url


def resolve_pin(hooks_repo: str, rev: str | None = None) -> Pin:
    """The revision to pin (see the module docstring); GitError when the repository cannot be
    listed and no ``rev`` was given."""
    from propeval import gitutil

    repo, pip_url = hooks_source(hooks_repo)
    if rev:
        return Pin(repo, pip_url, rev, "given")
    tag = default_rev()
    try:
        tags = gitutil.remote_refs(repo, tags=True)
        if f"refs/tags/{tag}" in tags:
            return Pin(repo, pip_url, tag, "tag", f"pinned {tag}, the tag of this propeval release")
        head = gitutil.remote_refs(repo, head=True).get("HEAD")
    except GitError as e:
        raise GitError(
            f"cannot list the tags of {repo} to pin a revision that exists ({e}); check --hooks-repo, "
            f"or give the revision with --rev (a tag or a commit of that repository)"
        ) from None
    if not head:
        raise GitError(f"{repo} has no tag {tag} and no HEAD commit to pin; give the revision with --rev")
    newest = sorted(t.removeprefix("refs/tags/") for t in tags if t.startswith("refs/tags/v"))
    others = f" (it has {', '.join(newest[-3:])})" if newest else " (it has no release tag yet)"
    return Pin(
        repo,
        pip_url,
        head,
        "commit",
        f"{repo} has no tag {tag}{others}: pinned its HEAD commit {head[:12]}; `pre-commit autoupdate` "
        "moves the pin to the newest tag once there is one",
    )


def _template(name: str, **values: str) -> str:
    # safe_substitute: a workflow's own ${{ ... }} expressions stay as they are.
    return string.Template((TEMPLATES / name).read_text(encoding="utf-8")).safe_substitute(values)


def init_corpus(root: Path, hooks_repo: str, rev: str | None = None) -> InitResult:
    """Scaffold a corpus at ``root``; raises UsageError (GitError when the hooks repository
    cannot be listed), having written nothing, when it cannot."""
    import tomlkit

    pin = resolve_pin(hooks_repo, rev)
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
    values = {"hooks_repo": pin.repo, "pip_url": pin.pip_url, "rev": pin.rev}
    files = {
        "pyproject.toml": pyproject_text,
        "questions/.gitkeep": "",
        PRE_COMMIT: _template("pre-commit-config.yaml", **values),
        WORKFLOW: _template("workflow.yml", **values),
        **editor_schemas(),
    }
    notes = [pin.note] if pin.note else []
    if (root / VSCODE_SETTINGS).exists():
        notes.append(
            f"{VSCODE_SETTINGS} exists and was left as it is; to give the editor the schemas, add "
            f'"yaml.schemas": {json.dumps(_schema_map())} to it'
        )
    else:
        files[VSCODE_SETTINGS] = _vscode_settings()
    taken = [rel for rel in files if rel != "pyproject.toml" and (root / rel).exists()]
    if taken:
        raise UsageError(f"{', '.join(taken)} already exist(s) in {root}; init writes nothing over a file")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return InitResult(root, tuple(files), pin, tuple(notes))


def editor_schemas() -> dict[str, str]:
    """path -> text of the editor's schema of each kind (``propeval schema show --kind KIND``)."""
    from propeval.schema_show import schema_text

    return {rel: schema_text(None, kind) for kind, rel in EDITOR_SCHEMAS.items()}


def _schema_map() -> dict[str, list[str]]:
    return {f"./{rel}": [EDITOR_GLOBS[kind]] for kind, rel in EDITOR_SCHEMAS.items()}


def _vscode_settings() -> str:
    """The YAML language server's schema for each kind of corpus file."""
    return json.dumps({"yaml.schemas": _schema_map()}, indent=2) + "\n"
