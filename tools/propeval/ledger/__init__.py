"""The ledger: recorded evidence of costly evaluations, bound to the content it judged, and signed.

The one place ledger paths, record formats and signature checks live:

* :mod:`~propeval.ledger.paths`: where each record lies, all under ``[tool.propeval.gates] ledger_dir``
  (answerability, judge, approvals, the dedup record, the difficulty bands);
* :mod:`~propeval.ledger.records`: the record format (kind, subject, binding, result, digest,
  signature), reading one strictly and writing one atomically, and what makes a binding stale;
* :mod:`~propeval.ledger.view`: the ledger as one run sees it, each record read once and each
  signature verified once (a :class:`~propeval.workspace.Workspace` holds one);
* :mod:`~propeval.ledger.approvals`: maintainers' signed approvals of policy changes.

What a record means, and whether everything in it follows from the files it is bound to, is the
gates' business (:mod:`propeval.gates.verify`); the dedup record's is :mod:`propeval.dedup.record`'s.

The package face imports nothing, so that the settings layer and the corpus loader can name a
ledger path without pulling in the rest.
"""
