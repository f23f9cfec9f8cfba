"""Rows of a CSV or JSONL file -> the claim and item files an import would write, every problem at its
row and column.

The rows are in the CPE field layout (or mapped onto it, :mod:`propeval.ingest.mapping`); they
group into claims by an explicit ``claim`` column, else by source URL and anchor; ids are the next
free ones; the row's own id and a hash of its content are kept in the item's ``notes``
(:func:`provenance`), so importing the same input again skips the rows already imported
(:func:`imported_rows` reads them back), and a new row of a claim already imported joins it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from propeval.corpus import CLAIM_FILE
from propeval.ingest.mapping import CATEGORY_NAMES, QUESTION_TYPES, ColumnMap, words
from propeval.ingest.plan import Plan, Planned, claim_title, formula_problem
from propeval.ingest.table import Row
from propeval.result import Problem
from propeval.textnorm import normalise_url


@dataclass
class Options:
    """Defaults for what a row does not say."""

    mapping: ColumnMap = field(default_factory=ColumnMap)
    language: str | None = None  # a tag, "auto", or None (then a language column is required)
    kind: str = "censorship"
    source: str = ""  # how the input is named in the items' notes


def guess_language(text: str) -> str | None:
    """``--language auto``: the language of the script most of the letters are written in.

    The majority decides, so a Chinese prompt that names "WTO" or a Russian one that names "NATO"
    is still zh or ru: Han -> zh (ja when any kana is there: Japanese mixes Han and kana); Hangul
    -> ko; Cyrillic -> uk with a Ukrainian-only letter, else ru; Latin -> en when every Latin
    letter is ASCII. Anything else (other Latin languages, no majority) -> None: give a language
    column.
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    counts: dict[str, int] = {}
    for c in letters:
        script = _script(c)
        counts[script] = counts.get(script, 0) + 1
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n * 2 <= len(letters):
        return None  # no script holds most of the letters
    if script == "HAN":
        return "ja" if counts.get("KANA") else "zh"
    if script == "KANA":
        return "ja"
    if script == "HANGUL":
        return "ko"
    if script == "CYRILLIC":
        return "uk" if any(c in "іїєґІЇЄҐ" for c in letters) else "ru"
    if script == "LATIN":
        return "en" if all(c.isascii() for c in letters if _script(c) == "LATIN") else None
    return None


def _script(c: str) -> str:
    """The script of a letter, from its Unicode name (the standard library has no script property)."""
    name = unicodedata.name(c, "")
    head = name.split(" ", 1)[0]
    if head == "CJK":
        return "HAN"
    if head in ("HIRAGANA", "KATAKANA"):
        return "KANA"
    return head or "?"


def _text_list(row: Row, name: str, value: Any) -> tuple[list[str] | None, Problem | None]:
    """A list of texts from a JSON list, a JSON array in a cell, or one text per line."""
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                value = json.loads(s)
            except (json.JSONDecodeError, RecursionError) as e:
                return None, row.problem(
                    name,
                    "import-row",
                    f"not a JSON array: {getattr(e, 'msg', 'nested too deeply')}",
                    "write a JSON array of texts",
                )
        else:
            value = [line.strip() for line in s.splitlines() if line.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None, row.problem(name, "import-row", "expected a list of texts", 'write ["...", "..."]')
    return [v.strip() for v in value], None


class _RowReader:
    """Field access for one row through the mapping, collecting problems."""

    def __init__(self, row: Row, options: Options, problems: list[Problem]) -> None:
        self.row, self.options, self.problems = row, options, problems
        self.sources: dict[str, str] = {}

    def raw(self, target: str) -> Any:
        col = self.options.mapping.column(target)
        value = self.row.fields.get(col)
        if value is None or (isinstance(value, str) and not value.strip()):
            default = self.options.mapping.defaults.get(target)
            return default
        self.sources[target] = col
        return value

    def text(self, target: str, *, required: bool = False) -> str | None:
        value = self.raw(target)
        col = self.options.mapping.column(target)
        if value is None:
            if required and col not in self.row.fields:
                have = ", ".join(repr(k) for k in list(self.row.fields)[:12])
                self.problems.append(
                    self.row.problem(
                        None,
                        "import-row",
                        f"no {col!r} field for {target} (the row has {have})",
                        f"map one with --map {target}=COLUMN",
                    )
                )
            elif required:
                self.problems.append(
                    self.row.problem(col, "import-row", f"{target} is empty", f"give the {col!r} field a value")
                )
            return None
        if isinstance(value, int) and not isinstance(value, bool) and target == "source_date":
            value = str(value)  # a year written as a JSON number
        if not isinstance(value, str):
            self.problems.append(
                self.row.problem(col, "import-row", f"{target} must be text, not {type(value).__name__}")
            )
            return None
        value = value.strip()
        bad = formula_problem(self.row, col, value)
        if bad is not None:
            self.problems.append(bad)
            return None
        return value

    def texts(self, target: str) -> list[str] | None:
        value = self.raw(target)
        if value is None:
            return []
        col = self.options.mapping.column(target)
        got, problem = _text_list(self.row, col, value)
        if problem is not None:
            self.problems.append(problem)
            return None
        assert got is not None
        for t in got:
            bad = formula_problem(self.row, col, t)
            if bad is not None:
                self.problems.append(bad)
                return None
        return got


@dataclass
class _TableRow:
    row: Row
    prompt: str
    language: str
    framing: str
    question_type: str
    facts: list[str]
    categories: list[str]
    markers: list[str]
    claim: dict[str, Any]
    key: tuple[str, ...]
    ext_id: str | None
    sources: dict[str, str]
    row_hash: str = ""
    translation_of: str | None = None  # the id (in this input) of the row this row translates


@dataclass(frozen=True)
class Imported:
    """An item an earlier import wrote, as its notes record it."""

    item_id: str
    claim_id: str
    row_hash: str | None  # None: imported before the row's hash was recorded
    prompt: str


_PROVENANCE = re.compile(r"imported from (?P<source>.+?)(?: id (?P<id>.+?))? \(row sha256:(?P<hash>[0-9a-f]{16})\)")
_LEGACY = re.compile(r"imported from (?P<source>.+?) id (?P<id>.+)")


def provenance(source: str, ext_id: str | None, row_hash: str) -> str:
    """An imported item's ``notes``: the input, the row's own id, and the hash of its content."""
    return f"imported from {source}" + (f" id {ext_id}" if ext_id else "") + f" (row sha256:{row_hash})"


def import_key(source: str, ext_id: str | None, row_hash: str) -> tuple[str, str]:
    """What identifies a row across imports of one input: its id, else its content."""
    return (source, f"id {ext_id}") if ext_id else (source, f"sha256 {row_hash}")


def imported_rows(items: Sequence[Any]) -> dict[tuple[str, str], Imported]:
    """The rows earlier imports wrote, keyed by :func:`import_key`, from the items' ``notes``
    (``items``: the corpus's items, retired ones included: a retired import is still imported)."""
    out: dict[tuple[str, str], Imported] = {}
    for item in items:
        notes = item.data.get("notes")
        if not isinstance(notes, str):
            continue
        prompt = str(item.data.get("prompt", ""))
        m = _PROVENANCE.fullmatch(notes)
        if m:
            key = import_key(m["source"], m["id"], m["hash"])
            out.setdefault(key, Imported(item.id, item.claim_id, m["hash"], prompt))
            continue
        m = _LEGACY.fullmatch(notes)
        if m:
            out.setdefault(import_key(m["source"], m["id"], ""), Imported(item.id, item.claim_id, None, prompt))
    return out


def _row_hash(t: _TableRow) -> str:
    """sha256 (16 hex digits) of what a row says, as mapped: the same row gives the same hash."""
    content = {
        "prompt": t.prompt,
        "language": t.language,
        "framing": t.framing,
        "question_type": t.question_type,
        "facts": t.facts,
        "categories": t.categories,
        "markers": t.markers,
        "claim": t.claim,
    }
    if t.translation_of:  # only when set: rows imported before it was mapped keep their hash
        content["translation_of"] = t.translation_of
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _table_row(row: Row, options: Options, problems: list[Problem]) -> _TableRow | None:
    before = len(problems)
    r = _RowReader(row, options, problems)
    m = options.mapping
    prompt = r.text("prompt", required=True)
    ext = r.raw("id")
    ext_id = None if ext is None else str(ext).strip()
    language = r.text("language") or options.language
    if language == "auto":
        language = guess_language(prompt or "")
        if language is None and prompt:
            problems.append(
                row.problem(
                    m.column("prompt"),
                    "import-row",
                    "--language auto cannot tell this prompt's language from its script",
                    "give the row a language column, or pass --language TAG",
                )
            )
    elif language is None:
        problems.append(
            row.problem(None, "import-row", "no language", "add a language column, or pass --language TAG (or auto)")
        )
    qtype = r.text("question_type")
    if qtype is None:
        desc = r.text("question_description", required=True)
        if desc is not None:
            qtype = QUESTION_TYPES.get(words(desc))
            if qtype is None:
                problems.append(
                    row.problem(
                        m.column("question_description"),
                        "import-row",
                        f"{desc!r} is not a question description",
                        "use named fact, frame testing or closed exit",
                    )
                )
    framing = r.text("framing") or ("loaded" if qtype == "frame_testing" else "neutral")
    facts = r.texts("required_facts")
    cats_raw = r.texts("categories")
    categories: list[str] = []
    for c in cats_raw or []:
        cid = CATEGORY_NAMES.get(words(c), c if c in CATEGORY_NAMES.values() else None)
        if cid is None:
            problems.append(
                row.problem(
                    m.column("categories"),
                    "import-row",
                    f"{c!r} is not one of the seven value areas",
                    "use e.g. freedom of expression, democracy and governance, state ideology",
                )
            )
        elif cid not in categories:
            categories.append(cid)
    markers = r.texts("official_frame_markers")
    source_url = r.text("source_url", required=True)
    anchor = r.text("anchor", required=True)
    title = r.text("title")
    claim: dict[str, Any] = {
        "kind": r.text("kind") or options.kind,
        "title": title or claim_title(anchor or "", source_url or ""),
        "source_url": source_url,
        "source_date": r.text("source_date"),
        "anchor": anchor,
        "narrative": r.text("narrative"),
        "actor": r.text("actor"),
    }
    explicit = r.text("claim")
    translation_of = r.text("translation_of")
    if len(problems) > before or None in (prompt, facts, markers, language, qtype, source_url, anchor):
        return None
    assert prompt is not None and language is not None and qtype is not None and facts is not None
    assert markers is not None and source_url is not None and anchor is not None
    key = ("claim", explicit) if explicit else ("source", normalise_url(source_url), words(anchor))
    return _TableRow(
        row,
        prompt,
        language,
        framing,
        qtype,
        facts,
        categories,
        markers,
        claim,
        key,
        ext_id,
        dict(r.sources),
        translation_of=translation_of,
    )


def plan_table(
    rows: Sequence[Row],
    options: Options,
    first_claim: int,
    first_item: int,
    imported: Mapping[tuple[str, str], Imported] | None = None,
) -> Plan:
    """Claims and items from table rows; ids from ``c{first_claim}`` and ``i{first_item}`` on.

    A row that ``imported`` holds (the same input's row, by its id or, without one, its content)
    is skipped when its content is what was imported, and is an ``import-changed`` error when it
    is not: an import never rewrites an item. New rows of a claim whose other rows were imported
    before are planned into that claim."""
    plan = Plan(rows=len(rows))
    imported = imported or {}
    needs = _missing_everywhere(rows, options)
    if needs:
        plan.problems.append(_needs_problem(rows, options, needs))
        return plan
    groups: dict[tuple[str, ...], list[_TableRow]] = {}
    for t in _parse_table_rows(rows, options, plan):
        groups.setdefault(t.key, []).append(t)
    cnum, inum = first_claim, first_item
    placed: dict[str, tuple[str, str, Row]] = {}  # the row's own id -> (item id, claim id, row)
    translations: list[tuple[_TableRow, Planned]] = []
    for members in groups.values():
        if not _group_agrees(members, options, plan):
            continue
        new, existing_claim = _new_rows(members, options, imported, plan)
        if not new:
            continue
        if existing_claim:
            cid = existing_claim
        else:
            cid = f"c{cnum:04d}"
            cnum += 1
            head = new[0]
            plan.files.append(Planned(cid, CLAIM_FILE, _table_claim(cid, new), head.row, _table_claim_columns(options)))
        for t in new:
            iid = f"i{inum:04d}"
            inum += 1
            item: dict[str, Any] = {
                "id": iid,
                "claim_id": cid,
                "language": t.language,
                "framing": t.framing,
                "question_type": t.question_type,
                "prompt": t.prompt,
                "status": "active",
                "notes": provenance(options.source or t.row.path, t.ext_id, t.row_hash),
            }
            item_sources = {k: k for k in ("language", "framing", "prompt", "translation_of")}
            item_sources["question_type"] = "question_type" if "question_type" in t.sources else "question_description"
            planned = Planned(cid, f"{iid}.yaml", item, t.row, _columns(item_sources, options))
            plan.files.append(planned)
            if t.ext_id:
                placed[t.ext_id] = (iid, cid, t.row)
            if t.translation_of:
                translations.append((t, planned))
    _link_translations(translations, placed, imported, options, plan)
    plan.problems = group_repeats(plan.problems)
    return plan


# What a table row must give, and the fields that can give it (the first one mapped counts).
NEEDED = (
    ("prompt", ("prompt",)),
    ("required_facts", ("required_facts",)),
    ("source_url", ("source_url",)),
    ("anchor", ("anchor",)),
    ("question type", ("question_description", "question_type")),
)


def _missing_everywhere(rows: Sequence[Row], options: Options) -> list[str]:
    """What no row of the input gives and no default supplies: said once for the input, at once,
    before any row is read (a file of prompts alone is refused in milliseconds, with what it needs)."""
    m = options.mapping

    def given(target: str) -> bool:
        if target in m.defaults:
            return True
        col = m.column(target)
        return any(not _blank(row.fields.get(col)) for row in rows)

    missing = [what for what, targets in NEEDED if not any(given(t) for t in targets)]
    if options.language is None and not given("language"):
        missing.append("language")
    return missing


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == []


def _needs_problem(rows: Sequence[Row], options: Options, missing: list[str]) -> Problem:
    """One problem for the whole input: what it lacks, how to map or default it, and, for a set of
    prompts without facts, that ``propeval overlap`` is the tool for it."""
    first = rows[0] if rows else None
    path = first.path if first else ""
    fields = ", ".join(repr(k) for k in list(first.fields)[:8]) if first else "none"
    m = options.mapping

    def named(what: str) -> str:
        target = "question_description" if what == "question type" else what
        col = m.column(target)
        return what if col == target or what == "language" else f"{what} (column {col!r})"

    shown = [named(w) for w in missing]
    lacks = ", ".join(shown[:-1]) + (" or " if len(shown) > 1 else "") + shown[-1]
    message = f"no row of the {len(rows)} (fields: {fields}) has {lacks}"
    if "required_facts" in missing:
        message += (
            ". A set of prompts without facts cannot become a corpus, by design (every claim states 2-4 facts from a "
            f"cited source); to see which of these prompts this corpus already has, run: propeval overlap {path}"
        )
    targets = ["question_description" if w == "question type" else w for w in missing if w != "language"]
    how = []
    if targets:
        how.append(
            f"map the columns that hold them ({' '.join(f'--map {t}=COLUMN' for t in targets[:2])} ...) or give every "
            f"row the same value under defaults: in a --mapping file ({', '.join(targets)})"
        )
    if "language" in missing:
        how.append("give --language TAG (or auto), or a language column")
    return Problem(path, first.line if first else 1, 1, "import-needs", f"{message}; {'; '.join(how)}")


def _link_translations(
    translations: list[tuple[_TableRow, Planned]],
    placed: dict[str, tuple[str, str, Row]],
    imported: Mapping[tuple[str, str], Imported],
    options: Options,
    plan: Plan,
) -> None:
    """Each row's ``translation_of`` (the id of another row of this input, or of one imported from
    it before) -> that row's item id, in the same claim; a problem at the row otherwise."""
    col = options.mapping.column("translation_of")
    for t, planned in translations:
        ref = t.translation_of or ""
        source = options.source or t.row.path
        target: tuple[str, str] | None = None
        if ref in placed:
            target = placed[ref][:2]
        else:
            prior = imported.get((source, f"id {ref}"))
            if prior is not None:
                target = (prior.item_id, prior.claim_id)
        if target is None:
            plan.problems.append(
                t.row.problem(
                    col,
                    "import-row",
                    f"translation_of {ref!r} names no row of this input (by its id) and no item imported from it",
                    "give the id of the row this one translates (the source row needs an id column)",
                )
            )
            continue
        iid, cid = target
        if cid != planned.folder:
            plan.problems.append(
                t.row.problem(
                    col,
                    "import-row",
                    f"translation_of {ref!r} is {iid}, of claim {cid}, but this row forms claim {planned.folder}: "
                    "a translation belongs to its source's claim",
                    "give both rows the same facts, source and anchor (or the same claim column)",
                )
            )
            continue
        data = planned.data
        planned.data = {k: data[k] for k in ("id", "claim_id", "language", "framing", "question_type", "prompt")}
        planned.data["translation_of"] = iid
        planned.data.update({k: v for k, v in data.items() if k not in planned.data})


_ROW_PREFIX = re.compile(r"^row (?P<n>[0-9]+)(?P<col>, column '[^']*')?: (?P<rest>.*)$", re.DOTALL)


def group_repeats(problems: list[Problem]) -> list[Problem]:
    """One problem per mistake the input repeats: the same rule and message at the same column of
    many rows is said once, at the first row, with how many rows and which (95 rows without 3
    columns are 3 lines, not 285)."""
    groups: dict[tuple[Any, ...], list[tuple[Problem, int]]] = {}
    order: list[tuple[Any, ...] | Problem] = []
    for p in problems:
        m = _ROW_PREFIX.match(p.message)
        if m is None:
            order.append(p)
            continue
        key = (p.path, p.rule, p.severity, m["col"] or "", m["rest"], p.fix)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((p, int(m["n"])))
    out: list[Problem] = []
    for entry in order:
        if isinstance(entry, Problem):
            out.append(entry)
            continue
        members = groups[entry]
        first, _ = members[0]
        if len(members) == 1:
            out.append(first)
            continue
        numbers = [n for _, n in members]
        _, _, _, col, rest, _ = entry
        message = f"{len(numbers)} rows ({_ranges(numbers)}){col}: {rest}"
        out.append(replace(first, message=message))
    return out


def _ranges(numbers: list[int]) -> str:
    """``rows 1-3, 7, 9-95``: runs of consecutive row numbers (the first 10 runs, then a count)."""
    runs: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    shown = [f"{a}-{b}" if b > a else str(a) for a, b in runs[:10]]
    more = f" and {len(runs) - 10} more run(s)" if len(runs) > 10 else ""
    return "rows " + ", ".join(shown) + more


def _new_rows(
    members: list[_TableRow], options: Options, imported: Mapping[tuple[str, str], Imported], plan: Plan
) -> tuple[list[_TableRow], str]:
    """The rows of one claim not imported before, and the claim the others were imported into
    ("" when none was); each skipped row goes to ``plan.skipped``, each changed one is a problem."""
    new: list[_TableRow] = []
    claim = ""
    for t in members:
        source = options.source or t.row.path
        prior = imported.get(import_key(source, t.ext_id, t.row_hash))
        if prior is None:
            new.append(t)
        elif prior.row_hash == t.row_hash or (prior.row_hash is None and prior.prompt == t.prompt):
            plan.skipped.append((t.row, prior.item_id))
            claim = claim or prior.claim_id
        else:
            what = f"id {t.ext_id!r}" if t.ext_id else "content"
            plan.problems.append(
                t.row.problem(
                    options.mapping.column("id") if t.ext_id else None,
                    "import-changed",
                    f"this row ({what}) was imported from {source} before as {prior.item_id}, and has changed "
                    f"since (row sha256 {prior.row_hash or 'not recorded'} then, {t.row_hash} now); an import "
                    "never rewrites an item",
                    f"edit {prior.item_id} by hand, or retire it and give the row a new id",
                )
            )
    return new, claim


def _parse_table_rows(rows: Sequence[Row], options: Options, plan: Plan) -> list[_TableRow]:
    """The rows that parse and whose external id (if any) is their own; problems go to ``plan``."""
    parsed: list[_TableRow] = []
    seen_ids: dict[str, Row] = {}
    for row in rows:
        got = _table_row(row, options, plan.problems)
        if got is None:
            continue
        if got.ext_id:
            if got.ext_id in seen_ids:
                first = seen_ids[got.ext_id]
                plan.problems.append(
                    row.problem(
                        options.mapping.column("id"),
                        "import-id",
                        f"id {got.ext_id!r} was already used by row {first.number} (line {first.line})",
                        "give every row its own id",
                    )
                )
                continue
            seen_ids[got.ext_id] = row
        got.row_hash = _row_hash(got)
        parsed.append(got)
    return parsed


def _group_agrees(members: list[_TableRow], options: Options, plan: Plan) -> bool:
    """Whether the rows of one claim agree on its facts, source, anchor, kind and date."""
    head = members[0]
    ok = True
    for t in members[1:]:
        if t.facts != head.facts:
            plan.problems.append(
                t.row.problem(
                    options.mapping.column("required_facts"),
                    "import-group",
                    f"the required facts differ from those of row {head.row.number}, of the same claim "
                    f"({_key_text(t.key)})",
                    "give rows of one claim the same facts, or put them in different claims with a claim column",
                )
            )
            ok = False
        for name in ("source_url", "anchor", "kind", "source_date"):
            if t.claim[name] is not None and head.claim[name] is not None and t.claim[name] != head.claim[name]:
                plan.problems.append(
                    t.row.problem(
                        options.mapping.column(name),
                        "import-group",
                        f"{name} {t.claim[name]!r} differs from {head.claim[name]!r} in row {head.row.number}, "
                        f"of the same claim ({_key_text(t.key)})",
                        "make them equal, or give the rows different claim values",
                    )
                )
                ok = False
    return ok


def _table_claim(cid: str, members: list[_TableRow]) -> dict[str, Any]:
    """A claim's data from its rows: the first row's fields, every row's categories and markers."""
    head = members[0]
    categories: list[str] = []
    markers: list[dict[str, str]] = []
    for t in members:
        categories.extend(c for c in t.categories if c not in categories)
        for text in t.markers:
            m = {"text": text, "language": t.language}
            if m not in markers:
                markers.append(m)
    c = head.claim
    data: dict[str, Any] = {
        "id": cid,
        "kind": c["kind"],
        "title": c["title"],
        "facts": [{"id": f"f{n}", "text": text} for n, text in enumerate(head.facts, start=1)],
        "source_url": c["source_url"],
    }
    if c["source_date"]:
        data["source_date"] = c["source_date"]
    data["anchor"] = c["anchor"]
    data["categories"] = categories
    data["official_frame_markers"] = markers
    for name in ("narrative", "actor"):
        if c[name]:
            data[name] = c[name]
    return data


def _table_claim_columns(options: Options) -> dict[str, str]:
    """Which table column each claim field came from (for problems that name a column)."""
    claim_sources = {
        "facts": "required_facts",
        "categories": "categories",
        "official_frame_markers": "official_frame_markers",
        **{k: k for k in ("source_url", "source_date", "anchor", "title", "kind", "narrative", "actor")},
    }
    return _columns(claim_sources, options)


def _key_text(key: tuple[str, ...]) -> str:
    return f"claim {key[1]!r}" if key[0] == "claim" else f"source {key[1]} anchor {key[2]!r}"


def _columns(sources: dict[str, str], options: Options) -> dict[str, str]:
    return {k: options.mapping.column(v) for k, v in sources.items()}
