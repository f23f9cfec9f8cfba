"""Rubric kinds: each a verdict and a view, and the registry that names them.

A rubric's ``kind`` (in ``rubric.yaml``) picks its :class:`Kind` here. The kind's verdict owns its
validation, its own keys of ``rubric.yaml`` (kept as ``Rubric.kind_data``), its grade-record fields
and its scores; its view (``Kind.view``, a :class:`KindView`) owns the text of its scores, its
report panel and its figures in the harness adapters (``facts.py`` / ``facts_view.py``, ``audit.py``
/ ``audit_view.py``). Its agreement statistics (judge against human labels) are measured in
:mod:`propeval.agreement.verdicts`, over the fields the kind names in ``agreement_fields``. Adding a
kind: write ``kinds/<name>.py`` with a :class:`~propeval.judge.kinds.base.Kind` subclass and a
:class:`~propeval.judge.kinds.base.KindView` subclass (one module, or two when it is long), and add
``Name(NameView())`` to ``KINDS``. The promptfoo adapter then runs it as it is; inspect_ai and
lm-eval name a task per kind, so to list it there add a delegating ``@task``/``@scorer`` pair to
``harness/inspect_task.py`` and a task file with a ``process_results_<name>`` to
``harness/lmeval/``.
"""

from __future__ import annotations

from propeval.judge.kinds.audit import Audit
from propeval.judge.kinds.audit_view import AuditView
from propeval.judge.kinds.base import HarnessScore, Kind, KindView, Outcome, Panel, Row, VerdictError
from propeval.judge.kinds.facts import Facts
from propeval.judge.kinds.facts_view import FactsView
from propeval.judge.kinds.pair import Pair, PairView

KINDS: dict[str, Kind] = {k.name: k for k in (Facts(FactsView()), Pair(PairView()), Audit(AuditView()))}

__all__ = ["KINDS", "HarnessScore", "Kind", "KindView", "Outcome", "Panel", "Row", "VerdictError"]
