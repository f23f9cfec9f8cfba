"""The rubrics folder (``[tool.propeval.judge] rubrics_dir``): one listing, each rubric and gold set read once.

Every command that asks which rubrics there are asks :meth:`Rubrics.names`: the judge gate of
``propeval run``, the release card, the report, the judge-text check. A folder is a rubric when it
holds a ``rubric.yaml``; a folder whose name starts with a dot (``rubrics/.draft/``, an editor's or
a tool's) is not one, and is listed in :attr:`Rubrics.hidden` so that a command can say it left it
out, the same way in every command (the judge gate, ``report`` and ``export``). A folder whose name cannot be a rubric
name (a space, a non-ASCII letter) is listed in :attr:`Rubrics.misnamed`.
"""

from __future__ import annotations

from pathlib import Path

from propeval.judge.gold import GoldSet, load_gold
from propeval.judge.rubric import Listing, Rubric, list_rubrics, load_rubric
from propeval.loader import LoadError


class Rubrics:
    """The rubrics of one corpus: listed once, each loaded (and its gold set read) at most once."""

    def __init__(self, root: Path, rubrics_dir: str) -> None:
        self.root = root
        self.dir = rubrics_dir
        self.folder = root / rubrics_dir
        self._listing: Listing | None = None
        self._rubrics: dict[str, Rubric | LoadError] = {}
        self._gold: dict[str, GoldSet | LoadError] = {}

    @property
    def listing(self) -> Listing:
        if self._listing is None:
            self._listing = list_rubrics(self.folder)
        return self._listing

    @property
    def names(self) -> list[str]:
        return self.listing.names

    @property
    def hidden(self) -> list[str]:
        return self.listing.hidden

    def skipped_note(self) -> str | None:
        """A line naming the folders that hold a rubric.yaml but are not rubrics, or None."""
        hidden = [f"{self.dir}/{n}/" for n in self.listing.hidden]
        misnamed = [f"{self.dir}/{n}/" for n in self.listing.misnamed]
        parts = []
        if hidden:
            parts.append(f"{', '.join(hidden)} (a folder whose name starts with '.' is not a rubric)")
        if misnamed:
            parts.append(
                f"{', '.join(misnamed)} (a rubric name is letters, digits, '.', '_' and '-', starting with a "
                "letter or digit: rename the folder)"
            )
        return f"left out, not rubrics: {'; '.join(parts)}" if parts else None

    def load(self, name: str) -> Rubric:
        """The rubric ``name`` (a UsageError for an unusable name, a LoadError for a bad rubric)."""
        if name not in self._rubrics:
            try:
                self._rubrics[name] = load_rubric(self.folder, name, root=self.root)
            except LoadError as e:
                self._rubrics[name] = e
        found = self._rubrics[name]
        if isinstance(found, LoadError):
            raise found
        return found

    def gold(self, name: str) -> GoldSet:
        """The gold set of rubric ``name`` (LoadError when it is missing or a case is bad)."""
        if name not in self._gold:
            try:
                self._gold[name] = load_gold(self.load(name), self.root)
            except LoadError as e:
                self._gold[name] = e
        found = self._gold[name]
        if isinstance(found, LoadError):
            raise found
        return found
