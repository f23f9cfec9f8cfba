"""A step's outcome in a pipeline run, and running one step so that a failure is never a pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from propeval.errors import PropevalError
from propeval.pipeline.scope import Scope
from propeval.pipeline.steps import Step
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class StepOutcome:
    name: str
    status: str  # ok | failed | advisory | error | skipped
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files_checked: int = 0
    exit_code: int = 0

    @property
    def errors(self) -> int:
        return sum(p.severity is Severity.ERROR for p in self.problems)

    @property
    def warnings(self) -> int:
        return len(self.problems) - self.errors


@dataclass
class PipelineResult:
    """Every step's outcome; the exit code is the worst step's."""

    steps: list[StepOutcome]

    @property
    def exit_code(self) -> int:
        return max((s.exit_code for s in self.steps), default=0)

    @property
    def problems(self) -> list[Problem]:
        return [p for s in self.steps for p in s.problems]


def run_step(name: str, fn: Step, ws: Workspace, scope: Scope) -> StepOutcome:
    """Run one step; a failure to run is an ``error`` outcome (exit 3, or the error's own code), never a pass."""
    try:
        result = fn(ws, scope)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("propeval"):
            raise
        return StepOutcome(
            name,
            "error",
            [
                Problem(
                    "(ci)",
                    0,
                    0,
                    f"ci-{name}",
                    f"step {name!r} cannot run: its module {e.name} is not in this checkout; "
                    f"merge its branch, or leave it out with --skip {name}",
                )
            ],
            exit_code=3,
        )
    except PropevalError as e:
        return StepOutcome(name, "error", [Problem("(ci)", 0, 0, f"ci-{name}", str(e))], exit_code=e.exit_code)
    if result.errors:
        status = "failed"
    elif result.problems:
        status = "advisory"
    elif result.files_checked == 0 and result.notes:
        status = "skipped"
    else:
        status = "ok"
    return StepOutcome(name, status, list(result.problems), list(result.notes), result.files_checked, result.exit_code)


def run_steps(names: list[str], registry: dict[str, Step], ws: Workspace, scope: Scope) -> list[StepOutcome]:
    """Run ``names`` in order, each on its own (one step's failure never stops the next)."""
    return [run_step(name, registry[name], ws, scope) for name in names]
