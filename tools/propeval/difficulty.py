"""Item difficulty from graded runs of a panel of models: classical statistics, IRT, bands.

The input is an item x model score table. It comes from graded runs
(``runs/<run_id>/grades-facts-v1.jsonl``) or from a score matrix file (CSV or JSONL). A cell is
missing when the model never saw the item or every grade of it is *unscored*; an *unanswered*
grade is a 0, as the rubric says. Several runs of one model on one item are averaged.

Per item:

* ``mean``: the mean normalised score (fact score / 5, or the 0/1 outcome) over the models;
* ``share_pass``: the share of models whose (averaged) score is at least ``pass_score`` (4 of 5);
* ``discrimination``: the corrected item-total correlation (Pearson, which is the point-biserial
  when the item is binary) between the item's score and each model's mean normalised score on the
  *other* items. The mean rather than the sum, so that a model with missing items is not ranked
  low for having fewer of them; with nothing missing the two give the same correlation. ``None``
  when the item's scores or the totals are constant, or fewer than 3 models saw the item;
* ``irt_b`` / ``irt_a``: item location and discrimination of an IRT model fitted by joint maximum
  a posteriori estimation with L-BFGS (normal priors on abilities, locations and log
  discriminations, because a panel of 20 models is small):

  - binary outcomes: the two-parameter logistic model (2PL);
  - 0-5 scores: a graded response model with thresholds shared by all items (Muraki's rating-scale
    version of Samejima's model), each run of a model one observation; or, with
    ``irt_model = "2pl"``, the 2PL on scores binarised at ``pass_score`` (a run that scores 4 or 5
    is a success; several runs give the share of runs that pass).

Bands (easy / medium / hard) come from ``mean`` or ``irt_b`` (``basis``), with fixed cut points
or quantile cut points. A bootstrap over models (resample the models with replacement, seeded)
says how often each item's band holds.

numpy and scipy are imported inside the functions that need them, never at module level.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.corpus import content_hash, load_corpus
from propeval.errors import DependencyError, UsageError
from propeval.loader import Limits, LoadError, dumps_json, load_jsonl
from propeval.result import Problem, Severity
from propeval.settings import DifficultySettings as Settings

LEDGER = "ledger/difficulty.json"
FORMAT = "propeval-difficulty/1"
# A ledger for tens of thousands of items is larger than the loader's default 1 MiB cap.
LEDGER_LIMITS = Limits(max_bytes=64 * 1_048_576, max_depth=32, max_nodes=5_000_000)
BANDS = ("easy", "medium", "hard")
FLAGS = ("saturated", "unanswered-by-all", "non-discriminating", "unstable", "too-few-models")
SCALES = ("auto", "binary", "0-5")

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


# --------------------------------------------------------------------------- settings


def load_settings(config: Config) -> Settings:
    """``[tool.propeval.difficulty]``, read and checked (``runs_dir`` is ``[tool.propeval.judge]``'s)."""
    return config.settings.difficulty


# --------------------------------------------------------------------------- the score table


@dataclass
class ScoreTable:
    """Observations ``(item, model) -> [score, ...]``: one per run, already 0 for unanswered.

    ``scale`` is ``"0-5"`` (fact scores) or ``"binary"`` (0/1 outcomes).
    """

    scale: str
    obs: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def items(self) -> list[str]:
        return sorted({i for i, _ in self.obs})

    @property
    def models(self) -> list[str]:
        """Models with at least one score (a model whose every grade is unscored adds nothing)."""
        return sorted({m for (_, m), scores in self.obs.items() if scores})

    @property
    def top(self) -> float:
        return 1.0 if self.scale == "binary" else 5.0

    def add(self, item: str, model: str, score: float | None) -> None:
        """One observation; ``None`` (unscored) marks the pair as seen but leaves no score."""
        cell = self.obs.setdefault((item, model), [])
        if score is not None:
            cell.append(float(score))


def _file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def find_runs(config: Config, settings: Settings) -> list[Path]:
    """Every ``runs/*/grades-<rubric>.jsonl`` under the corpus root, sorted."""
    from propeval.judge.runs import find_graded

    return find_graded(config.root / settings.runs_dir, settings.rubric)


def load_runs(config: Config, settings: Settings, grade_files: Sequence[Path]) -> ScoreTable:
    """Read graded runs with the judge engine's one reader (the latest, validated grade per item).

    A bad record is an error Problem and its item adds nothing; a file that is not JSON Lines is
    one Problem and adds nothing. Difficulty needs 0-5 fact scores, so the grades are read as the
    ``facts`` kind's.
    """
    from propeval.judge.kinds.facts import Facts
    from propeval.judge.runs import read_graded

    facts = Facts()
    table = ScoreTable(scale="0-5")
    for path in grade_files:
        try:
            run = read_graded(path, facts, root=config.root)
        except LoadError as e:
            table.problems.append(e.problem)
            continue
        table.problems += run.problems
        models: set[str] = set()
        for row in run.rows:
            if row.grade is None:  # no grade record, or one that failed validation
                continue
            table.add(row.item_id, row.model, facts.fact_value(row))
            models.add(row.model)
        table.sources.append(
            {
                "run_id": run.run,
                "path": _rel(path, config.root),
                "sha256": _file_hash(path),
                "models": sorted(models),
                "lines": run.grade_records,
            }
        )
    return table


def _parse_score(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = raw.strip()
        if raw == "" or raw.upper() in {"NA", "NAN", "NULL"}:
            return None
        try:
            raw = float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        raise ValueError(f"{raw!r} is not a number")
    return float(raw)


def load_matrix(config: Config, path: Path, scale: str = "auto") -> ScoreTable:
    """Read an item x model score matrix.

    CSV: a header ``item_id,<model>,<model>,...`` and one row per item (wide), or the header
    ``item_id,model,score`` and one row per observation (long). JSONL: one object per line,
    ``{"item_id": ..., "scores": {"<model>": score, ...}}`` or ``{"item_id", "model", "score"}``.
    An empty cell, ``NA`` or ``null`` is missing. Scores are 0/1 or 0-5; ``auto`` takes 0-5 when any
    score is above 1.
    """
    rel = _rel(path, config.root)
    if not path.is_file():
        raise UsageError(f"{path}: no such matrix file")
    rows: list[tuple[int, Any, Any, Any]] = []  # (line, item, model, raw score), checked below
    problems: list[Problem] = []
    if path.suffix.lower() == ".csv":
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise UsageError(f"{rel}: not valid UTF-8 at byte offset {e.start}; save the matrix as UTF-8") from e
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if not header or header[0].strip() != "item_id":
            raise UsageError(f"{rel}: the first CSV column must be named item_id")
        names = [h.strip() for h in header]
        long = names == ["item_id", "model", "score"]
        first_col: dict[str, int] = {}
        for col, name in enumerate(names[1:], start=2):
            if name in first_col:
                problems.append(
                    Problem(
                        rel,
                        1,
                        1,
                        "difficulty-input",
                        f"columns {first_col[name]} and {col} are both named {name!r}; "
                        "a matrix has one column per model: rename or merge them",
                    )
                )
            first_col.setdefault(name, col)
        use = [first_col.get(name) == col for col, name in enumerate(names[1:], start=2)]  # a repeat: reported
        for n, row in enumerate(reader, start=2):
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(names):
                problems.append(
                    Problem(rel, n, 1, "difficulty-input", f"row has {len(row)} cells, the header {len(names)}")
                )
                continue
            if long:
                rows.append((n, row[0].strip(), row[1].strip(), row[2]))
            else:
                rows.extend((n, row[0].strip(), m, c) for m, c, ok in zip(names[1:], row[1:], use, strict=True) if ok)
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            for n, rec in load_jsonl(path, root=config.root):
                scores = rec.get("scores")
                if isinstance(scores, dict):
                    rows.extend((n, rec.get("item_id"), m, s) for m, s in scores.items())
                else:
                    rows.append((n, rec.get("item_id"), rec.get("model"), rec.get("score")))
        except LoadError as e:
            problems.append(e.problem)
    else:
        raise UsageError(f"{rel}: a score matrix is a .csv or .jsonl file")

    parsed: list[tuple[int, str, str, float | None]] = []
    seen: dict[tuple[str, str], int] = {}
    for n, item, model, raw in rows:
        if not isinstance(item, str) or not item or not isinstance(model, str) or not model:
            problems.append(Problem(rel, n, 1, "difficulty-input", "each score needs an item_id and a model name"))
            continue
        try:
            score = _parse_score(raw)
        except ValueError as e:
            problems.append(Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: {e}; write a score or leave it"))
            continue
        if score is not None and not 0 <= score <= 5:
            problems.append(Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: score {score:g} is not in 0-5"))
            continue
        # A second score for the same item and model is a pasted row or column, not a second run:
        # averaging it in silently would weigh that model twice.
        first = seen.setdefault((item, model), n)
        if first != n:
            problems.append(
                Problem(
                    rel,
                    n,
                    1,
                    "difficulty-input",
                    f"{item}/{model} is scored on line {first} and again on line {n}; "
                    "a matrix holds one score per item and model: keep one",
                )
            )
            continue
        parsed.append((n, item, model, score))
    scores = [s for _, _, _, s in parsed if s is not None]
    if scale == "auto":
        scale = "0-5" if any(s > 1 for s in scores) else "binary"
    table = ScoreTable(scale=scale, problems=problems)
    for n, item, model, score in parsed:
        if score is not None and scale == "binary" and score not in (0.0, 1.0):
            table.problems.append(
                Problem(rel, n, 1, "difficulty-input", f"{item}/{model}: {score:g} is not 0 or 1 on a binary scale")
            )
            continue
        table.add(item, model, score)
    table.problems.sort(key=lambda p: p.line)
    table.sources.append({"matrix": rel, "sha256": _file_hash(path)})
    return table


# --------------------------------------------------------------------------- statistics


@dataclass
class Matrices:
    """Dense arrays over (items, models): mean normalised score, pass share, and the mask."""

    items: list[str]
    models: list[str]
    norm: Any  # items x models, NaN where missing
    passed: Any  # items x models, share of the model's runs at or above the pass mark
    mask: Any  # items x models, bool
    cats: Any = None  # items x models x 6 (0-5 scale): the share of the model's runs at each score


def build_matrices(table: ScoreTable, settings: Settings) -> Matrices:
    import numpy as np

    items, models = table.items, table.models
    ii = {x: n for n, x in enumerate(items)}
    mi = {x: n for n, x in enumerate(models)}
    n_items, n_models = len(items), len(models)
    mark = 1.0 if table.scale == "binary" else settings.pass_score
    # One row per observation: (cell, score); a cell is one item and one model.
    cell = np.array(
        [ii[item] * n_models + mi[model] for (item, model), scores in table.obs.items() for _ in scores], dtype=np.intp
    )
    score = np.array([s for scores in table.obs.values() for s in scores], dtype=float)
    size = n_items * n_models
    runs = np.bincount(cell, minlength=size).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = np.where(runs > 0, np.bincount(cell, score, size) / runs / table.top, np.nan)
        passed = np.where(runs > 0, np.bincount(cell, score >= mark, size) / runs, np.nan)
    cats = None
    if table.scale == "0-5":
        # A fractional score from a matrix is split between its neighbours.
        lo = np.minimum(np.floor(score), N_CATEGORIES - 1).astype(np.intp)
        frac = score - lo
        share = 1 / runs[cell]
        cats = np.bincount(cell * N_CATEGORIES + lo, (1 - frac) * share, size * N_CATEGORIES)
        up = frac > 0
        cats += np.bincount(cell[up] * N_CATEGORIES + lo[up] + 1, frac[up] * share[up], size * N_CATEGORIES)
        cats = cats.reshape(n_items, n_models, N_CATEGORIES)
    norm = norm.reshape(n_items, n_models)
    return Matrices(items, models, norm, passed.reshape(n_items, n_models), ~np.isnan(norm), cats)


def classical(m: Matrices, pass_mark: float) -> dict[str, Any]:
    """Per-item mean, share of models at or above ``pass_mark`` (normalised), discrimination.

    Returns arrays: ``n``, ``mean``, ``share_pass``, ``discrimination`` (NaN when undefined).
    """
    import numpy as np

    x, mask = m.norm, m.mask
    n = mask.sum(axis=1)
    filled = np.where(mask, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=1) / n
        share = np.where(mask, x >= pass_mark - 1e-9, False).sum(axis=1) / n
    col_sum, col_n = filled.sum(axis=0), mask.sum(axis=0)
    # Pearson's r of each item's scores against the models' mean on the other items, all items at
    # once: per row, over the models that saw the item and saw at least one other item.
    ok = mask & (col_n[None, :] > 1)
    k = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = np.where(ok, (col_sum[None, :] - filled) / (col_n[None, :] - 1), 0.0)
        item = np.where(ok, x, 0.0)
        dx = np.where(ok, item - item.sum(axis=1, keepdims=True) / k[:, None], 0.0)
        dr = np.where(ok, rest - rest.sum(axis=1, keepdims=True) / k[:, None], 0.0)
        r = (dx * dr).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dr * dr).sum(axis=1))

    def spread(v: Any) -> Any:  # max - min over the row's usable cells: 0 means constant
        return np.where(ok, v, -np.inf).max(axis=1) - np.where(ok, v, np.inf).min(axis=1)

    defined = (k >= 3) & (spread(item) > 0) & (spread(rest) > 0)
    disc = np.where(defined, np.clip(r, -1.0, 1.0), np.nan)
    return {"n": n, "mean": mean, "share_pass": share, "discrimination": disc}


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


def fit_2pl(y: Any, w: Any, settings: Settings | None = None, start: Any = None, gtol: float = 1e-6) -> IRTFit:
    """Joint MAP estimate of a 2PL model (Newton steps over all items at once, see :func:`_newton`)."""
    import numpy as np

    settings = settings or Settings()
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


N_CATEGORIES = 6  # fact scores 0-5
_GAP_PRIOR_SD = 1.0  # log gaps between thresholds ~ N(0, 1): gaps of about one logit


def _thresholds(delta: Any) -> tuple[Any, Any]:
    """Ordered, centred thresholds tau_1..tau_5 from 4 log gaps, and d tau / d delta (5 x 4)."""
    import numpy as np

    u = np.concatenate([[0.0], np.exp(delta)])
    lower = np.tril(np.ones((N_CATEGORIES - 1, N_CATEGORIES - 1)))
    centred = lower - lower.mean(axis=0, keepdims=True)
    tau = centred @ u
    return tau, centred[:, 1:] * np.exp(delta)[None, :]


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
    tau, dtau = _thresholds(delta)
    base = theta[None, :] - b[:, None]  # items x models
    z = a[:, None, None] * (base[:, :, None] - tau[None, None, :])  # items x models x 5
    star = expit(z)
    n = z.shape[0], z.shape[1], 1
    cum = np.concatenate([np.ones(n), star, np.zeros(n)], axis=2)  # P(score >= k), k = 0..6
    prob = np.maximum(cum[:, :, :-1] - cum[:, :, 1:], 1e-12)  # P(score = k), k = 0..5
    wc = cats * w[:, :, None]
    nll = -float(np.sum(wc * np.log(prob)))
    nll += float(theta @ theta) / (2 * sd[0] ** 2) + float(b @ b) / (2 * sd[1] ** 2) + float(la @ la) / (2 * sd[2] ** 2)
    nll += float(delta @ delta) / (2 * _GAP_PRIOR_SD**2)
    ratio = wc / prob  # items x models x 6
    dz = (ratio[:, :, :-1] - ratio[:, :, 1:]) * star * (1 - star)  # d nll / d z_k, k = 1..5
    dz_a = dz * a[:, None, None]
    g_theta = dz_a.sum(axis=(0, 2)) + theta / sd[0] ** 2
    g_b = -dz_a.sum(axis=(1, 2)) + b / sd[1] ** 2
    g_la = (dz * z).sum(axis=(1, 2)) + la / sd[2] ** 2
    g_tau = -dz_a.sum(axis=(0, 1))
    g_delta = g_tau @ dtau + delta / _GAP_PRIOR_SD**2
    return nll, np.concatenate([g_theta, g_b, g_la, g_delta])


def fit_grm(cats: Any, w: Any, settings: Settings | None = None, start: Any = None, gtol: float = 1e-6) -> IRTFit:
    """Joint MAP estimate of the graded rating-scale model (0-5 scores), see :func:`_newton`."""
    import numpy as np

    settings = settings or Settings()
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
        thresholds=_thresholds(p[n_models + 2 * n_items :])[0],
    )


def _prior_sds(settings: Settings) -> tuple[float, float, float]:
    return settings.prior_sd_ability, settings.prior_sd_difficulty, settings.prior_sd_log_discrimination


# Newton stops when no gradient component exceeds gtol (nats per unit of parameter): 1e-6 for the
# reported fit; 1e-3 for bootstrap refits, which only need bands (the old L-BFGS fits stopped there)...
_BOOTSTRAP_GTOL = 1e-3
# ...or when the predicted decrease is at the rounding level of the objective (a sum of many terms).
_RTOL = 1e-13
_MAX_NEWTON = 200


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

    model = _Graded(cats, w, n_bounds, free_tau, sd)
    x = np.array(start, dtype=float)
    f, g, step = model.newton(x)
    for _ in range(_MAX_NEWTON):
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


class _Graded:
    """The weighted score table of the graded model, laid out dense: layers of items x models arrays.

    An observation in category ``c`` has probability ``S_c - S_{c+1}`` with
    ``S_k = sigmoid(a_j * (theta_i - b_j - tau_k))``, ``S_0 = 1`` and ``S_K+1 = 0``: it touches the
    thresholds below and above it only, so each costs two sigmoids, not K. A cell whose runs fall in
    several categories has one observation per category, one per layer; with one run per cell there
    is one layer.
    """

    def __init__(self, cats: Any, w: Any, n_bounds: int, free_tau: bool, sd: tuple[float, float, float]) -> None:
        import numpy as np

        self.n_items, self.n_models, _ = cats.shape
        self.n_bounds, self.free_tau, self.sd = n_bounds, free_tau, sd
        weight = cats * w[:, :, None]
        present = weight > 0
        rank = np.cumsum(present, axis=2) - 1
        n, m, k = self.n_items, self.n_models, n_bounds
        items = np.repeat(np.arange(n), m)
        models = np.tile(np.arange(m), n)
        self.layers = []
        for layer in range(int(present.sum(axis=2).max(initial=0))):
            sel = present & (rank == layer)
            cat = np.argmax(sel, axis=2)
            wt = np.where(sel.any(axis=2), np.take_along_axis(weight, cat[:, :, None], axis=2)[:, :, 0], 0.0)
            flat = cat.ravel()
            self.layers.append(
                {
                    "cat": cat,
                    "wt": wt,
                    "has_lo": cat > 0,
                    "has_hi": cat < k,
                    "at_item": items * (k + 1) + flat,
                    "at_model": models * (k + 1) + flat,
                }
            )

    def reweighted(self, counts: Any) -> _Graded:
        """The same table with model ``i``'s observations weighted ``counts[i]``; models at 0 left out.

        For :meth:`fit_items` only (the threshold sums of :meth:`newton` are not carried over).
        """
        drawn = counts > 0
        out = object.__new__(_Graded)
        out.n_items, out.n_models = self.n_items, int(drawn.sum())
        out.n_bounds, out.free_tau, out.sd = self.n_bounds, self.free_tau, self.sd
        out.layers = [
            {
                "cat": layer["cat"][:, drawn],
                "wt": layer["wt"][:, drawn] * counts[drawn],
                "has_lo": layer["has_lo"][:, drawn],
                "has_hi": layer["has_hi"][:, drawn],
            }
            for layer in self.layers
        ]
        return out

    def _unpack(self, x: Any) -> tuple[Any, Any, Any, Any]:
        m, n = self.n_models, self.n_items
        return x[:m], x[m : m + n], x[m + n : m + 2 * n], x[m + 2 * n :]

    def _tau(self, delta: Any) -> tuple[Any, Any]:
        import numpy as np

        if self.free_tau:
            return _thresholds(delta)
        return np.zeros(self.n_bounds), np.zeros((self.n_bounds, 0))

    def _prior(self, x: Any) -> float:
        theta, b, la, delta = self._unpack(x)
        sd = self.sd
        value = float(theta @ theta) / (2 * sd[0] ** 2) + float(b @ b) / (2 * sd[1] ** 2)
        return value + float(la @ la) / (2 * sd[2] ** 2) + float(delta @ delta) / (2 * _GAP_PRIOR_SD**2)

    def _layer(self, layer: dict[str, Any], a: Any, u: Any, tau_ext: Any) -> tuple[Any, ...]:
        import numpy as np
        from scipy.special import expit

        cat = layer["cat"]
        z_lo = a * (u - tau_ext[cat])
        z_hi = a * (u - tau_ext[cat + 1])
        s_lo = np.where(layer["has_lo"], expit(z_lo), 1.0)
        s_hi = np.where(layer["has_hi"], expit(z_hi), 0.0)
        # Without a lower threshold, 1 - S_hi from expit(-z) keeps its precision near 0.
        p = np.maximum(np.where(layer["has_lo"], s_lo - s_hi, expit(-z_hi)), 1e-12)
        return z_lo, z_hi, s_lo, s_hi, p

    def _derivs(self, layer: dict[str, Any], a: Any, u: Any, tau_ext: Any) -> tuple[Any, ...]:
        """Per observation: z below and above, p, d nll / d z and the 2 x 2 d2 nll / d z2."""
        z_lo, z_hi, s_lo, s_hi, p = self._layer(layer, a, u, tau_ext)
        wp = layer["wt"] / p
        q_lo, q_hi = s_lo * (1 - s_lo), s_hi * (1 - s_hi)  # 0 where the threshold is a placeholder
        d_lo, d_hi = -wp * q_lo, wp * q_hi
        h_ll = wp * (q_lo * q_lo / p - q_lo * (1 - 2 * s_lo))
        h_hh = wp * (q_hi * q_hi / p + q_hi * (1 - 2 * s_hi))
        h_lh = -wp * q_lo * q_hi / p
        return z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh

    def fit_items(self, theta: Any, tau: Any, b: Any, la: Any, gtol: float) -> tuple[Any, Any]:
        """Each item's (b, log a) MAP with the abilities and thresholds held fixed, from (b, la).

        Items are independent once the abilities and thresholds are fixed, so this is damped Newton
        on 2 x 2 systems, batched over the items not yet converged. The derivatives at a full step
        are computed with its value, so an accepted step costs one pass.
        """
        import numpy as np

        b, la = b.astype(float), la.astype(float)
        tau_ext = np.concatenate([[0.0], tau, [0.0]])
        active = np.arange(self.n_items)
        terms = np.array(self._item_terms(active, theta, tau_ext, b, la))  # rows: f, g_b, g_l, a_bb, a_bl, a_ll
        for _ in range(_MAX_NEWTON):
            keep = np.maximum(np.abs(terms[1]), np.abs(terms[2])) > gtol
            active, terms = active[keep], terms[:, keep]
            if active.size == 0:
                break
            f, g_b, g_l, a_bb, a_bl, a_ll = terms
            low = (a_bb + a_ll) / 2 - np.sqrt(((a_bb - a_ll) / 2) ** 2 + a_bl**2)
            lift = np.where(low < 1e-6, 2 * np.abs(low) + 1e-6, 0.0)
            a_bb, a_ll = a_bb + lift, a_ll + lift
            det = a_bb * a_ll - a_bl**2
            d_b = -(a_ll * g_b - a_bl * g_l) / det
            d_l = -(-a_bl * g_b + a_bb * g_l) / det
            # No item moves more than 1 logit in one step: far from the optimum a logistic tail is flat.
            scale = np.minimum(1.0, 1.0 / np.maximum(np.abs(d_b), np.abs(d_l)))
            d_b, d_l = d_b * scale, d_l * scale
            slope = g_b * d_b + g_l * d_l
            trial = np.array(self._item_terms(active, theta, tau_ext, b[active] + d_b, la[active] + d_l))
            ok = trial[0] <= f + 1e-4 * slope
            b[active[ok]] += d_b[ok]
            la[active[ok]] += d_l[ok]
            terms[:, ok] = trial[:, ok]
            # A full Newton step (no eigenvalue lifted) this small leaves an error of about its square,
            # as Newton converges quadratically: below the gradient tolerance's own precision.
            settled = ok & (lift == 0) & (np.maximum(np.abs(d_b), np.abs(d_l)) <= math.sqrt(gtol) / 3)
            todo = np.flatnonzero(~ok)
            alpha = 0.5
            while todo.size and alpha > 1e-12:
                rows = active[todo]
                nb, nl = b[rows] + alpha * d_b[todo], la[rows] + alpha * d_l[todo]
                f_new = self._item_terms(rows, theta, tau_ext, nb, nl, value_only=True)[0]
                good = f_new <= f[todo] + 1e-4 * alpha * slope[todo]
                b[rows[good]], la[rows[good]] = nb[good], nl[good]
                moved = todo[good]
                if moved.size:
                    terms[:, moved] = np.array(
                        self._item_terms(active[moved], theta, tau_ext, b[active[moved]], la[active[moved]])
                    )
                todo = todo[~good]
                alpha /= 2
            settled[todo] = True  # no descent left at rounding level: as good as it gets
            active, terms = active[~settled], terms[:, ~settled]
        return b, la

    def _item_terms(
        self, rows: Any, theta: Any, tau_ext: Any, b: Any, la: Any, value_only: bool = False
    ) -> tuple[Any, ...]:
        """Per item in ``rows``: value, gradient and Hessian of its negative log posterior (fixed abilities)."""
        import numpy as np

        sd = self.sd
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.exp(la)[:, None]
            u = theta[None, :] - b[:, None]
            f = b * b / (2 * sd[1] ** 2) + la * la / (2 * sd[2] ** 2)
            g_b, g_l = b / sd[1] ** 2, la / sd[2] ** 2
            a_bb, a_bl, a_ll = (
                np.full(len(rows), 1 / sd[1] ** 2),
                np.zeros(len(rows)),
                np.full(len(rows), 1 / sd[2] ** 2),
            )
            every = len(rows) == self.n_items  # all rows, in order: no copies
            for full in self.layers:
                layer = full if every else {key: full[key][rows] for key in ("cat", "wt", "has_lo", "has_hi")}
                if value_only:
                    f = f - (layer["wt"] * np.log(self._layer(layer, a, u, tau_ext)[-1])).sum(axis=1)
                    continue
                z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh = self._derivs(layer, a, u, tau_ext)
                f = f - (layer["wt"] * np.log(p)).sum(axis=1)
                d1 = d_lo + d_hi
                hz_lo, hz_hi = h_ll * z_lo + h_lh * z_hi, h_lh * z_lo + h_hh * z_hi
                g_b = g_b - (a * d1).sum(axis=1)
                g_l = g_l + (z_lo * d_lo + z_hi * d_hi).sum(axis=1)
                a_bb = a_bb + (a * a * (h_ll + 2 * h_lh + h_hh)).sum(axis=1)
                a_bl = a_bl - (a * (hz_lo + hz_hi + d1)).sum(axis=1)
                a_ll = a_ll + (z_lo * (hz_lo + d_lo) + z_hi * (hz_hi + d_hi)).sum(axis=1)
        f = np.where(np.isfinite(f), f, np.inf)
        return f, g_b, g_l, a_bb, a_bl, a_ll

    def value(self, x: Any) -> float:
        """The negative log posterior at ``x`` (inf where a trial step overflows)."""
        import numpy as np

        theta, b, la, delta = self._unpack(x)
        tau_ext = np.concatenate([[0.0], self._tau(delta)[0], [0.0]])
        value = self._prior(x)
        with np.errstate(over="ignore", invalid="ignore"):
            a, u = np.exp(la)[:, None], theta[None, :] - b[:, None]
            for layer in self.layers:
                p = self._layer(layer, a, u, tau_ext)[-1]
                value -= float(np.sum(layer["wt"] * np.log(p)))
        return value if math.isfinite(value) else math.inf

    def newton(self, x: Any) -> tuple[float, Any, Any]:
        """The value, gradient and modified Newton step at ``x``, in the parameter layout."""
        import numpy as np

        n, m, k, sd = self.n_items, self.n_models, self.n_bounds, self.sd
        theta, b, la, delta = self._unpack(x)
        tau, dtau = self._tau(delta)
        tau_ext = np.concatenate([[0.0], tau, [0.0]])
        with np.errstate(over="ignore", invalid="ignore"):
            a = np.exp(la)
            if not np.all(np.isfinite(a)):
                return math.inf, np.zeros_like(x), np.zeros_like(x)
            u = theta[None, :] - b[:, None]
            value = self._prior(x)
            g_z = np.zeros((n, m))  # d nll / d theta_i, per cell (minus d / d b_j)
            g_la = np.zeros(n)
            h_bb = np.zeros((n, m))  # d2 / d b2 = d2 / d theta2 = - d2 / d theta d b, per cell
            h_tla = np.zeros((n, m))  # d2 / d theta d log a = - d2 / d b d log a, per cell
            h_lala = np.zeros(n)
            nt = k + 1
            g_tau = np.zeros(k)
            h_tt = np.zeros((k, k))
            h_theta_tau = np.zeros((m, k))
            e_btau = np.zeros((n, k))
            e_latau = np.zeros((n, k))
            for layer in self.layers:
                z_lo, z_hi, p, d_lo, d_hi, h_ll, h_hh, h_lh = self._derivs(layer, a[:, None], u, tau_ext)
                value -= float(np.sum(layer["wt"] * np.log(p)))
                d1 = d_lo + d_hi
                v_lo, v_hi = h_ll + h_lh, h_lh + h_hh
                hz_lo, hz_hi = h_ll * z_lo + h_lh * z_hi, h_lh * z_lo + h_hh * z_hi
                g_z += a[:, None] * d1
                g_la += (z_lo * d_lo + z_hi * d_hi).sum(axis=1)
                h_bb += (a * a)[:, None] * (v_lo + v_hi)
                h_tla += a[:, None] * (hz_lo + hz_hi + d1)
                h_lala += (z_lo * (hz_lo + d_lo) + z_hi * (hz_hi + d_hi)).sum(axis=1)
                if not self.free_tau:
                    continue
                # Sum onto the threshold below (index cat - 1) and above (index cat) each observation.
                cat = layer["cat"]

                def lo_hi(at: str, lo: Any, hi: Any, rows: int, layer: dict[str, Any] = layer) -> Any:
                    lo_sum = np.bincount(layer[at], weights=lo.ravel(), minlength=rows * nt).reshape(rows, nt)
                    hi_sum = np.bincount(layer[at], weights=hi.ravel(), minlength=rows * nt).reshape(rows, nt)
                    return lo_sum[:, 1:] + hi_sum[:, :k]

                a2 = (a * a)[:, None]
                by_model = lo_hi("at_model", -a[:, None] * d_lo, -a[:, None] * d_hi, m)
                g_tau += by_model.sum(axis=0)
                h_tt += np.diag(lo_hi("at_model", a2 * h_ll, a2 * h_hh, m).sum(axis=0))
                off = np.bincount(cat.ravel(), weights=(a2 * h_lh).ravel(), minlength=nt)[1:k]
                h_tt += np.diag(off, 1) + np.diag(off, -1)
                h_theta_tau -= lo_hi("at_model", a2 * v_lo, a2 * v_hi, m)
                e_btau += lo_hi("at_item", a2 * v_lo, a2 * v_hi, n)
                e_latau += lo_hi("at_item", -a[:, None] * (hz_lo + d_lo), -a[:, None] * (hz_hi + d_hi), n)
        if not math.isfinite(value):
            return math.inf, np.zeros_like(x), np.zeros_like(x)
        if not math.isfinite(value):
            return math.inf, np.zeros_like(x), np.zeros_like(x)
        g_theta = g_z.sum(axis=0) + theta / sd[0] ** 2
        g_b = -g_z.sum(axis=1) + b / sd[1] ** 2
        g_la = g_la + la / sd[2] ** 2
        a_bb = h_bb.sum(axis=1) + 1 / sd[1] ** 2
        a_bl = -h_tla.sum(axis=1)
        a_ll = h_lala + 1 / sd[2] ** 2
        glob = np.diag(h_bb.sum(axis=0) + 1 / sd[0] ** 2)
        eb, el, gg = -h_bb, h_tla, g_theta
        if self.free_tau:
            h_td = h_theta_tau @ dtau
            # tau(delta) is not linear: d2 tau_k / d delta_m2 is dtau[k, m]
            h_dd = dtau.T @ h_tt @ dtau + np.diag(g_tau @ dtau) + np.eye(len(delta)) / _GAP_PRIOR_SD**2
            glob = np.block([[glob, h_td], [h_td.T, h_dd]])
            eb = np.concatenate([eb, e_btau @ dtau], axis=1)
            el = np.concatenate([el, e_latau @ dtau], axis=1)
            gg = np.concatenate([gg, g_tau @ dtau + delta / _GAP_PRIOR_SD**2])

        # Make each item block positive definite: lift its smallest eigenvalue to |itself| + 1e-6.
        low = (a_bb + a_ll) / 2 - np.sqrt(((a_bb - a_ll) / 2) ** 2 + a_bl**2)
        lift = np.where(low < 1e-6, 2 * np.abs(low) + 1e-6, 0.0)
        a_bb, a_ll = a_bb + lift, a_ll + lift
        det = a_bb * a_ll - a_bl**2
        i_bb, i_bl, i_ll = a_ll / det, -a_bl / det, a_bb / det
        f_b = i_bb[:, None] * eb + i_bl[:, None] * el  # A^-1 E, per item
        f_l = i_bl[:, None] * eb + i_ll[:, None] * el
        y_b, y_l = i_bb * g_b + i_bl * g_la, i_bl * g_b + i_ll * g_la  # A^-1 g, per item
        schur = glob - eb.T @ f_b - el.T @ f_l
        rhs = -(gg - eb.T @ y_b - el.T @ y_l)
        if not (np.all(np.isfinite(schur)) and np.all(np.isfinite(rhs))):
            return math.inf, np.zeros_like(x), np.zeros_like(x)  # a trial step too far: the line search backs off
        vals, vecs = np.linalg.eigh((schur + schur.T) / 2)
        vals = np.where(vals < 1e-6, np.abs(vals) + 1e-6, vals)
        d_glob = vecs @ ((vecs.T @ rhs) / vals)
        d_b, d_l = -(y_b + f_b @ d_glob), -(y_l + f_l @ d_glob)
        grad = np.concatenate([g_theta, g_b, g_la, gg[m:]])
        step = np.concatenate([d_glob[:m], d_b, d_l, d_glob[m:]])
        return value, grad, step


def _band_codes(values: Any, settings: Settings, cut_values: tuple[float, float]) -> Any:
    """:func:`band_of` as indices into BANDS (-1 for none), for a whole draw at once."""
    import numpy as np

    lo, hi = cut_values
    with np.errstate(invalid="ignore"):
        if settings.basis == "irt":
            codes = np.where(values < lo, 0, np.where(values >= hi, 2, 1))
        else:
            codes = np.where(values < lo, 2, np.where(values >= hi, 0, 1))
    return np.where(np.isnan(values), -1, codes)


def band_of(values: Any, settings: Settings, cut_values: tuple[float, float]) -> list[str | None]:
    """Band of each basis value (NaN -> None)."""
    out: list[str | None] = []
    lo, hi = cut_values
    for v in values:
        if v is None or math.isnan(v):
            out.append(None)
        elif settings.basis == "irt":
            out.append("easy" if v < lo else "hard" if v >= hi else "medium")
        else:
            out.append("hard" if v < lo else "easy" if v >= hi else "medium")
    return out


def cut_values(values: Any, settings: Settings) -> tuple[float, float]:
    """The cut points on the basis scale: fixed, or quantiles of the banded items' values."""
    import numpy as np

    if settings.cuts == "score":
        return settings.cut_points
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return (math.nan, math.nan)
    q_lo, q_hi = settings.quantile_cuts
    if settings.basis == "mean":  # a low mean is hard: the easiest share sits at the top
        q_lo, q_hi = 1 - q_hi, 1 - q_lo
    return float(np.quantile(finite, q_lo)), float(np.quantile(finite, q_hi))


def irt_model(settings: Settings, scale: str) -> str:
    """The IRT model for a scale: the graded model for 0-5 scores unless 2PL is asked for."""
    if scale == "binary":
        return "2pl"
    return "2pl" if settings.irt_model == "2pl" else "grm"


def fit_irt(m: Matrices, w: Any, settings: Settings, model: str, start: Any = None, gtol: float = 1e-6) -> IRTFit:
    """Fit ``model`` ("2pl" on pass/fail outcomes, "grm" on 0-5 scores) with cell weights ``w``."""
    import numpy as np

    weights = np.where(m.mask, w, 0.0)
    if model == "grm":
        return fit_grm(m.cats, weights, settings, start, gtol)
    return fit_2pl(np.where(m.mask, m.passed, 0.0), weights, settings, start, gtol)


def _graded(m: Matrices, settings: Settings, model: str) -> _Graded:
    """The score table as the IRT fit sees it, every cell weighted 1."""
    import numpy as np

    weights = m.mask.astype(float)
    if model == "grm":
        cats = np.where(m.mask[:, :, None], np.nan_to_num(m.cats), 0.0)
        return _Graded(cats, weights, N_CATEGORIES - 1, True, _prior_sds(settings))
    y = np.where(m.mask, np.nan_to_num(m.passed), 0.0)
    return _Graded(np.stack([1.0 - y, y], axis=2), weights, 1, False, _prior_sds(settings))


def _basis(m: Matrices, counts: Any, settings: Settings, full: IRTFit, graded: _Graded | None) -> Any:
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


# --------------------------------------------------------------------------- the whole computation


def _r(x: Any, digits: int = 4) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, digits)


def compute(
    table: ScoreTable,
    settings: Settings,
    item_hashes: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The difficulty ledger (a plain dict, without its self-hash) for a score table.

    ``progress`` receives a line now and then (the IRT fit, bootstrap draws done); it never prints.
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

    # Bootstrap over models: each draw repeats models by multiplicity.
    agree = np.zeros(n_items)
    drawn = np.zeros(n_items)
    rng = np.random.default_rng(settings.seed)
    full_codes = _band_codes(basis, settings, cuts)
    graded = _graded(m, settings, model) if settings.basis == "irt" and settings.bootstrap else None
    last = time.monotonic()
    for draw in range(settings.bootstrap):
        counts = np.bincount(rng.integers(0, n_models, n_models), minlength=n_models).astype(float)
        # A model drawn k times weighs k; one not drawn weighs 0. Refits start from the full fit.
        values = _basis(m, counts, settings, fit, graded)
        n_seen = (m.mask * counts[None, :] > 0).sum(axis=1)
        values = np.where(enough & (n_seen > 0), values, np.nan)
        codes = _band_codes(values, settings, cut_values(values, settings))
        both = (full_codes >= 0) & (codes >= 0)
        drawn += both
        agree += both & (codes == full_codes)
        if time.monotonic() - last >= 2 or draw + 1 == settings.bootstrap:
            last = time.monotonic()
            say(f"bootstrap over models: {draw + 1}/{settings.bootstrap} draws, {last - started:.0f} s")

    items: dict[str, Any] = {}
    for j, item in enumerate(m.items):
        row = m.norm[j][m.mask[j]]
        flags = []
        stability = float(agree[j] / drawn[j]) if drawn[j] else None
        disc = cls["discrimination"][j]
        if not enough[j]:
            flags.append("too-few-models")
        if row.size and bool(np.all(row >= mark - 1e-9)):
            flags.append("saturated")
        if row.size and bool(np.all(row == 0)):
            flags.append("unanswered-by-all")
        constant_middle = row.size >= 2 and np.ptp(row) == 0 and "saturated" not in flags and row[0] != 0
        if (not math.isnan(disc) and disc <= 0) or constant_middle:
            flags.append("non-discriminating")
        if stability is not None and 1 - stability > settings.unstable_share:
            flags.append("unstable")
        items[item] = {
            "item_hash": (item_hashes or {}).get(item),
            "n_models": int(cls["n"][j]),
            "mean": _r(cls["mean"][j]),
            "share_pass": _r(cls["share_pass"][j]),
            "discrimination": _r(disc),
            "irt_b": _r(fit.b[j]),
            "irt_a": _r(fit.a[j]),
            "band": bands[j],
            "stability": _r(stability),
            "flags": flags,
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
        "items": items,
    }


def seal(ledger: dict[str, Any]) -> dict[str, Any]:
    """The ledger with ``ledger_hash``: the content hash of everything else, so hand edits show."""
    body = {k: v for k, v in ledger.items() if k != "ledger_hash"}
    return {**body, "ledger_hash": content_hash(body)}


@dataclass
class Options:
    """What ``propeval difficulty`` was asked to do."""

    runs: Sequence[Path] = ()
    matrix: Path | None = None
    scale: str = "auto"
    write: bool = True
    out: Path | None = None  # default: <root>/ledger/difficulty.json, for graded runs only
    progress: Callable[[str], None] | None = None


@dataclass
class DifficultyResult:
    """The ledger document plus the problems and notes of the run, and where it was written."""

    ledger: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    basis_values: dict[str, float] = field(default_factory=dict)
    path: str = LEDGER


def run_difficulty(config: Config, options: Options) -> DifficultyResult:
    """Compute difficulty from runs (or a matrix), bind it to the corpus and write the ledger.

    Nothing is written when any input line is bad: a ledger built from part of the grades would
    look complete and not be.
    """
    settings = load_settings(config)
    if options.matrix is not None:
        if options.runs:
            raise UsageError("give graded run folders or --matrix, not both")
        if options.out is None and options.write:
            raise UsageError(
                f"--matrix needs --out FILE: bands from a score matrix are not the corpus's graded runs, so they "
                f"do not replace {LEDGER} unless you name it (--out {LEDGER})"
            )
        table = load_matrix(config, options.matrix, options.scale)
    else:
        if options.scale not in ("auto", "0-5"):
            raise UsageError("--scale applies to --matrix; graded runs are always 0-5 fact scores")
        files = _grade_files(config, settings, options.runs)
        if not files:
            raise UsageError(
                f"no graded runs found ({settings.runs_dir}/*/grades-{settings.rubric}.jsonl); "
                "answer and grade a run first (`propeval answer`, then `propeval grade`), or pass --matrix FILE"
            )
        table = load_runs(config, settings, files)
    target = options.out if options.out is not None else config.root / LEDGER
    rel = _rel(target, config.root)
    result = DifficultyResult(ledger=None, problems=list(table.problems), path=rel)
    if result.problems:
        result.notes.append(f"{rel} not written: fix the input problems above first")
        return result
    if not any(table.obs.values()):
        raise UsageError("the input holds no scores (every grade is unscored or the file is empty)")
    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError as e:
        raise DependencyError(e.name or "scipy", "stats") from e

    corpus = load_corpus(config)
    hashes = {item.id: item.hash for item in corpus.items.values()}
    ledger = seal(compute(table, settings, hashes, options.progress))
    result.ledger = ledger
    unknown = [i for i in ledger["items"] if i not in hashes]
    if unknown and corpus.items:
        result.notes.append(
            f"{len(unknown)} scored item(s) are not in the corpus ({', '.join(unknown[:5])}"
            f"{', ...' if len(unknown) > 5 else ''}); they get no item hash"
        )
    by_id = {i.id: i for i in corpus.items.values()}
    for item_id, entry in sorted(ledger["items"].items()):
        path = by_id[item_id].doc.relpath if item_id in by_id else rel
        for flag in entry["flags"]:
            result.problems.append(
                Problem(path, 0, 0, flag, f"{item_id}: {FLAG_MESSAGES[flag]}", severity=Severity.NOTICE)
            )
    if not ledger["irt"]["converged"]:
        result.notes.append("the IRT fit did not fully converge; treat irt_b with care")
    if options.write:
        from propeval.fsutil import atomic_write

        atomic_write(target, dumps_json(ledger) + "\n")
    return result


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


def _grade_files(config: Config, settings: Settings, runs: Sequence[Path]) -> list[Path]:
    if not runs:
        return find_runs(config, settings)
    out = []
    for run in runs:
        path = run / f"grades-{settings.rubric}.jsonl" if run.is_dir() else run
        if not path.is_file():
            raise UsageError(f"{run}: no grades-{settings.rubric}.jsonl there; give a graded run folder")
        out.append(path)
    return out


# --------------------------------------------------------------------------- the report


def load_ledger(config: Config) -> dict[str, Any]:
    """Read and verify ``ledger/difficulty.json``; a missing, corrupt or edited ledger is a UsageError."""
    from propeval.loader import load_file

    path = config.root / LEDGER
    if not path.is_file():
        raise UsageError(f"{LEDGER} does not exist; run `propeval difficulty` first")
    try:
        doc = load_file(path, root=config.root, limits=LEDGER_LIMITS)
    except LoadError as e:
        raise UsageError(f"{LEDGER} cannot be read: {e}; recompute it with `propeval difficulty`") from e
    problem = verify(doc.data)
    if problem:
        raise UsageError(f"{LEDGER} {problem}")
    return doc.data


def verify(data: dict[str, Any]) -> str | None:
    """Why a loaded ledger cannot be trusted, or None. Light enough for `propeval check`."""
    if data.get("format") != FORMAT:
        return f"has format {data.get('format')!r}, not {FORMAT!r}; recompute it with `propeval difficulty`"
    body = {k: v for k, v in data.items() if k != "ledger_hash"}
    if data.get("ledger_hash") != content_hash(body):
        return "does not match its ledger_hash (edited by hand?); recompute it with `propeval difficulty`"
    items = data.get("items")
    if not isinstance(items, dict) or not all(isinstance(v, dict) for v in items.values()):
        return "has no items mapping; recompute it with `propeval difficulty`"
    return None


@dataclass
class Report:
    """Band counts by category, language and framing."""

    tables: dict[str, dict[str, dict[str, int]]]
    values: list[tuple[float, str | None]]  # (basis value, band) per banded item
    basis: str
    cut_values: list[float | None]

    def to_dict(self) -> dict[str, Any]:
        return {"basis": self.basis, "cut_values": self.cut_values, "tables": self.tables}


_COLUMNS = (*BANDS, "none")


def build_report(config: Config, ledger: dict[str, Any]) -> Report:
    """Count bands of active corpus items per category, language and framing.

    An active item that the ledger does not know, or whose content changed since, counts as
    ``none``; category comes from the item's claim (an item counts once per category).
    """
    corpus = load_corpus(config)
    entries = ledger["items"]
    tables: dict[str, dict[str, dict[str, int]]] = {"category": {}, "language": {}, "framing": {}}
    values: list[tuple[float, str | None]] = []
    basis = ledger.get("settings", {}).get("basis", "mean")
    key = "irt_b" if basis == "irt" else "mean"

    def bump(table: str, group: str, band: str) -> None:
        row = tables[table].setdefault(group, dict.fromkeys(_COLUMNS, 0))
        row[band] += 1

    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        entry = entries.get(item.id)
        fresh = isinstance(entry, dict) and entry.get("item_hash") == item.hash
        band = entry.get("band") if fresh and isinstance(entry, dict) else None
        band = band if band in BANDS else "none"
        claim = corpus.claim_of(item)
        categories = (claim.data.get("categories") if claim else None) or ["(none)"]
        for cat in categories:
            bump("category", str(cat), band)
        bump("language", item.language or "(none)", band)
        bump("framing", item.framing or "(none)", band)
        if fresh and isinstance(entry, dict) and isinstance(entry.get(key), int | float):
            values.append((float(entry[key]), entry.get("band")))
    if not corpus.items:  # a ledger without a corpus (a matrix alone): report its own items
        for entry in entries.values():
            band = entry.get("band") if entry.get("band") in BANDS else "none"
            bump("category", "(no corpus)", band)
            if isinstance(entry.get(key), int | float):
                values.append((float(entry[key]), entry.get("band")))
    cuts = ledger.get("settings", {}).get("cut_values", [None, None])
    return Report(tables, values, basis, cuts)


def format_report(report: Report) -> str:
    """Text tables, one per grouping."""
    lines: list[str] = []
    for name, rows in report.tables.items():
        lines.append(f"bands by {name}")
        width = max([len(name), *(len(g) for g in rows)])
        lines.append(f"  {name:<{width}}  " + "  ".join(f"{c:>6}" for c in (*_COLUMNS, "total")))
        totals = dict.fromkeys(_COLUMNS, 0)
        for group in sorted(rows):
            row = rows[group]
            for c in _COLUMNS:
                totals[c] += row[c]
            lines.append(
                f"  {group:<{width}}  " + "  ".join(f"{row[c]:>6}" for c in _COLUMNS) + f"  {sum(row.values()):>6}"
            )
        if not rows:
            lines.append("  (no active items)")
        lines.append("")
    return "\n".join(lines)


def plot_report(report: Report, path: Path) -> None:
    """A histogram of the band basis, coloured by band, with the cut points: a PNG at ``path``."""
    try:
        import matplotlib
    except ImportError as e:
        raise DependencyError("matplotlib", "stats") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    colours = {"easy": "#4c9a2a", "medium": "#e0a526", "hard": "#b22222", None: "#888888"}
    groups: dict[str | None, list[float]] = defaultdict(list)
    for value, band in report.values:
        groups[band if band in BANDS else None].append(value)
    data = [groups[b] for b in (*BANDS, None) if groups[b]]
    labels = [b or "none" for b in (*BANDS, None) if groups[b]]
    colors = [colours[b] for b in (*BANDS, None) if groups[b]]
    if data:
        ax.hist(data, bins=20, stacked=True, label=labels, color=colors)
    for cut in report.cut_values:
        if isinstance(cut, int | float):
            ax.axvline(cut, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("IRT difficulty b" if report.basis == "irt" else "mean normalised fact score")
    ax.set_ylabel("items")
    ax.set_title(f"Item difficulty ({len(report.values)} items)")
    if data:
        ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    from propeval.fsutil import atomic_write

    atomic_write(path, buf.getvalue())


def band_counts(ledger: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(_COLUMNS, 0)
    for entry in ledger["items"].values():
        counts[entry["band"] if entry["band"] in BANDS else "none"] += 1
    return counts
