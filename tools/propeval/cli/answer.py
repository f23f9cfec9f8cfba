"""``propeval answer``."""

from __future__ import annotations

import click

from propeval.cli._common import workspace_from
from propeval.cli._judge import emit_run, endpoint_check_options, progress_bar, settings_from, summary_format_option


@click.command("answer")
@click.option("--model", default=None, help="Model id to ask. Default: the endpoint's configured model.")
@click.option(
    "--endpoint", default=None, help="An endpoint under [tool.propeval.judge.endpoints]. Default: answer_endpoint."
)
@click.option("--base-url", default=None, help="Override the endpoint's base URL, e.g. http://127.0.0.1:8080/v1.")
@click.option(
    "--run-id", default=None, help="Write to runs/RUN_ID (an existing run is resumed). Default: model-timestamp."
)
@click.option(
    "--temperature", type=click.FloatRange(min=0), default=None, help="Default: [tool.propeval.judge] temperature."
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Default: the endpoint's max_tokens, else [tool.propeval.judge] max_tokens (32768).",
)
@click.option("--top-p", type=click.FloatRange(min=0, max=1, min_open=True), default=None, help="Default: top_p.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Default: [tool.propeval.judge] seed.")
@click.option(
    "--reasoning-effort",
    type=click.Choice(["none", "minimal", "low", "medium", "high"]),
    default=None,
    help="Sent as reasoning_effort. Default: reasoning_effort (unset: not sent).",
)
@click.option(
    "--thinking",
    type=click.Choice(["on", "off"]),
    default=None,
    help="Sent as chat_template_kwargs.enable_thinking. Default: thinking (unset: not sent).",
)
@click.option("--system-prompt", default=None, help="A system message before each prompt. Default: none.")
@endpoint_check_options
@click.option("--item", "items", multiple=True, help="Only this item id (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Only the first N active items (by id).")
@summary_format_option
@click.pass_context
def command(
    ctx: click.Context,
    model: str | None,
    endpoint: str | None,
    base_url: str | None,
    run_id: str | None,
    temperature: float | None,
    max_tokens: int | None,
    top_p: float | None,
    seed: int | None,
    reasoning_effort: str | None,
    thinking: str | None,
    system_prompt: str | None,
    items: tuple[str, ...],
    limit: int | None,
    base: str | None,
    trust_endpoints: bool,
    fmt: str,
) -> None:
    """Ask a model every active item once; write runs/<run-id>/answers.jsonl.

    Each item is one user turn, with no system prompt unless one is set. Every sampling setting
    (temperature, top_p, max_tokens, reasoning effort, thinking, system prompt, seed) is recorded
    in run.json and on each answer, with the reply's finish_reason (length = truncated) and its
    token usage (checked: a count that is not an integer in range is left out and named).
    Reasoning content is left out; a reply with no final text is recorded as unanswered.
    Every answer is appended as soon as it arrives, so a killed run loses only the requests in
    flight: rerun the same command with --run-id to finish it. Items that failed (after
    retries) are retried by the rerun.
    A malformed reply (not JSON, wrong shape, {}, choices: [], message: null, ...), one
    over max_reply_bytes, or one not complete within request_deadline is a fault: retried,
    then recorded as an error with its raw start, never as an answer. Text past
    max_tokens x 8 characters is cut.

    The endpoints are this checkout's: one that changed them since it forked from --base (a pull
    request moving where your API key goes) is refused, unless --trust-endpoints or --base-url.

    \b
    Exit codes: 0 every item answered (or unanswered), 3 some request failed for good or
    the run deadline ([tool.propeval.judge] run_deadline) left items unfinished.

    \b
    Examples:
      propeval answer --model gemma-3-270m --run-id smoke --limit 5
      propeval answer --endpoint openai --model gpt-4o-mini --temperature 0.7
      propeval answer --endpoint openai --reasoning-effort high --max-tokens 32768 --seed 1
    """
    from propeval.judge.answer import AnswerOptions, answer_run
    from propeval.policy import refuse_moved_endpoints

    ws = workspace_from(ctx)
    refuse_moved_endpoints(ws.config, base, trust_endpoints or base_url is not None)
    settings = settings_from(ws.config)
    ep = settings.endpoint(endpoint or settings.answer_endpoint, model=model, base_url=base_url)
    options = AnswerOptions(
        endpoint=ep,
        temperature=settings.temperature if temperature is None else temperature,
        max_tokens=max_tokens or settings.answer_cap(ep),
        run_id=run_id,
        items=items,
        limit=limit,
        top_p=settings.top_p if top_p is None else top_p,
        seed=settings.seed if seed is None else seed,
        reasoning_effort=settings.reasoning_effort if reasoning_effort is None else reasoning_effort,
        thinking=settings.thinking if thinking is None else thinking,
        system_prompt=settings.system_prompt if system_prompt is None else system_prompt,
    )
    with progress_bar("answering") as progress:
        result = answer_run(ws, settings, options, progress)  # type: ignore[arg-type]
    emit_run(result, "answered", fmt)
    ctx.exit(result.exit_code)
