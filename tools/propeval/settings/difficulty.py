"""``[tool.propeval.difficulty]``: how ``propeval difficulty`` bands items from graded runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from propeval.settings.judge import RUNS_DIR_MOVED
from propeval.settings.table import Integer, Number, Pair, Table, Text, derived, key

_PRIOR = Number(lo=1e-3, hi=100)


@dataclass(frozen=True)
class DifficultySettings(Table):
    NAME = "difficulty"
    DOC = (
        "`propeval difficulty`: bands from graded runs (<runs_dir>/*/grades-<rubric>.jsonl; runs_dir is "
        "[tool.propeval.judge] runs_dir)."
    )
    MOVED: ClassVar[dict[str, str]] = {"runs_dir": RUNS_DIR_MOVED}

    runs_dir: str = derived("runs", "[tool.propeval.judge] runs_dir")
    rubric: str = key(Text(nonempty=True), "facts-v1", "the rubric whose grades are read")
    pass_score: float = key(
        Number(lo=0, hi=5), 4.0, "a fact score at or above this passes (share_pass, saturated, 2PL)"
    )
    min_models: int = key(Integer(lo=1), 3, "an item scored by fewer models gets no band (too-few-models)")
    basis: str = key(Text(choices=("mean", "irt")), "mean", "what bands rank on: mean normalised score, or IRT b")
    irt_model: str = key(
        Text(choices=("auto", "grm", "2pl")),
        "auto",
        "auto: graded response model for 0-5 scores, 2PL for binary; 2pl binarises 0-5 at pass_score",
    )
    cuts: str = key(
        Text(choices=("score", "quantile")), "score", "cut points: score (mean_cuts or irt_cuts) or quantile_cuts"
    )
    mean_cuts: tuple[float, float] = key(Pair(), (0.3, 0.7), "basis mean: below low is hard, at or above high easy")
    irt_cuts: tuple[float, float] = key(Pair(), (-0.5, 0.5), "basis irt: below low is easy, at or above high hard")
    quantile_cuts: tuple[float, float] = key(
        Pair(lo=0, hi=1), (1 / 3, 2 / 3), "cuts quantile: shares of items easier than each cut"
    )
    bootstrap: int = key(Integer(lo=0), 200, "bootstrap draws over models (0: stability is off)")
    seed: int = key(Integer(lo=0), 0, "the bootstrap's seed")
    unstable_share: float = key(
        Number(lo=0, hi=1), 0.2, "an item is unstable when its band changes in more than this share of draws"
    )
    prior_sd_ability: float = key(_PRIOR, 1.0, "IRT normal prior sd of model abilities")
    prior_sd_difficulty: float = key(_PRIOR, 2.0, "IRT normal prior sd of item locations")
    prior_sd_log_discrimination: float = key(_PRIOR, 0.5, "IRT normal prior sd of log discriminations")

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
