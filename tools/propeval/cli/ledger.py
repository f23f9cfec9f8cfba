"""``propeval ledger sign|resign``: sign ledger records with your maintainer key."""

from __future__ import annotations

import click

from propeval.cli._common import config_from, emit, format_option


def _run(ctx: click.Context, paths: tuple[str, ...], all_records: bool, resign: bool, fmt: str) -> None:
    from propeval.gates.settings import load_gate_settings
    from propeval.gates.sign import ledger_files, sign_ledger
    from propeval.signing import load_key

    if all_records and paths:
        raise click.UsageError("give record paths or --all, not both")
    config = config_from(ctx)
    key = load_key()
    assert key is not None
    gs = load_gate_settings(config)
    selected = ledger_files(config, gs) if all_records else [p.replace("\\", "/").removeprefix("./") for p in paths]
    result = sign_ledger(config, selected, key, resign=resign)
    name = next((n for n, k in gs.signers.items() if k == key.public), None)
    notes = [f"signed {len(result.signed)} record(s) with {name or 'a key not on [tool.propeval.signers]'}"]
    if name is None:
        notes.append(f'ci counts them only once your key is listed: propeval keys add NAME "{key.public}"')
    emit(result.problems, fmt, result.files_checked, [*notes, *result.notes])
    ctx.exit(result.exit_code)


@click.group("ledger")
def command() -> None:
    """Sign ledger records with your maintainer key.

    \b
    A record counts in ci only when a key on [tool.propeval.signers] signed it. --online
    gates sign the records they write; these commands sign records made otherwise, or
    re-sign them after a key change. A record is signed only when it is fresh and
    everything derivable in it follows (fact score, labels, prompt hashes): sign only
    records you made or watched being made.

    \b
    Examples:
      propeval ledger sign ledger/answerability/i0001.json
      propeval ledger sign --all
      propeval ledger resign --all
    """


@command.command("sign")
@click.argument("paths", nargs=-1)
@click.option("--all", "all_records", is_flag=True, help="Every record under the ledger folder.")
@format_option
@click.pass_context
def sign_cmd(ctx: click.Context, paths: tuple[str, ...], all_records: bool, fmt: str) -> None:
    """Sign unsigned records (already-signed ones are left alone).

    \b
    Examples:
      propeval ledger sign ledger/answerability/i0001.json ledger/judge/facts-v1.json
      propeval ledger sign --all
    """
    _run(ctx, paths, all_records, False, fmt)


@command.command("resign")
@click.argument("paths", nargs=-1)
@click.option("--all", "all_records", is_flag=True, help="Every record under the ledger folder.")
@format_option
@click.pass_context
def resign_cmd(ctx: click.Context, paths: tuple[str, ...], all_records: bool, fmt: str) -> None:
    """Sign records again with your key, replacing any signature (after a key rotation).

    \b
    Examples:
      propeval ledger resign --all
    """
    _run(ctx, paths, all_records, True, fmt)
