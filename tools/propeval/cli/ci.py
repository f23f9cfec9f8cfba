"""``propeval ci``."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import click

from propeval.cli._common import format_option, show, workspace_from
from propeval.fsutil import append_line, atomic_write
from propeval.pipeline.ci import run_ci
from propeval.pipeline.outcome import StepOutcome
from propeval.pipeline.steps import CI_STEPS
from propeval.reporters import Report, Section, write


def summary_table(steps: Sequence[StepOutcome]) -> str:
    """A plain table: step, status, problems (also `propeval run`'s); then what each status word
    but ``ok`` means, in the words the report and the card use (:mod:`propeval.outcomes`)."""
    from propeval.outcomes import legend

    rows = [("step", "status", "problems")]
    for s in steps:
        count = f"{s.errors} error(s), {s.warnings} warning(s)" if s.problems else "0"
        rows.append((s.name, s.status, count))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines += legend([s.status for s in steps])
    return "\n".join(lines) + "\n"


# Problems listed in the job summary; the rest are counted (the annotations and SARIF have them all).
SUMMARY_PROBLEMS = 50
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def _md(text: str) -> str:
    """``text`` as inert Markdown: messages quote files from the pull request, so nothing in them may
    become a link, an image, a table cell or HTML in the summary."""
    return _MARKDOWN.sub(r"\\\1", html.escape(" ".join(text.split()), quote=False))


def summary_markdown(steps: Sequence[StepOutcome], exit_code: int) -> str:
    """The job summary (GitHub's ``$GITHUB_STEP_SUMMARY``): one table of the steps, then the problems."""
    lines = [
        f"### propeval ci: exit {exit_code}",
        "",
        "| step | status | errors | warnings |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {s.name} | {s.status} | {s.errors} | {s.warnings} |" for s in steps]
    problems = [(s.name, p) for s in steps for p in s.problems]
    if problems:
        lines += ["", "| step | where | rule | severity | message |", "| --- | --- | --- | --- | --- |"]
        for name, p in problems[:SUMMARY_PROBLEMS]:
            where = f"{p.path}:{p.line}" if p.line else p.path
            lines.append(f"| {name} | {_md(where)} | {_md(p.rule)} | {p.severity.value} | {_md(p.message)} |")
        if len(problems) > SUMMARY_PROBLEMS:
            lines += ["", f"{len(problems) - SUMMARY_PROBLEMS} more problem(s): see the annotations or the log."]
    return "\n".join(lines) + "\n"


@click.command("ci")
@click.option("--base", required=True, metavar="REF", help="The branch the pull request merges into.")
@click.option("--step", "steps", multiple=True, type=click.Choice(list(CI_STEPS)), help="Run only this step.")
@click.option("--skip", multiple=True, type=click.Choice(list(CI_STEPS)), help="Leave this step out.")
@click.option(
    "--accept-policy-change",
    is_flag=True,
    help="For a run a maintainer starts: use this tree's [tool.propeval] and schema instead of REF's, and "
    "accept its policy files. Never set it in a workflow that pull requests trigger.",
)
@click.option(
    "--summary",
    "summary_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also append a Markdown summary (a table of the steps, then the problems) to FILE: in a "
    'GitHub workflow, "$GITHUB_STEP_SUMMARY".',
)
@click.option(
    "--sarif",
    "sarif_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write the report as SARIF 2.1.0 to FILE (for github/codeql-action/upload-sarif), "
    "whatever --format prints.",
)
@click.option(
    "--pr",
    metavar="REF",
    default=None,
    help="Check the pull request at REF (a branch or commit) instead of this work tree, read from git objects: "
    "a temporary work tree of REF made with every git hook off, removed after. For a maintainer's trusted "
    "install of the base (SECURITY.md): nothing of the pull request runs.",
)
@format_option
@click.pass_context
def command(
    ctx: click.Context,
    base: str,
    pr: str | None,
    steps: tuple[str, ...],
    skip: tuple[str, ...],
    accept_policy_change: bool,
    summary_path: Path | None,
    sarif_path: Path | None,
    fmt: str,
) -> None:
    """Run every offline check a pull request needs, on what changed since REF.

    \b
    Steps: policy (always first), check, ledger (deleted records), groups, dedup,
    answerability (ledger), judge (ledger, changed rubrics), schema.
    Policy comes from REF: every step runs with [tool.propeval] as it is at REF (gate
    modes, thresholds, signers, blocklist, endpoints, ...) and checks claims and items
    with REF's schema. Each key this tree changed, and each changed file that decides what
    runs or what is enforced (.github/, .pre-commit-config.yaml, .pre-commit-hooks.yaml,
    scripts/, Makefile, .ci/, setup.py, pyproject.toml outside [tool.propeval], the
    schema, rubrics/, .gitattributes, .gitmodules, CODEOWNERS, unsigned allowlist entries;
    SECURITY.md has the list), is a "policy change: needs a maintainer" error, unless a
    maintainer's signed approval of those exact bytes covers it (propeval ledger approve).
    A private key in any changed file or commit of the branch is an error. Only records
    signed by a key on REF's [tool.propeval.signers] count. No API key is needed.
    Changed means added, modified, deleted, renamed or retyped (a file turned link); ids the
    branch adds are also looked up in REF's current tip (id-collision).
    Exit code: the worst step's (0 clean, 1 problems, 3 tool failure).

    \b
    Examples:
      propeval ci --base origin/main
      propeval ci --base origin/main --format github
      propeval ci --base origin/main --format sarif > propeval.sarif   # for code scanning
      propeval ci --base origin/main --format github --summary "$GITHUB_STEP_SUMMARY" --sarif propeval.sarif
      propeval ci --base main --skip dedup
      propeval ci --base origin/main --accept-policy-change   # a maintainer, on a policy PR
      propeval ci --base origin/main --pr pr-123               # a maintainer, from a trusted install
    """
    ws = workspace_from(ctx)
    if pr is None:
        result = run_ci(ws, base, steps=steps, skip=skip, accept_policy_change=accept_policy_change)
    else:
        from propeval.config import require_corpus
        from propeval.trusted import pr_checkout, pr_root
        from propeval.workspace import Workspace

        with pr_checkout(ws.root, pr) as tree:
            data = Workspace(require_corpus(pr_root(tree, ws.root)))
            result = run_ci(data, base, steps=steps, skip=skip, accept_policy_change=accept_policy_change)
    rep = ci_report(result.steps, result.exit_code)
    if summary_path is not None:
        append_line(summary_path, summary_markdown(result.steps, result.exit_code))
    if sarif_path is not None:
        # One run, two outputs: annotations in the log and SARIF for code scanning.
        buf = io.StringIO()
        write(rep, "sarif", buf)
        atomic_write(sarif_path, buf.getvalue())
    show(rep, fmt)
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
