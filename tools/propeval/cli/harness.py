"""``propeval harness``."""

from __future__ import annotations

from pathlib import Path

import click

from propeval.harness import ADAPTERS


@click.command("harness")
@click.argument("name", type=click.Choice(list(ADAPTERS)))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Copy the adapter into this folder (made if missing). Without it, print where it ships.",
)
@click.option(
    "--source",
    default=".",
    show_default=True,
    help="promptfoo: the release folder, its items.jsonl, or the corpus root whose items become test cases.",
)
@click.option("--rubric", default="facts-v1", show_default=True, help="promptfoo: the rubric its assertion grades by.")
@click.option(
    "--provider",
    default="openai:chat:gpt-4o-mini",
    show_default=True,
    help="promptfoo: the provider id of the model under test.",
)
def command(name: str, out: Path | None, source: str, rubric: str, provider: str) -> None:
    """Locate or copy the adapter that runs propeval in another harness.

    NAME is inspect (an inspect_ai task file: tasks facts and audit), lm-eval (an
    lm-evaluation-harness task folder for --include_path) or promptfoo (a config and its
    Python assertion). Each grades with propeval's own judge loop and the rubric files of the
    release or corpus it reads: the same prompt, verdict checks and score table as `propeval grade`.

    \b
    Examples:
      inspect eval "$(propeval harness inspect)@facts" -T source=dist/release \\
          --model openai/MODEL --model-role grader=openai/JUDGE
      lm_eval --include_path "$(propeval harness lm-eval)" --tasks propeval_facts \\
          --metadata '{"source": "dist/release"}' --apply_chat_template \\
          --model local-chat-completions --model_args model=M,base_url=URL,tokenized_requests=False
      propeval harness promptfoo --source dist/release --out pf && cd pf && promptfoo eval
    """
    from propeval.harness import location

    if out is None:
        click.echo(str(location(name)))
        return
    from propeval.harness.emit import emit

    done = emit(name, out, source=source, rubric=rubric, provider=provider)
    tests = f" ({done.items} test case(s))" if done.items is not None else ""
    click.echo(f"wrote {name} adapter to {out}: {', '.join(done.files)}{tests}")
