"""``propeval gate answerability|judge``."""

from __future__ import annotations

from typing import Any

import click

from propeval.cli._common import changed_since_option, config_from, emit, format_option
from propeval.cli._suggest import SuggestingGroup
from propeval.cli._trusted import pr_option, record_session
from propeval.config import Config

base_option = click.option(
    "--base",
    metavar="REF",
    default=None,
    help="With --online: take the policy and the endpoints from REF's pyproject.toml (the branch the pull "
    "request merges into), and refuse a tree that changed them; refuse to run from a propeval whose code "
    "differs from REF's. Without it, endpoints come from your own config file ($PROPEVAL_CONFIG, or "
    "config.toml in your user config folder).",
)
sign_option = click.option(
    "--sign/--no-sign",
    default=True,
    show_default=True,
    help="With --online: sign the records written with your key ($PROPEVAL_SIGNING_KEY, or signing-key.pem in "
    "your user config folder; see propeval keys new). Without a key they are written unsigned.",
)


def online_setup(config: Config, online: bool, base: str | None, sign: bool) -> tuple[Config, Any, list[str]]:
    """The trusted Config, the signing key (or None) and notes for an --online run."""
    if not online:
        if base is not None:
            raise click.UsageError("--base chooses where --online sends requests; offline, use propeval ci --base REF")
        return config, None, []
    if base is None:
        from propeval.trusted import running_package

        note = (
            f"no --base: this propeval ({running_package()}) was not compared with the base branch's code; make "
            "records for a pull request from a trusted install of the base, with --base and --pr (SECURITY.md)"
        )
    else:
        note = ""
    from propeval.policy import online_config
    from propeval.signing import default_key_path, load_key, load_signers

    config, notes = online_config(config, base)
    key = load_key(required=False) if sign else None
    if key is None:
        why = "--no-sign" if not sign else f"no signing key at {default_key_path()} (propeval keys new)"
        notes.append(f"records written are unsigned ({why}); ci counts only signed records")
    else:
        signers = load_signers(config)
        name = next((n for n, k in signers.items() if k == key.public), None)
        notes.append(
            f"records written are signed by {name}"
            if name
            else "records written are signed with a key that is not on [tool.propeval.signers]: ci will not count them"
        )
    if note:
        notes.append(note)
    return config, key, notes


@click.group("gate", cls=SuggestingGroup)
def command() -> None:
    """Gates before merge, verified offline from the ledger; --online refreshes the records.

    \b
    Nothing contacts a network without --online. A gate set to "advisory" in
    [tool.propeval.gates] reports its problems as warnings and exits 0.

    \b
    Examples:
      propeval gate answerability --changed-since origin/main
      propeval gate answerability --online --base origin/main i0001 i0002
      propeval gate judge --rubric facts-v1
      propeval gate judge --rubric facts-v1 --online --base origin/main

    \b
    --online sends requests, and API keys, only to endpoints a maintainer set: those of
    --base REF, or of your own config file, never those of the checked-out tree; https is
    required except on loopback. Records written online are signed with your key.
    """


@command.command("answerability")
@click.argument("item_ids", nargs=-1)
@changed_since_option
@click.option("--all", "all_items", is_flag=True, help="Every active item.")
@click.option("--online", is_flag=True, help="Answer and grade missing or stale items, and write their records.")
@click.option("--force", is_flag=True, help="With --online: re-run every selected item, fresh or not.")
@base_option
@pr_option
@sign_option
@format_option
@click.pass_context
def answerability_cmd(
    ctx: click.Context,
    item_ids: tuple[str, ...],
    changed_since: str | None,
    all_items: bool,
    online: bool,
    force: bool,
    base: str | None,
    pr: str | None,
    sign: bool,
    fmt: str,
) -> None:
    """Every selected active item needs a fresh, passing record in ledger/answerability/.

    A record passes when it is signed by a key on [tool.propeval.signers], the reference
    model's answer scores at least min_fact_score with facts-v1, and the score, the fact
    states and the prompt hash follow from the recorded verdict. It is fresh while the item,
    its claim, the rubric, both models and their settings are unchanged.

    With --online, each record is written as soon as its item is graded. Items whose
    requests failed for good get no record: the command then exits 3 naming them, with
    the exact count of records written, and rerunning it does only the items left.

    With --pr REF (and --base), the records are made for the pull request at REF without
    running any of its code: run it from a trusted install of the base (SECURITY.md). The
    items default to those changed since --base.

    \b
    Examples:
      propeval gate answerability --changed-since origin/main
      propeval gate answerability --all
      propeval gate answerability --online --base origin/main --all
      propeval gate answerability --online --base origin/main --pr pr-123
    """
    from propeval.gates.answerability import Selection, answerability_gate
    from propeval.workspace import Workspace

    if force and not online:
        raise click.UsageError("--force re-runs items, so it needs --online")
    if pr is not None and not online:
        raise click.UsageError("--pr makes records for a pull request, so it needs --online")
    with record_session(config_from(ctx), base if online else None, pr) as session:
        config, key, trust = online_setup(session.config, online, base, sign)
        if pr is not None and not (item_ids or all_items or changed_since):
            changed_since = base
        sel = Selection(item_ids=item_ids, all_items=all_items, changed_since=changed_since)
        ws = Workspace(config)
        result = answerability_gate(ws, sel, online=online, force=force, key=key)
        notes = [*session.notes, *trust, *result.notes] if result.ran else [*session.notes, *result.notes]
        if result.ran:
            notes.insert(0, f"answered and graded {len(result.ran)} item(s): {', '.join(result.ran)}")
            done = session.commit(
                [ws.ledger_paths.folder],
                f"ledger: answerability records for {', '.join(result.ran)}\n\n{_made_by(base)}",
            )
            if done is not None:
                notes.append(done)
    emit(result.problems, fmt, result.files_checked, notes)
    ctx.exit(result.exit_code)


def _made_by(base: str | None) -> str:
    from propeval import __version__

    return f"Made with propeval {__version__}, policy from {base}; no hook ran (propeval --pr)."


@command.command("judge")
@click.option("--rubric", "rubrics", multiple=True, required=True, help="A rubric name (repeatable).")
@click.option("--online", is_flag=True, help="Grade the gold set with the judge and write the record if stale.")
@base_option
@pr_option
@sign_option
@format_option
@click.pass_context
def judge_cmd(
    ctx: click.Context,
    rubrics: tuple[str, ...],
    online: bool,
    base: str | None,
    pr: str | None,
    sign: bool,
    fmt: str,
) -> None:
    """The judge must agree with the human verdicts of rubrics/<rubric>/gold.jsonl.

    Offline, the record ledger/judge/<rubric>.json must be signed by a key on
    [tool.propeval.signers] and fresh (same rubric, gold set, judge model and settings); its
    human labels must be the gold file's, its judge labels must follow from the judge's raw
    replies (and not simply equal the human labels); and every agreement statistic must be
    defined and at or above its threshold in [tool.propeval.gates].

    \b
    Examples:
      propeval gate judge --rubric facts-v1
      propeval gate judge --rubric facts-v1 --rubric audit-v1 --online --base origin/main
      propeval gate judge --rubric facts-v1 --online --base origin/main --pr pr-123
    """
    from propeval.gates.judge_gate import judge_gate
    from propeval.workspace import Workspace

    if pr is not None and not online:
        raise click.UsageError("--pr makes records for a pull request, so it needs --online")
    with record_session(config_from(ctx), base if online else None, pr) as session:
        config, key, trust = online_setup(session.config, online, base, sign)
        ws = Workspace(config)
        result = judge_gate(ws, rubrics, online=online, key=key)
        notes = [*session.notes, *trust, *result.notes] if result.ran else [*session.notes, *result.notes]
        if result.ran:
            notes.insert(0, f"graded the gold set of {', '.join(result.ran)}")
            done = session.commit(
                [ws.ledger_paths.folder],
                f"ledger: judge records for {', '.join(result.ran)}\n\n{_made_by(base)}",
            )
            if done is not None:
                notes.append(done)
    emit(result.problems, fmt, result.files_checked, notes)
    ctx.exit(result.exit_code)
