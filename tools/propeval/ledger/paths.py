"""Where every ledger record lies: the one place a ledger path comes from.

Every record is under one folder, ``[tool.propeval.gates] ledger_dir`` (default ``ledger``)::

    <ledger_dir>/answerability/<item_id>.json   the answerability gate, one record per item
    <ledger_dir>/judge/<rubric>.json            the judge gate, one record per rubric
    <ledger_dir>/approvals/<id>.json            a maintainer's approval of policy changes
    <ledger_dir>/dedup.json                     the last full dedup run (`propeval dedup --record`, `run`)
    <ledger_dir>/difficulty.json                the difficulty bands (`propeval difficulty`)

The former keys of these records in ``[tool.propeval.release]`` (``dedup_report``,
``difficulty_ledger``, ``judge_ledger``) are refused with a message that says where each lives now,
so that no command reads a path the others ignore.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from propeval import names

if TYPE_CHECKING:
    from propeval.config import Config

ANSWERABILITY = "answerability"
JUDGE = "judge"
APPROVALS = "approvals"
DEDUP_FILE = "dedup.json"
DIFFICULTY_FILE = "difficulty.json"


@dataclass(frozen=True)
class LedgerPaths:
    """The ledger folder of a corpus, and the path of each record in it."""

    root: Path
    folder: str  # relative to root, forward slashes

    @classmethod
    def of(cls, config: Config) -> LedgerPaths:
        return cls(config.root, config.settings.gates.ledger_dir.rstrip("/"))

    def rel(self, *parts: str) -> str:
        """A path under the ledger folder, relative to the corpus root (``ledger/judge/x.json``)."""
        return "/".join((self.folder, *parts))

    def path(self, rel: str) -> Path:
        return self.root / rel

    @property
    def base(self) -> Path:
        return self.root / self.folder

    def kind_folder(self, kind: str) -> Path:
        return self.root / self.rel(kind)

    def answerability(self, item_id: str) -> Path:
        return self.root / self.rel(ANSWERABILITY, f"{names.item_id(item_id, 'item')}.json")

    def judge(self, rubric: str) -> Path:
        return self.root / self.rel(JUDGE, f"{names.name(rubric, '--rubric')}.json")

    def approval(self, subject: str) -> Path:
        return self.root / self.rel(APPROVALS, f"{subject}.json")

    @property
    def dedup_rel(self) -> str:
        return self.rel(DEDUP_FILE)

    @property
    def dedup(self) -> Path:
        return self.root / self.dedup_rel

    @property
    def difficulty_rel(self) -> str:
        return self.rel(DIFFICULTY_FILE)

    @property
    def difficulty(self) -> Path:
        return self.root / self.difficulty_rel

    def record_of(self, rel: str) -> tuple[str, str] | None:
        """``(kind, subject)`` of a per-subject record path (``ledger/judge/facts-v1.json`` ->
        ``("judge", "facts-v1")``), or None when ``rel`` is not one."""
        parts = PurePosixPath(rel).parts
        prefix = PurePosixPath(self.folder).parts
        if len(parts) != len(prefix) + 2 or parts[: len(prefix)] != prefix or not rel.endswith(".json"):
            return None
        return parts[-2], parts[-1].removesuffix(".json")

    def records(self, kind: str) -> list[str]:
        """Every ``*.json`` of a kind's folder, relative to the root, in path order."""
        folder = self.kind_folder(kind)
        if not folder.is_dir():
            return []
        return [self.rel(kind, p.name) for p in sorted(folder.glob("*.json"))]
