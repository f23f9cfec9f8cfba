"""The json format: one document. A report's ``data`` when it has some; else the problem document
``{"problems", "files_checked", "errors", "warnings", "notes"}``. Every problem, never a brief."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from propeval.result import Severity

if TYPE_CHECKING:
    from propeval.reporters import Report

NAME = "json"
HELP = "one document"


def document(rep: Report) -> dict[str, Any]:
    problems = rep.all_problems()
    return {
        "problems": [p.to_dict() for p in problems],
        "files_checked": rep.files_checked,
        "errors": sum(p.severity is Severity.ERROR for p in problems),
        "warnings": sum(p.severity is Severity.WARNING for p in problems),
        "notes": list(rep.notes),
    }


def dumps(doc: Any, **options: Any) -> str:
    """``doc`` as JSON text (``ensure_ascii=False, indent=2`` unless ``options`` say otherwise) with
    every ``[`` after ``##`` written ``\\u005b``: the same document, in which no line holds the
    ``##[`` that a GitHub Actions log runs as a workflow command. (Outside strings JSON has no
    ``#``; a string value never starts a line of indented JSON, so ``::`` cannot either.)"""
    return json.dumps(doc, **{"ensure_ascii": False, "indent": 2, **options}).replace("##[", "##\\u005b")


def write(rep: Report, out: TextIO) -> None:
    doc = rep.data if rep.data is not None else document(rep)
    out.write(dumps(doc, **rep.json_options) + "\n")
