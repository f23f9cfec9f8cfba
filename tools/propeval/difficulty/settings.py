"""``[tool.propeval.difficulty]``: the settings of ``propeval difficulty``, read and checked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError


@dataclass(frozen=True)
class Settings:
    """``[tool.propeval.difficulty]``; every key is documented in pyproject.toml."""

    runs_dir: str = "runs"
    rubric: str = "facts-v1"
    pass_score: float = 4.0
    min_models: int = 3
    basis: str = "mean"  # "mean" (classical) or "irt"
    irt_model: str = "auto"  # "auto" (grm for 0-5, 2pl for binary), "grm" or "2pl" (0-5 binarised at pass_score)
    cuts: str = "score"  # "score" or "quantile"
    mean_cuts: tuple[float, float] = (0.3, 0.7)  # mean < lo: hard; mean >= hi: easy
    irt_cuts: tuple[float, float] = (-0.5, 0.5)  # irt_b < lo: easy; irt_b >= hi: hard
    quantile_cuts: tuple[float, float] = (1 / 3, 2 / 3)  # share of items easier than the cut
    bootstrap: int = 200
    seed: int = 0
    unstable_share: float = 0.2
    prior_sd_ability: float = 1.0
    prior_sd_difficulty: float = 2.0
    prior_sd_log_discrimination: float = 0.5

    def to_dict(self) -> dict[str, Any]:
        return {
            "pass_score": self.pass_score,
            "min_models": self.min_models,
            "basis": self.basis,
            "cuts": self.cuts,
            "cut_points": list(self.cut_points),
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "unstable_share": self.unstable_share,
            "irt": {
                "model": self.irt_model,
                "estimation": "joint MAP",
                "optimiser": "Newton steps through the Schur complement of the item blocks, to a gradient of 1e-6",
                "bootstrap": "each item's b and a refitted with abilities and thresholds held at the full fit",
                "prior_sd_ability": self.prior_sd_ability,
                "prior_sd_difficulty": self.prior_sd_difficulty,
                "prior_sd_log_discrimination": self.prior_sd_log_discrimination,
            },
        }

    @property
    def cut_points(self) -> tuple[float, float]:
        if self.cuts == "quantile":
            return self.quantile_cuts
        return self.irt_cuts if self.basis == "irt" else self.mean_cuts


def _number(table: dict[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise ConfigError(f"[tool.propeval.difficulty] {key} must be a number in [{lo}, {hi}]", key=key)
    return float(value)


def _pair(table: dict[str, Any], key: str, default: tuple[float, float]) -> tuple[float, float]:
    value = table.get(key, list(default))
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        or not value[0] < value[1]
    ):
        raise ConfigError(f"[tool.propeval.difficulty] {key} must be two increasing numbers [low, high]", key=key)
    return float(value[0]), float(value[1])


def _choice(table: dict[str, Any], key: str, default: str, allowed: Sequence[str]) -> str:
    value = table.get(key, default)
    if value not in allowed:
        raise ConfigError(f"[tool.propeval.difficulty] {key} must be one of {', '.join(allowed)}", key=key)
    return str(value)


def _integer(table: dict[str, Any], key: str, default: int, lo: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ConfigError(f"[tool.propeval.difficulty] {key} must be an integer >= {lo}", key=key)
    return value


def _string(table: dict[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"[tool.propeval.difficulty] {key} must be a non-empty string", key=key)
    return value


def load_settings(config: Config) -> Settings:
    """Read and validate ``[tool.propeval.difficulty]``; unknown keys are an error."""
    table = config.section("difficulty")
    known = set(Settings.__dataclass_fields__)
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"[tool.propeval.difficulty] has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
            key=unknown[0],
        )
    quantiles = _pair(table, "quantile_cuts", Settings.quantile_cuts)
    if not 0 < quantiles[0] < quantiles[1] < 1:
        raise ConfigError(
            "[tool.propeval.difficulty] quantile_cuts must lie strictly between 0 and 1", key="quantile_cuts"
        )
    return Settings(
        runs_dir=_string(table, "runs_dir", Settings.runs_dir),
        rubric=_string(table, "rubric", Settings.rubric),
        pass_score=_number(table, "pass_score", Settings.pass_score, 0, 5),
        min_models=_integer(table, "min_models", Settings.min_models, 1),
        basis=_choice(table, "basis", Settings.basis, ("mean", "irt")),
        irt_model=_choice(table, "irt_model", Settings.irt_model, ("auto", "grm", "2pl")),
        cuts=_choice(table, "cuts", Settings.cuts, ("score", "quantile")),
        mean_cuts=_pair(table, "mean_cuts", Settings.mean_cuts),
        irt_cuts=_pair(table, "irt_cuts", Settings.irt_cuts),
        quantile_cuts=quantiles,
        bootstrap=_integer(table, "bootstrap", Settings.bootstrap, 0),
        seed=_integer(table, "seed", Settings.seed, 0),
        unstable_share=_number(table, "unstable_share", Settings.unstable_share, 0, 1),
        prior_sd_ability=_number(table, "prior_sd_ability", Settings.prior_sd_ability, 1e-3, 100),
        prior_sd_difficulty=_number(table, "prior_sd_difficulty", Settings.prior_sd_difficulty, 1e-3, 100),
        prior_sd_log_discrimination=_number(
            table, "prior_sd_log_discrimination", Settings.prior_sd_log_discrimination, 1e-3, 100
        ),
    )
