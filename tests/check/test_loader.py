"""The strict loader: YAML 1.2 narrowed, locations for every pointer, JSON with the same rules."""

from __future__ import annotations

import pytest

from propeval.loader import LoadError, load_text

YAML = """\
id: i0001
plain: no
date: 2024-05-01
octal: 0o17
leading: 017
sexagesimal: 1:20
int: 42
float: 1.5
nul: ~
flag: true
quoted: "yes"
list:
  - a
  - {k: v}
block: |
  two
  lines
"""


def test_yaml_values_keep_their_text() -> None:
    data = load_text(YAML, "x.yaml").data
    assert data == {
        "id": "i0001",
        "plain": "no",
        "date": "2024-05-01",
        "octal": "0o17",
        "leading": "017",
        "sexagesimal": "1:20",
        "int": 42,
        "float": 1.5,
        "nul": None,
        "flag": True,
        "quoted": "yes",
        "list": ["a", {"k": "v"}],
        "block": "two\nlines\n",
    }


def test_every_pointer_has_a_location() -> None:
    doc = load_text(YAML, "x.yaml")
    assert doc.values["/id"] == (1, 5)
    assert doc.keys["/id"] == (1, 1)
    assert doc.values["/list/0"] == (13, 5)
    assert doc.values["/list/1/k"] == (14, 9)
    assert doc.keys["/list/1/k"] == (14, 6)
    assert doc.locate("/list/1/k/deeper") == (14, 9)
    assert doc.locate("/missing") == (1, 1)

    def pointers(node: object, p: str = "") -> list[str]:
        out = [p]
        if isinstance(node, dict):
            for k, v in node.items():
                out += pointers(v, f"{p}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out += pointers(v, f"{p}/{i}")
        return out

    assert set(pointers(doc.data)) == set(doc.values)


def test_json_locations_and_escapes() -> None:
    doc = load_text('{"a~b": {"c/d": [1, "x\\/y"]}}', "x.json", kind="json")
    assert doc.data == {"a~b": {"c/d": [1, "x/y"]}}
    assert doc.values["/a~0b/c~1d/1"] == (1, 21)
    assert doc.keys["/a~0b/c~1d"] == (1, 10)


@pytest.mark.parametrize(
    ("text", "kind", "rule", "where"),
    [
        ("a: 1\nb: 2\na: 3\n", "yaml", "duplicate-key", (3, 1)),
        ('{"a": 1,\n "a": 2}', "json", "duplicate-key", (2, 2)),
        ("a: &x 1\nb: *y\n", "yaml", "yaml-alias", (2, 4)),
        ('{"a": 1} {"b": 2}', "json", "json-syntax", (1, 10)),
        ('{"a": NaN}', "json", "json-syntax", (1, 7)),
        ("a: !!binary aGVsbG8=\n", "yaml", "yaml-tag", (1, 4)),
    ],
)
def test_load_errors(text: str, kind: str, rule: str, where: tuple[int, int]) -> None:
    with pytest.raises(LoadError) as e:
        load_text(text, "x", kind=kind)
    assert (e.value.problem.rule, (e.value.problem.line, e.value.problem.col)) == (rule, where)


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(LoadError) as e:
        load_text("a: 1\nb: 2\na: 3\n", "x.yaml")
    assert str(e.value) == "x.yaml:3:1 [duplicate-key] duplicate key 'a' (first defined at line 1); remove one of them"


def test_bom_is_refused_alike_in_yaml_and_json() -> None:
    for kind, text in (("yaml", b"\xef\xbb\xbfa: 1\n"), ("json", b'\xef\xbb\xbf{"a": 1}')):
        with pytest.raises(LoadError) as e:
            load_text(text, "x", kind=kind)
        assert e.value.problem.rule == "encoding"
        assert "byte-order mark" in e.value.problem.message
