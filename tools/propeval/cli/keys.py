"""``propeval keys new|add|list``: maintainer signing keys."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.cli._common import config_from
from propeval.cli._suggest import SuggestingGroup


@click.group("keys", cls=SuggestingGroup)
def command() -> None:
    """Maintainer keys that sign ledger records (Ed25519).

    \b
    The private key lives outside the repository: $PROPEVAL_SIGNING_KEY, or signing-key.pem
    in your user config folder. The public keys are listed in [tool.propeval.signers] of
    pyproject.toml; propeval ci reads that list from the base branch, so a key counts only
    once a maintainer has merged it.

    \b
    Examples:
      propeval keys new
      propeval keys add alice "ssh-ed25519 AAAAC3Nza..."
      propeval keys list
    """


def _repositories(ctx: click.Context) -> list[Path]:
    """Folders a private key must never be written into: the repository here, and the corpus root."""
    from propeval import gitutil
    from propeval.errors import PropevalError

    root = (ctx.obj or {}).get("root")
    out = [Path(root)] if root is not None else []
    for start in (Path.cwd(), *out):
        try:
            out.append(gitutil.toplevel(Path(start)))
        except PropevalError:
            continue  # not inside a repository
    return out


@command.command("new")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the private key. Default: $PROPEVAL_SIGNING_KEY, or signing-key.pem in your user "
    "config folder. Never inside a repository.",
)
@click.pass_context
def new_cmd(ctx: click.Context, out: Path | None) -> None:
    """Make a key pair: the private key goes to a file only you can read; the public key is printed.

    \b
    Examples:
      propeval keys new
      PROPEVAL_SIGNING_KEY=~/keys/propeval.pem propeval keys new
    """
    from propeval.signing import default_key_path, new_key

    key = new_key(out or default_key_path(), forbidden=_repositories(ctx))
    click.echo(f"private key: {key.path} (mode 0600; never commit it, never share it)")
    click.echo(f"public key: {key.public}")
    click.echo(f'add it to the list of maintainer keys: propeval keys add NAME "{key.public}"')


@command.command("add")
@click.argument("name")
@click.argument("public_key")
@click.pass_context
def add_cmd(ctx: click.Context, name: str, public_key: str) -> None:
    """Add a maintainer's public key to [tool.propeval.signers] in pyproject.toml.

    This is a policy change: it counts in ci once a maintainer merges it into the base branch.

    \b
    Examples:
      propeval keys add alice "ssh-ed25519 AAAAC3Nza..."
    """
    from propeval.keyring import add_signer

    config = config_from(ctx)
    add_signer(config.root / "pyproject.toml", name, public_key)
    click.echo(f"added signer {name!r} to [tool.propeval.signers] in pyproject.toml; commit it in a pull request")


@command.command("list")
@click.pass_context
def list_cmd(ctx: click.Context) -> None:
    """List [tool.propeval.signers], marking the one whose private key you hold.

    \b
    Examples:
      propeval keys list
    """
    from propeval.signing import default_key_path, load_key, load_signers

    signers = load_signers(config_from(ctx))
    mine = load_key(required=False)
    if not signers:
        click.echo("no signers in [tool.propeval.signers]; no ledger record counts in ci")
    for name, pub in sorted(signers.items()):
        tag = "  (yours)" if mine is not None and mine.public == pub else ""
        click.echo(f"{name}  {pub}{tag}")
    if mine is None:
        click.echo(f"you hold no signing key ({default_key_path()}); make one with propeval keys new")
    elif mine.public not in signers.values():
        click.echo(f'your key ({mine.path}) is not on the list: propeval keys add NAME "{mine.public}"')
