"""Classify every change between two versions of schema.json: a pure function of two mappings.

``diff_schemas(old, new)`` walks both schemas structurally: keyword by keyword, into
``properties``, ``items``, combinators and conditionals, and compares ``$defs`` entries pairwise
by name. Where both sides ``$ref`` the same definition the walk stops (that definition is compared
once, under ``$defs``); where the reference changed, both targets are resolved and compared.

Each change is one of:

* **breaking**: a property removed or renamed; a new required field; an enum, type, pattern,
  length or range narrowed; ``additionalProperties`` closed; anything the walk cannot prove
  harmless (a changed ``if``, ``not``, ``format``, or a pattern that is not provably wider).
* **additive**: a new optional field or definition; an enum, type, length or range widened; a
  field no longer required; ``additionalProperties`` opened.
* **docs**: ``description``, ``title``, ``$comment``, ``examples``, ``default`` and similar
  annotations only.

The gate that reads both versions from git and asks for the version bump and the CHANGELOG entry
is :mod:`propeval.schemagate`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from propeval.loader import escape

__all__ = [
    "ADDITIVE",
    "BREAKING",
    "DOCS",
    "IMPACTS",
    "LEVELS",
    "LEVEL_OF",
    "Change",
    "Version",
    "diff_schemas",
    "pattern_widens",
    "required_bump",
]

BREAKING = "breaking"
ADDITIVE = "additive"
DOCS = "docs"
IMPACTS = (BREAKING, ADDITIVE, DOCS)  # what a change does to the files valid under the schema

# Annotations: changing them changes no instance's validity.
_DOC_KEYWORDS = frozenset(
    {"description", "title", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"}
)
# Lower bounds: raising one narrows; upper bounds: lowering one narrows.
_LOWER = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum", "minContains")
_UPPER = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum", "maxContains")
_SUBSCHEMA = ("items", "contains", "propertyNames", "then", "else", "additionalItems")
# Keys of the top level that are bookkeeping, not contract.
_IGNORED_TOP = frozenset({"schema_version"})


@dataclass(frozen=True)
class Change:
    """One classified difference. ``pointer`` is where it is (or was) in the new schema."""

    impact: str  # BREAKING, ADDITIVE or DOCS
    pointer: str
    message: str


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: object) -> Version | None:
        m = re.fullmatch(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", str(text))
        return cls(int(m[1]), int(m[2]), int(m[3])) if m else None

    def bump(self, level: str) -> Version:
        if level == "major":
            return Version(self.major + 1, 0, 0)
        if level == "minor":
            return Version(self.major, self.minor + 1, 0)
        return Version(self.major, self.minor, self.patch + 1)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


LEVELS = ("major", "minor", "patch")
LEVEL_OF = {BREAKING: "major", ADDITIVE: "minor", DOCS: "patch"}


def required_bump(changes: list[Change]) -> str | None:
    """``"major"``, ``"minor"``, ``"patch"`` or None (no change at all)."""
    for impact in IMPACTS:
        if any(c.impact == impact for c in changes):
            return LEVEL_OF[impact]
    return None


# --------------------------------------------------------------------------- patterns


def _structure(pattern: str) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth after it)`` for each ``(``, ``)`` and ``|`` of a regex that is not
    escaped and not inside a character class (a ``]`` first in a class is a literal)."""
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif ch in "()|":
            depth += {"(": 1, ")": -1, "|": 0}[ch]
            yield i, ch, depth
        i += 1


def _branches(pattern: str) -> list[str]:
    """Split a regex at its top-level ``|`` (not inside groups, classes or escapes)."""
    out, start = [], 0
    for i, ch, depth in _structure(pattern):
        if ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    return out


def _alternatives(pattern: str) -> set[str]:
    """The top-level alternatives of a pattern, with whole-branch ``(?:...)`` groups opened up."""
    out: set[str] = set()
    for b in _branches(pattern):
        if b.startswith("(?:") and b.endswith(")") and _branches(b[3:-1]) and _balanced_group(b):
            out |= _alternatives(b[3:-1])
        else:
            out.add(b)
    return out


def _balanced_group(b: str) -> bool:
    """True when the group opened at b[0] closes at the very end of b."""
    depth = 0
    for i, ch, depth in _structure(b):
        if ch == ")" and depth == 0 and i != len(b) - 1:
            return False
    return depth == 0


def pattern_widens(old: str, new: str) -> bool:
    """True only when every string ``old`` matches is provably matched by ``new``.

    JSON Schema patterns are unanchored searches, so ``A|B`` matches what A or B matches. The
    proof used: every top-level alternative of ``old`` is, verbatim, one of ``new``'s. Anything
    cleverer (a widened character class or quantifier) is not attempted and counts as breaking.
    """
    if old == new:
        return True
    return _alternatives(old) <= _alternatives(new)


# --------------------------------------------------------------------------- the walk


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _norm(node: Any) -> dict[str, Any]:
    """Boolean schemas as mappings: ``true`` is ``{}``, ``false`` is ``{"not": {}}``."""
    if node is True or node is None:
        return {}
    if node is False:
        return {"not": {}}
    return node if isinstance(node, dict) else {}


_ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def _types(node: dict[str, Any]) -> frozenset[str] | None:
    t = node.get("type")
    if t is None:
        return None
    return frozenset([t] if isinstance(t, str) else t)


def _covers(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    if wide is None:
        return True
    if narrow is None:
        return wide >= _ALL_TYPES - {"integer"}
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _values(node: dict[str, Any]) -> dict[str, Any] | None:
    if "const" in node:
        return {_key(node["const"]): node["const"]}
    if "enum" in node and isinstance(node["enum"], list):
        return {_key(v): v for v in node["enum"]}
    return None


class _Differ:
    def __init__(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.old_root = old
        self.new_root = new
        self.changes: list[Change] = []
        self._active: set[tuple[int, int]] = set()

    def add(self, impact: str, pointer: str, message: str) -> None:
        self.changes.append(Change(impact, pointer, message))

    # -- references

    def _resolve(self, root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
        """``node`` with a local ``$ref`` replaced by its target (siblings kept on top)."""
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        target = _pointer_get(root, ref[1:]) if ref.startswith("#") else None
        if target is None:
            return None
        merged = dict(_norm(target))
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return self._resolve(root, merged) if "$ref" in _norm(target) else merged

    # -- one pair of schema nodes

    def node(self, old: Any, new: Any, ptr: str, label: str, *, top: bool = False) -> None:
        o, n = _norm(old), _norm(new)
        o_ref, n_ref = o.get("$ref"), n.get("$ref")
        if o_ref != n_ref:
            ro, rn = self._resolve(self.old_root, o), self._resolve(self.new_root, n)
            if ro is None or rn is None:
                self.add(BREAKING, ptr, f"{label}: $ref changed from {o_ref!r} to {n_ref!r}; treated as breaking")
                return
            guard = (id(ro), id(rn))
            if guard in self._active:
                return
            self._active.add(guard)
            try:
                self.node(ro, rn, ptr, label)
            finally:
                self._active.discard(guard)
            return
        # Same (or no) reference: the target is compared once, under $defs.
        keys = [k for k in {**o, **n} if k != "$ref" and not (top and k in _IGNORED_TOP)]
        self.keywords(o, n, keys, ptr, label, top=top)

    def keywords(self, o: dict[str, Any], n: dict[str, Any], keys: list[str], ptr: str, label: str, top: bool) -> None:
        done: set[str] = set()
        renames = self.properties(o, n, ptr, label) if ("properties" in o or "properties" in n) else {}
        done.add("properties")
        self.required(o, n, ptr, label, renames)
        done.add("required")
        for k in keys:
            if k in done or (k in o and k in n and _key(o[k]) == _key(n[k])):
                continue
            at = f"{ptr}/{escape(k)}"
            if k in _DOC_KEYWORDS:
                self.add(DOCS, at if k in n else ptr, f"{label}: {k} {_verb(o, n, k)}")
            elif k == "type":
                self.type_(o, n, at if k in n else ptr, label)
            elif k in ("enum", "const"):
                if "enum" in done:
                    continue
                done.add("enum")
                self.enum(o, n, at if k in n else ptr, label)
            elif k == "pattern":
                self.pattern(o, n, at if k in n else ptr, label)
            elif k in _LOWER or k in _UPPER:
                self.bound(o, n, k, at if k in n else ptr, label)
            elif k == "multipleOf":
                self.multiple(o, n, at if k in n else ptr, label)
            elif k == "uniqueItems":
                if n.get(k) is True:
                    self.add(BREAKING, at, f"{label}: uniqueItems turned on; lists with repeats no longer validate")
                else:
                    self.add(ADDITIVE, at if k in n else ptr, f"{label}: uniqueItems turned off (widened)")
            elif k in ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"):
                self.closed(o, n, k, at if k in n else ptr, label)
            elif k == "$defs" and top:
                self.defs(o.get(k) or {}, n.get(k) or {}, at)
            elif k in _SUBSCHEMA:
                self.node(o.get(k), n.get(k), at, f"{label}/{k}")
            elif k in ("anyOf", "oneOf", "allOf", "prefixItems"):
                self.combinator(o.get(k) or [], n.get(k) or [], k, at if k in n else ptr, label)
            elif k == "not":
                if k in n:
                    self.add(BREAKING, at, f"{label}: 'not' {_verb(o, n, k)}; treated as breaking")
                else:
                    self.add(ADDITIVE, ptr, f"{label}: 'not' removed (widened)")
            elif k == "format":
                if k in n:
                    self.add(BREAKING, at, f"{label}: format {_verb(o, n, k)} ({n[k]!r}); values may no longer pass")
                else:
                    self.add(ADDITIVE, ptr, f"{label}: format {o[k]!r} removed (widened)")
            elif k == "if":
                why = f"{label}: 'if' condition {_verb(o, n, k)}; treated as breaking"
                self.add(BREAKING, at if k in n else ptr, why)
            else:
                self.add(
                    BREAKING,
                    at if k in n else ptr,
                    f"{label}: {k!r} {_verb(o, n, k)}; propeval cannot classify this keyword, so it counts as breaking",
                )

    # -- properties and required

    def properties(self, o: dict[str, Any], n: dict[str, Any], ptr: str, label: str) -> dict[str, str]:
        op, np_ = o.get("properties") or {}, n.get("properties") or {}
        at = f"{ptr}/properties"
        removed = [k for k in op if k not in np_]
        added = [k for k in np_ if k not in op]
        renames: dict[str, str] = {}
        for k in removed:
            twin = next((a for a in added if a not in renames.values() and _key(np_[a]) == _key(op[k])), None)
            if twin is not None:
                renames[k] = twin
                self.add(
                    BREAKING,
                    f"{at}/{escape(twin)}",
                    f"{label}: property {k!r} renamed to {twin!r}; files that use {k!r} need a migration",
                )
            else:
                self.add(
                    BREAKING,
                    at if np_ else ptr,
                    f"{label}: property {k!r} removed; files that use it no longer validate",
                )
        required = set(n.get("required") or [])
        for k in added:
            if k in renames.values():
                continue
            if k in required:
                continue  # reported as a new required field
            self.add(ADDITIVE, f"{at}/{escape(k)}", f"{label}: new optional field {k!r}")
        for k in op:
            if k in np_:
                self.node(op[k], np_[k], f"{at}/{escape(k)}", f"{label}.{k}")
        return renames

    def required(self, o: dict[str, Any], n: dict[str, Any], ptr: str, label: str, renames: dict[str, str]) -> None:
        old = list(o.get("required") or [])
        new = list(n.get("required") or [])
        at = f"{ptr}/required" if "required" in n else ptr
        gone = {renames.get(k, k) for k in old}
        for k in new:
            if k not in gone:
                self.add(BREAKING, at, f"{label}: new required field {k!r}; files without it no longer validate")
        kept = set(new)
        for k in old:
            if renames.get(k, k) not in kept and k in (n.get("properties") or {k: 1}):
                self.add(ADDITIVE, at, f"{label}: {k!r} is no longer required (widened)")

    # -- value constraints

    def type_(self, o: dict[str, Any], n: dict[str, Any], at: str, label: str) -> None:
        ot, nt = _types(o), _types(n)
        shown = f"{sorted(ot) if ot else 'any'} -> {sorted(nt) if nt else 'any'}"
        if _covers(nt, ot):
            self.add(ADDITIVE, at, f"{label}: type widened ({shown})")
        else:
            self.add(BREAKING, at, f"{label}: type narrowed or changed ({shown}); values of the old type fail")

    def enum(self, o: dict[str, Any], n: dict[str, Any], at: str, label: str) -> None:
        ov, nv = _values(o), _values(n)
        if nv is None:
            self.add(ADDITIVE, at, f"{label}: enum removed (any value allowed now)")
            return
        if ov is None:
            self.add(BREAKING, at, f"{label}: enum added ({_show(list(nv.values()))}); other values no longer validate")
            return
        gone = [ov[k] for k in ov if k not in nv]
        new = [nv[k] for k in nv if k not in ov]
        if gone:
            self.add(
                BREAKING,
                at,
                f"{label}: enum narrowed, {_show(gone)} removed"
                + (f" ({_show(new)} added)" if new else "")
                + "; files using the removed values need a migration",
            )
        elif new:
            self.add(ADDITIVE, at, f"{label}: enum widened, {_show(new)} added")
        # Same values in another order: nothing to report.

    def pattern(self, o: dict[str, Any], n: dict[str, Any], at: str, label: str) -> None:
        if "pattern" not in n:
            self.add(ADDITIVE, at, f"{label}: pattern {o['pattern']!r} removed (widened)")
        elif "pattern" not in o:
            self.add(BREAKING, at, f"{label}: pattern {n['pattern']!r} added; values that do not match fail")
        elif pattern_widens(str(o["pattern"]), str(n["pattern"])):
            self.add(ADDITIVE, at, f"{label}: pattern widened ({o['pattern']!r} -> {n['pattern']!r})")
        else:
            self.add(
                BREAKING,
                at,
                f"{label}: pattern changed ({o['pattern']!r} -> {n['pattern']!r}) and is not provably wider; "
                "treated as breaking",
            )

    def bound(self, o: dict[str, Any], n: dict[str, Any], k: str, at: str, label: str) -> None:
        lower = k in _LOWER
        if k not in n:
            self.add(ADDITIVE, at, f"{label}: {k} {o[k]} removed (widened)")
            return
        if k not in o:
            self.add(BREAKING, at, f"{label}: {k} {n[k]} added (narrowed)")
            return
        narrowed = n[k] > o[k] if lower else n[k] < o[k]
        if narrowed:
            self.add(BREAKING, at, f"{label}: {k} narrowed from {o[k]} to {n[k]}; values outside it fail")
        else:
            self.add(ADDITIVE, at, f"{label}: {k} widened from {o[k]} to {n[k]}")

    def multiple(self, o: dict[str, Any], n: dict[str, Any], at: str, label: str) -> None:
        if "multipleOf" not in n:
            self.add(ADDITIVE, at, f"{label}: multipleOf removed (widened)")
        elif "multipleOf" in o and (o["multipleOf"] / n["multipleOf"]).is_integer():
            self.add(ADDITIVE, at, f"{label}: multipleOf widened from {o['multipleOf']} to {n['multipleOf']}")
        else:
            self.add(BREAKING, at, f"{label}: multipleOf {_verb(o, n, 'multipleOf')}; treated as breaking")

    def closed(self, o: dict[str, Any], n: dict[str, Any], k: str, at: str, label: str) -> None:
        ov, nv = o.get(k, True), n.get(k, True)
        if nv is False and ov is not False:
            self.add(BREAKING, at, f"{label}: {k} closed; files with fields the schema does not list fail")
        elif ov is False and nv is not False:
            self.add(ADDITIVE, at, f"{label}: {k} opened (widened)")
        else:
            self.node(ov, nv, at, f"{label}/{k}")

    def combinator(self, old: list[Any], new: list[Any], k: str, at: str, label: str) -> None:
        for i in range(min(len(old), len(new))):
            self.node(old[i], new[i], f"{at}/{i}", f"{label}/{k}/{i}")
        if len(new) > len(old):
            impact = ADDITIVE if k == "anyOf" else BREAKING
            why = "widened" if impact == ADDITIVE else "narrowed"
            self.add(impact, at, f"{label}: {k} gained {len(new) - len(old)} branch(es) ({why})")
        elif len(new) < len(old):
            impact = ADDITIVE if k in ("allOf", "prefixItems") else BREAKING
            why = "widened" if impact == ADDITIVE else "narrowed"
            self.add(impact, at, f"{label}: {k} lost {len(old) - len(new)} branch(es) ({why})")

    def defs(self, old: dict[str, Any], new: dict[str, Any], at: str) -> None:
        for name in old:
            if name in new:
                self.node(old[name], new[name], f"{at}/{escape(name)}", f"#/$defs/{name}")
            else:
                self.add(BREAKING, at, f"definition #/$defs/{name} removed; anything that refers to it breaks")
        for name in new:
            if name not in old:
                self.add(ADDITIVE, f"{at}/{escape(name)}", f"new definition #/$defs/{name}")


def _verb(o: dict[str, Any], n: dict[str, Any], k: str) -> str:
    if k not in o:
        return "added"
    if k not in n:
        return "removed"
    return "changed"


def _pointer_get(root: Any, pointer: str) -> Any:
    node = root
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def diff_schemas(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every classified change from ``old`` to ``new`` (both parsed schema.json mappings)."""
    d = _Differ(old, new)
    d.node(old, new, "", "#", top=True)
    return d.changes
