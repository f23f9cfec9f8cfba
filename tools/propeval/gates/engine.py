"""The gates' only door into the judge engine (``propeval.judge``).

Everything the gates need from it goes through these few functions, so a change of the engine's
interface is fixed here once. Offline paths use only config and rubric files; nothing here
contacts a network unless ``answer_and_grade`` or ``grade_gold`` is called.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from propeval.config import Config
from propeval.corpus import Claim, Item
from propeval.errors import EndpointError
from propeval.gates.settings import GateSettings


@dataclass(frozen=True)
class Models:
    answer_model: str
    judge_model: str
    settings: dict[str, Any]


def rubrics_dir(config: Config) -> str:
    from propeval.judge.settings import load_settings

    return load_settings(config).rubrics_dir


def load_rubric(config: Config, name: str) -> Any:
    """The judge engine's Rubric (``.hash``, ``.labels``, ``.gold_path``, ``.kind``)."""
    from propeval.judge.rubric import load_rubric as _load
    from propeval.judge.settings import load_settings

    return _load(config.root / load_settings(config).rubrics_dir, name, root=config.root)


def rubric_hash(config: Config, name: str) -> str:
    return str(load_rubric(config, name).hash)


def _endpoints(config: Config, gs: GateSettings) -> tuple[Any, Any, Any]:
    from propeval.judge.settings import load_settings

    js = load_settings(config)
    answer = js.endpoint(gs.answer_endpoint or js.answer_endpoint)
    judge = js.endpoint(gs.judge_endpoint or js.judge_endpoint)
    return js, answer, judge


def models(config: Config, gs: GateSettings) -> Models:
    """The reference and judge model names and the settings a record is bound to (config only)."""
    js, answer, judge = _endpoints(config, gs)
    return Models(
        answer_model=answer.model,
        judge_model=judge.model,
        settings={
            "temperature": js.temperature,
            "max_tokens": js.max_tokens,
            "judge_temperature": js.judge_temperature,
            "judge_max_tokens": js.judge_max_tokens,
        },
    )


def judge_binding(config: Config, gs: GateSettings) -> tuple[str, dict[str, Any]]:
    """The judge model and its settings, for the judge gate's binding."""
    js, _answer, judge = _endpoints(config, gs)
    return judge.model, {"judge_temperature": js.judge_temperature, "judge_max_tokens": js.judge_max_tokens}


def require_keys(endpoints: Sequence[Any]) -> None:
    """Fail before any request when an endpoint's API key variable is unset (the name, never a value)."""
    for ep in endpoints:
        if ep.api_key_env and not os.environ.get(ep.api_key_env):
            raise EndpointError(
                f"--online needs the API key of endpoint {ep.name!r} in the environment variable "
                f"{ep.api_key_env}, which is not set; export it, or run without --online to check the ledger"
            )


def answer_and_grade(
    config: Config, gs: GateSettings, items: Sequence[tuple[Item, Claim]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Answer each item with the reference model and grade it with the gate's rubric.

    Returns ``(answers.jsonl row, grades-<rubric>.jsonl row)`` per item, in order (see RUNS.md).
    """
    raise NotImplementedError("wired to propeval.judge once its answer/grade functions land")


def grade_gold(config: Config, gs: GateSettings, rubric: str, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Grade each gold case's answer with ``rubric``; one grade row per case, in order."""
    raise NotImplementedError("wired to propeval.judge once its grade function lands")
