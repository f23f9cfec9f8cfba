"""The sarif format: one SARIF 2.1.0 log for GitHub code scanning (github/codeql-action/upload-sarif).

``runs[0].tool.driver.rules`` is the whole rule registry (:mod:`propeval.rules`), so a rule's
description shows on every alert, with its ``help`` (what is wrong and how to fix it, as text and
Markdown: the same texts as the docs' rule reference) and ``helpUri``, the rule's entry in that
reference, ``docs/rules.md`` (see :func:`docs_url`); each problem is a result with its ``ruleId`` and
``ruleIndex``, a level (error, warning, note) and one location: the path relative to the
repository root (``uriBaseId`` ``%SRCROOT%``) and its line and column. Code scanning places an
alert only on a line, so a problem about a whole file (line 0) goes on its line 1. Notes go in
the run's ``properties``. Only problems are shown: a command's other data is for text and json.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote, urlsplit

from propeval import __version__
from propeval.reporters.jsondoc import dumps
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.reporters import Report
    from propeval.result import Rule

NAME = "sarif"
HELP = "SARIF 2.1.0 for GitHub code scanning"

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}


def docs_url() -> str | None:
    """Where the rule reference (``docs/rules.md``, whose entries are anchored by rule id) is
    published, or None.

    In order: the installed propeval's ``Documentation`` project URL (``[project.urls]`` of its
    pyproject.toml), the docs site's base, whose rule page is ``rules.html``; else, in a GitHub
    Actions job, the page in the repository being scanned at the scanned commit
    (``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA/docs/rules.md``: propeval's own
    workflow uploads its SARIF from its own repository). Only an absolute http(s) URL is used, as
    SARIF requires; nothing is fetched.
    """
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("propeval").get_all("Project-URL") or []
    except PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        url = url.strip()
        if label.strip().lower() == "documentation" and _absolute(url):
            return f"{url.rstrip('/')}/rules.html"
    server, repo, sha = (os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"))
    if server and repo and sha:
        url = f"{server.rstrip('/')}/{quote(repo, safe='/')}/blob/{quote(sha, safe='')}/docs/rules.md"
        if _absolute(url):
            return url
    return None


def _absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _descriptor(rule: Rule, docs: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": rule.id,
        "name": rule.id,
        "shortDescription": {"text": rule.description},
        "fullDescription": {"text": rule.help_text.splitlines()[0]},
        "help": {"text": rule.help_text, "markdown": rule.help_markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"area": rule.area},
    }
    if docs:
        out["helpUri"] = f"{docs}#{rule.id}"  # the entry's heading is the rule id: its anchor
    return out


def _uri(path: str) -> str:
    # A path as a relative URI reference: spaces and the like percent-encoded, slashes kept.
    return quote(path.replace("\\", "/").lstrip("/"), safe="/")


def _result(p: Problem, index: dict[str, int]) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": max(p.line, 1)}
    if p.line and p.col:
        region["startColumn"] = p.col
    result: dict[str, Any] = {
        "ruleId": p.rule,
        "level": LEVELS[p.severity],
        "message": {"text": p.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(p.path), "uriBaseId": "%SRCROOT%"},
                    "region": region,
                }
            }
        ],
    }
    if p.rule in index:
        result["ruleIndex"] = index[p.rule]
    if p.pointer:
        result["properties"] = {"pointer": p.pointer}
    return result


def log(rep: Report) -> dict[str, Any]:
    """The SARIF log of ``rep`` as a dict."""
    # Imported here: the registry collects every check, groups rule and pipeline step, which only
    # a SARIF log needs; every other command's output stays as light to import as the text format.
    from propeval.rules import RULES

    rules = list(RULES.values())
    index = {r.id: n for n, r in enumerate(rules)}
    docs = docs_url()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "propeval",
                "version": __version__,
                "rules": [_descriptor(r, docs) for r in rules],
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [_result(p, index) for p in rep.all_problems()],
    }
    notes = [*(n for s in rep.sections for n in s.notes), *rep.notes]
    if notes:
        run["properties"] = {"notes": notes}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write(rep: Report, out: TextIO) -> None:
    out.write(dumps(log(rep)) + "\n")
