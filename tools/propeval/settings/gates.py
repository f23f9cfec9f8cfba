"""``[tool.propeval.gates]`` and ``[tool.propeval.signers]``: which gates fail a run, their
thresholds, the ledger folder, the endpoints the gates use, and the maintainers' keys.

The signers' keys are only checked to be strings here; :func:`propeval.signing.load_signers`
parses them (it imports cryptography, which reading settings must not).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from propeval.settings.judge import JudgeSettings
from propeval.settings.table import Integer, Number, Table, Text, TextList, Where, key

GATE_MODES = ("required", "advisory")
GATES = ("answerability", "judge")
THRESHOLDS = {
    "judge_min_accuracy": 0.7,
    "judge_min_kappa": 0.6,
    "judge_min_alpha": 0.6,
    "judge_min_f1": 0.7,
}
_CORRELATION = Number(lo=-1, hi=1)


@dataclass(frozen=True)
class GateSettings(Table):
    NAME = "gates"
    DOC = "`propeval gate` and `ci`: which gates fail a run, their thresholds, and the ledger folder."

    answerability: str = key(
        Text(choices=GATE_MODES), "required", "required: its problems fail the run; advisory: warnings, exit 0"
    )
    judge: str = key(Text(choices=GATE_MODES), "required", "the judge gate: required or advisory")
    ledger_dir: str = key(
        Text(folder=True),
        "ledger",
        "the one ledger folder: answerability/<item>.json, judge/<rubric>.json, approvals/<id>.json, dedup.json, "
        "difficulty.json",
    )
    rubric: str = key(Text(), "facts-v1", "the rubric that grades reference answers")
    min_fact_score: int = key(Integer(lo=0, hi=5), 4, "an item passes with a fact score of at least this")
    answer_endpoint: str = key(Text(), "", 'the reference model; "": [tool.propeval.judge] answer_endpoint')
    judge_endpoint: str = key(Text(), "", '"": [tool.propeval.judge] judge_endpoint')
    judge_panel: tuple[str, ...] = key(
        TextList(), (), "endpoints that the judge gate grades with as one panel ([]: judge_endpoint alone)"
    )
    judge_min_accuracy: float = key(_CORRELATION, 0.7, "accuracy per fact state (per label) against the gold set")
    judge_min_kappa: float = key(_CORRELATION, 0.6, "every Cohen's kappa (quadratic-weighted for ordinal scores)")
    judge_min_alpha: float = key(_CORRELATION, 0.6, "every Krippendorff's alpha")
    judge_min_f1: float = key(_CORRELATION, 0.7, "positive-class F1 of binary labels (any propaganda)")
    # [tool.propeval.signers], checked by load_signers (it imports cryptography): name -> OpenSSH line
    signers: dict[str, str] = field(default_factory=dict)

    @property
    def modes(self) -> dict[str, str]:
        return {gate: getattr(self, gate) for gate in GATES}

    @property
    def thresholds(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in THRESHOLDS}

    def mode(self, gate: str) -> str:
        return self.modes.get(gate, "required")

    def endpoint_names(self, judge: JudgeSettings) -> tuple[str, str]:
        """The names of the reference (answer) and judge endpoints the gates use: this table's
        ``answer_endpoint`` and ``judge_endpoint`` when set, else ``[tool.propeval.judge]``'s."""
        return self.answer_endpoint or judge.answer_endpoint, self.judge_endpoint or judge.judge_endpoint


def read_signers(raw: Any, where: Where) -> dict[str, str]:
    """``[tool.propeval.signers]``: name -> "ssh-ed25519 AAAA..." (parsed by signing.load_signers)."""
    if not isinstance(raw, dict):
        raise where.error("must be a table")
    for name, value in raw.items():
        if not isinstance(value, str):
            raise where.at(str(name)).error('must be a string "ssh-ed25519 AAAA..."')
    return dict(raw)
