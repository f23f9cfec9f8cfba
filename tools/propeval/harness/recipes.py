"""The commands that run the benchmark in each harness: one source for the docs (docs/harnesses.md) and ``eval-smoke``.

A :class:`Recipe` is the environment and the command lines of one harness against one
:class:`Target` (an OpenAI-compatible server, the model under test and the judge). The docs'
evaluator section prints them (``scripts/docs_examples.py``, a cog block), ``propeval
eval-smoke`` runs the very same ones (with its own source and log folders appended), and a test
runs the docs' OpenRouter recipes against the plumbing model: a recipe in the docs is a command that
a test has run.

Each command is a list of words; a :class:`Slot` reads differently in a shell
(``"$(propeval harness inspect)"``, ``"$OPENROUTER_API_KEY"``, ``dist/release``) and when run
(the adapter's path, the variable's value, the smoke's source).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RUBRIC = "facts-v1"


@dataclass(frozen=True)
class Slot:
    """A word that reads one way in the docs (``shell``) and is filled in when run (``values[key]``).

    ``literal``: the shell form is plain text (quoted like any word), not shell syntax such as
    ``"$(propeval harness inspect)"``.
    """

    shell: str
    key: str
    literal: bool = False


def adapter(name: str, suffix: str = "") -> Slot:
    """The shipped adapter of a harness (``propeval harness NAME``)."""
    return Slot(f'"$(propeval harness {name}){suffix}"', f"adapter:{name}{suffix}")


def var(name: str) -> Slot:
    """An environment variable's value."""
    return Slot(f'"${name}"', f"env:{name}")


SOURCE = Slot("dist/release", "source", literal=True)  # the release folder (or corpus root) read
PYTHON = Slot('"$(command -v python)"', "python")  # a python that imports propeval
Word = str | Slot | tuple[str | Slot, ...]  # a tuple: parts joined into one word, e.g. ("source=", SOURCE)
Step = tuple[dict[str, Word], tuple[Word, ...]]


@dataclass(frozen=True)
class Target:
    """Where the requests go: an OpenAI-compatible server (``base_url`` ends in /v1), the model
    under test and the judge, the variable that holds the key ("": none needed), and how inspect
    names the model: ``openai-api/<service>/<model>`` with ``<SERVICE>_BASE_URL`` and
    ``<SERVICE>_API_KEY``, or a provider of its own (``openrouter``) that knows its URL."""

    base_url: str
    model: str
    judge: str
    key_env: str = ""
    service: str = "local"
    inspect_provider: str = ""  # "openrouter": inspect's own provider; "": openai-api/<service>

    def inspect_model(self, model: str) -> str:
        if self.inspect_provider:
            return f"{self.inspect_provider}/{model}"
        return f"openai-api/{self.service}/{model}"


# The docs' two targets: the local server (`propeval serve-local`, or `--stub`) and OpenRouter.
LOCAL = Target("http://127.0.0.1:8080/v1", "gemma-3-270m", "gemma-3-270m")
OPENROUTER = Target(
    "https://openrouter.ai/api/v1",
    "meta-llama/llama-3.3-70b-instruct",
    "openai/gpt-4o-mini",
    key_env="OPENROUTER_API_KEY",
    service="openrouter",
    inspect_provider="openrouter",
)


@dataclass(frozen=True)
class Recipe:
    """One harness's commands, each with the variables it sets; a step ``("cd", DIR)`` changes folder."""

    harness: str
    steps: tuple[Step, ...]

    def shell(self) -> str:
        """The recipe as the docs show it: one command per line, long ones continued."""
        lines = []
        for env, words in self.steps:
            assigns = [f"{k}={_shell(v)}" for k, v in env.items()]
            lines.append(_wrap([*assigns, *(_shell(w) for w in words)]))
        return "\n".join(lines)

    def argvs(self, values: Mapping[str, str]) -> list[tuple[dict[str, str], list[str]]]:
        """Each step as (the variables it sets, argv), with every slot filled from ``values``."""
        return [
            ({k: _value(v, values) for k, v in env.items()}, [_value(w, values) for w in words])
            for env, words in self.steps
        ]


def _shell(word: Word) -> str:
    parts = word if isinstance(word, tuple) else (word,)
    if all(isinstance(p, str) or p.literal for p in parts):
        return shlex.quote("".join(p if isinstance(p, str) else p.shell for p in parts))
    return "".join(shlex.quote(p) if isinstance(p, str) else p.shell for p in parts)


def _value(word: Word, values: Mapping[str, str]) -> str:
    parts = word if isinstance(word, tuple) else (word,)
    return "".join(p if isinstance(p, str) else values[p.key] for p in parts)


def _groups(words: Sequence[str]) -> list[str]:
    """Words kept together on a line: an option with its value, a command with its subcommands."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and i + 1 < len(words) and not words[i + 1].startswith("-"):
            out.append(f"{w} {words[i + 1]}")
            i += 2
            continue
        if out and "=" not in w and not w.startswith("-") and not out[-1].startswith("-") and "=" not in out[-1]:
            out[-1] += " " + w  # a command's words ("inspect eval TASK")
        else:
            out.append(w)
        i += 1
    return out


def _wrap(words: Sequence[str], width: int = 100) -> str:
    """Words on lines of at most ``width`` characters (an option beside its value), continued with a backslash."""
    lines: list[str] = []
    line = ""
    for w in _groups(words):
        if line and len(line) + 1 + len(w) > width - 2:
            lines.append(line + " \\")
            line = "  " + w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines)


def _judge_env(target: Target) -> dict[str, Word]:
    env: dict[str, Word] = {"PROPEVAL_JUDGE_BASE_URL": target.base_url, "PROPEVAL_JUDGE_MODEL": target.judge}
    if target.key_env:
        env["PROPEVAL_JUDGE_API_KEY_ENV"] = target.key_env
    return env


def inspect_recipe(target: Target, task: str = "facts") -> Recipe:
    env: dict[str, Word] = {}
    if not target.inspect_provider:
        prefix = target.service.upper().replace("-", "_")
        key: Word = var(target.key_env) if target.key_env else "none"
        env = {f"{prefix}_BASE_URL": target.base_url, f"{prefix}_API_KEY": key}
    # The task by its registered name (the `inspect_ai` entry point), not by file: inspect runs a
    # task file from the file's own folder, where a relative source such as dist/release is not.
    words: tuple[Word, ...] = (
        "inspect",
        "eval",
        f"propeval/{task}",
        "-T",
        ("source=", SOURCE),
        "--model",
        target.inspect_model(target.model),
        "--model-role",
        "grader=" + target.inspect_model(target.judge),
    )
    return Recipe("inspect", ((env, words),))


def lm_eval_recipe(target: Target, task: str = "propeval_facts") -> Recipe:
    env = _judge_env(target)
    if target.key_env:
        env["OPENAI_API_KEY"] = var(target.key_env)  # lm-eval's chat-completions model reads its key here
    words: tuple[Word, ...] = (
        "lm_eval",
        "--include_path",
        adapter("lm-eval"),
        "--tasks",
        task,
        "--metadata",
        ('{"source": "', SOURCE, '"}'),
        "--apply_chat_template",
        "--model",
        "local-chat-completions",
        "--model_args",
        f"model={target.model},base_url={target.base_url}/chat/completions,tokenized_requests=False",
    )
    return Recipe("lm-eval", ((env, words),))


def propeval_recipe(target: Target, run_id: str = "smoke", endpoint: str = "") -> Recipe:
    """``answer``, ``grade`` and ``score`` in the corpus: the endpoint ``endpoint`` of its config
    (which names the key's variable), or the default one at ``target``'s URL."""
    where: tuple[str, ...] = ("--endpoint", endpoint) if endpoint else ("--base-url", target.base_url)
    judge: tuple[str, ...] = ("--judge", endpoint) if endpoint else ("--base-url", target.base_url)
    steps: tuple[Step, ...] = (
        ({}, ("propeval", "answer", *where, "--model", target.model, "--run-id", run_id)),
        ({}, ("propeval", "grade", run_id, "--rubric", RUBRIC, *judge, "--judge-model", target.judge)),
        ({}, ("propeval", "score", run_id, "--rubric", RUBRIC)),
    )
    return Recipe("propeval", steps)


def promptfoo_recipe(target: Target, out: str = "pf") -> Recipe:
    emit: tuple[Word, ...] = (
        "propeval",
        "harness",
        "promptfoo",
        "--source",
        SOURCE,
        "--out",
        out,
        "--provider",
        f"openai:chat:{target.model}",
        "--base-url",
        target.base_url,
        *(("--api-key-env", target.key_env) if target.key_env else ()),
    )
    env = _judge_env(target)
    env["PROMPTFOO_PYTHON"] = PYTHON
    return Recipe("promptfoo", (({}, emit), ({}, ("cd", out)), (env, ("promptfoo", "eval"))))


def recipes(target: Target, *, endpoint: str = "", run_id: str = "smoke") -> list[Recipe]:
    return [
        inspect_recipe(target),
        lm_eval_recipe(target),
        propeval_recipe(target, run_id=run_id, endpoint=endpoint),
        promptfoo_recipe(target),
    ]
