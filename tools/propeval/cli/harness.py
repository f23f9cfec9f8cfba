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
    help="promptfoo: the provider id of the model under test (openai:chat:MODEL for any OpenAI-compatible server).",
)
@click.option(
    "--base-url",
    default=None,
    help="promptfoo: the OpenAI-compatible server's /v1 URL (the provider's apiBaseUrl). Default: the provider's own.",
)
@click.option(
    "--api-key-env",
    default=None,
    help="promptfoo: the environment variable that holds the server's key (apiKeyEnvar). Default: the provider's own.",
)
def command(
    name: str, out: Path | None, source: str, rubric: str, provider: str, base_url: str | None, api_key_env: str | None
) -> None:
    """Locate or copy the adapter that runs propeval in another harness.

    NAME is inspect (an inspect_ai task file: tasks facts and audit), lm-eval (an
    lm-evaluation-harness task folder for --include_path) or promptfoo (a config and its
    Python assertion). Each grades with propeval's own judge loop and the rubric files of the
    release or corpus it reads: the same prompt, verdict checks and score table as `propeval grade`.
    Each asks the model under test with the source's sampling settings (temperature, max_tokens,
    ...), as `propeval answer` does. `propeval eval-smoke` runs each installed one end to end.

    \b
    Examples:
      inspect eval propeval/facts -T source=dist/release \\
          --model openai-api/local/MODEL --model-role grader=openai-api/local/JUDGE   # LOCAL_BASE_URL
      lm_eval --include_path "$(propeval harness lm-eval)" --tasks propeval_facts \\
          --metadata '{"source": "dist/release"}' --apply_chat_template \\
          --model local-chat-completions --model_args model=M,base_url=URL,tokenized_requests=False
      propeval harness promptfoo --source dist/release --out pf \\
          --provider openai:chat:MODEL --base-url http://127.0.0.1:8080/v1
    """
    from propeval.harness import location

    if out is None:
        click.echo(str(location(name)))
        return
    from propeval.harness.emit import emit

    done = emit(name, out, source=source, rubric=rubric, provider=provider, base_url=base_url, api_key_env=api_key_env)
    tests = f" ({done.items} test case(s))" if done.items is not None else ""
    click.echo(f"wrote {name} adapter to {out}: {', '.join(done.files)}{tests}")
