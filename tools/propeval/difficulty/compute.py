"""The whole computation: a score table in, the difficulty ledger (a plain dict) out."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from propeval.difficulty.bands import band_of, cut_values
from propeval.difficulty.bootstrap import method, stability
from propeval.difficulty.classical import classical
from propeval.difficulty.flags import item_flags
from propeval.difficulty.inputs import ScoreTable
from propeval.difficulty.irt import fit_irt, irt_model
from propeval.difficulty.ledger import FORMAT
from propeval.difficulty.matrices import build_matrices
from propeval.settings import DifficultySettings


def _r(x: Any, digits: int = 4) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, digits)


def compute(
    table: ScoreTable,
    settings: DifficultySettings,
    item_hashes: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    tick: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The difficulty ledger (a plain dict, without its self-hash) for a score table.

    ``progress`` receives a line at each stage (the IRT fit, the bootstrap done) and ``tick`` each
    bootstrap draw (done, total); neither prints.
    """
    import numpy as np

    say = progress or (lambda _line: None)
    m = build_matrices(table, settings)
    n_items, n_models = len(m.items), len(m.models)
    mark = 1.0 if table.scale == "binary" else settings.pass_score / 5.0
    cls = classical(m, mark)
    weights = np.ones((n_items, n_models))
    model = irt_model(settings, table.scale)
    say(f"fitting the {model} IRT model to {n_items} item(s) x {n_models} model(s)")
    started = time.monotonic()
    fit = fit_irt(m, weights, settings, model)
    say(f"IRT fit done in {time.monotonic() - started:.1f} s")
    basis = fit.b if settings.basis == "irt" else cls["mean"]
    enough = cls["n"] >= settings.min_models
    basis = np.where(enough, basis, np.nan)
    cuts = cut_values(basis, settings)
    bands = band_of(basis, settings, cuts)
    drawn, agree = stability(m, settings, fit, model, basis, cuts, enough, say, started, tick)

    items: dict[str, Any] = {}
    for j, item in enumerate(m.items):
        share = float(agree[j] / drawn[j]) if drawn[j] else None
        disc = cls["discrimination"][j]
        items[item] = {
            "item_hash": (item_hashes or {}).get(item),
            "n_models": int(cls["n"][j]),
            "mean": _r(cls["mean"][j]),
            "share_pass": _r(cls["share_pass"][j]),
            "discrimination": _r(disc),
            "irt_b": _r(fit.b[j]),
            "irt_a": _r(fit.a[j]),
            "band": bands[j],
            "stability": _r(share),
            "flags": item_flags(m.norm[j][m.mask[j]], mark, enough[j], disc, share, settings.unstable_share),
        }
    settings_dict = settings.to_dict()
    settings_dict["cut_values"] = [_r(c) for c in cuts]
    settings_dict["scale"] = table.scale
    return {
        "format": FORMAT,
        "settings": settings_dict,
        "sources": table.sources,
        "models": {name: {"irt_theta": _r(fit.theta[i])} for i, name in enumerate(m.models)},
        "irt": {
            "model": model,
            "converged": fit.converged,
            "thresholds": None if fit.thresholds is None else [_r(t) for t in fit.thresholds],
        },
        "stability": method(settings),
        "items": items,
    }
