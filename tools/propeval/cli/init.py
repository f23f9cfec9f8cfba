"""``propeval init``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.init import default_rev, init_corpus


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--hooks-repo",
    required=True,
    metavar="URL",
    help="propeval's git repository (URL or path), which .pre-commit-config.yaml and the workflow pin.",
)
@click.option(
    "--rev",
    default=None,
    metavar="REV",
    help=f"The revision to pin, as given (a tag or a commit). Default: {default_rev()} when the hooks repository "
    "has that tag (git ls-remote --tags), else the commit its HEAD points at.",
)
def command(folder: Path, hooks_repo: str, rev: str | None) -> None:
    """Scaffold a new corpus repository in FOLDER (default: here).

    Writes [tool.propeval] into pyproject.toml (a new file, or added to an existing one with its
    comments kept), questions/, .pre-commit-config.yaml with propeval-check and propeval-groups
    pinned to a revision the hooks repository has, .github/workflows/propeval.yml, and the
    editor's schemas (.propeval/claim.schema.json and item.schema.json, with
    .vscode/settings.json pointing the YAML language server at them). The schema and the source
    blocklist are built into propeval (schema = "builtin"): nothing to copy. Nothing is overwritten.

    \b
    The pin: this release's tag when the hooks repository has it, else its HEAD commit (the
    command says so; `pre-commit autoupdate` moves the pin to the newest tag later). A local
    path is pinned as an absolute path, and the workflow installs it from a git+file:// URL.

    \b
    Examples:
      propeval init --hooks-repo https://github.com/ORG/propeval
      propeval init my-corpus --hooks-repo https://github.com/ORG/propeval --rev v0.2.0
      propeval init my-corpus --hooks-repo ../propeval            # a local clone
      cd my-corpus && git init && pre-commit install
    """
    result = init_corpus(folder, hooks_repo, rev)
    for rel in result.written:
        click.echo((result.root / rel).as_posix() if folder != Path(".") else rel)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(
        "next: git init (if needed); pre-commit install; propeval new claim ...",
        err=True,
    )
