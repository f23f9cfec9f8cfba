"""``propeval migrate``."""

from __future__ import annotations

import click

from propeval.cli._common import config_from, format_option, show
from propeval.migrate import MigrateOptions, migrate_corpus
from propeval.reporters import Report


@click.command("migrate")
@click.option(
    "--to",
    "to",
    metavar="VERSION",
    default=None,
    help="The schema version to migrate to. Default: schema_version in the working tree's schema.json.",
)
@click.option(
    "--from",
    "source",
    metavar="VERSION",
    default=None,
    help="The version the files are at now. Default: schema_version of schema.json committed at HEAD.",
)
@click.option("--check", is_flag=True, help="Report what would change and write nothing (exit 1 if anything would).")
@format_option
@click.pass_context
def command(ctx: click.Context, to: str | None, source: str | None, check: bool, fmt: str) -> None:
    """Rewrite every claim and item from one schema version to the next.

    Applies the migration modules in tools/propeval/migrations/ (v1_0_0__to__v2_0_0.py, ...) in
    order. Comments, key order, quoting and block scalars are kept; only the migrated fields
    change. Each rewritten file must load back to the expected data before it replaces the
    original, and nothing is written unless every file migrates. Files are replaced atomically,
    and running it again changes nothing.

    --from defaults to schema_version at HEAD: edit schema.json, add the migration, run this,
    then commit them together. Once the new schema is committed, pass --from explicitly.

    \b
    Examples:
      propeval migrate --check               # what would change; exit 1 if anything would
      propeval migrate --to 2.0.0
      propeval migrate --from 1.0.0 --to 2.0.0
    """
    config = config_from(ctx)
    result = migrate_corpus(config, MigrateOptions(to=to, source=source, check=check))
    # json has the summary as its one note; text and github end with it.
    notes = [result.summary] if result.summary else []
    show(
        Report(
            problems=result.problems,
            notes=notes,
            files_checked=result.files_checked,
            summary=result.summary,
            title="migrate",
        ),
        fmt,
    )
    ctx.exit(result.exit_code)
