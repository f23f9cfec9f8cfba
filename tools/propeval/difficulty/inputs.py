"""The inputs of ``propeval difficulty``: graded runs or a score matrix, read into a :class:`ScoreTable`.

A bad line or cell is an error Problem that names the file and line; the rest still loads, so
every problem is reported at once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError, UsageError
from propeval.loader import LoadError, load_jsonl
from propeval.result import Problem
from propeval.settings import DifficultySettings

SCALES = ("auto", "binary", "0-5")


@dataclass
class ScoreTable:
    """Observations ``(item, model) -> [score, ...]``: one per run, already 0 for unanswered.

    ``scale`` is ``"0-5"`` (fact scores) or ``"binary"`` (0/1 outcomes).
    """

    scale: str
    obs: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def items(self) -> list[str]:
        return sorted({i for i, _ in self.obs})

    @property
    def models(self) -> list[str]:
        """Models with at least one score (a model whose every grade is unscored adds nothing)."""
        return sorted({m for (_, m), scores in self.obs.items() if scores})

    @property
    def top(self) -> float:
        return 1.0 if self.scale == "binary" else 5.0

    def add(self, item: str, model: str, score: float | None) -> None:
        """One observation; ``None`` (unscored) marks the pair as seen but leaves no score."""
        cell = self.obs.setdefault((item, model), [])
        if score is not None:
            cell.append(float(score))


def _file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def find_runs(config: Config, settings: DifficultySettings) -> list[Path]:
    """Every ``runs/*/grades-<rubric>.jsonl`` under the corpus root, sorted."""
    from propeval.judge.runs import find_graded

    return find_graded(config.root / settings.runs_dir, settings.rubric)


def load_runs(config: Config, settings: DifficultySettings, grade_files: Sequence[Path]) -> ScoreTable:
    """Read graded runs with the judge engine's one reader (the latest, validated grade per item).

    The rubric ``settings.rubric`` is loaded from ``[tool.propeval.judge] rubrics_dir`` and the
    grades are validated under it, as `score` and `report` validate them. Difficulty needs 0-5
    fact scores, so it must be a ``facts`` rubric (else a ConfigError); a rubric that does not
    load raises its LoadError. A bad record is an error Problem and its item adds nothing; a
    file that is not JSON Lines is one Problem and adds nothing.
    """
    from propeval.judge.kinds.facts import Facts
    from propeval.judge.rubric import load_rubric
    from propeval.judge.runs import read_graded

    rubric = load_rubric(config.root / config.settings.judge.rubrics_dir, settings.rubric, root=config.root)
    facts = rubric.spec
    if not isinstance(facts, Facts):
        raise ConfigError(
            f"{config.source}: [tool.propeval.difficulty] rubric: {rubric.name!r} is a rubric of kind {facts.name}, "
            "and difficulty reads 0-5 fact scores; name a facts rubric",
            key="rubric",
        )
    table = ScoreTable(scale="0-5")
    for path in grade_files:
        try:
            run = read_graded(path, facts, root=config.root, rubric=rubric)
        except LoadError as e:
            table.problems.append(e.problem)
            continue
        table.problems += run.problems
        models: set[str] = set()
        for row in run.rows:
            if row.grade is None:  # no grade record, or one that failed validation
                continue
            table.add(row.item_id, row.model, facts.fact_value(row))
            models.add(row.model)
        table.sources.append(
            {
                "run_id": run.run,
                "path": _rel(path, config.root),
                "sha256": _file_hash(path),
                "models": sorted(models),
                "lines": run.grade_records,
            }
        )
    return table


def _parse_score(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = raw.strip()
        if raw == "" or raw.upper() in {"NA", "NAN", "NULL"}:
            return None
        try:
            raw = float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        raise ValueError(f"{raw!r} is not a number")
    return float(raw)


def load_matrix(config: Config, path: Path, scale: str = "auto") -> ScoreTable:
    """Read an item x model score matrix.

    CSV: a header ``item_id,<model>,<model>,...`` and one row per item (wide), or the header
    ``item_id,model,score`` and one row per observation (long). JSONL: one object per line,
    ``{"item_id": ..., "scores": {"<model>": score, ...}}`` or ``{"item_id", "model", "score"}``.
    An empty cell, ``NA`` or ``null`` is missing. Scores are 0/1 or 0-5; ``auto`` takes 0-5 when any
    score is above 1.
    """
    rel = _rel(path, config.root)
    if not path.is_file():
        raise UsageError(f"{path}: no such matrix file")
    problems: list[Problem] = []
    if path.suffix.lower() == ".csv":
        rows = list(_csv_cells(path, rel, problems))
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        rows = list(_jsonl_cells(config, path, problems))
    else:
        raise UsageError(f"{rel}: a score matrix is a .csv or .jsonl file")
    parsed = _checked_scores(rows, rel, problems)
    scores = [s for _, _, _, s in parsed if s is not None]
    if scale == "auto":
        scale = "0-5" if any(s > 1 for s in scores) else "binary"
    table = ScoreTable(scale=scale, problems=problems)
    for n, item, model, score in parsed:
        if score is not None and scale == "binary" and score not in (0.0, 1.0):
            table.problems.append(
                Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: {score:g} is not 0 or 1 on a binary scale")
            )
            continue
        table.add(item, model, score)
    table.problems.sort(key=lambda p: p.line)
    table.sources.append({"matrix": rel, "sha256": _file_hash(path)})
    return table


# A matrix cell before it is checked: (line, item, model, raw score).
_Cell = tuple[int, Any, Any, Any]


def _csv_cells(path: Path, rel: str, problems: list[Problem]) -> Iterator[_Cell]:
    """The cells of a wide or long CSV matrix; a repeated column or a short row is a problem."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UsageError(f"{rel}: not valid UTF-8 at byte offset {e.start}; save the matrix as UTF-8") from e
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header or header[0].strip() != "item_id":
        raise UsageError(f"{rel}: the first CSV column must be named item_id")
    names = [h.strip() for h in header]
    long = names == ["item_id", "model", "score"]
    first_col: dict[str, int] = {}
    for col, name in enumerate(names[1:], start=2):
        if name in first_col:
            problems.append(
                Problem(
                    rel,
                    1,
                    1,
                    "difficulty-input",
                    f"columns {first_col[name]} and {col} are both named {name!r}; "
                    "a matrix has one column per model: rename or merge them",
                )
            )
        first_col.setdefault(name, col)
    use = [first_col.get(name) == col for col, name in enumerate(names[1:], start=2)]  # a repeat: reported
    for n, row in enumerate(reader, start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(names):
            problems.append(
                Problem(rel, n, 1, "difficulty-input", f"row has {len(row)} cells, the header {len(names)}")
            )
            continue
        if long:
            yield (n, row[0].strip(), row[1].strip(), row[2])
        else:
            yield from ((n, row[0].strip(), m, c) for m, c, ok in zip(names[1:], row[1:], use, strict=True) if ok)


def _jsonl_cells(config: Config, path: Path, problems: list[Problem]) -> Iterator[_Cell]:
    """The cells of a JSONL matrix, one object per item (``scores``) or per observation."""
    try:
        for n, rec in load_jsonl(path, root=config.root):
            scores = rec.get("scores")
            if isinstance(scores, dict):
                yield from ((n, rec.get("item_id"), m, s) for m, s in scores.items())
            else:
                yield (n, rec.get("item_id"), rec.get("model"), rec.get("score"))
    except LoadError as e:
        problems.append(e.problem)


def _checked_scores(
    rows: Sequence[_Cell], rel: str, problems: list[Problem]
) -> list[tuple[int, str, str, float | None]]:
    """The cells with an item, a model and a score in 0-5 (or missing), each pair once."""
    parsed: list[tuple[int, str, str, float | None]] = []
    seen: dict[tuple[str, str], int] = {}
    for n, item, model, raw in rows:
        if not isinstance(item, str) or not item or not isinstance(model, str) or not model:
            problems.append(Problem(rel, n, 1, "difficulty-input", "each score needs an item_id and a model name"))
            continue
        try:
            score = _parse_score(raw)
        except ValueError as e:
            problems.append(Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: {e}; write a score or leave it"))
            continue
        if score is not None and not 0 <= score <= 5:
            problems.append(Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: score {score:g} is not in 0-5"))
            continue
        # A second score for the same item and model is a pasted row or column, not a second run:
        # averaging it in silently would weigh that model twice.
        first = seen.setdefault((item, model), n)
        if first != n:
            problems.append(
                Problem(
                    rel,
                    n,
                    1,
                    "difficulty-input",
                    f"{item}/{model} is scored on line {first} and again on line {n}; "
                    "a matrix holds one score per item and model: keep one",
                )
            )
            continue
        parsed.append((n, item, model, score))
    return parsed


def grade_files(config: Config, settings: DifficultySettings, runs: Sequence[Path]) -> list[Path]:
    if not runs:
        return find_runs(config, settings)
    out = []
    for run in runs:
        path = run / f"grades-{settings.rubric}.jsonl" if run.is_dir() else run
        if not path.is_file():
            raise UsageError(f"{run}: no grades-{settings.rubric}.jsonl there; give a graded run folder")
        out.append(path)
    return out
