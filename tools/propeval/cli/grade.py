"""``propeval grade``."""

from __future__ import annotations

import click

from propeval.cli._common import workspace_from
from propeval.cli._judge import emit_run, endpoint_check_options, progress_bar, settings_from, summary_format_option


@click.command("grade")
@click.argument("run")
@click.option("--rubric", required=True, help="A folder under rubrics/, e.g. facts-v1 or audit-v1.")
@click.option(
    "--judge",
    "judges",
    multiple=True,
    help="An endpoint under [tool.propeval.judge.endpoints]; repeat it for a panel of judges. "
    "Default: [tool.propeval.judge] panel, else judge_endpoint.",
)
@click.option(
    "--judge-model", default=None, help="Model id of the judge (one judge only). Default: the endpoint's model."
)
@click.option("--base-url", default=None, help="Override the judge endpoint's base URL (one judge only).")
@click.option(
    "--max-reasks", type=click.IntRange(min=0), default=None, help="Re-asks after an invalid verdict. Default: config."
)
@click.option("--retry-unscored", is_flag=True, help="Grade again the items recorded as unscored.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor fill the response cache: ask the judges again for every verdict.",
)
@click.option(
    "--allow-partial-panel",
    is_flag=True,
    help="Score a panel item on the judges that gave a valid verdict even when they are not a majority of "
    "the panel (the record's reason names the judges left out). Default: such an item is unscored.",
)
@click.option(
    "--partial",
    is_flag=True,
    help="Grade a run whose answers are incomplete (`propeval answer` still writing it, or stopped short); "
    "score and report label it partial. Without it such a run is refused (exit 2).",
)
@endpoint_check_options
@summary_format_option
@click.pass_context
def command(
    ctx: click.Context,
    run: str,
    rubric: str,
    judges: tuple[str, ...],
    judge_model: str | None,
    base_url: str | None,
    max_reasks: int | None,
    retry_unscored: bool,
    no_cache: bool,
    allow_partial_panel: bool,
    partial: bool,
    base: str | None,
    trust_endpoints: bool,
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

    A panel (--judge repeated, or [tool.propeval.judge] panel) asks every judge; the record
    keeps each judge's own verdict, raw reply and errors under "judges", and the combined
    verdict at the top: per fact the state more than half the judges gave (else a tie, scored
    missed), the median of ordinal fields (an even split takes the lower middle value); ties
    are listed under "panel". A judge whose request failed makes the item an error, retried
    by a rerun. An item fewer than a majority of the judges gave a valid verdict on (one of
    two, one of three) is unscored, naming the judges that gave none; --allow-partial-panel
    scores it on those that did. `propeval agree judges RUN` measures how far the judges agree.

    A judge's reply to the very same request (model, base URL, prompt, rubric version and
    settings) is read from the response cache instead of asked again; "cached" in the record
    says so. Errors, cut replies and invalid verdicts are never cached. The cache lives in the
    user cache folder (propeval/responses; $PROPEVAL_RESPONSE_CACHE overrides it), has no
    expiry, and --no-cache turns it off.

    A warning names the models when the answer model is also a judge, or is the answerability
    reference model (model ids compared case-insensitively, without a provider prefix).

    A run whose answers are incomplete is refused (exit 2): `propeval answer` holds its lock
    (still writing), or left runs/<run>/answers.partial (it stopped short: errors, the run
    deadline, a kill). --partial grades what is there; score and report label the run partial.

    \b
    Exit codes: 0 every answer graded or unscored, 3 some request failed for good or the
    run deadline left items unfinished.

    The judges' endpoints are this checkout's: one that changed them since it forked from --base
    is refused, unless --trust-endpoints or --base-url.

    \b
    Examples:
      propeval grade smoke --rubric facts-v1
      propeval grade runs/smoke --rubric audit-v1 --judge openai --judge-model gpt-4o
      propeval grade smoke --rubric facts-v1 --judge openai --judge anthropic --judge local
      propeval grade smoke --rubric facts-v1 --no-cache
    """
    from propeval.errors import UsageError
    from propeval.judge.grade import GradeOptions, grade_run
    from propeval.policy import refuse_moved_endpoints

    ws = workspace_from(ctx)
    refuse_moved_endpoints(ws.config, base, trust_endpoints or base_url is not None)
    settings = settings_from(ws.config)
    panel = settings.judges(judges)
    if len(panel) > 1 and (judge_model or base_url):
        raise UsageError("--judge-model and --base-url override one judge; give one --judge, or set them per endpoint")
    ep = panel[0]
    if len(panel) == 1:
        ep = settings.endpoint(ep.name, model=judge_model, base_url=base_url)
    options = GradeOptions(
        run=run,
        rubric=rubric,
        endpoint=ep,
        panel=panel if len(panel) > 1 else (),
        use_cache=not no_cache,
        temperature=settings.judge_temperature,
        max_tokens=settings.judge_max_tokens,
        max_reasks=settings.max_reasks if max_reasks is None else max_reasks,
        retry_unscored=retry_unscored,
        allow_partial_panel=allow_partial_panel,
        partial=partial,
    )
    with progress_bar(f"grading ({rubric})") as progress:
        result = grade_run(ws, settings, options, progress)  # type: ignore[arg-type]
    emit_run(result, "graded", fmt)
    ctx.exit(result.exit_code)
