"""One pipeline for ``propeval run`` and ``propeval ci``: each step written once, over a workspace and a scope.

* :mod:`~propeval.pipeline.scope`: what a step covers (the whole corpus, or what changed since a ref);
* :mod:`~propeval.pipeline.steps`: the steps (check, ledger, groups, dedup, answerability, judge,
  schema, difficulty, stats, report), each ``step(workspace, scope) -> CheckResult``, in one registry;
* :mod:`~propeval.pipeline.outcome`: a step's outcome, and running a step so that a failure is an error;
* :mod:`~propeval.pipeline.ci`: ``ci`` = the policy step + the steps over the changed scope;
* :mod:`~propeval.pipeline.main`: ``run`` = the steps over the whole corpus + the report.

One registry serves both commands, and every step reads the corpus from the Workspace it is given,
never its own copy from the config.
"""

from propeval.pipeline.scope import Scope
from propeval.pipeline.steps import CI_STEPS, RUN_STEPS, STEPS

__all__ = ["CI_STEPS", "RUN_STEPS", "STEPS", "Scope"]
