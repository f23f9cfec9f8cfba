"""How often each item's band holds when the panel of models is resampled (a bootstrap over models).

With ``basis = "irt"`` each draw refits the items only: the models' abilities and the thresholds
stay at the full fit (:func:`_basis` says why). The stability figure then leaves out the
uncertainty of the abilities themselves, so it likely overstates how stable a band is, and the
number of ``unstable`` items is likely too low; :data:`ITEM_ONLY` says so, and every output that prints
the figure (the ledger, the flag, `difficulty`'s notes and `--report`) carries it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from propeval.difficulty.bands import band_codes, cut_values
from propeval.difficulty.graded import GradedModel
from propeval.difficulty.irt import IRTFit, graded_model
from propeval.difficulty.matrices import Matrices
from propeval.settings import DifficultySettings

ITEM_ONLY = (
    "item-only: each bootstrap draw over models refits every item's location and discrimination with the "
    "models' abilities and the thresholds held at the full fit, so it leaves out the uncertainty in the "
    "abilities, so stability is likely overstated and the unstable count likely too low"
)


def method(settings: DifficultySettings) -> dict[str, Any]:
    """What the stability figure is, for the ledger: draws, what each refits, and the caveat."""
    if not settings.bootstrap:
        return {"draws": 0, "refit": None, "caveat": "no bootstrap: stability not computed"}
    if settings.basis == "irt":
        return {"draws": settings.bootstrap, "refit": "items", "caveat": ITEM_ONLY}
    return {
        "draws": settings.bootstrap,
        "refit": "mean",
        "caveat": "each draw recomputes every item's mean score over the drawn models (nothing else is fitted)",
    }


# Newton stops when no gradient component exceeds gtol (nats per unit of parameter): 1e-6 for the
# reported fit; 1e-3 for bootstrap refits, which only need bands (the old L-BFGS fits stopped there).
_BOOTSTRAP_GTOL = 1e-3


def stability(
    m: Matrices,
    settings: DifficultySettings,
    fit: IRTFit,
    model: str,
    basis: Any,
    cuts: tuple[float, float],
    enough: Any,
    say: Callable[[str], None],
    started: float,
    tick: Callable[[int, int], None] | None = None,
) -> tuple[Any, Any]:
    """Per item: the draws that band it, and of those the draws whose band agrees with the full fit's.

    ``basis`` and ``cuts`` are the full fit's band basis (NaN where unbanded) and cut points.

    Each draw resamples the models with replacement (seeded by ``settings.seed``) and repeats a
    model by its multiplicity. ``tick(done, total)`` is called after each draw (a progress bar);
    ``say`` gets one line when the draws are done, timed from ``started``.
    """
    import numpy as np

    n_items, n_models = len(m.items), len(m.models)
    agree = np.zeros(n_items)
    drawn = np.zeros(n_items)
    rng = np.random.default_rng(settings.seed)
    full_codes = band_codes(basis, settings, cuts)
    graded = graded_model(m, settings, model) if settings.basis == "irt" and settings.bootstrap else None
    for draw in range(settings.bootstrap):
        counts = np.bincount(rng.integers(0, n_models, n_models), minlength=n_models).astype(float)
        # A model drawn k times weighs k; one not drawn weighs 0. Refits start from the full fit.
        values = _basis(m, counts, settings, fit, graded)
        n_seen = (m.mask * counts[None, :] > 0).sum(axis=1)
        values = np.where(enough & (n_seen > 0), values, np.nan)
        codes = band_codes(values, settings, cut_values(values, settings))
        both = (full_codes >= 0) & (codes >= 0)
        drawn += both
        agree += both & (codes == full_codes)
        if tick is not None:
            tick(draw + 1, settings.bootstrap)
        if draw + 1 == settings.bootstrap:
            refit = "item-only refits" if graded is not None else "mean scores"
            say(
                f"bootstrap over models: {draw + 1}/{settings.bootstrap} draws ({refit}), "
                f"{time.monotonic() - started:.0f} s"
            )
    return drawn, agree


def _basis(m: Matrices, counts: Any, settings: DifficultySettings, full: IRTFit, graded: GradedModel | None) -> Any:
    """The band basis when model ``i`` is drawn ``counts[i]`` times.

    For IRT, each item's b and a are refitted with the models' abilities and the thresholds held
    at the full fit (fixed-ability calibration). That keeps every draw on the full fit's scale, so
    the fixed cut points mean the same in every draw, and it makes the items independent: a draw
    costs a few batched 2 x 2 Newton steps instead of a joint refit.
    """
    import numpy as np

    if graded is None:
        weights = np.where(m.mask, counts[None, :], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.where(m.mask, m.norm, 0.0) * weights).sum(axis=1) / weights.sum(axis=1)
    tau = full.thresholds if full.thresholds is not None else np.zeros(1)
    b, _ = graded.reweighted(counts).fit_items(full.theta[counts > 0], tau, full.b, np.log(full.a), _BOOTSTRAP_GTOL)
    return b
