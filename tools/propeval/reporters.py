"""Print problems as text, JSON or GitHub annotations. The only place check output is formatted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from propeval.result import MAX_MESSAGE, Problem, Severity, clip

FORMATS = ("text", "json", "github")


def printable(s: str) -> str:
    """``s`` with control, bidi and invisible characters written as escapes, and line breaks as ``\\n``:
    a file name or a message can then neither rewrite a terminal nor split one problem over lines."""
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)


def location(p: Problem) -> str:
    path = printable(p.path)
    return f"{path}:{p.line}:{p.col}" if p.line else path


def text_line(p: Problem) -> str:
    tag = "" if p.severity is Severity.ERROR else f" ({p.severity.value})"
    return f"{location(p)} [{p.rule}]{tag} {printable(p.message)}"


def github_escape(s: str, prop: bool = False, limit: int = 2 * MAX_MESSAGE) -> str:
    """``s`` as a workflow-command value: cut to ``limit`` characters (marked), then escaped."""
    s = clip(s, limit).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def github_line(p: Problem) -> str:
    level = {"error": "error", "warning": "warning", "notice": "notice"}[p.severity.value]
    props = [f"file={github_escape(p.path, True)}"]
    if p.line:
        props += [f"line={p.line}", f"col={p.col}"]
    props.append(f"title={github_escape(p.rule, True)}")
    return f"::{level} {','.join(props)}::{github_escape(f'[{p.rule}] {p.message}')}"


def report(
    problems: Sequence[Problem],
    fmt: str,
    out: TextIO,
    *,
    files_checked: int = 0,
    summary: bool = True,
    notes: Sequence[str] = (),
) -> None:
    """Write ``problems`` in ``fmt`` to ``out``. Text ends with a one-line summary."""
    if fmt == "json":
        payload = {
            "problems": [p.to_dict() for p in problems],
            "files_checked": files_checked,
            "errors": sum(p.severity is Severity.ERROR for p in problems),
            "warnings": sum(p.severity is Severity.WARNING for p in problems),
            "notes": list(notes),
        }
        out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    line = github_line if fmt == "github" else text_line
    for p in problems:
        out.write(line(p) + "\n")
    for note in map(clip, notes):
        out.write((f"::notice::{github_escape(note)}" if fmt == "github" else f"note: {note}") + "\n")
    if summary and fmt == "text":
        errors = sum(p.severity is Severity.ERROR for p in problems)
        warnings = len(problems) - errors
        if problems:
            out.write(f"{errors} error(s), {warnings} warning(s) in {files_checked} file(s) checked\n")
        else:
            out.write(f"ok: {files_checked} file(s) checked, no problems\n")
