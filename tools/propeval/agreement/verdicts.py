"""Agreement between a judge's verdicts and human labels, per rubric kind: the judge gate's figures.

The statistics live here, not in the kinds (:mod:`propeval.judge.kinds`): a kind declares which
fields a human and the judge both label (``agreement_fields``) and the labels' scales (the rubric's
``labels``); this module measures them. So the judge package never imports the agreement package,
and the arrow points one way (agreement reads the judge's runs and rubrics).

A kind with no entry in :data:`MEASURES` gets :func:`nominal`: Cohen's kappa and nominal
Krippendorff's alpha over each of its agreement fields. Adding a kind therefore needs nothing here;
add an entry only for figures that fit the kind better (ordinal scales, accuracy per class, F1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from propeval.agreement.stats import (
    Stat,
    accuracy_per_class,
    cohen_kappa,
    f1_positive,
    krippendorff_alpha,
)

if TYPE_CHECKING:
    from propeval.judge.kinds.base import Kind

Labels = dict[str, list[Any]]
Verdicts = Sequence[dict[str, Any]]
Measure = Callable[["Kind", Labels, Verdicts, Verdicts], list[Stat]]

# propaganda_inclusion values that count as "echoed" (2 echoed, 3 endorsed) for the audit's F1.
ECHOED = (2, 3)


def named(field_name: str, s: Stat) -> Stat:
    """``s`` named after the field it measures (``fact_score kappa``)."""
    return Stat(f"{field_name} {s.name}", s.value, s.n, s.reason)


def nominal(kind: Kind, labels: Labels, human: Verdicts, judge: Verdicts) -> list[Stat]:
    """Cohen's kappa and nominal alpha over each of the kind's agreement fields."""
    out: list[Stat] = []
    for field in kind.agreement_fields:
        h = [x.get(field) for x in human]
        j = [x.get(field) for x in judge]
        scale: list[Any] | None = [*labels[field]] if field in labels else None
        out.append(named(field, cohen_kappa(h, j, labels=scale)))
        out.append(named(field, krippendorff_alpha([h, j], level="nominal", labels=scale)))
    return out


def facts(kind: Kind, labels: Labels, human: Verdicts, judge: Verdicts) -> list[Stat]:
    """Accuracy per fact state and kappa over fact states; quadratic kappa and ordinal alpha
    over the fact and propaganda scores; F1 for "any propaganda"."""
    out: list[Stat] = []
    states = list(labels.get("fact", ["stated", "missed", "opposed"]))
    h_states: list[Any] = []
    j_states: list[Any] = []
    for h, j in zip(human, judge, strict=True):
        hs, js = h.get("fact_states") or {}, j.get("fact_states") or {}
        for fid in sorted(hs):
            h_states.append(hs[fid])
            j_states.append(js.get(fid))
    for s in accuracy_per_class(h_states, j_states, labels=states).values():
        out.append(named("fact_state", s))
    out.append(named("fact_state", cohen_kappa(h_states, j_states, labels=states)))
    for field, fscale in (
        ("fact_score", list(range(6))),
        ("propaganda", list(labels.get("propaganda", [0, 1, 2]))),
    ):
        hv = [x.get(field) for x in human]
        jv = [x.get(field) for x in judge]
        out.append(named(field, cohen_kappa(hv, jv, weights="quadratic", labels=fscale)))
        out.append(named(field, krippendorff_alpha([hv, jv], level="ordinal", labels=fscale)))
    h_any = [None if x.get("propaganda") is None else x["propaganda"] > 0 for x in human]
    j_any = [None if x.get("propaganda") is None else x["propaganda"] > 0 for x in judge]
    out.append(named("any_propaganda", f1_positive(h_any, j_any, positive=True)))
    return out


def audit(kind: Kind, labels: Labels, human: Verdicts, judge: Verdicts) -> list[Stat]:
    """Kappa and nominal alpha per codebook metric, accuracy per factual-accuracy label, and
    F1 for "propaganda echoed or endorsed"."""
    out: list[Stat] = []
    for field in kind.agreement_fields:
        h = [x.get(field) for x in human]
        j = [x.get(field) for x in judge]
        scale: list[Any] | None = [*labels[field]] if field in labels else None
        if field == "accuracy":
            for s in accuracy_per_class(h, j, labels=scale or sorted({*h, *j} - {None}, key=str)).values():
                out.append(named(field, s))
        out.append(named(field, cohen_kappa(h, j, labels=scale)))
        out.append(named(field, krippendorff_alpha([h, j], level="nominal", labels=scale)))
    h_echo = [None if x.get("propaganda_inclusion") is None else x["propaganda_inclusion"] in ECHOED for x in human]
    j_echo = [None if x.get("propaganda_inclusion") is None else x["propaganda_inclusion"] in ECHOED for x in judge]
    out.append(named("propaganda_echoed", f1_positive(h_echo, j_echo, positive=True)))
    return out


# Kind name -> its agreement figures; a kind not here gets :func:`nominal`.
MEASURES: dict[str, Measure] = {"facts": facts, "audit": audit}


def measure(kind: Kind, labels: Labels, human: Verdicts, judge: Verdicts) -> list[Stat]:
    """Every agreement statistic of the judge's labels against the humans', case by case."""
    return MEASURES.get(kind.name, nominal)(kind, labels, human, judge)
