"""``propeval grade``."""

from __future__ import annotations

import click

from propeval.cli._common import config_from
from propeval.cli._judge import emit_run, progress_bar, settings_from, summary_format_option


@click.command("grade")
@click.argument("run")
@click.option("--rubric", required=True, help="A folder under rubrics/, e.g. facts-v1 or audit-v1.")
@click.option(
    "--judge",
    "endpoint",
    default=None,
    help="An endpoint under [tool.propeval.judge.endpoints]. Default: judge_endpoint.",
)
@click.option("--judge-model", default=None, help="Model id of the judge. Default: the endpoint's configured model.")
@click.option("--base-url", default=None, help="Override the judge endpoint's base URL.")
@click.option(
    "--max-reasks", type=click.IntRange(min=0), default=None, help="Re-asks after an invalid verdict. Default: config."
)
@click.option("--retry-unscored", is_flag=True, help="Grade again the items recorded as unscored.")
@summary_format_option
@click.pass_context
def command(
    ctx: click.Context,
    run: str,
    rubric: str,
    endpoint: str | None,
    judge_model: str | None,
    base_url: str | None,
    max_reasks: int | None,
    retry_unscored: bool,
    fmt: str,
) -> None:
    """Grade the answers of RUN (a run id under runs/, or a run folder) with a judge model.

    Writes runs/<run>/grades-<rubric>.jsonl, one record per item, appended as each verdict
    arrives. A verdict that is not valid JSON, is out of range, or names the wrong facts is
    re-asked with the validator's message; after the last re-ask the item is recorded as
    unscored with the reason and the raw reply, and never counts as a pass or a fail.
    A rerun skips items already graded. A reply that is not a chat completion at all
    (malformed, too big, too slow) is retried like a 5xx and then recorded as an error with
    its raw start, never as a verdict; see [tool.propeval.judge] request_deadline,
    run_deadline and max_reply_bytes.

    \b
    Exit codes: 0 every answer graded or unscored, 3 some request failed for good or the
    run deadline left items unfinished.

    \b
    Examples:
      propeval grade smoke --rubric facts-v1
      propeval grade runs/smoke --rubric audit-v1 --judge openai --judge-model gpt-4o
    """
    from propeval.judge.grade import GradeOptions, grade_run

    config = config_from(ctx)
    settings = settings_from(config)
    ep = settings.endpoint(endpoint or settings.judge_endpoint, model=judge_model, base_url=base_url)
    options = GradeOptions(
        run=run,
        rubric=rubric,
        endpoint=ep,
        temperature=settings.judge_temperature,
        max_tokens=settings.judge_max_tokens,
        max_reasks=settings.max_reasks if max_reasks is None else max_reasks,
        retry_unscored=retry_unscored,
    )
    with progress_bar(f"grading ({rubric})") as progress:
        result = grade_run(config, settings, options, progress)  # type: ignore[arg-type]
    emit_run(result, "graded", fmt)
    ctx.exit(result.exit_code)
