"""``propeval review``: the browser app for raters and maintainers."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.cli._common import config_from


@click.command("review")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free port.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on. Anything but loopback also needs --allow-remote.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Serve on a non-loopback --host (plain HTTP; the URL's token is the only lock). Only requests that "
    "name --host (its Host header) are served.",
)
@click.option("--no-browser", is_flag=True, help="Print the URL; do not open a browser.")
@click.option(
    "--sheet",
    "sheets",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A sheet from `propeval agree sample`, or cases in a gold set's format, to label (repeatable).",
)
@click.option("--rubric", default=None, help="The rubric the sheets are labelled under. Default: the one that fits.")
@click.option(
    "--labels",
    "labels",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The raters' label folder: <labels>/<source>/<rater>.jsonl. Default: labels/ in the corpus root.",
)
@click.option(
    "--human",
    "humans",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A human label file (item_id and the rubric's fields) the run viewer compares the judge with.",
)
@click.pass_context
def command(
    ctx: click.Context,
    port: int,
    host: str,
    allow_remote: bool,
    no_browser: bool,
    sheets: tuple[Path, ...],
    rubric: str | None,
    labels: Path | None,
    humans: tuple[Path, ...],
) -> None:
    """Review in the browser: rate answers, review dedup pairs, read runs and the ledger.

    Serves a local web app on 127.0.0.1 and opens it in the browser. The printed URL carries
    a token that signs the browser in; without it the server answers nothing.

    \b
    Rate: one answer at a time (question, facts, frame markers; no model, no verdict), by mouse
      or keys (a key per choice, Enter for the next answer). Each rater's labels go into
      <labels>/<source>/<rater>.jsonl, the format `propeval agree` reads, saved as they are set.
      With --sheet it is a rating session: only the sheets are served (no runs, ledger or
      dedup pages, nothing that names a model, a verdict or an item).
    Dedup: the unreviewed pairs side by side with their differences, scores, threshold and
      languages; keep both (an unsigned allowlist entry), retire one, or move one into the
      other claim as a translation (the same code as dedup allow, retire and move).
    Runs: each item's answer, raw judge reply, verdict, fact states and scores, filtered by
      status or by disagreement with --human labels. Ledger: why each item passes or fails
      the answerability gate.

    \b
    Examples:
      propeval review
      propeval review --sheet sheet.jsonl --labels ~/labels
      propeval review --port 0 --no-browser --human rater1-items.jsonl
    """
    from propeval.extras import require_extra

    require_extra("review", "review")
    from propeval.review.app import build_app
    from propeval.review.security import served_names, session_file
    from propeval.review.server import bind, run
    from propeval.review.workspace import Workspace

    config = config_from(ctx)
    folder = (labels if labels is not None else config.root / "labels").resolve()
    workspace = Workspace(
        config,
        labels=folder,
        sheets=[p.resolve() for p in sheets],
        rubric=rubric,
        humans=[p.resolve() for p in humans],
    )
    if rubric is not None:
        workspace.load_rubric(rubric)
    workspace.check_sheets()
    for problem in workspace.recover():
        click.echo(f"warning: saves kept in a journal could not be written to their label file: {problem}", err=True)
    bound = bind(host, port, allow_remote=allow_remote)
    app = build_app(
        workspace,
        token=bound.token,
        port=bound.port,
        allowed_hosts=served_names(host),
        sessions=session_file(config.root, folder, bound.port),
    )

    import threading

    # the sheets check_sheets found unchanged are read now the socket listens (the first page waits
    # for them); the first visit to runs or the ledger need not wait for their reading either
    threading.Thread(target=workspace.load_sheets, name="review-sheets", daemon=True).start()
    if not workspace.blind:
        threading.Thread(target=workspace.warm, name="review-warm", daemon=True).start()

    def started() -> None:
        click.echo(f"propeval review: serving {config.root} at {bound.url}")
        click.echo(f"labels go to {folder}/<source>/<rater>.jsonl; Ctrl-C stops the server")
        if bound.remote:
            click.echo(
                f"warning: listening on {host} over plain HTTP; whoever has the URL (its token) can read and write",
                err=True,
            )
        if no_browser:
            return
        import webbrowser

        if not webbrowser.open(bound.url):
            click.echo("no browser could be opened here: open the URL above", err=True)

    run(app, bound, on_start=started)
    click.echo("propeval review: stopped")
    _end_with_threads_running()


def _end_with_threads_running() -> None:
    """Every save is in its label file once the server has stopped (its shutdown flushes), but a
    dedup queue, a corpus walk or a run's reading may still be working on a thread, inside numpy,
    faiss or onnxruntime: the interpreter's teardown under such a thread can abort the process
    ("terminate called without an active exception") instead of ending it. With nothing left to
    write, end at once."""
    import os
    import sys
    import threading

    from propeval.cli._common import from_the_command_line

    if threading.active_count() == 1 or not from_the_command_line():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)
