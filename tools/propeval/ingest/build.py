"""Input rows -> the claim and item files an import would write, every problem at its row and column.

Two builders share the plan they return:

* :func:`plan_table`: rows of a CSV or JSONL file in the CPE field layout (or mapped onto it);
  rows group into claims by an explicit ``claim`` column, else by source URL and anchor; ids are
  the next free ones; the row's own id is kept in the item's ``notes``.
* :func:`plan_release`: the rows of a release folder that ``propeval export`` wrote; ids, claims,
  facts and markers are taken as they stand, so export -> import -> export is byte-identical.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from propeval.corpus import CLAIM_FILE, content_hash
from propeval.ingest.mapping import CATEGORY_NAMES, QUESTION_TYPES, ColumnMap, words
from propeval.ingest.table import Row
from propeval.names import CLAIM_ID, ITEM_ID
from propeval.result import Problem, Severity
from propeval.textnorm import normalise_url

# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
TEXT_FIELDS = ("prompt", "anchor", "title", "narrative")
TOMBSTONE_PROMPT = "(not in the release: this item was retired before export; only its id, claim and reason are known)"


@dataclass
class Planned:
    """One file to write: ``questions/<folder>/<name>``, its data, and the row it comes from."""

    folder: str
    name: str
    data: dict[str, Any]
    origin: Row
    # data field -> the input field it came from, to point a problem at its column
    sources: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    files: list[Planned] = field(default_factory=list)
    rubrics: dict[str, bytes] = field(default_factory=dict)  # "rubrics/<name>/<file>" -> bytes
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]


@dataclass
class Options:
    """Defaults for what a row does not say."""

    mapping: ColumnMap = field(default_factory=ColumnMap)
    language: str | None = None  # a tag, "auto", or None (then a language column is required)
    kind: str = "censorship"
    source: str = ""  # how the input is named in the items' notes


def guess_language(text: str) -> str | None:
    """``--language auto``: the script of the letters, when it names one language we cover.

    Han -> zh; Cyrillic -> uk with a Ukrainian-only letter, else ru; only ASCII letters -> en;
    anything else (other Latin languages, mixed scripts) -> None: give a language column.
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    scripts = {unicodedata.name(c, "?").split(" ", 1)[0] for c in letters}
    if scripts <= {"CJK"}:
        return "zh"
    if scripts <= {"CYRILLIC"}:
        return "uk" if any(c in "іїєґІЇЄҐ" for c in letters) else "ru"
    if all(c.isascii() for c in letters):
        return "en"
    return None


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


def _formula(row: Row, name: str, text: str) -> Problem | None:
    if text.startswith(FORMULA_START):
        return row.problem(
            name,
            "import-formula",
            f"the text starts with {text[:1]!r}, which a spreadsheet runs as a formula",
            "rewrite it so it does not start with =, +, -, @, a tab or a carriage return",
        )
    return None


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
        bad = _formula(self.row, col, value)
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
            bad = _formula(self.row, col, t)
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
        "title": title or _title(anchor or "", source_url or ""),
        "source_url": source_url,
        "source_date": r.text("source_date"),
        "anchor": anchor,
        "narrative": r.text("narrative"),
        "actor": r.text("actor"),
    }
    explicit = r.text("claim")
    if len(problems) > before or None in (prompt, facts, markers, language, qtype, source_url, anchor):
        return None
    assert prompt is not None and language is not None and qtype is not None and facts is not None
    assert markers is not None and source_url is not None and anchor is not None
    key = ("claim", explicit) if explicit else ("source", normalise_url(source_url), words(anchor))
    return _TableRow(
        row, prompt, language, framing, qtype, facts, categories, markers, claim, key, ext_id, dict(r.sources)
    )


def _title(anchor: str, url: str) -> str:
    host = (urlsplit(url).hostname or url).removeprefix("www.")
    return f"{anchor} ({host})"[:200]


def plan_table(rows: Sequence[Row], options: Options, first_claim: int, first_item: int) -> Plan:
    """Claims and items from table rows; ids from ``c{first_claim}`` and ``i{first_item}`` on."""
    plan = Plan(rows=len(rows))
    groups: dict[tuple[str, ...], list[_TableRow]] = {}
    for t in _parse_table_rows(rows, options, plan):
        groups.setdefault(t.key, []).append(t)
    cnum, inum = first_claim, first_item
    for members in groups.values():
        cid = f"c{cnum:04d}"
        cnum += 1
        if not _group_agrees(members, options, plan):
            continue
        head = members[0]
        plan.files.append(Planned(cid, CLAIM_FILE, _table_claim(cid, members), head.row, _table_claim_columns(options)))
        for t in members:
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
            }
            if t.ext_id:
                item["notes"] = f"imported from {options.source or t.row.path} id {t.ext_id}"
            item_sources = {k: k for k in ("language", "framing", "prompt")}
            item_sources["question_type"] = "question_type" if "question_type" in t.sources else "question_description"
            plan.files.append(Planned(cid, f"{iid}.yaml", item, t.row, _columns(item_sources, options)))
    return plan


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


# --------------------------------------------------------------------------- release folders

_RELEASE_CLAIM = ("claim_id", "claim_kind", "required_facts", "fact_ids", "source_url", "anchor", "categories")
_RELEASE_ITEM = ("id", "prompt", "language", "framing", "question_type")


def _release_claim(row: Row) -> dict[str, Any]:
    f = row.fields
    data: dict[str, Any] = {
        "id": f["claim_id"],
        "kind": f["claim_kind"],
        "title": f.get("claim_title"),
        "facts": [{"id": i, "text": t} for i, t in zip(f["fact_ids"], f["required_facts"], strict=False)],
        "source_url": f["source_url"],
    }
    if f.get("source_date") is not None:
        data["source_date"] = f["source_date"]
    data["anchor"] = f["anchor"]
    data["categories"] = f["categories"]
    data["official_frame_markers"] = [
        {"text": m.get("text"), "language": m.get("language")}
        for m in f.get("frame_markers") or []
        if isinstance(m, dict)
    ]
    for name in ("narrative", "actor"):
        if f.get(name) is not None:
            data[name] = f[name]
    return data


def plan_release(items: Sequence[Row], tombstones: Sequence[Row]) -> Plan:
    """The files of a release: ids as they stand, claims rebuilt from their items' rows."""
    plan = Plan(rows=len(items) + len(tombstones))
    claims: dict[str, tuple[dict[str, Any], Row]] = {}
    ids: dict[str, Row] = {}
    for row in items:
        if _release_row_ok(row, ids, plan):
            _plan_release_item(row, claims, plan)
    for row in tombstones:
        f = row.fields
        if not _id_ok(row, "id", ITEM_ID, ids, plan) or not _id_ok(row, "claim_id", CLAIM_ID, None, plan):
            continue
        if f["claim_id"] not in claims:
            plan.problems.append(
                _warning(
                    row.problem(
                        "claim_id",
                        "import-tombstone",
                        f"{f['id']} was retired from claim {f['claim_id']}, which has no active item in the "
                        "release, so the claim's facts are not in it; the tombstone is not imported",
                        "reserve the id by hand if the claim is ever recreated",
                    )
                )
            )
            continue
        reason = f.get("retired_reason")
        item = {
            "id": f["id"],
            "claim_id": f["claim_id"],
            "language": "und",
            "framing": "neutral",
            "question_type": "named_fact",
            "prompt": TOMBSTONE_PROMPT,
            "status": "retired",
            "retired_reason": reason if isinstance(reason, str) and reason.strip() else "retired before export",
            "notes": "imported from a release's tombstones.jsonl: language, framing, question type and prompt "
            "are not in a release",
        }
        plan.files.append(Planned(f["claim_id"], f"{f['id']}.yaml", item, row, {"retired_reason": "retired_reason"}))
    return plan


def _release_row_ok(row: Row, ids: dict[str, Row], plan: Plan) -> bool:
    """Whether a release row has every field, valid ids and facts; each problem goes to ``plan``."""
    f = row.fields
    missing = [k for k in (*_RELEASE_ITEM, *_RELEASE_CLAIM) if k not in f]
    if missing:
        plan.problems.append(
            row.problem(
                missing[0], "import-row", f"a release row needs {', '.join(missing)}", "export the release again"
            )
        )
        return False
    if not _id_ok(row, "id", ITEM_ID, ids, plan) or not _id_ok(row, "claim_id", CLAIM_ID, None, plan):
        return False
    if not isinstance(f["fact_ids"], list) or not isinstance(f["required_facts"], list):
        plan.problems.append(row.problem("fact_ids", "import-row", "fact_ids and required_facts must be lists"))
        return False
    if len(f["fact_ids"]) != len(f["required_facts"]):
        plan.problems.append(row.problem("fact_ids", "import-row", "fact_ids and required_facts differ in length"))
        return False
    for name in ("prompt", "anchor"):
        if isinstance(f[name], str):
            bad = _formula(row, name, f[name])
            if bad is not None:
                plan.problems.append(bad)
    return True


def _plan_release_item(row: Row, claims: dict[str, tuple[dict[str, Any], Row]], plan: Plan) -> None:
    """Plan a release row's item, and its claim the first time the claim is seen (a later row that
    disagrees on the claim's fields is a problem)."""
    f = row.fields
    claim = _release_claim(row)
    cid = claim["id"]
    if cid in claims:
        first_data, first = claims[cid]
        if first_data != claim:
            diff = sorted(k for k in {*claim, *first_data} if claim.get(k) != first_data.get(k))
            plan.problems.append(
                row.problem(
                    diff[0] if diff[0] in f else "claim_id",
                    "import-group",
                    f"claim {cid}'s {', '.join(diff)} differ from row {first.number}'s",
                    "rows of one claim carry the same claim fields; export the release again",
                )
            )
            return
    else:
        claims[cid] = (claim, row)
        if claim["title"] is None:
            claim["title"] = _title(str(claim["anchor"]), str(claim["source_url"]))
            plan.notes.append(
                f"{cid}: the release has no claim_title (an older export); the title is made up from the anchor"
            )
        _hash_check(row, "claim_hash", claim, plan)
        plan.files.append(Planned(cid, CLAIM_FILE, claim, row, _RELEASE_CLAIM_SOURCES))
    item: dict[str, Any] = {k: f[k] for k in ("id", "claim_id", "language", "framing", "question_type", "prompt")}
    if f.get("translation_of") is not None:
        item["translation_of"] = f["translation_of"]
    item["status"] = "active"
    _hash_check(row, "item_hash", item, plan)
    plan.files.append(Planned(cid, f"{f['id']}.yaml", item, row, {k: k for k in item}))


_RELEASE_CLAIM_SOURCES = {
    "id": "claim_id",
    "kind": "claim_kind",
    "title": "claim_title",
    "facts": "required_facts",
    "official_frame_markers": "frame_markers",
    **{k: k for k in ("source_url", "source_date", "anchor", "categories", "narrative", "actor")},
}


def _warning(p: Problem) -> Problem:
    from dataclasses import replace

    return replace(p, severity=Severity.WARNING)


def _id_ok(row: Row, name: str, pattern: Any, seen: dict[str, Row] | None, plan: Plan) -> bool:
    value = row.fields.get(name)
    if not isinstance(value, str) or not pattern.fullmatch(value):
        plan.problems.append(
            row.problem(
                name,
                "import-id",
                f"{value!r} is not a propeval {'claim' if pattern is CLAIM_ID else 'item'} id",
                "a release's ids look like c0001 and i0001",
            )
        )
        return False
    if seen is not None:
        if value in seen:
            plan.problems.append(
                row.problem(
                    name, "import-id", f"id {value} is also row {seen[value].number}'s", "give every row its own id"
                )
            )
            return False
        seen[value] = row
    return True


def _hash_check(row: Row, name: str, data: dict[str, Any], plan: Plan) -> None:
    given = row.fields.get(name)
    if given is not None and given != content_hash(data):
        plan.problems.append(
            _warning(
                row.problem(
                    name,
                    "import-hash",
                    f"the file import writes does not hash to the release's {name}: the original held fields a "
                    "release does not carry (notes), so a new export will differ in this row",
                )
            )
        )
