"""Everything a release is made from: the corpus and the optional ledgers, read once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import CATEGORIES, Corpus, load_corpus
from propeval.dedup_record import DedupEvidence
from propeval.errors import GitError
from propeval.loader import LoadError, load_file
from propeval.release.evidence import AnswerabilityEvidence, JudgeEvidence
from propeval.release.ledgers import read_bands
from propeval.release.settings import ReleaseSettings
from propeval.result import Problem, Severity


@dataclass
class ReleaseInputs:
    """The corpus plus every optional ledger input, read once."""

    config: Config
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


def _load_optional(path: Path, root: Path, warnings: list[Problem]) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return load_file(path, root=root).data
    except LoadError as e:
        p = e.problem
        warnings.append(
            Problem(p.path, p.line, p.col, "release-input", f"{p.message} (ignored)", severity=Severity.WARNING)
        )
        return None


def _categories(config: Config) -> tuple[str, ...]:
    try:
        schema = load_file(config.schema_path, root=config.schema_root).data
        enum = schema["$defs"]["category"]["enum"]
        if isinstance(enum, list) and all(isinstance(c, str) for c in enum):
            return tuple(enum)
    except (LoadError, KeyError, TypeError):
        pass
    return CATEGORIES


def _git_info(config: Config, settings: ReleaseSettings) -> dict[str, Any] | None:
    try:
        head = gitutil.head_commit(config.root)
        if head is None:
            return None
        dirty = gitutil.is_dirty(config.root, [config.questions_dir, settings.rubrics_dir, "ledger"])
    except GitError:
        return None
    return {"commit": head[0], "date": head[1], "dirty": dirty}


def rubric_names(config: Config, settings: ReleaseSettings) -> list[str]:
    """Every rubric folder with a rubric.yaml, by name."""
    folder = config.root / settings.rubrics_dir
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "rubric.yaml").is_file() and not p.name.startswith("."))


def load_inputs(
    config: Config, settings: ReleaseSettings | None = None, *, corpus: Corpus | None = None
) -> ReleaseInputs:
    """Load the corpus and the optional ledger inputs; unreadable optional inputs become warnings."""
    settings = settings or ReleaseSettings.from_config(config)
    corpus = corpus if corpus is not None else load_corpus(config)
    root = config.root
    warnings: list[Problem] = []
    diff_path = root / settings.difficulty_ledger
    diff_data = _load_optional(diff_path, root, warnings)
    bands, stale = read_bands(corpus, diff_data, settings.difficulty_ledger, warnings)
    from propeval import dedup_record
    from propeval.release import evidence

    dedup = dedup_record.read(config, corpus)
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
    judge, judge_warnings = evidence.judge_evidence(config, rubric_names(config, settings))
    warnings += judge_warnings
    answerability = evidence.answerability_evidence(config, judge, corpus)
    return ReleaseInputs(
        config=config,
        settings=settings,
        corpus=corpus,
        categories=_categories(config),
        bands=bands,
        difficulty_present=diff_data is not None,
        difficulty_stale=stale,
        dedup=dedup,
        judge=judge,
        answerability=answerability,
        git=_git_info(config, settings),
        warnings=warnings,
    )
