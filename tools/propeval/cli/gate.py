"""``propeval gate answerability|judge``."""

from __future__ import annotations

import click

from propeval.cli._common import changed_since_option, config_from, emit, format_option


@click.group("gate")
def command() -> None:
    """Gates before merge, verified offline from the ledger; --online refreshes the records.

    \b
    Nothing contacts a network without --online. A gate set to "advisory" in
    [tool.propeval.gates] reports its problems as warnings and exits 0.

    \b
    Examples:
      propeval gate answerability --changed-since origin/main
      propeval gate answerability --online i0001 i0002
      propeval gate judge --rubric facts-v1
      propeval gate judge --rubric facts-v1 --online
    """


@command.command("answerability")
@click.argument("item_ids", nargs=-1)
@changed_since_option
@click.option("--all", "all_items", is_flag=True, help="Every active item.")
@click.option("--online", is_flag=True, help="Answer and grade missing or stale items, and write their records.")
@click.option("--force", is_flag=True, help="With --online: re-run every selected item, fresh or not.")
@format_option
@click.pass_context
def answerability_cmd(
    ctx: click.Context,
    item_ids: tuple[str, ...],
    changed_since: str | None,
    all_items: bool,
    online: bool,
    force: bool,
    fmt: str,
) -> None:
    """Every selected active item needs a fresh, passing record in ledger/answerability/.

    A record passes when the reference model's answer scores at least min_fact_score with
    facts-v1. It is fresh while the item, its claim, the rubric, both models and their
    settings are unchanged.

    With --online, each record is written as soon as its item is graded. Items whose
    requests failed for good get no record: the command then exits 3 naming them, with
    the exact count of records written, and rerunning it does only the items left.

    \b
    Examples:
      propeval gate answerability --changed-since origin/main
      propeval gate answerability --all
      propeval gate answerability --online --all
    """
    from propeval.gates.answerability import Selection, answerability_gate

    if force and not online:
        raise click.UsageError("--force re-runs items, so it needs --online")
    config = config_from(ctx)
    sel = Selection(item_ids=item_ids, all_items=all_items, changed_since=changed_since)
    result = answerability_gate(config, sel, online=online, force=force)
    notes = [*result.notes]
    if result.ran:
        notes.insert(0, f"answered and graded {len(result.ran)} item(s): {', '.join(result.ran)}")
    emit(result.problems, fmt, result.files_checked, notes)
    ctx.exit(result.exit_code)


@command.command("judge")
@click.option("--rubric", "rubrics", multiple=True, required=True, help="A rubric name (repeatable).")
@click.option("--online", is_flag=True, help="Grade the gold set with the judge and write the record if stale.")
@format_option
@click.pass_context
def judge_cmd(ctx: click.Context, rubrics: tuple[str, ...], online: bool, fmt: str) -> None:
    """The judge must agree with the human verdicts of rubrics/<rubric>/gold.jsonl.

    Offline, the record ledger/judge/<rubric>.json must be fresh (same rubric, gold set, judge
    model and settings) and every agreement statistic must be defined and at or above its
    threshold in [tool.propeval.gates].

    \b
    Examples:
      propeval gate judge --rubric facts-v1
      propeval gate judge --rubric facts-v1 --rubric audit-v1 --online
    """
    from propeval.gates.judge_gate import judge_gate

    config = config_from(ctx)
    result = judge_gate(config, rubrics, online=online)
    notes = [*result.notes]
    if result.ran:
        notes.insert(0, f"graded the gold set of {', '.join(result.ran)}")
    emit(result.problems, fmt, result.files_checked, notes)
    ctx.exit(result.exit_code)
