"""``propeval difficulty``'s core: read the inputs, compute, bind to the corpus, write the ledger."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.difficulty.compute import compute
from propeval.difficulty.flags import FLAG_MESSAGES
from propeval.difficulty.inputs import _rel, grade_files, load_matrix, load_runs
from propeval.difficulty.ledger import seal
from propeval.errors import DependencyError, UsageError
from propeval.loader import dumps_json
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class Options:
    """What ``propeval difficulty`` was asked to do."""

    runs: Sequence[Path] = ()
    matrix: Path | None = None
    scale: str = "auto"
    write: bool = True
    out: Path | None = None  # default: <ledger_dir>/difficulty.json, for graded runs only
    progress: Callable[[str], None] | None = None  # a line at each stage
    tick: Callable[[int, int], None] | None = None  # each bootstrap draw: (done, total)


@dataclass
class DifficultyResult:
    """The ledger document plus the problems and notes of the run, and where it was written."""

    ledger: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    path: str = ""


def run_difficulty(ws: Workspace, options: Options) -> DifficultyResult:
    """Compute difficulty from runs (or a matrix), bind it to the corpus and write the ledger.

    Nothing is written when any input line is bad: a ledger built from part of the grades would
    look complete and not be.
    """
    config = ws.config
    settings = config.settings.difficulty
    default = ws.ledger_paths.difficulty_rel
    if options.matrix is not None:
        if options.runs:
            raise UsageError("give graded run folders or --matrix, not both")
        if options.out is None and options.write:
            raise UsageError(
                f"--matrix needs --out FILE: bands from a score matrix are not the corpus's graded runs, so they "
                f"do not replace {default} unless you name it (--out {default})"
            )
        table = load_matrix(config, options.matrix, options.scale)
    else:
        if options.scale not in ("auto", "0-5"):
            raise UsageError("--scale applies to --matrix; graded runs are always 0-5 fact scores")
        files = grade_files(config, settings, options.runs)
        if not files:
            raise UsageError(
                f"no graded runs found ({settings.runs_dir}/*/grades-{settings.rubric}.jsonl); "
                "answer and grade a run first (`propeval answer`, then `propeval grade`), or pass --matrix FILE"
            )
        table = load_runs(config, settings, files)
    target = options.out if options.out is not None else ws.ledger_paths.difficulty
    rel = _rel(target, config.root)
    result = DifficultyResult(ledger=None, problems=list(table.problems), path=rel)
    if result.problems:
        result.notes.append(f"{rel} not written: fix the input problems above first")
        return result
    if not any(table.obs.values()):
        raise UsageError("the input holds no scores (every grade is unscored or the file is empty)")
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError as e:
        raise DependencyError(e.name or "scipy", "stats") from e

    corpus = ws.corpus
    hashes = {item.id: item.hash for item in corpus.items.values()}
    ledger = seal(compute(table, settings, hashes, options.progress, options.tick))
    result.ledger = ledger
    unknown = [i for i in ledger["items"] if i not in hashes]
    if unknown and corpus.items:
        result.notes.append(
            f"{len(unknown)} scored item(s) are not in the corpus ({', '.join(unknown[:5])}"
            f"{', ...' if len(unknown) > 5 else ''}); they get no item hash"
        )
    by_id = {i.id: i for i in corpus.items.values()}
    item_only = ledger["stability"]["refit"] == "items"
    messages = dict(FLAG_MESSAGES)
    if item_only:
        messages["unstable"] += " (stability is item-only: ability uncertainty left out, so this likely undercounts)"
    for item_id, entry in sorted(ledger["items"].items()):
        path = by_id[item_id].doc.relpath if item_id in by_id else rel
        for flag in entry["flags"]:
            result.problems.append(Problem(path, 0, 0, flag, f"{item_id}: {messages[flag]}", severity=Severity.NOTICE))
    if item_only:
        unstable = sum("unstable" in e["flags"] for e in ledger["items"].values())
        result.notes.append(f"stability ({unstable} item(s) unstable) is {ledger['stability']['caveat']}")
    if not ledger["irt"]["converged"]:
        result.notes.append("the IRT fit did not fully converge; treat irt_b with care")
    if options.write:
        from propeval.fsutil import atomic_write

        atomic_write(target, dumps_json(ledger) + "\n")
        ws.ledger.forget(rel)
    return result
