"""``[tool.propeval.gates]``: which gates are required, their thresholds, and the ledger folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError

MODES = ("required", "advisory")
GATES = ("answerability", "judge")
THRESHOLDS = {
    "judge_min_accuracy": 0.7,
    "judge_min_kappa": 0.6,
    "judge_min_alpha": 0.6,
    "judge_min_f1": 0.7,
}


@dataclass(frozen=True)
class GateSettings:
    modes: dict[str, str] = field(default_factory=lambda: dict.fromkeys(GATES, "required"))
    ledger_dir: str = "ledger"
    min_fact_score: int = 4
    rubric: str = "facts-v1"
    answer_endpoint: str = ""
    judge_endpoint: str = ""
    thresholds: dict[str, float] = field(default_factory=lambda: dict(THRESHOLDS))
    # [tool.propeval.signers]: name -> "ssh-ed25519 AAAA...", the maintainer keys a record must be signed by
    signers: dict[str, str] = field(default_factory=dict)

    def mode(self, gate: str) -> str:
        return self.modes.get(gate, "required")


def load_gate_settings(config: Config) -> GateSettings:
    """Read and check ``[tool.propeval.gates]``; every key has a default."""
    t: dict[str, Any] = config.section("gates")
    known = {*GATES, "ledger_dir", "min_fact_score", "rubric", "answer_endpoint", "judge_endpoint", *THRESHOLDS}
    unknown = sorted(set(t) - known)
    if unknown:
        raise ConfigError(f"[tool.propeval.gates] has unknown keys {unknown}; known: {sorted(known)}", key=unknown[0])
    modes = {}
    for gate in GATES:
        value = t.get(gate, "required")
        if value not in MODES:
            raise ConfigError(f"[tool.propeval.gates] {gate} must be required or advisory, not {value!r}", key=gate)
        modes[gate] = value
    for key in ("ledger_dir", "rubric", "answer_endpoint", "judge_endpoint"):
        if key in t and not isinstance(t[key], str):
            raise ConfigError(f"[tool.propeval.gates] {key} must be a string", key=key)
    score = t.get("min_fact_score", 4)
    if not isinstance(score, int) or isinstance(score, bool) or not 0 <= score <= 5:
        raise ConfigError("[tool.propeval.gates] min_fact_score must be an integer 0-5", key="min_fact_score")
    thresholds = {}
    for key, default in THRESHOLDS.items():
        value = t.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
            raise ConfigError(f"[tool.propeval.gates] {key} must be a number in [-1, 1]", key=key)
        thresholds[key] = float(value)
    return GateSettings(
        signers=load_signers(config),
        modes=modes,
        ledger_dir=t.get("ledger_dir", "ledger"),
        min_fact_score=score,
        rubric=t.get("rubric", "facts-v1"),
        answer_endpoint=t.get("answer_endpoint", ""),
        judge_endpoint=t.get("judge_endpoint", ""),
        thresholds=thresholds,
    )


def load_signers(config: Config) -> dict[str, str]:
    """``[tool.propeval.signers]``: each maintainer's name and Ed25519 public key (OpenSSH line)."""
    from propeval.signing import normal_public

    out = {}
    for name, value in config.section("signers").items():
        if not isinstance(value, str):
            raise ConfigError(f'[tool.propeval.signers] {name} must be a string "ssh-ed25519 AAAA..."', key=name)
        try:
            out[name] = normal_public(value)
        except ValueError as e:
            raise ConfigError(f"[tool.propeval.signers] {name}: {e}", key=name) from None
    return out
