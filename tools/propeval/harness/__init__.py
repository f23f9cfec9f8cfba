"""Adapters that run the released benchmark in the harnesses eval users already run.

``propeval harness NAME`` prints where each ships (or copies it with ``--out``):

* ``inspect``: an inspect_ai task file (``inspect_task.py``: tasks ``facts`` and ``audit``),
  also registered as ``propeval/facts`` and ``propeval/audit`` through the ``inspect_ai`` entry point;
* ``lm-eval``: an lm-evaluation-harness task folder for ``--include_path`` (``lm_eval/``);
* ``promptfoo``: a promptfoo config and its Python assertion (``promptfoo/``).

None holds a rule of its own: each grades through :func:`propeval.judge.grade.grade_answer` with
the rubric files of the release or corpus it reads (``source.py``). This package is light; the
harness libraries are imported only by the files the harnesses load.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (the file or folder a harness loads, one line on how)
ADAPTERS: dict[str, tuple[str, str]] = {
    "inspect": (
        "inspect_task.py",
        "inspect eval propeval/facts -T source=dist/release --model openai-api/SERVICE/MODEL --model-role grader=...",
    ),
    "lm-eval": (
        "lmeval",
        'lm_eval --include_path PATH --tasks propeval_facts --metadata \'{"source": "dist/release"}\' ...',
    ),
    "promptfoo": ("promptfoo", "cd PATH && PROPEVAL_SOURCE=... promptfoo eval"),
}


def location(name: str) -> Path:
    """The shipped file or folder of adapter ``name``."""
    return HERE / ADAPTERS[name][0]
