"""Rubrics as data: ``rubrics/<name>/rubric.yaml``, its prompt template and its gold set.

``rubric.yaml`` holds the version, the ``kind`` (``facts`` or ``audit``: which validator and scorer
read the verdict), the label sets, the verdict JSON schema and the kind's own keys, which the kind
checks (``check_rubric`` in ``kinds/``): for ``facts``, the fact-score table as ordered rows of
named predicates over the counts of stated / missed / opposed facts.

Passing example (abridged)::

    name: facts-v1
    version: "1.0.0"
    kind: facts
    template: prompt.md
    labels: {fact: [stated, missed, opposed], propaganda: [0, 1, 2]}
    fact_score:
      - {score: 5, all: [all_stated]}
      - {score: 0, any: [none_stated, some_opposed]}
    verdict_schema: {type: object, ...}

Failing example: a row naming an unknown predicate (``all: [most_stated]``), a table that leaves
some count of facts without a score, or a template that uses ``${unknown}``.
"""

from __future__ import annotations

import difflib
import os
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval import names
from propeval.corpus import content_hash
from propeval.errors import UsageError
from propeval.judge.kinds import KINDS, Kind
from propeval.loader import LoadError, load_file
from propeval.result import Problem

RUBRIC_FILE = "rubric.yaml"
GOLD_FILE = "gold.jsonl"

# Placeholders a template may use. question and answer arrive fenced (see prompt.py).
PLACEHOLDERS = frozenset(
    {"question", "answer", "facts", "fact_ids", "frame_markers", "language", "framing", "question_type", "boundary"}
)


@dataclass
class Rubric:
    name: str
    version: str
    kind: str
    template: str
    labels: dict[str, list[Any]]
    verdict_schema: dict[str, Any]
    hash: str
    folder: Path
    # What the kind's check_rubric made of its own keys (a facts rubric's fact-score table and quote
    # rules, an audit rubric's refusal label): read only by the kind.
    kind_data: Any

    @property
    def spec(self) -> Kind:
        """The rubric's kind: the class that reads its verdicts and scores its grades."""
        return KINDS[self.kind]

    @property
    def gold_path(self) -> Path:
        return self.folder / GOLD_FILE


@dataclass
class Listing:
    """What the rubrics folder holds."""

    names: list[str] = field(default_factory=list)  # rubric folders, sorted
    hidden: list[str] = field(default_factory=list)  # folders with a rubric.yaml whose name starts with "."
    misnamed: list[str] = field(default_factory=list)  # folders with a rubric.yaml and an unusable name


def list_rubrics(folder: Path) -> Listing:
    """The rubric folders under ``folder`` (each holds a rubric.yaml), sorted."""
    out = Listing()
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        if not (path / RUBRIC_FILE).is_file():
            continue
        if path.name.startswith("."):
            out.hidden.append(path.name)
            continue
        try:
            names.name(path.name, "--rubric")
        except UsageError:
            out.misnamed.append(path.name)
            continue
        out.names.append(path.name)
    return out


def _schema_error(schema: dict[str, Any]) -> str | None:
    """jsonschema's message for why ``schema`` is not a valid 2020-12 schema; None when it is one.
    It is most of a rubric's load (~5 ms): a Workspace loads each rubric once (:mod:`.rubrics`)."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        return e.message
    return None


# Every rubric's keys; each kind adds its own (Kind.rubric_keys).
COMMON_KEYS = ("name", "version", "kind", "description", "template", "labels", "verdict_schema")


def _refuse_unknown_keys(d: dict[str, Any], kind: Kind, fail: Callable[[str, str], LoadError]) -> None:
    """A key that neither every rubric nor this rubric's kind reads is a mistake (a misspelt key
    would otherwise be ignored, and its default used): name it, and the key it is closest to."""
    known = (*COMMON_KEYS, *kind.rubric_keys)
    for key in d:
        if key in known:
            continue
        owner = next((k.name for k in KINDS.values() if key in k.rubric_keys), None)
        if owner is not None:
            raise fail(f"/{key}", f"{key} is a key of {owner} rubrics, not of {kind.name} ones; delete it")
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"a {kind.name} rubric's keys: {', '.join(known)}"
        raise fail(f"/{key}", f"unknown key {key!r}; {hint}")


def load_rubric(rubrics_dir: Path, name: str, *, root: Path | None = None) -> Rubric:
    """Load and check ``rubrics_dir/name``. Raises :class:`LoadError` with the first problem."""
    names.name(name, "--rubric")  # it names a folder here and a grades file and a ledger record later
    folder = rubrics_dir / name
    path = folder / RUBRIC_FILE
    if not path.is_file():
        known = ", ".join(list_rubrics(rubrics_dir).names) or "none"
        raise LoadError(
            Problem(_rel(path, root), 0, 0, "rubric", f"no rubric {name!r} (looked for {RUBRIC_FILE}; known: {known})")
        )
    doc = load_file(path, root=root)
    d = doc.data

    def fail(pointer: str, message: str) -> LoadError:
        return LoadError(doc.problem(pointer, "rubric", message))

    for key, kind in (("name", str), ("version", str), ("kind", str), ("template", str), ("labels", dict)):
        if not isinstance(d.get(key), kind):
            raise fail(f"/{key}", f"{key!r} must be a {kind.__name__}; add it")
    if d["name"] != name:
        raise fail("/name", f"name {d['name']!r} differs from its folder {name!r}; make them equal")
    if d["kind"] not in KINDS:
        raise fail("/kind", f"kind must be one of {', '.join(KINDS)}")
    _refuse_unknown_keys(d, KINDS[d["kind"]], fail)
    schema = d.get("verdict_schema")
    if not isinstance(schema, dict):
        raise fail("/verdict_schema", "verdict_schema must be a JSON schema (a mapping)")
    error = _schema_error(schema)
    if error is not None:
        raise fail("/verdict_schema", f"verdict_schema is not a valid JSON schema: {error}")

    template, used = _template(folder, d["template"], root, fail)
    missing = {"question", "answer", "boundary"} - used
    if missing:
        raise fail("/template", f"template must use ${{{'}, ${'.join(sorted(missing))}}}")

    kind_data = KINDS[d["kind"]].check_rubric(d, used, fail)
    return Rubric(
        name=name,
        version=d["version"],
        kind=d["kind"],
        template=template,
        labels=d["labels"],
        verdict_schema=schema,
        hash=content_hash({"rubric": d, "template": template}),
        folder=folder,
        kind_data=kind_data,
    )


def _template(
    folder: Path, tpl_name: str, root: Path | None, fail: Callable[[str, str], LoadError]
) -> tuple[str, set[str]]:
    """The prompt template's text and the placeholders it uses (each one a known placeholder)."""
    if not tpl_name or "/" in tpl_name or "\\" in tpl_name or tpl_name in (".", ".."):
        raise fail("/template", f"template {tpl_name!r} must be a file name in the rubric's own folder, like prompt.md")
    tpl_path = folder / tpl_name
    from propeval.filetypes import RefusedFileError, open_regular

    try:
        # The same guard as the loader's: a link, hard link or FIFO is refused, never opened.
        with os.fdopen(open_regular(tpl_path, _rel(tpl_path, root), root), "rb") as fh:
            template = fh.read().decode("utf-8")
    except RefusedFileError as e:
        raise LoadError(e.problem) from None
    except (OSError, UnicodeDecodeError) as e:
        raise fail("/template", f"cannot read the template {tpl_name!r}: {e}") from None
    try:
        used = set(string.Template(template).get_identifiers())
    except ValueError as e:
        raise fail("/template", f"template {tpl_name!r}: {e}") from None
    unknown = used - PLACEHOLDERS
    if unknown:
        raise fail(
            "/template",
            f"template uses unknown placeholder(s) {', '.join(sorted(unknown))}; "
            f"use only {', '.join(sorted(PLACEHOLDERS))} (write $$ for a dollar sign)",
        )
    return template, used


def _rel(path: Path, root: Path | None) -> str:
    from propeval.loader import relative_path

    return relative_path(path, root)  # a link is named by its own path, not its target
