"""Rater files: one rater's labels for one field, from a label file or a grades file.

A label file is JSON Lines written by people, one rated unit per line, read by the strict loader
(:func:`read_rater_file`); a grades file (``grades-<rubric>.jsonl``, written by `propeval grade`)
is read as `score` reads it (:func:`read_graded_units`). :func:`align` puts the raters side by
side as the raters x units table the statistics take.

Labels keep their JSON type: ``1`` and ``"1"`` are different labels to the statistics, so label
files that write one label both ways are refused (:func:`label_clashes`) rather than coerced: a
coercion rule ("1.0"? " 1"? "01"?) would be a guess, and the figure would describe data that are
not in the files. ``true`` and ``1`` are refused together too, since Python treats them as equal.
A label typed on the command line is read as the files spell it (:func:`resolve_label`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.agreement.stats import Label
from propeval.errors import UsageError
from propeval.loader import LoadError
from propeval.result import Problem

if TYPE_CHECKING:
    from propeval.config import Config


@dataclass
class RaterFile:
    """One rater's labels for one field, keyed by unit id, and what the file held."""

    name: str
    labels: dict[tuple[str, ...], Label | None]
    path: str = ""
    lines: int = 0  # non-blank lines (units)
    fields: set[str] = field(default_factory=set)  # every key on any line
    with_field: int = 0  # lines that have the labelled field at all (null included)
    first_line: dict[tuple[str, Label], int] = field(default_factory=dict)  # (kind, label) -> first line
    problems: list[Problem] = field(default_factory=list)  # a grades file's records left out, and warnings


def align(raters: Sequence[RaterFile]) -> tuple[list[tuple[str, ...]], list[list[Label | None]]]:
    """The union of unit ids (sorted) and the raters x units table, ``None`` where a rater is silent."""
    keys = sorted({k for r in raters for k in r.labels})
    return keys, [[r.labels.get(k) for k in keys] for r in raters]


def is_grades_file(path: Path) -> bool:
    """A file `propeval grade` wrote: its name is ``grades-<rubric>.jsonl``, as in ``runs/<id>/``."""
    from propeval.judge.runs import rubric_of

    return rubric_of(path) is not None


def read_graded_units(path: Path, config: Config) -> tuple[list[tuple[int, dict[str, Any]]], list[Problem]]:
    """The units of a grades file, ``(line, record)``, and the problems of reading it.

    The file is read as `score` reads it (:func:`propeval.judge.runs.read_graded`, under the rubric
    its name gives): one unit per item with a grade record, its latest one (a retry supersedes an
    error), validated. Its labels are what `score` counts: an unanswered item's are the kind's
    unanswered values (fact 0, propaganda 0), and an unscored or errored item's are missing. A
    record that fails validation is an error Problem; a line that is not JSON raises LoadError.
    """
    from propeval.judge import runs
    from propeval.judge.rubric import load_rubric
    from propeval.loader import relative_path

    rel = relative_path(path, config.root)
    try:
        rubric = load_rubric(
            config.root / config.settings.judge.rubrics_dir, runs.rubric_of(path) or "", root=config.root
        )
    except (LoadError, UsageError) as e:
        p = e.problem if isinstance(e, LoadError) else Problem(rel, 1, 1, "labels", str(e))
        why = f"needed to read {rel} as a grades-<rubric>.jsonl file; name a hand-written label file otherwise"
        raise LoadError(Problem(p.path, p.line, p.col, p.rule, f"{p.message} ({why})")) from None
    kind = rubric.spec
    graded = runs.read_graded(path, kind, root=config.root, rubric=rubric)
    units = []
    for row in graded.rows:
        if row.grade is None:  # no grade record, or one that failed validation (a problem)
            continue
        record = dict(row.grade)
        if row.status != "scored":  # not a verdict: labels are what score counts, nothing or the rule's
            record.update(kind.empty_fields())
            if row.status == "unanswered":
                record.update(kind.unanswered_fields())
        units.append((graded.lines[row.item_id], record))
    return units, graded.problems


def read_rater_file(
    path: Path,
    *,
    field: str,
    id_fields: Sequence[str] = ("item_id",),
    root: Path | None = None,
    config: Config | None = None,
) -> RaterFile:
    """One rater's labels for ``field`` from a JSON Lines file (one unit per line).

    A unit is named by ``id_fields`` (e.g. ``item_id`` and ``model``). A missing or null label is
    a missing rating. A line without an id, or an id given twice, is a :class:`LoadError`: a
    label file is written by people and read by the strict loader. A grades file
    (:func:`is_grades_file`) was written by `propeval grade`, which appends a retry after an
    error: it is read by :func:`read_graded_units` (which needs ``config``), and the records that
    fail validation are left out and listed in ``problems``.
    """
    if not is_grades_file(path):
        from propeval.review.rating import label_rows

        return rater_labels(path, label_rows(path, root), field=field, id_fields=id_fields)
    if config is None:
        raise UsageError(f"{path}: a grades file is read under its rubric, which needs the corpus")
    units, problems = read_graded_units(path, config)
    out = rater_labels(path, units, field=field, id_fields=id_fields)
    out.problems = problems
    return out


def sample_source(path: Path, config: Config | None = None) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The rows `agree sample` draws from, and the problems of reading them: a label file's lines
    (strict loader), or a grades file's units (:func:`read_graded_units`, one per graded item),
    each with what a rater reads (:data:`RATER_TEXTS`: the item's prompt and language, the run's
    answer, the claim's facts and frame markers)."""
    if not is_grades_file(path):
        from propeval.review.rating import label_rows

        return [row for _, row in label_rows(path)], []
    if config is None:
        raise UsageError(f"{path}: a grades file is read under its rubric, which needs the corpus")
    units, problems = read_graded_units(path, config)
    return _with_texts(path, [row for _, row in units], config), problems


# What a rater of a grades file's item reads: shown by `agree sample` by default, beside the labels.
RATER_TEXTS = ("prompt", "answer", "language", "facts", "frame_markers")


def _with_texts(grades: Path, rows: list[dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    """``rows`` with :data:`RATER_TEXTS` filled in from the corpus and the run's answers (a grade
    record holds neither the question nor the answer); a field a row has already is kept."""
    from propeval.corpus import load_corpus
    from propeval.judge import runs

    answers = runs.latest(grades.parent / runs.ANSWERS, config.root)
    corpus = load_corpus(config)
    out = []
    for row in rows:
        item_id = row.get("item_id")
        item = corpus.items.get(item_id) if isinstance(item_id, str) else None
        claim = corpus.claim_of(item) if item is not None else None
        answer = answers.get(item_id, {}).get("answer") if isinstance(item_id, str) else None
        texts: dict[str, Any] = {
            "prompt": item.prompt if item is not None else None,
            "answer": answer if isinstance(answer, str) else None,
            "language": item.language if item is not None else None,
            "facts": [{"id": f.id, "text": f.text} for f in claim.facts] if claim is not None else None,
            "frame_markers": claim.data.get("official_frame_markers") if claim is not None else None,
        }
        out.append({**texts, **row})
    return out


def rater_labels(
    path: Path, rows: Iterable[tuple[int, dict[str, Any]]], *, field: str, id_fields: Sequence[str] = ("item_id",)
) -> RaterFile:
    """A :class:`RaterFile` from ``(line, row)`` pairs (see :func:`read_rater_file`)."""
    field_name = field
    labels: dict[tuple[str, ...], Label | None] = {}
    rel = path.as_posix()
    out = RaterFile(path.stem, labels, rel)
    seen: set[tuple[str, ...]] = set()
    per_part = False
    for line, row in rows:
        if not isinstance(row, dict):
            raise LoadError(Problem(rel, line, 1, "labels", "each line must be a JSON object (one rated unit)"))
        out.lines += 1
        out.fields.update(row)
        missing = [f for f in id_fields if not isinstance(row.get(f), str | int) or isinstance(row.get(f), bool)]
        if missing:
            raise LoadError(
                Problem(rel, line, 1, "labels", f"line has no {missing[0]!r}; every line needs {list(id_fields)}")
            )
        key = tuple(str(row[f]) for f in id_fields)
        if key in seen:
            raise LoadError(Problem(rel, line, 1, "labels", f"unit {'/'.join(key)} is labelled twice; keep one line"))
        value = row.get(field_name)
        out.with_field += field_name in row
        # A mapping of part -> label (fact_states: fact id -> state) is one unit per part: each
        # fact is compared on its own, as a unit of the same nominal scale.
        parts = value.items() if isinstance(value, dict) else [(None, value)]
        for part, label in parts:
            if isinstance(label, list | dict) or (part is not None and not isinstance(part, str)):
                raise LoadError(
                    Problem(
                        rel,
                        line,
                        1,
                        "labels",
                        f"{field_name!r} must be a single label (string, number or null), or an object of them "
                        "(one per fact, as fact_states)",
                    )
                )
            labels[key if part is None else (*key, part)] = label
            if label is not None:
                out.first_line.setdefault((_kind(label), label), line)
        seen.add(key)
        per_part = per_part or isinstance(value, dict)
    if per_part:  # a line without the mapping (not labelled) has no part to compare
        for key in [k for k, v in labels.items() if len(k) == len(id_fields) and v is None]:
            del labels[key]
    return out


def _kind(label: Label) -> str:
    if isinstance(label, bool):
        return "boolean"
    return "number" if isinstance(label, int | float) else "string"


def _as_number(text: str) -> float | None:
    """The number a string label spells, if it spells one (as JSON would write it)."""
    import json

    try:
        value = json.loads(text.strip())
    except ValueError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def label_clashes(raters: Sequence[RaterFile], field_name: str) -> list[Problem]:
    """One label written two ways across the files: ``1`` and ``"1"``, ``true`` and ``"true"``, ``true`` and ``1``.

    Each is a Problem at the second spelling, naming where the first one is.
    """
    seen: dict[tuple[str, Label], tuple[str, int]] = {}
    for r in raters:
        for (kind, label), line in sorted(r.first_line.items(), key=lambda kv: kv[1]):
            seen.setdefault((kind, label), (r.path, line))
    by_number = {float(label): where for (kind, label), where in seen.items() if kind == "number"}  # type: ignore[arg-type]
    by_bool = {bool(label): where for (kind, label), where in seen.items() if kind == "boolean"}
    problems = []
    for (kind, label), (path, line) in sorted(seen.items(), key=lambda kv: kv[1]):
        other: tuple[str, int] | None = None
        spelled = ""
        if kind == "string":
            number = _as_number(str(label))
            if number is not None and number in by_number:
                other, spelled = by_number[number], f"{number:g} (a number)"
            elif str(label).strip() in ("true", "false") and (str(label).strip() == "true") in by_bool:
                other, spelled = by_bool[str(label).strip() == "true"], f"{str(label).strip()} (a boolean)"
        elif kind == "boolean" and (1.0 if label else 0.0) in by_number:
            other, spelled = by_number[1.0 if label else 0.0], f"{1 if label else 0} (a number)"
        if other is None:
            continue
        shown = f'"{label}" (a string)' if kind == "string" else f"{str(label).lower()} (a {kind})"
        problems.append(
            Problem(
                path,
                line,
                1,
                "labels",
                f"{field_name}: {shown} and {spelled} at {other[0]}:{other[1]} are one label written two ways, "
                "and would count as two; write it one way in every file",
            )
        )
    return problems


def resolve_label(token: str, seen: Sequence[Label]) -> Label:
    """The label a command-line token means: one of ``seen`` that it spells, else its JSON reading.

    ``true`` is the JSON boolean unless the files use the string "true"; ``1`` is the number unless
    they use the string "1"; anything else is a string.
    """
    import json

    for label in seen:
        if isinstance(label, str) and label == token:
            return label
    for label in seen:
        if not isinstance(label, str) and json.dumps(label) == token:
            return label
        number = _as_number(token)
        if isinstance(label, int | float) and not isinstance(label, bool) and number == float(label):
            return label
    try:
        value = json.loads(token)
    except ValueError:
        return token
    return value if isinstance(value, bool | int | float) else token
