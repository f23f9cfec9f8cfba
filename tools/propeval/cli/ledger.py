"""``propeval ledger sign|resign|approve``: sign ledger records, allowlist entries and policy approvals."""

from __future__ import annotations

import click

from propeval.cli._common import config_from, emit, format_option
from propeval.cli._suggest import SuggestingGroup
from propeval.cli._trusted import pr_option, record_session
from propeval.config import Config

base_option = click.option(
    "--base",
    metavar="REF",
    default=None,
    help="The branch the pull request merges into: the records are checked (and the signers named) under its "
    "[tool.propeval], and propeval refuses to run from an install whose code differs from REF's.",
)


def _policy(config: Config, base: str | None) -> Config:
    """``config``'s files under ``base``'s ``[tool.propeval]`` (the tree's own without a base)."""
    if base is None:
        return config
    from propeval.policy import from_base

    return from_base(config, base).config


def _run(
    ctx: click.Context,
    paths: tuple[str, ...],
    all_records: bool,
    resign: bool,
    base: str | None,
    pr: str | None,
    fmt: str,
) -> None:
    from propeval.dedup.allowlist import load_trust, sign_allowlist
    from propeval.gates.sign import ledger_files, sign_ledger
    from propeval.result import CheckResult
    from propeval.signing import load_key
    from propeval.workspace import Workspace

    if all_records and paths:
        raise click.UsageError("give record paths or --all, not both")
    key = load_key()
    assert key is not None
    with record_session(config_from(ctx), base, pr) as session:
        config = _policy(session.config, base)
        ws = Workspace(config)
        gs = ws.gate_settings
        allowlist = config.settings.dedup.allowlist
        selected = ledger_files(ws) if all_records else [p.replace("\\", "/").removeprefix("./") for p in paths]
        if not selected:
            raise click.UsageError("say which records to sign: paths under the ledger folder, the allowlist, or --all")
        records = [p for p in selected if p != allowlist]
        result = sign_ledger(ws, records, key, resign=resign) if records else None
        entries = None
        if allowlist in selected:
            entries = sign_allowlist(config, key, load_trust(config, allowlist, base), resign=resign)
        signed = [*(result.signed if result else []), *(entries.signed if entries else [])]
        problems = [*(result.problems if result else []), *(entries.problems if entries else [])]
        name = next((n for n, k in gs.signers.items() if k == key.public), None)
        who = name or "a key not on [tool.propeval.signers]"
        notes = list(session.notes)
        if result is not None:
            notes.append(f"signed {len(result.signed)} record(s) with {who}")
        if entries is not None:
            notes.append(
                f"signed {len(entries.signed)} entr{'y' if len(entries.signed) == 1 else 'ies'} "
                f"of {allowlist} with {who}"
            )
        if name is None:
            notes.append(f'ci counts them only once your key is listed: propeval keys add NAME "{key.public}"')
        if base is None:
            from propeval.trusted import running_package

            notes.append(
                f"no --base: this propeval ({running_package()}) was not compared with the base branch's code, and "
                "the records were checked under this tree's [tool.propeval]; sign a pull request's records from a "
                "trusted install of the base, with --base and --pr (SECURITY.md)"
            )
        notes += [*(result.notes if result else []), *(entries.notes if entries else [])]
        if signed:
            touched = sorted({allowlist if s.startswith(f"{allowlist}:") else s for s in signed})
            done = session.commit(
                touched, f"ledger: sign {', '.join(touched)}\n\nSigned with propeval --pr; no hook ran."
            )
            if done is not None:
                notes.append(done)
    checked = (result.files_checked if result else 0) + (1 if entries else 0)
    emit(problems, fmt, checked, notes)
    ctx.exit(CheckResult(problems=problems).exit_code)


@click.group("ledger", cls=SuggestingGroup)
def command() -> None:
    """Sign ledger records, allowlist entries and policy approvals with your maintainer key.

    \b
    A record counts in ci only when a key on [tool.propeval.signers] signed it. --online
    gates sign the records they write; these commands sign records made otherwise, or
    re-sign them after a key change. A record is signed only when it is fresh and
    everything derivable in it follows (fact score, labels, prompt hashes): sign only
    records you made or watched being made. Naming the allowlist (dedup-allowlist.yaml)
    signs each of its entries that is bound to today's texts: your review of those pairs.
    `ledger approve` signs your approval of a pull request's policy changes.

    \b
    Make records for a pull request from a trusted install of the base, reading the pull
    request from git objects (--base REF --pr BRANCH): none of its code or hooks run, and
    the signed files are committed on top of BRANCH with no hook (SECURITY.md).

    \b
    Examples:
      propeval ledger sign ledger/answerability/i0001.json
      propeval ledger sign --all
      propeval ledger sign dedup-allowlist.yaml --base origin/main --pr pr-123
      propeval ledger resign --all
      propeval ledger approve --base origin/main --pr pr-123
    """


@command.command("sign")
@click.argument("paths", nargs=-1)
@click.option("--all", "all_records", is_flag=True, help="Every record under the ledger folder (not the allowlist).")
@base_option
@pr_option
@format_option
@click.pass_context
def sign_cmd(
    ctx: click.Context, paths: tuple[str, ...], all_records: bool, base: str | None, pr: str | None, fmt: str
) -> None:
    """Sign unsigned records and allowlist entries (already-signed ones are left alone).

    \b
    Examples:
      propeval ledger sign ledger/answerability/i0001.json ledger/judge/facts-v1.json
      propeval ledger sign --all
      propeval ledger sign dedup-allowlist.yaml --base origin/main --pr pr-123
    """
    _run(ctx, paths, all_records, False, base, pr, fmt)


@command.command("resign")
@click.argument("paths", nargs=-1)
@click.option("--all", "all_records", is_flag=True, help="Every record under the ledger folder (not the allowlist).")
@base_option
@pr_option
@format_option
@click.pass_context
def resign_cmd(
    ctx: click.Context, paths: tuple[str, ...], all_records: bool, base: str | None, pr: str | None, fmt: str
) -> None:
    """Sign records again with your key, replacing any signature (after a key rotation).

    \b
    Examples:
      propeval ledger resign --all
    """
    _run(ctx, paths, all_records, True, base, pr, fmt)


@command.command("approve")
@click.argument("paths", nargs=-1)
@click.option("--base", metavar="REF", required=True, help="The branch the pull request merges into.")
@pr_option
@click.option("--note", default="", help="Why the change is fine (kept in the record).")
@format_option
@click.pass_context
def approve_cmd(ctx: click.Context, paths: tuple[str, ...], base: str, pr: str | None, note: str, fmt: str) -> None:
    """Approve the policy changes a pull request makes, after reviewing them: a signed record.

    Policy files (.github/, .pre-commit-config.yaml, .pre-commit-hooks.yaml, scripts/, the
    Makefile, .ci/, setup.py, pyproject.toml, the schema, the rubrics folder, .gitattributes,
    .gitmodules, CODEOWNERS; SECURITY.md has the list) changed since the merge base with REF
    fail ci with policy-change
    until a key on REF's [tool.propeval.signers] approves them. The record
    (ledger/approvals/<id>.json) binds each path to its blob at the merge base and in the
    pull request: one more byte, and it no longer applies. PATHS limit it to those paths
    (or folders). The allowlist is approved entry by entry instead: propeval ledger sign
    dedup-allowlist.yaml. Read the diff first (git diff REF...BRANCH -- PATHS).

    \b
    Examples:
      propeval ledger approve --base origin/main --pr pr-123 --note "bumps ruff"
      propeval ledger approve --base origin/main Makefile
    """
    from propeval.ledger.approvals import make_approval, write_approval
    from propeval.pipeline.ci import policy_changes
    from propeval.result import Problem
    from propeval.signing import load_key
    from propeval.workspace import Workspace

    key = load_key()
    assert key is not None
    with record_session(config_from(ctx), base, pr) as session:
        config = _policy(session.config, base)
        ws = Workspace(config)
        gs = ws.gate_settings
        changes = policy_changes(session.config, base, config)
        allowlist = config.settings.dedup.allowlist
        wanted = [p.replace("\\", "/").removeprefix("./").rstrip("/") for p in paths]
        skipped = [c for c in changes if c.path.endswith(allowlist)]
        changes = [c for c in changes if c not in skipped]
        if wanted:
            changes = [c for c in changes if any(c.path == w or c.path.startswith(w + "/") for w in wanted)]
        notes = list(session.notes)
        notes += [
            f"{c.path}: the allowlist is approved entry by entry: propeval ledger sign {allowlist}" for c in skipped
        ]
        problems: list[Problem] = []
        if not changes:
            notes.append(
                f"nothing to approve: no policy file changed since {base}" + (" under those paths" if wanted else "")
            )
        else:
            from propeval import gitutil

            root = session.config.root
            head = gitutil.commit_of(root, "HEAD")
            if head is None:
                raise click.UsageError("nothing to approve: the pull request has no commit yet")
            record = key.sign(make_approval(changes, note, gitutil.merge_base(root, base), head))
            rel = write_approval(ws.ledger_paths, record)
            name = next((n for n, k in gs.signers.items() if k == key.public), None)
            notes.append(
                f"{rel}: approved {len(changes)} change(s), signed by "
                + (name or "a key that is not on [tool.propeval.signers] (ci will not count it)")
            )
            notes += [f"approved {c.describe()}" for c in changes]
            done = session.commit([rel], f"ledger: approve {', '.join(c.path for c in changes)}\n\n{note}".rstrip())
            if done is not None:
                notes.append(done)
    emit(problems, fmt, len(changes), notes)
    ctx.exit(0)
