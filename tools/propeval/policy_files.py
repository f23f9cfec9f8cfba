"""Files that are policy: what runs, and what is enforced, changes only with a maintainer's approval.

``[tool.propeval]`` is policy key by key (:mod:`propeval.policy`). These files are policy whole:

========================================  =========================================================
path                                      why
========================================  =========================================================
``.github/``                              the workflows CI runs, CODEOWNERS, repository settings
``.pre-commit-config.yaml``               the hooks every ``git commit`` runs
``.pre-commit-hooks.yaml``                the hooks other repositories install from this one
``scripts/``                              what the hooks and the Makefile run
``Makefile`` (and ``GNUmakefile``,         what ``make setup``, ``run`` and ``test`` run (make reads the
``makefile``)                             other two first)
``setup.py``, ``setup.cfg``,              code an install runs (a setuptools build, a hatch build hook)
``hatch_build.py``
``.ci/``                                  what CI runs on a fresh clone
``pyproject.toml`` outside                how propeval is built and installed (``[build-system]``,
``[tool.propeval]``                       ``[project]``: dependencies, extras, entry points), and how
                                          its tests and linters run (``[tool.pytest*]``, ruff, mypy...)
the schema (``schema.json``)              the contract every claim and item is checked against
the rubrics folder (``rubrics/``)         how answers are graded, and the gold sets judges are held to
the dedup allowlist                       near-duplicate pairs kept by review
``.gitattributes`` (any folder)           how git checks out, diffs and merges files
``.gitmodules``                           code fetched from other repositories
``CODEOWNERS`` (top, ``docs/``)           who must review what
``pytest.ini``, ``tox.ini``,              code the tests, an editor or a shell run: pytest's and tox's
``conftest.py`` (any folder),             configuration, pytest's plugins, direnv's ``.envrc``, VS
``.envrc``, ``.vscode/``,                 Code's tasks and settings, and what Python itself imports
``sitecustomize.py``,                     at start (``sitecustomize``, ``usercustomize``, a ``.pth``
``usercustomize.py``, ``*.pth``           file's ``import`` lines) wherever they are put on its path
(any folder)
a link into any path above                what its target decides (a link is read through: ``x ->
                                          scripts/in-venv`` runs what that script runs)
a claim citing a blocklisted outlet       an exception to the source blocklist: the claim's
under ``source_role:                      ``source_role: official_statement`` (a state body's own
official_statement``                      record of its statement), new or changed since the base
========================================  =========================================================

The schema, rubrics folder and allowlist are the paths the *base* branch's ``[tool.propeval]``
names. A change is a path whose blob differs between the merge base and the tree (added,
changed, deleted, or retyped); for pyproject.toml only a change outside ``[tool.propeval]`` counts
here (comments and layout do not: the parsed tables are compared). Everything is data to this
module: it reads blobs and bytes, never runs what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval import gitutil
from propeval.config import Config, parse_toml
from propeval.errors import ConfigError
from propeval.settings import ProjectSettings

# (path, is a folder, what it decides); paths are relative to the repository's top.
REPO_POLICY: tuple[tuple[str, bool, str], ...] = (
    (".github", True, "the workflows CI runs and the repository's settings files"),
    (".pre-commit-config.yaml", False, "the hooks every git commit runs"),
    (".pre-commit-hooks.yaml", False, "the hooks other repositories install from this one"),
    ("scripts", True, "what the hooks and the Makefile run"),
    ("Makefile", False, "what make setup, run and test run"),
    # make reads GNUmakefile, then makefile, before Makefile: adding one replaces it
    ("GNUmakefile", False, "what make setup, run and test run"),
    ("makefile", False, "what make setup, run and test run"),
    # what a build backend may run at install time (with setuptools, or a hatch build hook)
    ("setup.py", False, "code an install runs"),
    ("setup.cfg", False, "code an install runs"),
    ("hatch_build.py", False, "code an install runs"),
    (".ci", True, "what CI runs on a fresh clone"),
    (".gitmodules", False, "code fetched from other repositories"),
    ("CODEOWNERS", False, "who must review what"),
    ("docs/CODEOWNERS", False, "who must review what"),
    ("pytest.ini", False, "what the tests run (pytest's configuration: plugins, options)"),
    ("tox.ini", False, "what the tests run (tox's and pytest's configuration)"),
    (".envrc", False, "what a shell runs on entering the folder (direnv)"),
    (".vscode", True, "what the editor runs (tasks, launch and settings files)"),
)
ANYWHERE = {
    ".gitattributes": "how git checks out, diffs and merges files",
    "conftest.py": "what the tests run (pytest imports every conftest.py on its way)",
    "sitecustomize.py": "code Python runs at every start when the folder is on its path",
    "usercustomize.py": "code Python runs at every start when the folder is on its path",
}
# A .pth file in site-packages (or any folder site adds) runs its "import" lines at every start.
ANYWHERE_SUFFIX = {".pth": "code Python runs at every start (a .pth file's import lines)"}
PYPROJECT = "pyproject.toml"
PYPROJECT_WHAT = "how propeval is built, installed and tested (everything outside [tool.propeval])"


@dataclass(frozen=True)
class FileChange:
    """One policy file the tree changed since the merge base."""

    path: str  # relative to the repository's top
    before: str | None  # its blob id at the merge base (None: it was not there)
    after: str | None  # its blob id in the tree (None: deleted)
    what: str  # what it decides
    detail: str = ""  # pyproject.toml: the tables that changed
    # pyproject.toml changed only inside [tool.propeval]: its keys are reported one by one
    # (propeval.policy); the file is listed so that one approval covers them.
    keys_only: bool = False

    @property
    def binding(self) -> dict[str, Any]:
        """What an approval binds to: the path and both blob ids."""
        return {"path": self.path, "before": self.before, "after": self.after}

    def describe(self) -> str:
        how = "added" if self.before is None else "deleted" if self.after is None else "changed"
        return f"{self.path} ({how}; {self.what}{': ' + self.detail if self.detail else ''})"


def corpus_policy(settings: ProjectSettings) -> list[tuple[str, bool, str]]:
    """The corpus's own policy paths, from the base's settings (relative to the corpus root)."""
    from propeval.builtin import BUILTIN

    out: list[tuple[str, bool, str]] = []
    if settings.core.schema != BUILTIN:
        out.append((settings.core.schema, False, "the schema every claim and item is checked against"))
    out.append((settings.judge.rubrics_dir, True, "how answers are graded, and the gold sets judges are held to"))
    out.append((settings.dedup.allowlist, False, "near-duplicate pairs kept by review"))
    return out


def _matches(path: str, target: str, folder: bool) -> bool:
    target = target.strip("/")
    return path == target or (folder and path.startswith(target + "/"))


def changed_policy_files(tree: Config, base_ref: str, base_settings: ProjectSettings) -> list[FileChange]:
    """Every policy file the tree changed since the merge base with ``base_ref``, sorted by path."""
    top = gitutil.toplevel(tree.root)
    merge_base = gitutil.merge_base(tree.root, base_ref)
    prefix = tree.root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    rules = list(REPO_POLICY) + [(prefix + p, folder, what) for p, folder, what in corpus_policy(base_settings)]
    out = []
    for path in gitutil.changed_repo_paths(tree.root, merge_base):
        what = next((w for target, folder, w in rules if _matches(path, target, folder)), None)
        name = path.rsplit("/", 1)[-1]
        if what is None and name in ANYWHERE:
            what = ANYWHERE[name]
        if what is None and "." in name and "." + name.rsplit(".", 1)[-1] in ANYWHERE_SUFFIX:
            what = ANYWHERE_SUFFIX["." + name.rsplit(".", 1)[-1]]
        if what is None:
            what = _link_into(top, path, rules)
        detail = ""
        if what is None and path == prefix + PYPROJECT:
            detail = _pyproject_change(top, merge_base, path)
            what = PYPROJECT_WHAT if detail else None
        if what is None:
            continue
        before = gitutil.blob_id(tree.root, merge_base, path)
        after = gitutil.file_blob_id(top / path)
        if before == after:
            continue  # changed and changed back, or only its mode
        out.append(FileChange(path, before, after, what, detail))
    return out


def _link_into(top: Path, path: str, rules: list[tuple[str, bool, str]]) -> str | None:
    """What a link at ``path`` decides when it points into a policy path (followed to its end
    inside the repository), else None."""
    import os

    link = top / path
    if not link.is_symlink():
        return None
    try:
        target = Path(os.path.realpath(link)).relative_to(top.resolve()).as_posix()
    except ValueError:  # out of the repository: nothing in it is a policy path
        return None
    name = target.rsplit("/", 1)[-1]
    what = next((w for t, folder, w in rules if _matches(target, t, folder)), None) or ANYWHERE.get(name)
    return f"a link to {target}: {what}" if what else None


def _without_propeval(doc: dict[str, Any]) -> dict[str, Any]:
    tool = doc.get("tool")
    if isinstance(tool, dict) and "propeval" in tool:
        doc = {**doc, "tool": {k: v for k, v in tool.items() if k != "propeval"}}
        if not doc["tool"]:
            del doc["tool"]
    return doc


def _pyproject_change(top: Path, merge_base: str, path: str) -> str:
    """The tables outside ``[tool.propeval]`` that differ (``""``: none), as dotted keys."""
    from propeval.policy import changed_keys

    old_blob = gitutil.blob_at(top, merge_base, path)
    try:
        new = (top / path).read_bytes() if (top / path).is_file() else None
    except OSError:
        new = None
    try:
        old_doc = _without_propeval(parse_toml(old_blob, f"{path} at {merge_base[:12]}")) if old_blob else {}
        new_doc = _without_propeval(parse_toml(new, path)) if new is not None else {}
    except ConfigError as e:
        return f"it does not parse ({e})"
    keys = changed_keys(old_doc, new_doc)
    shown = sorted({".".join(k.split(".")[:3]) for k in keys})
    return ", ".join(shown[:8]) + (f" and {len(shown) - 8} more" if len(shown) > 8 else "")


def source_exceptions(tree: Config, base_ref: str, base_config: Config) -> list[FileChange]:
    """Claims the tree adds or changes that cite an outlet on the *base's* source blocklist under
    ``source_role: official_statement``, where the base does not already hold that claim citing
    that page in that role: each is an exception to the blocklist, which a maintainer approves
    (as an allowlist entry is approved: on the base, or signed)."""
    from propeval.checks.sources import exception
    from propeval.corpus import CLAIM_FILE
    from propeval.loader import LoadError, load_file, load_text

    top = gitutil.toplevel(tree.root)
    merge_base = gitutil.merge_base(tree.root, base_ref)
    prefix = tree.root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    questions = prefix + tree.questions_dir + "/"
    blocklist = base_config.source_blocklist
    out = []
    for path in gitutil.changed_repo_paths(tree.root, merge_base):
        if not path.startswith(questions) or not path.endswith("/" + CLAIM_FILE):
            continue
        full = top / path
        if full.is_symlink() or not full.is_file():
            continue  # gone, or refused by the file rules
        try:
            found = exception(load_file(full, root=top).data, blocklist)
        except LoadError:
            continue  # check reports it
        if found is None:
            continue
        blob = gitutil.blob_at(tree.root, merge_base, path)
        before_found = None
        if blob is not None:
            try:
                before_found = exception(load_text(blob, path).data, blocklist)
            except LoadError:
                before_found = None
        if before_found == found:
            continue  # the base has it: approved when it was merged
        domain, url = found
        out.append(
            FileChange(
                path,
                gitutil.blob_id(tree.root, merge_base, path),
                gitutil.file_blob_id(full),
                f"an exception to the source blocklist: it cites {domain} ({url}) as the primary source of an "
                "official statement (source_role: official_statement)",
            )
        )
    return out
