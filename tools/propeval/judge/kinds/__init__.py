"""Rubric kinds: one module, one class each, and the registry that names them.

A rubric's ``kind`` (in ``rubric.yaml``) picks its class here; the class owns the kind's verdict
validation, its own keys of ``rubric.yaml`` (kept as ``Rubric.kind_data``), its grade-record
fields, its scores and report panel, its figures in the harness adapters, and its agreement
statistics. Adding a kind: write ``kinds/<name>.py`` with a :class:`~propeval.judge.kinds.base.Kind`
subclass and add it to ``KINDS``. The promptfoo adapter then runs it as it is; inspect_ai and lm-eval
name a task per kind, so to list it there add a delegating ``@task``/``@scorer`` pair to
``harness/inspect_task.py`` and a task file with a ``process_results_<name>`` to ``harness/lmeval/``.
"""

from __future__ import annotations

from propeval.judge.kinds.audit import Audit
from propeval.judge.kinds.base import HarnessScore, Kind, Outcome, Panel, Row, VerdictError
from propeval.judge.kinds.facts import Facts

KINDS: dict[str, Kind] = {k.name: k for k in (Facts(), Audit())}

__all__ = ["KINDS", "HarnessScore", "Kind", "Outcome", "Panel", "Row", "VerdictError"]
