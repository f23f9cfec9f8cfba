"""The models a gate uses, and what a gate record is bound to about them (read from config only).

The reference (answer) and judge endpoints are ``[tool.propeval.gates]``' own when set, else
``[tool.propeval.judge]``'s; the judge gate may grade with a panel (``judge_panel``). Nothing
here contacts a network. Before any request, the gates check the endpoints' API keys with the one
check ``answer`` and ``grade`` use (:func:`propeval.settings.judge.require_keys`), so an unset key
is the same error, with the same exit code (2), from every command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propeval.settings import GateSettings
    from propeval.settings.judge import Endpoint, JudgeSettings

# What a gate adds to the key check's message: without --online the gate needs no key.
OFFLINE_HINT = "or run without --online to check the ledger"


@dataclass(frozen=True)
class GateModels:
    """The gate's endpoints, and the reference and judge model names and settings a record is bound to."""

    judge_settings: JudgeSettings
    answer: Endpoint
    judge: Endpoint
    panel: tuple[Endpoint, ...]

    @property
    def binding_settings(self) -> dict[str, Any]:
        """The model settings an answerability record is bound to."""
        js = self.judge_settings
        return {
            "temperature": js.temperature,
            "max_tokens": js.max_tokens,
            "judge_temperature": js.judge_temperature,
            "judge_max_tokens": js.judge_max_tokens,
        }

    def judge_binding(self) -> tuple[str, dict[str, Any]]:
        """The judge model (a panel's ``panel(m1, m2, ...)``) and its settings, for the judge gate's binding."""
        from propeval.judge.grade import panel_label

        js = self.judge_settings
        settings: dict[str, Any] = {"judge_temperature": js.judge_temperature, "judge_max_tokens": js.judge_max_tokens}
        if len(self.panel) > 1:
            settings["panel"] = [{"endpoint": ep.name, "model": ep.model} for ep in self.panel]
        return panel_label(self.panel), settings


def gate_models(js: JudgeSettings, gs: GateSettings) -> GateModels:
    """The gates' endpoints under ``[tool.propeval.judge]`` ``js`` and ``[tool.propeval.gates]`` ``gs``."""
    answer, judge = gs.endpoint_names(js)
    judge_ep = js.endpoint(judge)
    panel = js.judges(gs.judge_panel) if gs.judge_panel else (judge_ep,)
    return GateModels(js, js.endpoint(answer), judge_ep, panel)
