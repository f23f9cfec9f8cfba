"""schema.json: loaded strictly, checked against its metaschema, never fetching anything."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from propeval.loader import Document, LoadError, escape, load_file
from propeval.result import Problem

PLACEHOLDER = "TODO"


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
        import jsonschema
        from referencing import Registry, Resource

        def refuse(uri: str) -> Resource:
            raise LookupError(f"remote $ref {uri!r} is never fetched")

        registry: Registry = Registry(retrieve=refuse)  # type: ignore[call-arg]
        cls = jsonschema.validators.validator_for(self.data, default=jsonschema.Draft202012Validator)
        try:
            # Local $refs inlined once: resolving them per instance is most of jsonschema's cost.
            schema = _inline_refs(self.data, self.data, ())
        except _CyclicRef:
            schema = self.data
        return cls(schema, registry=registry)

    def validate(self, doc: Document) -> Iterator[Problem]:
        """Every schema error in ``doc`` as a Problem, located at its JSON pointer."""
        for err in sorted(self.validator.iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path))):
            pointer = "".join(f"/{escape(p)}" for p in err.absolute_path)
            if isinstance(err.instance, str) and err.instance.startswith(PLACEHOLDER):
                continue  # the placeholder rule reports it, with a better message
            message, key = _explain(err)
            if key is not None:
                yield doc.problem(f"{pointer}/{escape(key)}", "schema", message, key=True)
            else:
                yield doc.problem(pointer, "schema", message)


def _explain(err: Any) -> tuple[str, str | None]:
    """A message that says what to do, and the offending key when there is one."""
    v = err.validator
    if v == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        key = extra[0] if extra else None
        close = difflib.get_close_matches(str(key), err.schema.get("properties", {}), n=1)
        if close:
            return f"unknown field {key!r}; did you mean {close[0]!r}?", key
        return f"unknown field {key!r}; remove it or use one of: {allowed}", key
    if v == "required":
        return f"{err.message}; add it", None
    if v == "enum":
        return f"{err.instance!r} is not one of {err.validator_value}; use one of those values", None
    if v == "pattern":
        hint = err.schema.get("description")
        expected = f"; expected {hint}" if hint else ""
        return f"{err.instance!r} does not match the pattern {err.validator_value!r}{expected}", None
    if v in ("minItems", "maxItems"):
        n = len(err.instance)
        bound = "at least" if v == "minItems" else "at most"
        field = f"{err.absolute_path[-1]} " if err.absolute_path else ""
        return f"{field}has {n} entr{'y' if n == 1 else 'ies'}; {bound} {err.validator_value} are allowed", None
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


def _enum(doc: Document | None, *keys: str) -> tuple[str, ...] | None:
    node: Any = doc.data if doc is not None else None
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
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
    metaschema is nearly all of a schema's load (~30 ms): a Workspace checks its schema once."""
    return [
        ("".join(f"/{escape(p)}" for p in err.absolute_path), err.message)
        for err in cls(cls.META_SCHEMA).iter_errors(data)
    ]


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
