"""Everything a release is made from: the corpus and the optional ledgers, read once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import gitutil
from propeval.config import Config
from propeval.corpus import CATEGORIES, Corpus, load_corpus
from propeval.errors import GitError
from propeval.loader import LoadError, load_file
from propeval.release.ledgers import DedupReport, JudgeRecord, read_bands, read_dedup, read_judge
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
    dedup: DedupReport | None
    judge: list[JudgeRecord]
    git: dict[str, Any] | None
    warnings: list[Problem] = field(default_factory=list)


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
    dedup = read_dedup(_load_optional(root / settings.dedup_report, root, warnings), settings.dedup_report)
    judge = []
    judge_dir = root / settings.judge_ledger
    if judge_dir.is_dir():
        for path in sorted(judge_dir.glob("*.json")):
            data = _load_optional(path, root, warnings)
            if data is not None:
                judge.append(read_judge(path, f"{settings.judge_ledger}/{path.name}", data))
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
        git=_git_info(config, settings),
        warnings=warnings,
    )
