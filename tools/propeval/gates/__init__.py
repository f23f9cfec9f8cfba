"""Gates before merge: results of costly LLM evaluations, recorded in ``ledger/`` and verified offline.

Modules:

* ``ledger``         the record format: bindings to content hashes, a digest, freshness, reading and writing.
* ``settings``       ``[tool.propeval.gates]``: which gates are required, thresholds, endpoints.
* ``answerability``  a reference model answers each active item; ``facts-v1`` grades it.
* ``judge_gate``     the judge against each rubric's human-labelled gold set.
* ``ci``             ``propeval ci``: every offline check a pull request needs, as a registry of steps.
"""
