"""``propeval run``: the main job. Every check and gate over the whole corpus, then the report.

The steps are the pipeline's (:mod:`propeval.pipeline.steps`, the ones ``ci`` takes), over the
whole corpus instead of what changed since a ref, plus the difficulty bands of the ledger, the
corpus statistics and the HTML report:

    check -> groups -> dedup (recorded in the ledger's dedup.json with --record) -> answerability -> judge
    -> difficulty -> stats -> report

Each step is run through :func:`propeval.pipeline.outcome.run_step`, so a step that cannot run is
an ``error`` (exit 3), never a silent pass, and the summary has the ``ci`` table's shape. All steps
read one :class:`~propeval.workspace.Workspace`: each corpus file is read once, each signature
verified once. Nothing here contacts a network: both gates are verified offline from the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from propeval.pipeline.outcome import StepOutcome, run_steps
from propeval.pipeline.scope import Scope
from propeval.pipeline.steps import RUN_STEPS, STEPS

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class MainJobResult:
    steps: list[StepOutcome]
    report: Path

    @property
    def exit_code(self) -> int:
        return max((s.exit_code for s in self.steps), default=0)


def run_main_job(ws: Workspace, report_path: Path, *, skip: Sequence[str] = (), record: bool = False) -> MainJobResult:
    """Run every step of :data:`RUN_STEPS` but those in ``skip``, in order; each step's failure stays
    its own. ``record``: write the dedup record (``propeval run --record``)."""
    names = [name for name in RUN_STEPS if name not in skip]
    return MainJobResult(run_steps(names, STEPS, ws, Scope(report=report_path, record=record)), report_path)
