"""``propeval run``: the main job. Every check and gate over the whole corpus, then the report.

The steps are ``ci``'s, run on the whole corpus instead of what changed since a ref, plus the
difficulty bands of the ledger, the corpus statistics and the HTML report:

    check -> groups -> dedup (recorded in ledger/dedup.json with --record) -> answerability -> judge
    -> difficulty -> stats -> report

Each step is run through :func:`propeval.gates.ci.run_step`, so a step that cannot run is an
``error`` (exit 3), never a silent pass, and the summary has the ``ci`` table's shape. Nothing here
contacts a network: both gates are verified offline from the ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from propeval.config import Config
from propeval.gates.ci import StepOutcome, run_step
from propeval.result import CheckResult, Problem, Severity

StepFn = Callable[[Config, str], CheckResult]


def _check(config: Config, _: str) -> CheckResult:
    from propeval.checker import check_corpus

    return check_corpus(config)


def _groups(config: Config, _: str) -> CheckResult:
    from propeval.groups import check_groups

    return check_groups(config)


def _answerability(config: Config, _: str) -> CheckResult:
    from propeval.gates.answerability import Selection, answerability_gate

    return answerability_gate(config, Selection(all_items=True))


def _judge(config: Config, _: str) -> CheckResult:
    from propeval.gates import engine
    from propeval.gates.judge_gate import judge_gate

    folder = config.root / engine.rubrics_dir(config)
    names = sorted(p.name for p in folder.iterdir() if (p / "rubric.yaml").is_file()) if folder.is_dir() else []
    if not names:
        result = CheckResult()
        result.notes.append(f"no rubric in {engine.rubrics_dir(config)}/; the judge gate has nothing to check")
        return result
    return judge_gate(config, names)


def _difficulty(config: Config, _: str) -> CheckResult:
    from propeval import difficulty
    from propeval.errors import UsageError

    result = CheckResult()
    if not (config.root / difficulty.LEDGER).is_file():
        result.notes.append(
            f"no {difficulty.LEDGER} yet: bands come from graded runs (`propeval answer`, `propeval grade`, "
            "then `propeval difficulty`)"
        )
        return result
    try:
        ledger = difficulty.load_ledger(config)
    except UsageError as e:
        result.problems.append(Problem(difficulty.LEDGER, 1, 1, "difficulty", str(e)))
        return result
    report = difficulty.build_report(config, ledger)
    totals: dict[str, int] = {}
    for row in report.tables["framing"].values():
        for band, n in row.items():
            totals[band] = totals.get(band, 0) + n
    result.files_checked = sum(totals.values())
    result.notes.append("bands: " + ", ".join(f"{band} {n}" for band, n in totals.items()))
    if totals.get("none"):
        result.problems.append(
            Problem(
                difficulty.LEDGER,
                1,
                1,
                "difficulty",
                f"{totals['none']} active item(s) have no current band; rerun `propeval difficulty` on graded runs",
                severity=Severity.WARNING,
            )
        )
    return result


def _stats(config: Config, _: str) -> CheckResult:
    from propeval.release import compute_stats, load_inputs

    inputs = load_inputs(config)
    stats = compute_stats(inputs)
    result = CheckResult(files_checked=stats.items)
    langs = ", ".join(f"{k} {v}" for k, v in stats.by_language.items())
    result.notes.append(f"{stats.items} active item(s) in {stats.claims} claim(s), {stats.retired} retired; {langs}")
    return result


def step_registry(report_path: Path, record: bool = False) -> dict[str, StepFn]:
    """The main job's steps in order; the last writes the report to ``report_path``. Only with
    ``record`` does the dedup step write ledger/dedup.json: the main job leaves tracked files as they are."""

    def _dedup(config: Config, _: str) -> CheckResult:
        """Dedup over the whole corpus; with ``record``, written to ledger/dedup.json for the report and card."""
        from propeval.dedup import PASSES, Options, find_duplicates, pair_problem
        from propeval.dedup_record import record_run

        found = find_duplicates(config, Options())
        result = CheckResult(problems=list(found.problems), files_checked=found.units, notes=list(found.notes))
        result.problems.extend(pair_problem(pair) for pair in found.unreviewed)
        result.notes.append(record_run(config, found, PASSES, sign=True, write_record=record))
        return result

    def _report(config: Config, _: str) -> CheckResult:
        from propeval.release import load_inputs
        from propeval.report import write_report

        inputs = load_inputs(config)
        runs, stats = write_report(inputs, report_path)
        result = CheckResult(files_checked=1, problems=[*runs.warnings, *runs.refused])
        result.notes.append(f"wrote {report_path}: {stats.items} item(s), {len(runs.files)} grades file(s)")
        return result

    return {
        "check": _check,
        "groups": _groups,
        "dedup": _dedup,
        "answerability": _answerability,
        "judge": _judge,
        "difficulty": _difficulty,
        "stats": _stats,
        "report": _report,
    }


STEP_NAMES = tuple(step_registry(Path("report.html")))


@dataclass
class MainJobResult:
    steps: list[StepOutcome]
    report: Path

    @property
    def exit_code(self) -> int:
        return max((s.exit_code for s in self.steps), default=0)


def run_main_job(
    config: Config, report_path: Path, *, skip: tuple[str, ...] = (), record: bool = False
) -> MainJobResult:
    """Run every step but those in ``skip``, in order; each step's failure stays its own. ``record``:
    write the dedup record (``propeval run --record``)."""
    registry = step_registry(report_path, record)
    return MainJobResult(
        [run_step(name, fn, config, "") for name, fn in registry.items() if name not in skip], report_path
    )
