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

Modules, in the order the computation runs:

* ``settings``: ``[tool.propeval.difficulty]``;
* ``inputs``: graded runs or a score matrix into a :class:`ScoreTable`;
* ``matrices``: the table as dense (items, models) arrays;
* ``classical``: mean, pass share, discrimination;
* ``graded`` and ``irt``: the IRT model and its Newton fit;
* ``bands``: cut points and bands; ``bootstrap``: how often a band holds;
* ``flags``: the per-item flags; ``compute``: all of it into the ledger dict;
* ``ledger``: the ledger file's format, seal and reader; ``run``: the command's core;
* ``report``: ``--report`` tables and the ``--plot`` histogram.

numpy and scipy are imported inside the functions that need them, never at module level, so
``propeval check`` can import this package.
"""

from propeval.difficulty.bands import BANDS, band_of, cut_values
from propeval.difficulty.classical import classical
from propeval.difficulty.compute import compute
from propeval.difficulty.flags import FIRST_NOTICES, FLAG_MESSAGES, FLAGS, shorten
from propeval.difficulty.graded import N_CATEGORIES
from propeval.difficulty.inputs import SCALES, ScoreTable, find_runs, load_matrix, load_runs
from propeval.difficulty.irt import IRTFit, fit_2pl, fit_grm, fit_irt, irt_model
from propeval.difficulty.ledger import FORMAT, LEDGER_LIMITS, load_ledger, read_ledger, seal, verify
from propeval.difficulty.matrices import Matrices, build_matrices
from propeval.difficulty.measure import DifficultyResult, Options, run_difficulty
from propeval.difficulty.report import Report, band_counts, build_report, format_report, plot_report

__all__ = [
    "BANDS",
    "FIRST_NOTICES",
    "FLAGS",
    "FLAG_MESSAGES",
    "FORMAT",
    "LEDGER_LIMITS",
    "N_CATEGORIES",
    "SCALES",
    "DifficultyResult",
    "IRTFit",
    "Matrices",
    "Options",
    "Report",
    "ScoreTable",
    "band_counts",
    "band_of",
    "build_matrices",
    "build_report",
    "classical",
    "compute",
    "cut_values",
    "find_runs",
    "fit_2pl",
    "fit_grm",
    "fit_irt",
    "format_report",
    "irt_model",
    "load_ledger",
    "load_matrix",
    "load_runs",
    "plot_report",
    "read_ledger",
    "run_difficulty",
    "seal",
    "shorten",
    "verify",
]
