"""Each kind of schema change is classified on a small pair of schemas."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from propeval.schemadiff import Change, Version, diff_schemas, pattern_widens, required_bump
from propeval.schemagate import changelog_has, summary_line

BASE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.invalid/s.json",
    "schema_version": "1.0.0",
    "$ref": "#/$defs/item",
    "$defs": {
        "id": {"type": "string", "pattern": "^i[0-9]{4}$"},
        "short": {"type": "string", "maxLength": 10},
        "long": {"type": "string", "maxLength": 100},
        "item": {
            "type": "object",
            "description": "An item.",
            "additionalProperties": False,
            "required": ["id", "framing"],
            "properties": {
                "id": {"$ref": "#/$defs/id"},
                "framing": {"enum": ["neutral", "loaded"]},
                "prompt": {"type": "string", "minLength": 1, "maxLength": 100},
                "score": {"type": "integer", "minimum": 0, "maximum": 10},
                "tags": {"type": "array", "minItems": 0, "items": {"type": "string"}},
                "title": {"$ref": "#/$defs/short"},
                "notes": {"type": "string"},
                "meta": {"type": "object", "properties": {"by": {"type": "string"}}},
            },
        },
    },
}


def item(s: dict[str, Any]) -> dict[str, Any]:
    return s["$defs"]["item"]


def props(s: dict[str, Any]) -> dict[str, Any]:
    return item(s)["properties"]


Edit = Callable[[dict[str, Any]], None]

CASES: list[tuple[str, Edit, str, str]] = [
    # --- breaking
    ("property removed", lambda s: props(s).pop("notes"), "breaking", "property 'notes' removed"),
    (
        "property renamed",
        lambda s: props(s).update(remarks=props(s).pop("notes")),
        "breaking",
        "property 'notes' renamed to 'remarks'",
    ),
    ("new required field", lambda s: item(s)["required"].append("prompt"), "breaking", "new required field 'prompt'"),
    (
        "new required property",
        lambda s: (props(s).update(lang={"type": "string"}), item(s)["required"].append("lang")),
        "breaking",
        "new required field 'lang'",
    ),
    ("enum narrowed", lambda s: props(s)["framing"].update(enum=["neutral"]), "breaking", 'enum narrowed, ["loaded"]'),
    ("enum added", lambda s: props(s)["notes"].update(enum=["a"]), "breaking", "enum added"),
    ("type narrowed", lambda s: props(s)["score"].update(type="string"), "breaking", "type narrowed or changed"),
    ("pattern changed", lambda s: s["$defs"]["id"].update(pattern="^i[0-9]{5}$"), "breaking", "not provably wider"),
    ("pattern added", lambda s: props(s)["notes"].update(pattern="^x"), "breaking", "pattern '^x' added"),
    ("maxLength narrowed", lambda s: props(s)["prompt"].update(maxLength=50), "breaking", "maxLength narrowed"),
    ("minLength narrowed", lambda s: props(s)["prompt"].update(minLength=5), "breaking", "minLength narrowed"),
    ("minimum raised", lambda s: props(s)["score"].update(minimum=1), "breaking", "minimum narrowed from 0 to 1"),
    ("maximum added", lambda s: props(s)["notes"].update(maxLength=9), "breaking", "maxLength 9 added"),
    ("minItems raised", lambda s: props(s)["tags"].update(minItems=1), "breaking", "minItems narrowed"),
    (
        "additionalProperties closed",
        lambda s: props(s)["meta"].update(additionalProperties=False),
        "breaking",
        "additionalProperties closed",
    ),
    ("definition removed", lambda s: s["$defs"].pop("long"), "breaking", "definition #/$defs/long removed"),
    ("uniqueItems on", lambda s: props(s)["tags"].update(uniqueItems=True), "breaking", "uniqueItems turned on"),
    ("format added", lambda s: props(s)["notes"].update(format="uri"), "breaking", "format added"),
    ("nested items narrowed", lambda s: props(s)["tags"]["items"].update(maxLength=3), "breaking", "tags/items"),
    (
        "ref to a narrower definition",
        lambda s: props(s).update(title={"$ref": "#/$defs/long", "maxLength": 5}),
        "breaking",
        "maxLength narrowed from 10 to 5",
    ),
    ("unknown keyword", lambda s: props(s)["tags"].update(contains={"const": "x"}), "breaking", "contains"),
    # --- additive
    (
        "new optional field",
        lambda s: props(s).update(extra={"type": "string"}),
        "additive",
        "new optional field 'extra'",
    ),
    ("enum widened", lambda s: props(s)["framing"]["enum"].append("mixed"), "additive", 'enum widened, ["mixed"]'),
    ("type widened", lambda s: props(s)["score"].update(type="number"), "additive", "type widened"),
    (
        "pattern widened",
        lambda s: s["$defs"]["id"].update(pattern="^i[0-9]{4}$|^x[0-9]{4}$"),
        "additive",
        "pattern widened",
    ),
    ("pattern removed", lambda s: s["$defs"]["id"].pop("pattern"), "additive", "pattern '^i[0-9]{4}$' removed"),
    ("maxLength widened", lambda s: props(s)["prompt"].update(maxLength=200), "additive", "maxLength widened"),
    ("maximum removed", lambda s: props(s)["score"].pop("maximum"), "additive", "maximum 10 removed"),
    (
        "no longer required",
        lambda s: item(s)["required"].remove("framing"),
        "additive",
        "'framing' is no longer required",
    ),
    ("additionalProperties opened", lambda s: item(s).pop("additionalProperties"), "additive", "opened"),
    ("nested optional field", lambda s: props(s)["meta"]["properties"].update(at={}), "additive", "item.meta: new"),
    ("new definition", lambda s: s["$defs"].update(lang={"type": "string"}), "additive", "new definition #/$defs/lang"),
    (
        "ref to a wider definition",
        lambda s: props(s).update(title={"$ref": "#/$defs/long"}),
        "additive",
        "maxLength widened",
    ),
    # --- docs
    ("description edited", lambda s: item(s).update(description="One item."), "docs", "description changed"),
    ("title added", lambda s: props(s)["notes"].update(title="Notes"), "docs", "title added"),
    ("comment added", lambda s: s["$defs"]["id"].update({"$comment": "why"}), "docs", "$comment added"),
    ("example added", lambda s: props(s)["notes"].update(examples=["x"]), "docs", "examples added"),
]


@pytest.mark.parametrize(("name", "edit", "kind", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_each_kind_of_change_is_classified(name: str, edit: Edit, kind: str, fragment: str) -> None:
    new = copy.deepcopy(BASE)
    edit(new)
    changes = diff_schemas(BASE, new)
    assert len(changes) == 1, changes
    assert changes[0].impact == kind
    assert fragment in changes[0].message


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: props(s)["framing"].update(enum=["loaded", "neutral"]),  # same values, another order
        lambda s: s.update(schema_version="1.0.1"),  # the version alone
        lambda s: item(s).update(required=["framing", "id"]),
    ],
    ids=["enum reordered", "version only", "required reordered"],
)
def test_no_change(edit: Edit) -> None:
    new = copy.deepcopy(BASE)
    edit(new)
    assert diff_schemas(BASE, new) == []


def test_a_shared_definition_is_reported_once_not_at_every_reference() -> None:
    old = copy.deepcopy(BASE)
    props(old)["other_id"] = {"$ref": "#/$defs/id"}
    new = copy.deepcopy(old)
    new["$defs"]["id"]["pattern"] = "^i[0-9]{5}$"
    changes = diff_schemas(old, new)
    assert [(c.impact, c.pointer) for c in changes] == [("breaking", "/$defs/id/pattern")]


def test_the_real_schema_against_itself_has_no_changes() -> None:
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).resolve().parents[2] / "schema.json").read_text(encoding="utf-8"))
    assert diff_schemas(data, copy.deepcopy(data)) == []


@pytest.mark.parametrize(
    ("old", "new", "wider"),
    [
        ("^a$", "^a$|^b$", True),
        ("^a$", "(?:^a$)|^b$", True),
        ("^a$|^b$", "^b$|^c$|^a$", True),
        ("^a$|^b$", "^a$", False),
        ("^c[0-9]{4}$", "^c[0-9]{3,}$", False),  # wider in fact, but not provably: counts as breaking
        ("^(a|b)$", "^(a|b|c)$", False),
        ("[|]x", "[|]x|y", True),
        (r"a\|b", r"a\|b|c", True),
        ("(?:[])]|b)", "[])]|b|c", True),  # a ] first in a class is literal, so ) inside it is too
    ],
)
def test_pattern_widening_is_proved_only_by_added_alternatives(old: str, new: str, wider: bool) -> None:
    assert pattern_widens(old, new) is wider


def test_required_bump_and_summary() -> None:
    changes = [Change("breaking", "", "x"), Change("breaking", "", "y"), Change("additive", "", "z")]
    assert required_bump(changes) == "major"
    assert required_bump([Change("additive", "", "z")]) == "minor"
    assert required_bump([Change("docs", "", "z")]) == "patch"
    assert required_bump([]) is None
    assert (
        summary_line(changes, "1.0.0", "major", "2.0.0")
        == "breaking: 2, additive: 1, docs: 0 -> needs a major bump (1.0.0 -> 2.0.0)"
    )


def test_versions() -> None:
    v = Version.parse("1.4.2")
    assert v is not None
    assert (str(v.bump("major")), str(v.bump("minor")), str(v.bump("patch"))) == ("2.0.0", "1.5.0", "1.4.3")
    assert Version.parse("1.0") is None
    assert Version.parse("01.0.0") is None


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("# Changelog\n\n## 2.0.0\n", True),
        ("## [2.0.0] - 2025-01-01\n", True),
        ("### v2.0.0\n", True),
        ("## 2.0.01\n", False),
        ("- mentions 2.0.0 in passing\n", False),
        ("## 12.0.0\n", False),
    ],
)
def test_changelog_entry(text: str, found: bool) -> None:
    assert changelog_has(text, "2.0.0") is found
