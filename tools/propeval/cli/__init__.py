"""The ``propeval`` command line. One module per command, imported only when that command runs.

Keeping the imports lazy is what lets ``propeval --help`` and ``propeval check`` start fast enough
for a pre-commit hook: no torch, transformers, faiss or openai on those paths.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from propeval import __version__
from propeval.cli._suggest import SuggestingGroup
from propeval.errors import PropevalError

# command name -> (module, one-line help). The help is repeated here so that `--help` need not
# import every command module.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("propeval.cli.check", "Validate claims and items: schema and cross-file rules."),
    "new": ("propeval.cli.new", "Scaffold a new claim or item with the next free id."),
    "init": ("propeval.cli.init", "Scaffold a new corpus repository: config, folders, hooks, workflow."),
    "renumber": ("propeval.cli.renumber", "Give an item or claim a new id, with every reference (id collisions)."),
    "retire": ("propeval.cli.retire", "Take an item out of the corpus: status retired, with a reason."),
    "move": ("propeval.cli.move", "Move an item into another claim, keeping its id (e.g. as a translation)."),
    "review": ("propeval.cli.review", "Review in the browser: rate answers, review dedup pairs, read runs."),
    "dedup": ("propeval.cli.dedup", "Find near-duplicate prompts and facts across claims, with explanations."),
    "hook": (
        "propeval.cli.hook",
        "The pre-commit hook: check, groups and dedup on what changed since HEAD, in one process.",
    ),
    "groups": ("propeval.cli.groups", "Check claim framing groups: completeness, framing, translations."),
    "answer": ("propeval.cli.answer", "Ask a model every active item once; write runs/<id>/answers.jsonl."),
    "harness": ("propeval.cli.harness", "Locate or copy the inspect_ai, lm-eval and promptfoo adapters."),
    "eval-smoke": (
        "propeval.cli.eval_smoke",
        "Run a few items through every installed harness; a table of their scores.",
    ),
    "grade": ("propeval.cli.grade", "Grade a run's answers with a judge model and a rubric."),
    "score": ("propeval.cli.score", "Score graded runs: fact mean, propaganda share, breakdowns."),
    "serve-local": ("propeval.cli.serve_local", "Serve the bundled Gemma 3 270M on loopback (llama.cpp)."),
    "gate": ("propeval.cli.gate", "Answerability and judge gates, verified offline from the ledger."),
    "agree": ("propeval.cli.agree", "Agreement between raters: kappa, alpha, F1; blinded sheets."),
    "ci": ("propeval.cli.ci", "Every offline check a pull request needs, one summary, one exit code."),
    "keys": ("propeval.cli.keys", "Maintainer signing keys: make one, add a public key, list them."),
    "ledger": ("propeval.cli.ledger", "Sign or re-sign ledger records with your maintainer key."),
    "run": ("propeval.cli.run_all", "The main job: every check and gate over the whole corpus, then the report."),
    "decontaminate": (
        "propeval.cli.decontaminate",
        "Search training-data shards for the corpus's texts (13-grams); locally or on Dask.",
    ),
    "difficulty": ("propeval.cli.difficulty", "Difficulty bands from graded runs: classical, IRT, flags."),
    "export": ("propeval.cli.export", "Write a deterministic release folder with a dataset card."),
    "import": ("propeval.cli.importing", "Import claims and items from a release, a CPE file, or any CSV/JSONL."),
    "overlap": ("propeval.cli.overlap", "Find corpus items that are near-duplicates of an external dataset's."),
    "report": ("propeval.cli.report", "Write a self-contained HTML report with plots."),
    "stats": ("propeval.cli.stats", "Print corpus statistics and coverage gaps."),
    "schema": ("propeval.cli.schema", "Classify schema.json changes since a ref and gate the version bump."),
    "migrate": ("propeval.cli.migrate", "Rewrite claims and items from one schema version to the next."),
}


# Commands that make records with a maintainer's keys, and check the running code against --base.
_RECORDING = {"gate": "--online", "ledger": ""}


def _check_install_first(ctx: click.Context, args: list[str]) -> None:
    """Before a record-making command's module (and what it imports) is loaded: with ``--base``,
    refuse to go on from a propeval whose code differs from the base's (:mod:`propeval.trusted`),
    so that of a pull request's own code no more than this has run when it is refused."""
    if not args or args[0] not in _RECORDING or (_RECORDING[args[0]] and _RECORDING[args[0]] not in args):
        return
    base = next((a.split("=", 1)[1] for a in args if a.startswith("--base=")), None)
    if base is None and "--base" in args[:-1]:
        base = args[args.index("--base") + 1]
    if not base or "--help" in args or "-h" in args:
        return
    from propeval.trusted import check_install

    root = (ctx.obj or {}).get("root") or Path.cwd()
    check_install(Path(root), base)


class LazyGroup(SuggestingGroup):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        cmd: click.Command = module.command
        return cmd

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        _check_install_first(ctx, args)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; turn every exception into one line and an exit code (the CLI's edge).

        Errors raised on purpose exit with their own code. A full disk or a refused write exits 3
        with the file and the reason. Anything else is a bug: exit 3 (never 1, which means
        "problems found"), one line that says so, and the traceback in a file, not on the terminal.
        click's own usage errors (exit 2) and exits pass through untouched.
        """
        from propeval.reporters.text import printable
        from propeval.result import clip

        try:
            return super().invoke(ctx)
        except PropevalError as e:
            click.echo(f"propeval: error: {printable(clip(str(e)))}", err=True)
            ctx.exit(e.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, BrokenPipeError):
            raise
        except KeyboardInterrupt:
            click.echo("propeval: interrupted", err=True)
            ctx.exit(130)
        except Exception as e:
            from propeval import crash

            if crash.is_resource_error(e):
                assert isinstance(e, OSError)
                click.echo(f"propeval: error: {crash.describe_os_error(e)}", err=True)
                ctx.exit(3)
            if os.environ.get("PROPEVAL_TRACEBACK"):  # a developer's switch: let it propagate
                raise
            click.echo(printable(crash.bug_line(e, crash.write_report(e))), err=True)
            ctx.exit(3)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="propeval")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=(
        "Corpus root: the folder whose pyproject.toml has [tool.propeval], beside its questions folder. "
        "Default: found upwards from here. A folder that is not a corpus is an error (exit 2)."
    ),
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Curate the propeval corpus: validate, deduplicate, grade and release evaluation items.

    \b
    Exit codes: 0 clean, 1 problems found, 2 usage, 3 tool or infrastructure failure
    (a full disk, or a bug: the traceback then goes to a file that the error line names).

    \b
    Examples:
      propeval check                      # the whole corpus
      propeval check --changed-since origin/main --format github
      propeval new item --claim c0001 --language ru --translation-of i0001
    """
    ctx.obj = {"root": root}


def main() -> None:
    import gc
    import os

    # numpy's OpenBLAS keeps a thread per core that spins while it waits for work: a commit's hook
    # multiplies a few vectors by the corpus's, and the spinning thread cost it 0.3 of its 1.7
    # CPU-s at 10k items (a whole-corpus dedup gives the same output in about the same time
    # with one thread). CPU-seconds are what a shared CI machine pays, as with onnxruntime's
    # spinning (embed/e5ort.py). Set OPENBLAS_NUM_THREADS to give numpy more threads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    # A run builds a few hundred thousand small objects (a corpus's parsed files, its texts) and
    # frees few of them before it ends; with Python's default first threshold (700) the cyclic
    # collector walks them over and over: 0.13 of the 0.96 CPU-s that a commit's hook spends loading,
    # checking and deduplicating a 10k corpus. mypy's thresholds, for the same reason
    # (mypy/build.py): collections still run, less often, so memory that cycles hold is freed later.
    gc.set_threshold(200_000, 30, 30)
    from propeval.cli._exit import ENTRY_POINT, FAST_EXIT

    ENTRY_POINT[0], FAST_EXIT[0] = True, False
    try:
        cli(prog_name="propeval")
    except SystemExit as done:
        _end_now(done)
        raise
    finally:
        ENTRY_POINT[0] = FAST_EXIT[0] = False


def _end_now(done: SystemExit) -> None:
    """End the process without Python's teardown, when the command asked for it
    (:func:`propeval.cli._common.exit_fast`), nothing else runs, and every byte of output is out;
    else return, and the interpreter exits as usual."""
    import atexit
    import threading

    from propeval.cli._exit import FAST_EXIT

    code = done.code if done.code is not None else 0
    if not FAST_EXIT[0] or not isinstance(code, int) or threading.active_count() > 1:
        return
    if atexit._ncallbacks():  # an exit handler someone registered still has work to do
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed or broken stream: the usual exit reports it
    os._exit(code)
