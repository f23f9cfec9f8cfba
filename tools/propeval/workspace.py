"""A Workspace: one corpus repository as one run of propeval sees it, each part read once.

Made from a :class:`~propeval.config.Config` (the CLI builds one per command and passes it to the
core), it holds, each loaded on first use and kept:

* :attr:`Workspace.corpus`: every claim and item (:func:`propeval.corpus.load_corpus`);
* :attr:`Workspace.schema`: schema.json, loaded and checked against its metaschema;
* :attr:`Workspace.rubrics`: the rubrics folder, listed once, each rubric and gold set read once;
* :attr:`Workspace.ledger`: the ledger, each record read once and each signature verified once;
* :attr:`Workspace.runs`: the graded runs, each grades file read once.

No step goes back to the config for its own copy, so one ``propeval run`` loads the corpus once and
checks each ledger signature once, with no module-level memo to paper over repeats. A value that is
derived from these parts and that several steps need (the release inputs of ``stats`` and
``report``) is kept with :meth:`Workspace.shared`.

A Workspace reads; it never writes. A command that writes a ledger record writes it through
:meth:`propeval.ledger.view.LedgerView.write`, which drops what it remembered of that record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from propeval.config import Config
from propeval.corpus import Corpus, load_corpus
from propeval.ledger.paths import LedgerPaths
from propeval.ledger.view import LedgerView

if TYPE_CHECKING:
    from propeval.judge.rubrics import Rubrics
    from propeval.judge.runs import Runs
    from propeval.schema import SchemaFile
    from propeval.settings import GateSettings, ProjectSettings

T = TypeVar("T")


class Workspace:
    """The corpus, schema, rubrics, ledger and runs of one config, each loaded once, lazily."""

    def __init__(self, config: Config, *, corpus: Corpus | None = None) -> None:
        self.config = config
        self._given = corpus
        self._files_of: Workspace | None = None  # another workspace over the same files
        self._shared: dict[Callable[[Workspace], Any], Any] = {}

    def __repr__(self) -> str:
        return f"Workspace({str(self.config.root)!r})"

    @property
    def root(self) -> Path:
        return self.config.root

    @property
    def settings(self) -> ProjectSettings:
        return self.config.settings

    @cached_property
    def corpus(self) -> Corpus:
        """Every claim and item under the questions folder, loaded once."""
        if self._given is not None:
            return self._given
        if self._files_of is not None:
            return self._files_of.corpus
        return load_corpus(self.config)

    @cached_property
    def schema(self) -> SchemaFile:
        """The schema claims and items are checked against (``Config.schema_path``), checked once."""
        from propeval.schema import check_schema

        return check_schema(*self.config.schema_source)

    @cached_property
    def rubrics(self) -> Rubrics:
        from propeval.judge.rubrics import Rubrics

        return Rubrics(self.root, self.settings.judge.rubrics_dir)

    @cached_property
    def gate_settings(self) -> GateSettings:
        """``[tool.propeval.gates]`` with ``[tool.propeval.signers]``' keys parsed (once)."""
        from propeval.signing import load_signers

        return replace(self.settings.gates, signers=load_signers(self.config))

    @cached_property
    def ledger_paths(self) -> LedgerPaths:
        return LedgerPaths.of(self.config)

    @cached_property
    def ledger(self) -> LedgerView:
        return LedgerView(self.ledger_paths, self._signers)

    def _signers(self) -> Mapping[str, str]:
        return self.gate_settings.signers

    @cached_property
    def runs(self) -> Runs:
        from propeval.judge.runs import Runs

        return Runs(self.root, self.settings.judge.runs_dir, self._item_languages)

    def _item_languages(self) -> dict[str, dict[str, Any]]:
        return {i.id: {"language": i.language} for i in self.corpus.items.values()}

    def shared(self, factory: Callable[[Workspace], T]) -> T:
        """The one value ``factory(self)`` makes for this workspace, made on first use.

        For what several steps derive from the parts above (the release inputs that ``stats`` and
        ``report`` both show): a factory is a plain function of the workspace, never a closure
        over other state, so that the same function always means the same value.
        """
        if factory not in self._shared:
            self._shared[factory] = factory(self)
        value: T = self._shared[factory]
        return value

    def with_config(self, config: Config) -> Workspace:
        """The same files under another config (``propeval ci``: the base's policy over the tree's
        files). The corpus is shared when both configs read the same questions folder; the schema,
        rubrics and ledger view follow the new config."""
        other = Workspace(config)
        if config.root == self.root and config.questions_dir == self.config.questions_dir:
            other._files_of = self
        return other

    def without_schema_override(self) -> Workspace:
        """This workspace with the tree's own schema (``ci``'s schema step compares the tree's with the base's)."""
        if self.config.schema_override is None:
            return self
        return self.with_config(replace(self.config, schema_override=None))
