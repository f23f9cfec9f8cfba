"""The per-item flags (saturated, unanswered-by-all, ...) and how many of their notices text output shows."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from propeval.result import Problem, Severity

FLAGS = ("saturated", "unanswered-by-all", "non-discriminating", "unstable", "too-few-models")

# The rule ids of the per-item flags, as `propeval difficulty` prints them.
FLAG_MESSAGES = {
    "saturated": "every model scores at or above the pass mark; the item no longer separates models "
    "(make it harder, or retire it)",
    "unanswered-by-all": "every model scores 0; check that the facts are answerable from the prompt "
    "(run the answerability gate)",
    "non-discriminating": "weaker models do as well as stronger ones (discrimination <= 0); "
    "check the facts and the grading of this item",
    "unstable": "the band changes in too many bootstrap draws over models; grade more models before relying on it",
    "too-few-models": "too few models have a score for this item to give it a band; grade more runs",
}


def item_flags(
    row: Any, mark: float, enough: bool, disc: float, stability: float | None, unstable_share: float
) -> list[str]:
    """The flags of one item, in the order they are checked.

    ``row`` holds the item's normalised scores from the models that saw it, ``mark`` the
    normalised pass mark, ``disc`` its discrimination (NaN when undefined) and ``stability`` the
    share of bootstrap draws that keep its band (None without draws).
    """
    import numpy as np

    flags = []
    if not enough:
        flags.append("too-few-models")
    if row.size and bool(np.all(row >= mark - 1e-9)):
        flags.append("saturated")
    if row.size and bool(np.all(row == 0)):
        flags.append("unanswered-by-all")
    constant_middle = row.size >= 2 and np.ptp(row) == 0 and "saturated" not in flags and row[0] != 0
    if (not math.isnan(disc) and disc <= 0) or constant_middle:
        flags.append("non-discriminating")
    if stability is not None and 1 - stability > unstable_share:
        flags.append("unstable")
    return flags


FIRST_NOTICES = 5  # per flag, in text and GitHub output; --format json lists every one


def shorten(problems: Sequence[Problem], first: int = FIRST_NOTICES) -> tuple[list[Problem], list[str]]:
    """The problems to print in text, and notes for what was left out.

    Every error is kept; of each flag's notices, the first ``first``. A 40,000-item matrix gives
    tens of thousands of notices, which bury the summary; the counts say what they were.
    """
    shown: list[Problem] = []
    counts: dict[str, int] = defaultdict(int)
    for p in problems:
        counts[p.rule] += p.severity is Severity.NOTICE
        if p.severity is not Severity.NOTICE or counts[p.rule] <= first:
            shown.append(p)
    cut = {rule: n for rule, n in counts.items() if n > first}
    if not cut:
        return shown, []
    per_flag = ", ".join(f"{rule} {n:,}" for rule, n in sorted(counts.items()) if n)
    return shown, [
        f"{sum(counts.values()):,} flag notice(s): {per_flag}; "
        f"the first {first} of each are shown; --format json lists every one"
    ]
