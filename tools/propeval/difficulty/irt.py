"""IRT fits: the 2PL on pass/fail outcomes and the graded rating-scale model on 0-5 scores.

Both are joint maximum a posteriori estimates (normal priors on abilities, locations and log
discriminations, because a panel of 20 models is small), minimised by :func:`_newton` over
:class:`~propeval.difficulty.graded.GradedModel`. The closed-form objectives
(:func:`_neg_log_posterior`, :func:`_grm_neg_log_posterior`) are the reference the tests check
the Newton machinery against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from propeval.difficulty.graded import GAP_PRIOR_SD, MAX_NEWTON, N_CATEGORIES, GradedModel, thresholds
from propeval.difficulty.matrices import Matrices
from propeval.settings import DifficultySettings


@dataclass
class IRTFit:
    """A fitted IRT model: ``P(success) = sigmoid(a_j * (theta_i - b_j))`` (2PL), or the graded one."""

    b: Any
    a: Any
    theta: Any
    converged: bool
    params: Any = None  # the optimiser's vector, to warm-start a bootstrap refit
    thresholds: Any = None  # graded model only: tau_1..tau_5


def _neg_log_posterior(params: Any, y: Any, w: Any, n_items: int, n_models: int, sd: tuple[float, float, float]) -> Any:
    """Negative log posterior of the 2PL and its gradient.

    ``y`` (items x models) holds outcomes in [0, 1] and ``w`` the weight of each cell (0 where
    missing; a bootstrap repeats a model by weight). Priors: theta ~ N(0, sd[0]),
    b ~ N(0, sd[1]), log a ~ N(0, sd[2]).
    """
    import numpy as np

    theta = params[:n_models]
    b = params[n_models : n_models + n_items]
    la = params[n_models + n_items :]
    a = np.exp(la)
    z = a[:, None] * (theta[None, :] - b[:, None])
    # -log lik of a Bernoulli with fractional target: softplus(z) - y*z
    nll = float(np.sum(w * (np.logaddexp(0.0, z) - y * z)))
    nll += float(theta @ theta) / (2 * sd[0] ** 2) + float(b @ b) / (2 * sd[1] ** 2) + float(la @ la) / (2 * sd[2] ** 2)
    r = w * (1.0 / (1.0 + np.exp(-z)) - y)  # d nll / d z
    g_theta = (r * a[:, None]).sum(axis=0) + theta / sd[0] ** 2
    g_b = -(r.sum(axis=1)) * a + b / sd[1] ** 2
    g_la = (r * (theta[None, :] - b[:, None])).sum(axis=1) * a + la / sd[2] ** 2
    return nll, np.concatenate([g_theta, g_b, g_la])


def fit_2pl(
    y: Any, w: Any, settings: DifficultySettings | None = None, start: Any = None, gtol: float = 1e-6
) -> IRTFit:
    """Joint MAP estimate of a 2PL model (Newton steps over all items at once, see :func:`_newton`)."""
    import numpy as np

    settings = settings or DifficultySettings()
    n_items, n_models = y.shape
    y = np.where(w > 0, np.nan_to_num(y), 0.0)
    if start is None:
        start = np.concatenate([*_start(y, w), np.zeros(n_items)])
    # The 2PL is the graded model with two categories and one threshold fixed at 0.
    p, converged = _newton(np.stack([1.0 - y, y], axis=2), w, 1, False, _prior_sds(settings), start, gtol)
    return IRTFit(
        b=p[n_models : n_models + n_items],
        a=np.exp(p[n_models + n_items :]),
        theta=p[:n_models],
        converged=converged,
        params=p,
    )


def _start(y: Any, w: Any) -> tuple[Any, Any]:
    """Abilities and difficulties from the logits of observed success rates: close, and cheap."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        p_item = np.clip((y * w).sum(axis=1) / w.sum(axis=1), 0.05, 0.95)
        p_model = np.clip((y * w).sum(axis=0) / w.sum(axis=0), 0.05, 0.95)
    return np.nan_to_num(np.log(p_model / (1 - p_model))), np.nan_to_num(-np.log(p_item / (1 - p_item)))


def _grm_neg_log_posterior(
    params: Any, cats: Any, w: Any, n_items: int, n_models: int, sd: tuple[float, float, float]
) -> Any:
    """Negative log posterior of the graded rating-scale model, and its gradient.

    ``P(score >= k) = sigmoid(a_j * (theta_i - b_j - tau_k))`` for k = 1..5, with thresholds
    ``tau`` shared by all items (Muraki's rating-scale version of Samejima's graded response
    model: five free thresholds per item are too many for a panel of 20 models). ``cats``
    (items x models x 6) holds the share of a model's runs in each score; ``w`` the cell weights.
    """
    import numpy as np
    from scipy.special import expit

    theta = params[:n_models]
    b = params[n_models : n_models + n_items]
    la = params[n_models + n_items : n_models + 2 * n_items]
    delta = params[n_models + 2 * n_items :]
    a = np.exp(la)
    tau, dtau = thresholds(delta)
    base = theta[None, :] - b[:, None]  # items x models
    z = a[:, None, None] * (base[:, :, None] - tau[None, None, :])  # items x models x 5
    star = expit(z)
    n = z.shape[0], z.shape[1], 1
    cum = np.concatenate([np.ones(n), star, np.zeros(n)], axis=2)  # P(score >= k), k = 0..6
    prob = np.maximum(cum[:, :, :-1] - cum[:, :, 1:], 1e-12)  # P(score = k), k = 0..5
    wc = cats * w[:, :, None]
    nll = -float(np.sum(wc * np.log(prob)))
    nll += float(theta @ theta) / (2 * sd[0] ** 2) + float(b @ b) / (2 * sd[1] ** 2) + float(la @ la) / (2 * sd[2] ** 2)
    nll += float(delta @ delta) / (2 * GAP_PRIOR_SD**2)
    ratio = wc / prob  # items x models x 6
    dz = (ratio[:, :, :-1] - ratio[:, :, 1:]) * star * (1 - star)  # d nll / d z_k, k = 1..5
    dz_a = dz * a[:, None, None]
    g_theta = dz_a.sum(axis=(0, 2)) + theta / sd[0] ** 2
    g_b = -dz_a.sum(axis=(1, 2)) + b / sd[1] ** 2
    g_la = (dz * z).sum(axis=(1, 2)) + la / sd[2] ** 2
    g_tau = -dz_a.sum(axis=(0, 1))
    g_delta = g_tau @ dtau + delta / GAP_PRIOR_SD**2
    return nll, np.concatenate([g_theta, g_b, g_la, g_delta])


def fit_grm(
    cats: Any, w: Any, settings: DifficultySettings | None = None, start: Any = None, gtol: float = 1e-6
) -> IRTFit:
    """Joint MAP estimate of the graded rating-scale model (0-5 scores), see :func:`_newton`."""
    import numpy as np

    settings = settings or DifficultySettings()
    n_items, n_models, _ = cats.shape
    cats = np.where(w[:, :, None] > 0, np.nan_to_num(cats), 0.0)
    if start is None:
        mean = (cats * np.arange(N_CATEGORIES)).sum(axis=2) / (N_CATEGORIES - 1)
        t0, b0 = _start(mean, w)
        start = np.concatenate([t0, b0, np.zeros(n_items), np.zeros(N_CATEGORIES - 2)])
    p, converged = _newton(cats, w, N_CATEGORIES - 1, True, _prior_sds(settings), start, gtol)
    return IRTFit(
        b=p[n_models : n_models + n_items],
        a=np.exp(p[n_models + n_items : n_models + 2 * n_items]),
        theta=p[:n_models],
        converged=converged,
        params=p,
        thresholds=thresholds(p[n_models + 2 * n_items :])[0],
    )


def _prior_sds(settings: DifficultySettings) -> tuple[float, float, float]:
    return settings.prior_sd_ability, settings.prior_sd_difficulty, settings.prior_sd_log_discrimination


# Newton stops when no gradient component exceeds gtol (nats per unit of parameter): 1e-6 for the
# reported fit; 1e-3 for bootstrap refits, which only need bands (the old L-BFGS fits stopped there)...
# ...or when the predicted decrease is at the rounding level of the objective (a sum of many terms).
_RTOL = 1e-13


def _newton(
    cats: Any, w: Any, n_bounds: int, free_tau: bool, sd: tuple[float, float, float], start: Any, gtol: float
) -> tuple[Any, bool]:
    """Minimise the graded model's negative log posterior by damped Newton steps; (params, converged).

    The objective is :func:`_grm_neg_log_posterior` (``free_tau``, 5 thresholds) or
    :func:`_neg_log_posterior` (the 2PL: 2 categories, threshold 0), with the same parameter layout
    ``[theta, b, log a, delta]``. Its Hessian is an arrow: one 2 x 2 block per item (b, log a), a
    small dense block for the abilities and thresholds, and the item x global coupling. Each step
    solves the whole Newton system through the Schur complement of the item blocks, so a step costs
    one pass over the score table whatever the number of items; a generic quasi-Newton method spends
    its time on bookkeeping over tens of thousands of parameters and needs many more steps.
    Indefinite blocks are made positive definite (modified Newton) and a backtracking line search
    keeps every step a descent step. It stops when no gradient component exceeds ``gtol``.
    """
    import numpy as np

    model = GradedModel(cats, w, n_bounds, free_tau, sd)
    x = np.array(start, dtype=float)
    f, g, step = model.newton(x)
    for _ in range(MAX_NEWTON):
        if float(np.max(np.abs(g), initial=0.0)) <= gtol:
            return x, True
        slope = float(g @ step)
        if -slope <= _RTOL * max(1.0, abs(f)):
            return x, True
        alpha = 1.0
        trial = x + step
        f_trial, g_trial, step_trial = model.newton(trial)
        while not f_trial <= f + 1e-4 * alpha * slope:
            alpha /= 2
            if alpha < 1e-12:
                return x, False  # no descent along a descent direction: rounding has the last word
            trial = x + alpha * step
            f_trial = model.value(trial)
        if alpha < 1.0:
            f_trial, g_trial, step_trial = model.newton(trial)
        x, f, g, step = trial, f_trial, g_trial, step_trial
    return x, False


def irt_model(settings: DifficultySettings, scale: str) -> str:
    """The IRT model for a scale: the graded model for 0-5 scores unless 2PL is asked for."""
    if scale == "binary":
        return "2pl"
    return "2pl" if settings.irt_model == "2pl" else "grm"


def fit_irt(
    m: Matrices, w: Any, settings: DifficultySettings, model: str, start: Any = None, gtol: float = 1e-6
) -> IRTFit:
    """Fit ``model`` ("2pl" on pass/fail outcomes, "grm" on 0-5 scores) with cell weights ``w``."""
    import numpy as np

    weights = np.where(m.mask, w, 0.0)
    if model == "grm":
        return fit_grm(m.cats, weights, settings, start, gtol)
    return fit_2pl(np.where(m.mask, m.passed, 0.0), weights, settings, start, gtol)


def graded_model(m: Matrices, settings: DifficultySettings, model: str) -> GradedModel:
    """The score table as the IRT fit sees it, every cell weighted 1."""
    import numpy as np

    weights = m.mask.astype(float)
    if model == "grm":
        cats = np.where(m.mask[:, :, None], np.nan_to_num(m.cats), 0.0)
        return GradedModel(cats, weights, N_CATEGORIES - 1, True, _prior_sds(settings))
    y = np.where(m.mask, np.nan_to_num(m.passed), 0.0)
    return GradedModel(np.stack([1.0 - y, y], axis=2), weights, 1, False, _prior_sds(settings))
