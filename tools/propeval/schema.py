"""schema.json: loaded strictly, checked against its metaschema, never fetching anything."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from propeval.loader import Document, LoadError, escape, load_file
from propeval.result import Problem

PLACEHOLDER = "TODO"
KINDS = ("claim", "item")


def kind_schema(data: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The schema of one kind of file, for a schema laid out as schema.json is; None otherwise.

    schema.json tells a claim from an item by its content (``if: {required: [facts]}``, then
    ``#/$defs/claim``, else ``#/$defs/item``), so a claim.yaml that lacks ``facts`` would be
    checked as an item: eight errors about item fields, none saying the facts are missing. The
    file's name says what it is meant to be (``claim.yaml``, or an item file), so each kind is
    checked against its own definition, the rest of the root schema kept. The editor's schemas
    (``propeval schema show --kind``) are the same views.
    """
    branch = {"claim": data.get("then"), "item": data.get("else")}
    layout = (
        data.get("if") == {"required": ["facts"]}
        and branch["claim"] == {"$ref": "#/$defs/claim"}
        and branch["item"] == {"$ref": "#/$defs/item"}
    )
    if not layout or kind not in branch:
        return None
    rest = {k: v for k, v in data.items() if k not in ("if", "then", "else")}
    view: dict[str, Any] = {**rest, "allOf": [*rest.get("allOf", []), branch[kind]]}
    sid = rest.get("$id")
    if isinstance(sid, str) and sid.endswith(".json"):
        view["$id"] = f"{sid.removesuffix('.json')}-{kind}.json"
    if isinstance(rest.get("title"), str):
        view["title"] = f"{rest['title']}: {kind}"
    return view


@dataclass
class Schema:
    doc: Document

    @property
    def data(self) -> dict[str, Any]:
        return self.doc.data

    @property
    def version(self) -> str:
        return str(self.data.get("schema_version", ""))

    @cached_property
    def validator(self) -> Any:
        return self._validator(self.data)

    def _validator(self, data: dict[str, Any]) -> Any:
        import jsonschema
        from referencing import Registry, Resource

        def refuse(uri: str) -> Resource:
            raise LookupError(f"remote $ref {uri!r} is never fetched")

        registry: Registry = Registry(retrieve=refuse)  # type: ignore[call-arg]
        cls = jsonschema.validators.validator_for(data, default=jsonschema.Draft202012Validator)
        try:
            # Local $refs inlined once: resolving them per instance is most of jsonschema's cost.
            schema = _inline_refs(data, data, ())
        except _CyclicRef:
            schema = data
        return cls(schema, registry=registry)

    @cached_property
    def _by_kind(self) -> dict[str, Any]:
        """A validator per file kind ("claim", "item") where the schema has a definition for each
        (:func:`kind_schema`); empty for any other layout (the root schema then checks both)."""
        out = {}
        for kind in KINDS:
            view = kind_schema(self.data, kind)
            if view is not None:
                out[kind] = self._validator(view)
        return out

    def validate(self, doc: Document, kind: str | None = None) -> Iterator[Problem]:
        """Every schema error in ``doc`` as a Problem, located at its JSON pointer.

        ``kind`` ("claim" for a claim.yaml, "item" for any other corpus file) picks the definition
        the file is checked against when the schema has one per kind (see :attr:`_by_kind`).
        """
        validator = self._by_kind.get(kind or "", self.validator)
        errors = sorted(validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path)))
        misspelt = _misspelt(errors)
        for err in errors:
            pointer = "".join(f"/{escape(p)}" for p in err.absolute_path)
            if isinstance(err.instance, str) and err.instance.startswith(PLACEHOLDER):
                continue  # the placeholder rule reports it, with a better message
            m = _REQUIRED.match(err.message) if err.validator == "required" else None
            if m is not None and (pointer, m["name"]) in misspelt:
                continue  # one mistake, one message: "unknown field 'promt'; did you mean 'prompt'?" says it
            message, key = _explain(err, kind, validator.schema)
            if key is not None:
                yield doc.problem(f"{pointer}/{escape(key)}", "schema", message, key=True)
            else:
                yield doc.problem(pointer, "schema", message)


_REQUIRED = re.compile(r"^'(?P<name>[^']+)' is a required property$")


def _misspelt(errors: list[Any]) -> set[tuple[str, str]]:
    """(pointer of the object, field) of each missing required field that an unknown field of the
    same object is a close spelling of: the typo's message names it, so its own is left out."""
    unknown: dict[str, list[str]] = {}
    for err in errors:
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            pointer = "".join(f"/{escape(p)}" for p in err.absolute_path)
            unknown.setdefault(pointer, []).extend(
                str(k) for k in set(err.instance) - set(err.schema.get("properties", {}))
            )
    out: set[tuple[str, str]] = set()
    for err in errors:
        m = _REQUIRED.match(err.message) if err.validator == "required" else None
        pointer = "".join(f"/{escape(p)}" for p in err.absolute_path)
        if m is not None and difflib.get_close_matches(m["name"], unknown.get(pointer, []), n=1):
            out.add((pointer, m["name"]))
    return out


def _condition(root: Any, schema_path: Any) -> str:
    """``" with kind: narrative"`` when the schema path runs through a ``then`` whose ``if`` asks
    for one constant value; "" otherwise."""
    node, last_if = root, None
    for part in schema_path:
        if isinstance(node, dict) and part == "then":
            last_if = node.get("if")
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return ""
    props = last_if.get("properties") if isinstance(last_if, dict) else None
    if isinstance(props, dict) and len(props) == 1:
        (name, rule) = next(iter(props.items()))
        if isinstance(rule, dict) and "const" in rule:
            return f" with {name}: {rule['const']}"
    return ""


def _explain(err: Any, kind: str | None = None, root: Any = None) -> tuple[str, str | None]:
    """A message that says what to do, and the offending key when there is one."""
    v = err.validator
    if v == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        key = extra[0] if extra else None
        close = difflib.get_close_matches(str(key), err.schema.get("properties", {}), n=1)
        if close:
            need = f" ({close[0]} is required)" if close[0] in err.schema.get("required", ()) else ""
            return f"unknown field {key!r}; did you mean {close[0]!r}?{need}", key
        return f"unknown field {key!r}; remove it or use one of: {allowed}", key
    if v == "required":
        m = _REQUIRED.match(err.message)
        if m is None:
            return f"{err.message}; add it", None
        name = m["name"]
        prop = (err.schema.get("properties") or {}).get(name)
        described = prop.get("description") if isinstance(prop, dict) else None
        what = f" ({described.rstrip('.')})" if isinstance(described, str) and len(described) <= 160 else ""
        if kind and not err.absolute_path:
            whose = f"every {kind}{_condition(root, err.schema_path)} needs it"
        else:
            whose = f"it is required here{_condition(root, err.schema_path)}"
        return f"{name} missing: {whose}{what}; add it", None
    if v == "enum":
        return f"{err.instance!r} is not one of {err.validator_value}; use one of those values", None
    if v == "pattern":
        hint = err.schema.get("description")
        expected = f"; expected {hint}" if hint else ""
        return f"{err.instance!r} does not match the pattern {err.validator_value!r}{expected}", None
    if v in ("minItems", "maxItems"):
        field = str(err.absolute_path[-1]) if err.absolute_path else ""
        return count_message(field, len(err.instance), v, err.validator_value), None
    if v == "not" and err.schema.get("not", {}).get("required") == ["retired_reason"]:
        return "retired_reason is only for retired items; remove it or set status: retired", "retired_reason"
    return err.message, None


def claim_kinds(doc: Document | None) -> tuple[str, ...] | None:
    """The claim kinds a schema allows (``$defs.claim.properties.kind.enum``); None when the file
    could not be read or does not list them (``propeval check`` reports a broken schema)."""
    return _enum(doc, "$defs", "claim", "properties", "kind", "enum")


def categories(doc: Document | None) -> tuple[str, ...] | None:
    """The categories a schema allows (``$defs.category.enum``); None when it does not list them."""
    return _enum(doc, "$defs", "category", "enum")


def claim_facts_count(doc: Document | None, n: int) -> str:
    """What is wrong with a claim of ``n`` facts under the schema's ``minItems`` and ``maxItems`` of
    ``$defs.claim.properties.facts``, in ``propeval check``'s words; "" when nothing is (or the
    schema does not say)."""
    for bound in ("minItems", "maxItems"):
        value = _at(doc, "$defs", "claim", "properties", "facts", bound)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if (n < value) if bound == "minItems" else (n > value):
            return count_message("facts", n, bound, value)
    return ""


def count_message(field: str, n: int, bound: str, value: int) -> str:
    """``facts has 1 entry; at least 2 are required``: a ``minItems`` or ``maxItems`` miss."""
    least = bound == "minItems"
    return (
        f"{field + ' ' if field else ''}has {n} entr{'y' if n == 1 else 'ies'}; {'at least' if least else 'at most'} "
        f"{value} {'is' if value == 1 else 'are'} {'required' if least else 'allowed'}"
    )


def _at(doc: Document | None, *keys: str) -> Any:
    node: Any = doc.data if doc is not None else None
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _enum(doc: Document | None, *keys: str) -> tuple[str, ...] | None:
    node = _at(doc, *keys)
    return tuple(node) if isinstance(node, list) and all(isinstance(k, str) for k in node) else None


@dataclass
class SchemaFile:
    """schema.json as loaded and checked: the Schema (None when it does not load or is not a valid
    JSON Schema), the problems that say why, and the document (None when it does not load)."""

    schema: Schema | None
    problems: list[Problem]
    doc: Document | None


def check_schema(doc: Document | None, problem: Problem | None) -> SchemaFile:
    """A loaded schema file (or the problem that stopped its load) checked against its metaschema."""
    if doc is None:
        return SchemaFile(None, [problem] if problem is not None else [], None)
    problems = list(check_schema_document(doc))
    return SchemaFile(None if problems else Schema(doc), problems, doc)


def load_schema(path: Path, root: Path | None = None) -> tuple[Schema | None, list[Problem]]:
    """Load schema.json and check it. Returns (schema or None, problems)."""
    try:
        doc = load_file(path, root=root)
    except LoadError as e:
        return None, [e.problem]
    found = check_schema(doc, None)
    return found.schema, found.problems


def check_schema_document(doc: Document) -> Iterator[Problem]:
    """Metaschema validation, ``$id``/``schema_version`` presence, and no ``$ref`` outside the file."""
    import jsonschema

    data = doc.data
    cls = jsonschema.validators.validator_for(data, default=jsonschema.Draft202012Validator)
    if data.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        yield doc.problem(
            "/$schema",
            "schema-meta",
            'schema.json must declare "$schema": "https://json-schema.org/draft/2020-12/schema"',
        )
    for key in ("$id", "schema_version"):
        if not isinstance(data.get(key), str):
            yield doc.problem("", "schema-meta", f"schema.json needs a string {key!r} at the top level; add it")
    for pointer, message in _metaschema_errors(cls, data):
        yield doc.problem(pointer, "schema-meta", f"not a valid JSON Schema: {message}")
    for pointer, ref in _refs(data, ""):
        if not ref.startswith("#"):
            yield doc.problem(
                pointer,
                "schema-ref",
                f"$ref {ref!r} points outside schema.json and is never fetched; "
                'copy the definition under "$defs" and refer to it as "#/$defs/..."',
            )


def _metaschema_errors(cls: Any, data: Any) -> list[tuple[str, str]]:
    """(pointer, message) of each metaschema error of ``data``, in jsonschema's order. Walking the
    metaschema is nearly all of a schema's load (~30 ms): a Workspace checks its schema once, and a
    schema that passed is remembered (:mod:`propeval.memo`, by a digest of its content, jsonschema's
    version and the metaschema's id), so the next command does not walk it again."""
    import hashlib
    import json

    import jsonschema

    from propeval import memo

    # jsonschema as installed: its package folder and that folder's stat, which an install or an
    # upgrade changes (not its version through importlib.metadata, whose import is 20 ms of a commit)
    try:
        folder = os.path.dirname(os.path.abspath(str(jsonschema.__file__)))
        st = os.stat(folder)
        checker = f"jsonschema {folder} {st.st_mtime_ns} {st.st_ino} {cls.META_SCHEMA.get('$id', cls.__name__)}"
    except (OSError, TypeError):
        checker = ""
    fact = None
    if checker:
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
        fact = f"{checker}\0{digest}".encode()
        if memo.remembered("schema metaschema", fact):
            return []
    errors = [
        ("".join(f"/{escape(p)}" for p in err.absolute_path), err.message)
        for err in cls(cls.META_SCHEMA).iter_errors(data)
    ]
    if not errors and fact is not None:
        memo.remember("schema metaschema", fact)
    return errors


def _refs(node: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            child = f"{pointer}/{escape(k)}"
            if k in ("$ref", "$dynamicRef") and isinstance(v, str):
                yield child, v
            else:
                yield from _refs(v, child)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _refs(v, f"{pointer}/{i}")


class _CyclicRef(Exception):
    pass


def _inline_refs(node: Any, root: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """``node`` with every local ``$ref`` replaced by its target (siblings kept under ``allOf``)."""
    if isinstance(node, list):
        return [_inline_refs(v, root, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in seen:
            raise _CyclicRef(ref)
        target: Any = root
        for token in ref[2:].split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        inlined = _inline_refs(target, root, (*seen, ref))
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {"allOf": [inlined, _inline_refs(rest, root, seen)]} if rest else inlined
    return {k: (v if k == "$defs" else _inline_refs(v, root, seen)) for k, v in node.items()}
