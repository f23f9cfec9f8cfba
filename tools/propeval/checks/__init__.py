"""The check registry. Each module here declares ``ID``, ``RULE`` and ``check(ctx)``.

``CHECKS`` drives ``propeval check --rule`` and the tests. Each module's ``RULE`` (a
:class:`~propeval.result.Rule`) says everything about its rule once: what it checks, its severity,
what is wrong and how to fix it, whether drafts are held to it and whether it is narrowed;
:mod:`propeval.rules` collects them for ``check --help``, SARIF and the docs. Adding a check is one
module here and its line in ``_MODULES``.

A cross-file rule (ids, translation, sources, stable-ids, id-collision) sees the whole corpus; a
rule about one file at a time (schema, placeholder, hidden-text, language, ...) looks only at the
files a run was asked about (:meth:`Context.documents`), since each of its problems is located in
the file it read. Which problems are *reported* is narrowed afterwards to those files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from propeval.checks import (
    difficulty,
    files,
    hidden_text,
    id_collision,
    ids,
    judge_text,
    language,
    placeholder,
    schema,
    sources,
    stable_ids,
    translation,
    workflow_command,
)
from propeval.config import Config
from propeval.corpus import Claim, Corpus, Item
from propeval.loader import Document
from propeval.result import Problem
from propeval.schema import Schema

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class Context:
    """What every check may look at."""

    ws: Workspace
    schema: Schema | None
    # The corpus-relative paths the run reports on (None: every file); rules about one file at a
    # time look only at these.
    selected: set[str] | None = None
    # Paths of corpus files at the git base (for id stability), when a base was given.
    base_paths: list[str] | None = None
    base_ref: str = ""
    # Paths of corpus files at the tip of the base ref, and a reader of their bytes there (for
    # id collisions with what landed on the base since the merge base).
    tip_paths: list[str] | None = None
    tip_blob: Callable[[str], bytes | None] | None = None

    @property
    def config(self) -> Config:
        return self.ws.config

    @property
    def corpus(self) -> Corpus:
        return self.ws.corpus

    def wanted(self, doc: Document) -> bool:
        """Whether the run reports on ``doc`` (a per-file part of a cross-file rule looks only at these)."""
        return self.selected is None or doc.relpath in self.selected

    def documents(self) -> Iterator[Document]:
        """Every claim's and item's document the run reports on (all of them, unnarrowed)."""
        if self.selected is None:
            return self.corpus.documents()
        return (e.doc for e in self.corpus.by_paths(self.selected))

    def claims(self) -> Iterator[Claim]:
        """Every loaded claim the run reports on."""
        if self.selected is None:
            return iter(self.corpus.all_claims)
        return (e for e in self.corpus.by_paths(self.selected) if isinstance(e, Claim))

    def items(self) -> Iterator[Item]:
        """Every loaded item the run reports on."""
        if self.selected is None:
            return iter(self.corpus.all_items)
        return (e for e in self.corpus.by_paths(self.selected) if isinstance(e, Item))


_MODULES: tuple[ModuleType, ...] = (
    schema,
    placeholder,
    hidden_text,
    ids,
    translation,
    language,
    sources,
    stable_ids,
    id_collision,
    files,
    difficulty,
    judge_text,
    workflow_command,
)
CHECKS: dict[str, ModuleType] = {mod.ID: mod for mod in _MODULES}


def _reported_ids(mod: ModuleType) -> tuple[str, ...]:
    """The rule ids a check module's problems carry: its own, and any it reports under its rule's
    flags (``EMITS``: the files check reports file-symlink, file-hardlink, file-special)."""
    return (mod.ID, *getattr(mod, "EMITS", ()))


# From each check's Rule: the rules reported whatever paths a run is narrowed to (they speak for
# files that are gone, hidden behind a link, or added elsewhere), and the rules a draft claim or
# item is held to besides loading (schema, and the rules that keep ids stable and unique and files
# safe to read).
UNNARROWED = frozenset(i for mod in _MODULES if not mod.RULE.narrowed for i in _reported_ids(mod))
DRAFT_RULES = frozenset(i for mod in _MODULES if mod.RULE.draft for i in _reported_ids(mod))


# Rules that say more about a value than the schema can: where one reports a value, the schema's
# message about the same value (a raw pattern) is left out. One mistake, one message: `ru_RU` is
# told "write 'ru-RU'" by the language rule, not also "does not match the pattern", and an id that
# is not its file's name is told so by the ids rule alone.
SUPERSEDES_SCHEMA = frozenset({language.ID, ids.ID})


def run_checks(ctx: Context, rules: Iterable[str] | None = None) -> Iterator[Problem]:
    """Every problem from the selected checks (all when ``rules`` is None)."""
    wanted = set(rules) if rules is not None else set(CHECKS)
    found: list[Problem] = []
    for rule_id, mod in CHECKS.items():
        if rule_id in wanted:
            found.extend(mod.check(ctx))
    said = {(p.path, p.pointer) for p in found if p.rule in SUPERSEDES_SCHEMA}
    yield from (p for p in found if not (p.rule == schema.ID and (p.path, p.pointer) in said))
