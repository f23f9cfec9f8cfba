"""Agreement between raters: Cohen's and Fleiss' kappa, Krippendorff's alpha, F1, confusion matrices.

An undefined statistic (kappa when both raters use one class, alpha with a single value in the
data, F1 with no positive case anywhere) is ``Stat.value is None`` with a reason, so a gate can
refuse it instead of passing on a NaN.

Modules:

* :mod:`~propeval.agreement.stats`: the statistics over a raters x units table of labels
  (:class:`Stat`, Cohen's kappa and F1 in numpy held to scikit-learn bit for bit, Fleiss' kappa via
  statsmodels, Krippendorff's alpha, the confusion matrix, the bootstrap, the scale order);
* :mod:`~propeval.agreement.raters`: rater files (:class:`RaterFile`), read from a label file or a
  grades file, aligned into that table; labels written two ways, and labels typed on the command line;
* :mod:`~propeval.agreement.agree`: ``propeval agree``'s core (:func:`run_agree`) and every figure for
  one labelled field (:func:`field_report`);
* :mod:`~propeval.agreement.sheets`: blinded sheets for a second rater, their key, and unblinding.

Every public name is importable from here (``from propeval.agreement import cohen_kappa``). The
package imports nothing heavy: numpy, statsmodels and ``krippendorff`` are imported by the
functions that compute with them.
"""

from __future__ import annotations

from propeval.agreement.agree import AgreeOptions, AgreeResult, FieldReport, field_report, run_agree
from propeval.agreement.raters import (
    RATER_TEXTS,
    RaterFile,
    align,
    is_grades_file,
    label_clashes,
    rater_labels,
    read_graded_units,
    read_rater_file,
    resolve_label,
    sample_source,
)
from propeval.agreement.sheets import (
    HIDDEN_FIELDS,
    MAX_KEY_BYTES,
    Sheet,
    blind_sample,
    default_key_path,
    json_pretty,
    sample_rows,
    unblind,
    write_sheet,
)
from propeval.agreement.stats import (
    KAPPA_WEIGHTS,
    LEVELS,
    Label,
    Ratings,
    Stat,
    accuracy_per_class,
    bootstrap,
    cohen_kappa,
    confusion,
    f1_positive,
    fleiss_kappa,
    krippendorff_alpha,
    label_order,
)

__all__ = [
    "HIDDEN_FIELDS",
    "KAPPA_WEIGHTS",
    "LEVELS",
    "MAX_KEY_BYTES",
    "RATER_TEXTS",
    "AgreeOptions",
    "AgreeResult",
    "FieldReport",
    "Label",
    "RaterFile",
    "Ratings",
    "Sheet",
    "Stat",
    "accuracy_per_class",
    "align",
    "blind_sample",
    "bootstrap",
    "cohen_kappa",
    "confusion",
    "default_key_path",
    "f1_positive",
    "field_report",
    "fleiss_kappa",
    "is_grades_file",
    "json_pretty",
    "krippendorff_alpha",
    "label_clashes",
    "label_order",
    "rater_labels",
    "read_graded_units",
    "read_rater_file",
    "resolve_label",
    "run_agree",
    "sample_rows",
    "sample_source",
    "unblind",
    "write_sheet",
]
