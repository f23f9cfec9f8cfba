"""``propeval ci``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import click

from propeval.cli._common import config_from, format_option, show
from propeval.gates.ci import STEPS, StepOutcome, run_ci
from propeval.reporters import Report, Section


def summary_table(steps: Sequence[StepOutcome]) -> str:
    """A plain table: step, status, problems (also `propeval run`'s)."""
    rows = [("step", "status", "problems")]
    for s in steps:
        count = f"{s.errors} error(s), {s.warnings} warning(s)" if s.problems else "0"
        rows.append((s.name, s.status, count))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


@click.command("ci")
@click.option("--base", required=True, metavar="REF", help="The branch the pull request merges into.")
@click.option("--step", "steps", multiple=True, type=click.Choice(list(STEPS)), help="Run only this step.")
@click.option("--skip", multiple=True, type=click.Choice(list(STEPS)), help="Leave this step out.")
@click.option(
    "--accept-policy-change",
    is_flag=True,
    help="For a run a maintainer starts: use this tree's [tool.propeval] instead of REF's, and pass the "
    "policy step. Never set it in a workflow that pull requests trigger.",
)
@format_option
@click.pass_context
def command(
    ctx: click.Context, base: str, steps: tuple[str, ...], skip: tuple[str, ...], accept_policy_change: bool, fmt: str
) -> None:
    """Run every offline check a pull request needs, on what changed since REF.

    \b
    Steps: policy (always first), check, ledger (deleted records), groups, dedup,
    answerability (ledger), judge (ledger, changed rubrics), schema.
    Policy comes from REF: every step runs with [tool.propeval] as it is at REF (gate
    modes, thresholds, signers, blocklist, endpoints, ...), and each key this tree changed
    is a "policy change: needs a maintainer" error. Only records signed by a key on REF's
    [tool.propeval.signers] count. No API key is needed.
    Changed means added, modified, deleted, renamed or retyped (a file turned link); ids the
    branch adds are also looked up in REF's current tip (id-collision).
    Exit code: the worst step's (0 clean, 1 problems, 3 tool failure).

    \b
    Examples:
      propeval ci --base origin/main
      propeval ci --base origin/main --format github
      propeval ci --base origin/main --format sarif > propeval.sarif   # for code scanning
      propeval ci --base main --skip dedup
      propeval ci --base origin/main --accept-policy-change   # a maintainer, on a policy PR
    """
    config = config_from(ctx)
    result = run_ci(config, base, steps=steps, skip=skip, accept_policy_change=accept_policy_change)
    show(ci_report(result.steps, result.exit_code), fmt)
    ctx.exit(result.exit_code)


def ci_report(steps: Sequence[StepOutcome], exit_code: int) -> Report:
    """Each step's problems and notes; json: one document of the steps; text and github end with
    the summary table, plain in every format (a workflow log shows it as it stands)."""
    payload = {
        "exit_code": exit_code,
        "steps": [
            {
                "step": s.name,
                "status": s.status,
                "problems": [p.to_dict() for p in s.problems],
                "notes": s.notes,
                "files_checked": s.files_checked,
            }
            for s in steps
        ],
    }

    def view(out: TextIO, styled: bool) -> None:
        out.write(summary_table(steps))
        out.write(f"ci: exit {exit_code}\n")

    return Report(
        sections=[Section(s.problems, [f"{s.name}: {n}" for n in s.notes]) for s in steps], data=payload, view=view
    )
