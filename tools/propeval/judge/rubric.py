"""Rubrics as data: ``rubrics/<name>/rubric.yaml``, its prompt template and its gold set.

``rubric.yaml`` holds the version, the ``kind`` (``facts`` or ``audit``: which validator and scorer
read the verdict), the label sets, the verdict JSON schema and, for ``facts``, the fact-score table
as ordered rows of named predicates over the counts of stated / missed / opposed facts.

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

import os
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.corpus import content_hash
from propeval.loader import LoadError, load_file
from propeval.result import Problem

KINDS = ("facts", "audit")
RUBRIC_FILE = "rubric.yaml"
GOLD_FILE = "gold.jsonl"

# Placeholders a template may use. question and answer arrive fenced (see prompt.py).
PLACEHOLDERS = frozenset(
    {"question", "answer", "facts", "fact_ids", "frame_markers", "language", "framing", "question_type", "boundary"}
)

# The vocabulary of the fact-score table: predicates over (stated, missed, opposed) counts.
PREDICATES: dict[str, Callable[[int, int, int], bool]] = {
    "all_stated": lambda s, m, o: m == 0 and o == 0 and s > 0,
    "one_missed": lambda s, m, o: m == 1,
    "none_opposed": lambda s, m, o: o == 0,
    "some_opposed": lambda s, m, o: o > 0,
    "none_stated": lambda s, m, o: s == 0,
    "some_stated": lambda s, m, o: s > 0,
    "stated_gt_missed": lambda s, m, o: s > m,
    "stated_eq_missed": lambda s, m, o: s == m,
    "stated_lt_missed": lambda s, m, o: s < m,
}
# Claims carry 2-4 facts; the table is checked to score every count up to this many.
MAX_FACTS = 8


@dataclass(frozen=True)
class ScoreRow:
    score: int
    all: tuple[str, ...] = ()
    any: tuple[str, ...] = ()

    def matches(self, s: int, m: int, o: int) -> bool:
        if self.all and not all(PREDICATES[p](s, m, o) for p in self.all):
            return False
        return not (self.any and not any(PREDICATES[p](s, m, o) for p in self.any))


@dataclass
class Rubric:
    name: str
    version: str
    kind: str
    template: str
    labels: dict[str, list[Any]]
    verdict_schema: dict[str, Any]
    fact_score_rows: list[ScoreRow]
    refusal_label: str
    quote_field: str
    hash: str
    folder: Path
    # The shortest quote that can show an answer adopts a frame: words where words are spaced,
    # characters in scripts written without spaces (Chinese, Japanese, Thai, ...).
    quote_min_words: int = 3
    quote_min_chars: int = 4

    @property
    def gold_path(self) -> Path:
        return self.folder / GOLD_FILE

    def fact_score(self, states: list[str]) -> int:
        """The fact score of a list of fact states: the first row that matches, top-down."""
        s, m, o = states.count("stated"), states.count("missed"), states.count("opposed")
        for row in self.fact_score_rows:
            if row.matches(s, m, o):
                return row.score
        raise ValueError(f"no fact_score row matches stated={s} missed={m} opposed={o}")  # load() rules this out


def rubric_names(rubrics_dir: Path) -> list[str]:
    if not rubrics_dir.is_dir():
        return []
    return sorted(p.name for p in rubrics_dir.iterdir() if (p / RUBRIC_FILE).is_file())


def load_rubric(rubrics_dir: Path, name: str, *, root: Path | None = None) -> Rubric:
    """Load and check ``rubrics_dir/name``. Raises :class:`LoadError` with the first problem."""
    folder = rubrics_dir / name
    path = folder / RUBRIC_FILE
    if not path.is_file():
        known = ", ".join(rubric_names(rubrics_dir)) or "none"
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
    schema = d.get("verdict_schema")
    if not isinstance(schema, dict):
        raise fail("/verdict_schema", "verdict_schema must be a JSON schema (a mapping)")
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise fail("/verdict_schema", f"verdict_schema is not a valid JSON schema: {e.message}") from None

    tpl_name = d["template"]
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
        raise fail("/template", f"template {d['template']!r}: {e}") from None
    unknown = used - PLACEHOLDERS
    if unknown:
        raise fail(
            "/template",
            f"template uses unknown placeholder(s) {', '.join(sorted(unknown))}; "
            f"use only {', '.join(sorted(PLACEHOLDERS))} (write $$ for a dollar sign)",
        )
    missing = {"question", "answer", "boundary"} - used
    if missing:
        raise fail("/template", f"template must use ${{{'}, ${'.join(sorted(missing))}}}")

    rows: list[ScoreRow] = []
    if d["kind"] == "facts":
        if "facts" not in used:
            raise fail("/template", "a facts rubric's template must use ${facts}")
        raw_rows = d.get("fact_score")
        if not isinstance(raw_rows, list) or not raw_rows:
            raise fail("/fact_score", "fact_score must be a list of rows {score, all: [...], any: [...]}")
        for i, r in enumerate(raw_rows):
            if not isinstance(r, dict) or not isinstance(r.get("score"), int):
                raise fail(f"/fact_score/{i}", "each row needs an integer score")
            for key in ("all", "any"):
                preds = r.get(key, [])
                if not isinstance(preds, list) or any(p not in PREDICATES for p in preds):
                    raise fail(
                        f"/fact_score/{i}/{key}",
                        f"{key} must list predicates from: {', '.join(sorted(PREDICATES))}",
                    )
            rows.append(ScoreRow(r["score"], tuple(r.get("all", [])), tuple(r.get("any", []))))
        for n in range(1, MAX_FACTS + 1):
            for s in range(n + 1):
                for m in range(n - s + 1):
                    if not any(row.matches(s, m, n - s - m) for row in rows):
                        raise fail(
                            "/fact_score",
                            f"no row scores stated={s} missed={m} opposed={n - s - m}; end the table with a catch-all",
                        )
    minimums = {}
    for key, default in (("quote_min_words", 3), ("quote_min_chars", 4)):
        value = d.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise fail(f"/{key}", f"{key} must be a whole number >= 1 (got {value!r})")
        minimums[key] = value
    refusal = d.get("refusal_label", "Refusal")
    quote_field = d.get("quote_field", "frame_adopted")
    if not isinstance(refusal, str) or not isinstance(quote_field, str):
        raise fail("", "refusal_label and quote_field must be strings")
    return Rubric(
        name=name,
        version=d["version"],
        kind=d["kind"],
        template=template,
        labels=d["labels"],
        verdict_schema=schema,
        fact_score_rows=rows,
        refusal_label=refusal,
        quote_field=quote_field,
        hash=content_hash({"rubric": d, "template": template}),
        folder=folder,
        **minimums,
    )


def _rel(path: Path, root: Path | None) -> str:
    from propeval.loader import relative_path

    return relative_path(path, root)  # a link is named by its own path, not its target
