"""The words for a step's or a gate's outcome, the same everywhere: the summary table of
``propeval run`` and ``propeval ci``, the HTML report and the dataset card.

A gate whose mode is ``advisory`` (``[tool.propeval.gates]``) reports its problems as warnings, so
its step is ``advisory`` and the run exits 0; a ``required`` gate's problems are errors, its step
``failed``, exit 1. The report and the card show a gate's evidence with the word its step would
get, never a louder or a softer one. This module imports nothing.
"""

from __future__ import annotations

OK, ADVISORY, FAILED, ERROR, SKIPPED = "ok", "advisory", "failed", "error", "skipped"

# What each word means, in the one sentence the terminal, the report and the card print beside it.
MEANING = {
    OK: "nothing to report",
    ADVISORY: "warnings only (an advisory gate's problems are warnings): reported, and they do not fail the run",
    FAILED: "errors: they fail the run (exit 1)",
    ERROR: "the step could not run (exit 3)",
    SKIPPED: "nothing to check; the step's note says why",
}


def gate_word(passes: bool, mode: str) -> str:
    """A gate's word: ``ok`` when its evidence holds, else ``advisory`` or ``failed`` by its mode."""
    if passes:
        return OK
    return ADVISORY if mode == "advisory" else FAILED


def legend(words: list[str] | tuple[str, ...]) -> list[str]:
    """``word: meaning`` for each word but ``ok`` that ``words`` holds, in the order of :data:`MEANING`."""
    return [f"{w}: {MEANING[w]}" for w in MEANING if w != OK and w in words]
