"""Everything a release is made from: the corpus and the optional ledgers, read once.

:func:`load_inputs` reads them through a :class:`~propeval.workspace.Workspace` (the corpus, the
schema's categories, the ledger view, the rubrics) and keeps the result with the workspace, so
``propeval run``'s ``stats`` and ``report`` steps share one reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import CATEGORIES, Corpus
from propeval.dedup.record import DedupEvidence
from propeval.errors import GitError
from propeval.release.evidence import AnswerabilityEvidence, JudgeEvidence
from propeval.release.ledgers import read_bands
from propeval.result import Problem, Severity
from propeval.settings import ReleaseSettings

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class ReleaseInputs:
    """The corpus plus every optional ledger input, read once."""

    ws: Workspace
    settings: ReleaseSettings
    corpus: Corpus
    categories: tuple[str, ...]
    bands: dict[str, str | None]
    difficulty_present: bool
    difficulty_stale: int
    dedup: DedupEvidence
    judge: list[JudgeEvidence]
    answerability: AnswerabilityEvidence
    git: dict[str, Any] | None
    warnings: list[Problem] = field(default_factory=list)
    # One line each, printed under "Warnings" at the top of the card and the report. Other
    # areas append here (a model judged by itself, ...) without touching either layout.
    card_warnings: list[str] = field(default_factory=list)

    @property
    def config(self) -> Config:
        return self.ws.config

    @property
    def difficulty_ledger(self) -> str:
        """The difficulty ledger's path, relative to the corpus root."""
        return self.ws.ledger_paths.difficulty_rel


def _categories(ws: Workspace) -> tuple[str, ...]:
    from propeval.schema import categories

    return categories(ws.config.schema_source[0]) or CATEGORIES


def _git_info(ws: Workspace, settings: ReleaseSettings) -> dict[str, Any] | None:
    config = ws.config
    try:
        head = gitutil.head_commit(config.root)
        if head is None:
            return None
        dirty = gitutil.is_dirty(config.root, [config.questions_dir, settings.rubrics_dir, ws.ledger_paths.folder])
    except GitError:
        return None
    return {"commit": head[0], "date": head[1], "dirty": dirty}


def load_inputs(ws: Workspace) -> ReleaseInputs:
    """The corpus and the optional ledger inputs (unreadable optional inputs become warnings), read
    once per workspace."""
    return ws.shared(_load_inputs)


def _load_inputs(ws: Workspace) -> ReleaseInputs:
    from propeval.dedup import record as dedup_record
    from propeval.difficulty import read_ledger
    from propeval.release import evidence

    settings = ws.config.settings.release
    corpus = ws.corpus
    warnings: list[Problem] = []
    diff_rel = ws.ledger_paths.difficulty_rel
    diff_doc, diff_error = read_ledger(ws)
    if diff_error is not None:
        p = diff_error.problem
        warnings.append(
            Problem(p.path, p.line, p.col, "release-input", f"{p.message} (ignored)", severity=Severity.WARNING)
        )
    diff_data = diff_doc.data if diff_doc is not None else None
    bands, stale = read_bands(corpus, diff_data, diff_rel, warnings)

    dedup = dedup_record.read(ws)
    if dedup.status in ("not current", "not checked"):
        warnings.append(
            Problem(
                dedup.path,
                0,
                0,
                "release-input",
                f"dedup record is {dedup.status}: {dedup.detail}",
                severity=Severity.WARNING,
            )
        )
    judge, judge_warnings = evidence.judge_evidence(ws, ws.rubrics.names)
    warnings += judge_warnings
    answerability = evidence.answerability_evidence(ws, judge)
    return ReleaseInputs(
        ws=ws,
        settings=settings,
        corpus=corpus,
        categories=_categories(ws),
        bands=bands,
        difficulty_present=diff_data is not None,
        difficulty_stale=stale,
        dedup=dedup,
        judge=judge,
        answerability=answerability,
        git=_git_info(ws, settings),
        warnings=warnings,
    )
