"""The one strict reader of user files (YAML and JSON).

Which files go through it: every file that a person writes, and every file that can arrive in a
pull request, whoever wrote it. A pull request is hostile input, so a file committed to the
repository is untrusted even when propeval wrote it: claims, items, rubrics and gold sets, config,
allowlists, and the ledger records under ``ledger/`` (answerability, judge, dedup, difficulty),
which propeval writes but which reach the base branch through pull requests. So are label files
and filled rater sheets, and files handed in to ``propeval import``.

Which do not: files propeval writes and reads back itself, which no pull request brings, are read
with the standard parser (15x faster, and no positions are needed): the run files under ``runs/``,
which are not committed (:mod:`propeval.judge.runs`; ``run.json`` through :func:`load_written`),
the key of a rater sheet (``agree sample`` writes it for whoever drew the sample, who keeps it from
the rater), and the caches. No kind of file is read both ways.

The rules of the strict loader are the same for YAML and JSON:

* UTF-8 only. A byte-order mark, UTF-16, Latin-1 or any invalid byte is an error that gives the
  byte offset.
* Exactly one mapping per file: no multi-document streams, no empty files, no top-level lists.
* YAML 1.2 core semantics, narrowed so nothing surprises: ``no``/``on``/``yes`` stay strings,
  unquoted dates stay strings, ``0o17``/``017``/``0x1F``/``1:20`` stay strings. Only plain
  decimal integers, plain decimal floats, ``true``/``false`` and ``null``/``~`` are typed.
* No tags (``!!python/object``, ``!custom``), except ``!!str``.
* A duplicate key is an error that names both lines.
* Caps on file size, nesting depth and alias expansion, so a YAML bomb or a 100k-deep file is
  refused in milliseconds. Alias expansion is capped twice, on the event stream before the alias is
  placed: by the nodes it adds and by the bytes of text it adds, so one big string referenced
  many times (1 GB of text from a 500 KB file) fails as surely as a billion-laughs tree.
* Numbers are capped in length (Python refuses to convert integers over 4,300 digits, and a
  float literal can overflow to infinity): a longer or non-finite number is an error at its
  position.
* Every JSON pointer in the data has a 1-based line:col, for error messages.
* Only plain regular files are read: a symbolic link (the file, or a folder below ``root``), a
  hard link, a FIFO, socket or device is refused before it is opened (``propeval.filetypes``).

Problems in a file raise :class:`LoadError`, which carries a ready :class:`~propeval.result.Problem`.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import json.decoder
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.errors import PropevalError
from propeval.result import Problem, Rule

__all__ = [
    "Document",
    "Limits",
    "LoadError",
    "escape",
    "load_file",
    "load_json_array",
    "load_json_text",
    "load_jsonl",
    "load_text",
    "load_written",
    "read_text",
]


@dataclass(frozen=True)
class Limits:
    """Caps that keep a hostile or broken file from costing more than a moment."""

    max_bytes: int = 1_048_576
    max_depth: int = 32
    max_nodes: int = 100_000
    # Bytes of scalar text (keys and values, UTF-8) that aliases may add on top of the file's own.
    max_alias_bytes: int = 1_048_576
    # Characters in one number literal; far below Python's 4,300-digit int conversion limit.
    max_number_chars: int = 100


DEFAULT_LIMITS = Limits()


class LoadError(PropevalError):
    """A user file cannot be loaded; ``problem`` says where and why."""

    exit_code = 1

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.path}:{problem.line}:{problem.col} [{problem.rule}] {problem.message}")
        self.problem = problem


def escape(token: str | int) -> str:
    """Escape one RFC 6901 reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


@dataclass
class Document:
    """A loaded file: its data and where each part of it stands in the text."""

    path: Path
    relpath: str
    data: dict[str, Any]
    text: str
    # pointer -> (line, col) of the value, and of the key for mapping members
    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        """``data.get(key, default)`` (``default`` when the data is not a mapping). A document from
        the load cache answers the keys rules read of every file without unpacking its data."""
        return self.data.get(key, default) if isinstance(self.data, dict) else default

    def head(self, key: str) -> Any:
        """A value the load cache derived from the data (``#source_key``), or ``...``: not kept."""
        return ...

    @property
    def stem(self) -> str:
        """``path.stem``, read off ``relpath`` (rules ask it of every file; a Path costs more)."""
        name = self.relpath.rpartition("/")[2]
        dot = name.rfind(".")
        return name[:dot] if 0 < dot < len(name) - 1 else name

    @property
    def folder_name(self) -> str:
        """``path.parent.name``, read off ``relpath`` where it names the folder."""
        head = self.relpath.rpartition("/")[0]
        return head.rpartition("/")[2] if head else self.path.parent.name

    def locate(self, pointer: str, *, key: bool = False) -> tuple[int, int]:
        """Line and column of ``pointer``, or of its nearest ancestor that has one."""
        p = pointer
        while True:
            if key and p in self.keys:
                return self.keys[p]
            if p in self.values:
                return self.values[p]
            if not p:
                return (1, 1)
            p = p.rsplit("/", 1)[0]

    def problem(self, pointer: str, rule: str | Rule, message: str, *, key: bool = False, **kw: Any) -> Problem:
        """A problem at ``pointer`` of this file; a :class:`Rule` gives it its id and severity."""
        line, col = self.locate(pointer, key=key)
        if isinstance(rule, Rule):
            return rule.problem(self.relpath, line, col, message, pointer=pointer, **kw)
        return Problem(self.relpath, line, col, rule, message, pointer=pointer, **kw)


class _Lines:
    """Offset -> (line, col), both 1-based, for a text."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1


def _fail(relpath: str, line: int, col: int, rule: str, message: str, fix: str = "") -> LoadError:
    return LoadError(Problem(relpath, line, col, rule, message, fix=fix))


# --------------------------------------------------------------------------- bytes -> text


def _decode(raw: bytes, relpath: str) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise _fail(
            relpath,
            1,
            1,
            "encoding",
            "file starts with a UTF-8 byte-order mark; save it as UTF-8 without a BOM",
        )
    for bom, name in ((b"\xff\xfe", "UTF-16 LE"), (b"\xfe\xff", "UTF-16 BE")):
        if raw.startswith(bom):
            raise _fail(
                relpath,
                1,
                1,
                "encoding",
                f"file is {name} (it starts with a byte-order mark); save it as UTF-8",
            )
    nul = raw.find(b"\x00")
    if nul != -1:
        line = raw[:nul].count(b"\n") + 1
        raise _fail(
            relpath,
            line,
            nul - (raw.rfind(b"\n", 0, nul) + 1) + 1,
            "encoding",
            f"NUL byte at byte offset {nul}; the file looks like UTF-16 or binary; save it as UTF-8 text",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        before = raw[: e.start]
        line = before.count(b"\n") + 1
        col = len(before) - (before.rfind(b"\n") + 1) + 1
        hint = "it looks like Latin-1 or another legacy encoding"
        raise _fail(
            relpath,
            line,
            col,
            "encoding",
            f"not valid UTF-8 at byte offset {e.start} (byte 0x{raw[e.start]:02x}); {hint}; save the file as UTF-8",
        ) from None


def _read(path: Path, relpath: str, limits: Limits, root: Path | None = None, *, bom: bool = False) -> str:
    from propeval.filetypes import RefusedFileError, open_regular

    try:
        # Only a plain regular file is opened: a link, hard link, FIFO or device is refused first.
        fd = open_regular(path, relpath, root)
    except RefusedFileError as e:
        raise LoadError(e.problem) from None
    except OSError as e:
        raise _fail(relpath, 1, 1, "read", f"cannot read file: {e.strerror}") from e
    with os.fdopen(fd, "rb") as fh:
        try:
            size = os.fstat(fd).st_size
            if size > limits.max_bytes:
                raise _fail(
                    relpath,
                    1,
                    1,
                    "file-size",
                    f"file is {size} bytes, over the {limits.max_bytes}-byte limit; split it or trim it",
                )
            raw = fh.read(limits.max_bytes + 1)
        except OSError as e:
            raise _fail(relpath, 1, 1, "read", f"cannot read file: {e.strerror}") from e
    if len(raw) > limits.max_bytes:  # grew while we looked
        raise _fail(relpath, 1, 1, "file-size", f"file is over the {limits.max_bytes}-byte limit")
    if bom and raw.startswith(b"\xef\xbb\xbf"):  # Excel's "CSV UTF-8" starts with one
        raw = raw[3:]
    return _decode(raw, relpath)


# --------------------------------------------------------------------------- YAML

_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_STR_TAG = "tag:yaml.org,2002:str"

_loader_cls: Any = None


def _event_loader() -> Any:
    """libyaml's event parser through PyYAML's C binding (the pure-Python parser when it is missing).

    Only the event stream is used: every value is resolved here, so PyYAML's YAML 1.1 typing
    never applies. ruamel.yaml is used for round-trip writing (scaffolds, migrations).
    """
    global _loader_cls
    if _loader_cls is None:
        try:
            from yaml._yaml import CParser  # libyaml binding

            _loader_cls = CParser
        except ImportError:  # PyYAML built without libyaml
            from yaml import SafeLoader

            _loader_cls = SafeLoader
    return _loader_cls


def _parse(text: str) -> Iterator[Any]:
    parser = _event_loader()(text)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


class _NumberError(ValueError):
    """A number literal that is too long or out of range; the caller adds the position."""


def _number(literal: str, is_int: bool, limits: Limits) -> int | float:
    """``literal`` as an int or a finite float, or :class:`_NumberError` that says why not."""
    if len(literal) > limits.max_number_chars:
        raise _NumberError(
            f"a number of {len(literal)} characters is longer than the {limits.max_number_chars}-character "
            "limit; write it as a quoted string or shorten it"
        )
    if is_int:
        return int(literal)
    value = float(literal)
    if not math.isfinite(value):
        raise _NumberError(
            f"the number {literal!r} is out of a float's range; write it as a quoted string or a smaller number"
        )
    return value


def _resolve(value: str, style: str | None, limits: Limits) -> Any:
    if style:  # quoted or block scalar; plain scalars have no style
        return value
    if value in _NULLS:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.fullmatch(value):
        return _number(value, True, limits)
    if _FLOAT.fullmatch(value) and any(c.isdigit() for c in value):
        return _number(value, False, limits)
    return value


class _Frame:
    __slots__ = ("anchor", "container", "key", "nodes", "pointer", "seen", "size")

    def __init__(self, container: Any, pointer: str, anchor: str | None) -> None:
        self.container = container
        self.pointer = pointer
        self.anchor = anchor
        self.key: Any = _NO_KEY
        self.seen: dict[str, tuple[int, int]] = {}
        self.nodes = 1
        self.size = 0  # bytes of scalar text inside, keys included, aliases expanded


_NO_KEY = object()


def _yaml_load(text: str, relpath: str, path: Path, limits: Limits) -> Document:
    # Long on purpose: one loop over libyaml's event stream with its stack, anchors, depth and
    # size budgets in local variables. Split into functions, every limit check would pass that
    # state around, and this is the hostile-input path that must stay easy to audit in one read.
    from yaml import MarkedYAMLError, YAMLError
    from yaml.events import (
        AliasEvent,
        DocumentStartEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )

    doc = Document(path, relpath, {}, text)
    anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, nodes, bytes of text)
    stack: list[_Frame] = []
    root: Any = _NO_KEY
    total = 0
    alias_bytes = 0
    documents = 0

    def mark(ev: Any) -> tuple[int, int]:
        return ev.start_mark.line + 1, ev.start_mark.column + 1

    def child_pointer(frame: _Frame) -> str:
        if isinstance(frame.container, list):
            return f"{frame.pointer}/{len(frame.container)}"
        return f"{frame.pointer}/{escape(frame.key)}"

    def place(value: Any, where: tuple[int, int], nodes: int, size: int) -> None:
        """Attach a finished value to the open container (or make it the root)."""
        nonlocal root
        if not stack:
            root = value
            return
        frame = stack[-1]
        frame.nodes += nodes
        frame.size += size
        if isinstance(frame.container, list):
            frame.container.append(value)
        else:
            frame.container[frame.key] = value
            frame.key = _NO_KEY

    try:
        for ev in _parse(text):
            if isinstance(ev, DocumentStartEvent):
                documents += 1
                if documents > 1:
                    line, col = mark(ev)
                    raise _fail(
                        relpath,
                        line,
                        col,
                        "multi-document",
                        "a second YAML document starts here; keep exactly one document per file",
                    )
                continue
            if isinstance(ev, StreamEndEvent):
                break
            if isinstance(ev, (MappingEndEvent, SequenceEndEvent)):
                frame = stack.pop()
                if frame.anchor:
                    anchors[frame.anchor] = (frame.container, frame.nodes, frame.size)
                place(frame.container, (0, 0), frame.nodes, frame.size)
                continue
            if not isinstance(ev, (ScalarEvent, MappingStartEvent, SequenceStartEvent, AliasEvent)):
                continue

            where = mark(ev)
            tag = getattr(ev, "tag", None)
            if tag is not None and tag not in (_STR_TAG, "!"):
                raise _fail(
                    relpath,
                    *where,
                    "yaml-tag",
                    f"YAML tags are not allowed here (found {tag!r}); remove the tag and write plain data",
                )
            # A mapping key?
            top = stack[-1] if stack else None
            if top is not None and isinstance(top.container, dict) and top.key is _NO_KEY:
                if not isinstance(ev, ScalarEvent):
                    raise _fail(relpath, *where, "yaml-key", "mapping keys must be plain strings")
                key = ev.value
                if key in top.seen:
                    first = top.seen[key]
                    raise _fail(
                        relpath,
                        *where,
                        "duplicate-key",
                        f"duplicate key {key!r} (first defined at line {first[0]}); remove one of them",
                    )
                top.seen[key] = where
                top.size += len(key.encode("utf-8", "surrogatepass"))
                top.key = key
                doc.keys[f"{top.pointer}/{escape(key)}"] = where
                continue

            pointer = child_pointer(top) if top is not None else ""
            doc.values[pointer] = where
            total += 1
            if isinstance(ev, AliasEvent):
                if ev.anchor not in anchors:
                    raise _fail(relpath, *where, "yaml-alias", f"alias *{ev.anchor} refers to no finished anchor")
                value, nodes, size = anchors[ev.anchor]
                total += nodes
                alias_bytes += size
                if total > limits.max_nodes:
                    raise _fail(
                        relpath,
                        *where,
                        "yaml-alias",
                        f"alias expansion exceeds {limits.max_nodes} nodes (a YAML bomb?); "
                        "write the data out without aliases",
                    )
                if alias_bytes > limits.max_alias_bytes:
                    raise _fail(
                        relpath,
                        *where,
                        "yaml-alias",
                        f"aliases repeat more than {limits.max_alias_bytes} bytes of text (a YAML bomb?); "
                        "write the data out without aliases",
                    )
                place(value, where, nodes, size)
                continue
            if total > limits.max_nodes:
                raise _fail(relpath, *where, "file-size", f"file has more than {limits.max_nodes} values")
            if isinstance(ev, ScalarEvent):
                try:
                    value = ev.value if tag is not None else _resolve(ev.value, ev.style, limits)
                except _NumberError as e:
                    raise _fail(relpath, *where, "number-size", str(e)) from None
                size = len(ev.value.encode("utf-8", "surrogatepass"))
                if ev.anchor:
                    anchors[ev.anchor] = (value, 1, size)
                place(value, where, 1, size)
                continue
            if len(stack) >= limits.max_depth:
                raise _fail(
                    relpath,
                    *where,
                    "nesting",
                    f"nesting is deeper than {limits.max_depth} levels; flatten the data",
                )
            container: Any = {} if isinstance(ev, MappingStartEvent) else []
            stack.append(_Frame(container, pointer, ev.anchor))
    except MarkedYAMLError as e:
        m = e.problem_mark or e.context_mark
        line, col = (m.line + 1, m.column + 1) if m is not None else (1, 1)
        if "nesting depth" in str(e.problem):  # libyaml's own cap, met before our event loop
            raise _fail(
                relpath, line, col, "nesting", f"nesting is deeper than {limits.max_depth} levels; flatten the data"
            ) from None
        what = e.problem or e.context or "invalid YAML"
        if e.context and e.problem:
            what = f"{e.problem} ({e.context})"
        raise _fail(relpath, line, col, "yaml-syntax", f"{what}; fix the YAML syntax") from None
    except YAMLError as e:
        raise _fail(relpath, 1, 1, "yaml-syntax", f"{e}; fix the YAML syntax") from None
    except RecursionError:
        raise _fail(relpath, 1, 1, "nesting", "nesting is too deep; flatten the data") from None

    return _finish(doc, root, relpath)


def _finish(doc: Document, root: Any, relpath: str) -> Document:
    if root is _NO_KEY or root is None:
        raise _fail(relpath, 1, 1, "not-a-mapping", "file is empty; it must hold one mapping of fields")
    if not isinstance(root, dict):
        kind = "a list" if isinstance(root, list) else f"a single value ({type(root).__name__})"
        raise _fail(relpath, 1, 1, "not-a-mapping", f"file holds {kind}, not a mapping of fields")
    doc.data = root
    return doc


# --------------------------------------------------------------------------- JSON

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_SURROGATE = re.compile("[\ud800-\udfff]")


_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]  # the C string scanner


class _JsonParser:
    """A small recursive JSON reader that records locations and refuses duplicate keys.

    Depth is capped before recursion can get deep, so it never hits Python's recursion limit.
    """

    def __init__(self, text: str, doc: Document, limits: Limits) -> None:
        self.text = text
        self.doc = doc
        self.limits = limits
        self.lines = _Lines(text)
        self.nodes = 0

    def fail(self, pos: int, rule: str, message: str) -> LoadError:
        line, col = self.lines.at(pos)
        return _fail(self.doc.relpath, line, col, rule, message)

    def no_surrogate(self, s: str, pos: int) -> None:
        """A ``\\udXXX`` escape that pairs with nothing is not a character: no UTF-8 can hold it."""
        m = _SURROGATE.search(s)
        if m is not None:
            raise self.fail(
                pos,
                "encoding",
                f"string holds a lone surrogate escape \\u{ord(m.group()):04x}, which is not a character; "
                "remove it or write the full pair",
            )

    def ws(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        return m.end() if m else pos

    def value(self, pos: int, pointer: str, depth: int) -> tuple[Any, int]:
        from json.decoder import JSONDecodeError

        scanstring = _scanstring

        text = self.text
        pos = self.ws(pos)
        self.doc.values[pointer] = self.lines.at(pos)
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise self.fail(pos, "file-size", f"file has more than {self.limits.max_nodes} values")
        ch = text[pos : pos + 1]
        if ch in ("{", "["):
            if depth >= self.limits.max_depth:
                raise self.fail(
                    pos, "nesting", f"nesting is deeper than {self.limits.max_depth} levels; flatten the data"
                )
            return self.obj(pos, pointer, depth) if ch == "{" else self.arr(pos, pointer, depth)
        if ch == '"':
            try:
                found, end = scanstring(text, pos + 1, True)
            except JSONDecodeError as e:
                raise self.fail(e.pos, "json-syntax", f"{e.msg}; fix the JSON syntax") from None
            self.no_surrogate(found, pos)
            return found, end
        m = _NUMBER.match(text, pos)
        if m and m.end() > pos:
            try:
                return _number(m.group(), not (m.group(1) or m.group(2)), self.limits), m.end()
            except _NumberError as e:
                raise self.fail(pos, "number-size", str(e)) from None
        for word, val in _LITERALS.items():
            if text.startswith(word, pos):
                return val, pos + len(word)
        if not ch:
            raise self.fail(pos, "json-syntax", "unexpected end of file; a value is missing")
        raise self.fail(pos, "json-syntax", f"expected a value, found {ch!r}; fix the JSON syntax")

    def obj(self, pos: int, pointer: str, depth: int) -> tuple[dict[str, Any], int]:
        from json.decoder import JSONDecodeError

        scanstring = _scanstring

        out: dict[str, Any] = {}
        seen: dict[str, tuple[int, int]] = {}
        pos = self.ws(pos + 1)
        if self.text.startswith("}", pos):
            return out, pos + 1
        while True:
            pos = self.ws(pos)
            if not self.text.startswith('"', pos):
                raise self.fail(pos, "json-syntax", "expected a double-quoted key; fix the JSON syntax")
            where = self.lines.at(pos)
            try:
                key, end = scanstring(self.text, pos + 1, True)
            except JSONDecodeError as e:
                raise self.fail(e.pos, "json-syntax", f"{e.msg}; fix the JSON syntax") from None
            self.no_surrogate(key, pos)
            pos = end
            if key in seen:
                raise _fail(
                    self.doc.relpath,
                    *where,
                    "duplicate-key",
                    f"duplicate key {key!r} (first defined at line {seen[key][0]}); remove one of them",
                )
            seen[key] = where
            child = f"{pointer}/{escape(key)}"
            self.doc.keys[child] = where
            pos = self.ws(pos)
            if not self.text.startswith(":", pos):
                raise self.fail(pos, "json-syntax", "expected ':' after the key; fix the JSON syntax")
            out[key], pos = self.value(pos + 1, child, depth + 1)
            pos = self.ws(pos)
            if self.text.startswith(",", pos):
                pos += 1
                continue
            if self.text.startswith("}", pos):
                return out, pos + 1
            raise self.fail(pos, "json-syntax", "expected ',' or '}'; fix the JSON syntax")

    def arr(self, pos: int, pointer: str, depth: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        pos = self.ws(pos + 1)
        if self.text.startswith("]", pos):
            return out, pos + 1
        while True:
            item, pos = self.value(pos, f"{pointer}/{len(out)}", depth + 1)
            out.append(item)
            pos = self.ws(pos)
            if self.text.startswith(",", pos):
                pos += 1
                continue
            if self.text.startswith("]", pos):
                return out, pos + 1
            raise self.fail(pos, "json-syntax", "expected ',' or ']'; fix the JSON syntax")


def _json_load(text: str, relpath: str, path: Path, limits: Limits) -> Document:
    doc = Document(path, relpath, {}, text)
    parser = _JsonParser(text, doc, limits)
    start = parser.ws(0)
    if start >= len(text):
        raise _fail(relpath, 1, 1, "not-a-mapping", "file is empty; it must hold one JSON object")
    root, end = parser.value(start, "", 0)
    end = parser.ws(end)
    if end < len(text):
        raise parser.fail(end, "json-syntax", "extra data after the JSON value; keep exactly one object per file")
    return _finish(doc, root, relpath)


# --------------------------------------------------------------------------- entry points


def _kind(path: Path) -> str:
    return "json" if path.suffix.lower() == ".json" else "yaml"


def load_text(
    text: str | bytes,
    relpath: str,
    *,
    kind: str = "yaml",
    path: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Document:
    """Load one mapping from ``text`` (``kind`` is ``"yaml"`` or ``"json"``)."""
    if isinstance(text, bytes):
        if len(text) > limits.max_bytes:
            raise _fail(relpath, 1, 1, "file-size", f"file is over the {limits.max_bytes}-byte limit")
        text = _decode(text, relpath)
    loader = _json_load if kind == "json" else _yaml_load
    return loader(text, relpath, path or Path(relpath), limits)


def load_json_text(text: str, relpath: str, *, limits: Limits = DEFAULT_LIMITS) -> Document:
    return load_text(text, relpath, kind="json", limits=limits)


def load_file(path: Path, *, root: Path | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Load one YAML or JSON file (by suffix) strictly. Raises :class:`LoadError`."""
    relpath = relative_path(path, root)
    text = _read(path, relpath, limits, root)
    return load_text(text, relpath, kind=_kind(path), path=path, limits=limits)


def load_jsonl(
    path: Path,
    *,
    root: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    max_file_bytes: int = 1 << 30,
    complete: bool = False,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file.

    A bad line raises :class:`LoadError` with that line's number. A final line cut short by a
    kill (no trailing newline and not valid JSON) is the one exception: it is skipped, because
    appenders write whole lines and a torn tail is an interrupted write, not data. With
    ``complete`` (a file people hand in, as ``propeval import`` reads), it is an error too.
    """
    relpath = relative_path(path, root)
    text = _read(path, relpath, dataclasses.replace(limits, max_bytes=max_file_bytes), root)
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = load_text(line, relpath, kind="json", limits=limits)
        except LoadError as e:
            if i == len(lines) and not text.endswith("\n") and not complete:
                return
            p = e.problem
            raise LoadError(Problem(relpath, i, p.col, p.rule, p.message)) from None
        yield i, doc.data


def load_json_array(
    path: Path,
    *,
    root: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    max_file_bytes: int = 1 << 30,
) -> list[tuple[int, Any]]:
    """``(line, element)`` of each element of a file holding one JSON array, strictly (the same
    parser as :func:`load_file`: duplicate keys, depth, node count and number size refused, every
    problem at its line and column). Raises :class:`LoadError`; a file that holds an object is
    ``not-an-array``."""
    relpath = relative_path(path, root)
    text = _read(path, relpath, dataclasses.replace(limits, max_bytes=max_file_bytes), root)
    doc = Document(path, relpath, {}, text)
    parser = _JsonParser(text, doc, limits)
    start = parser.ws(0)
    if start >= len(text):
        raise _fail(relpath, 1, 1, "not-an-array", "file is empty; it must hold one JSON array")
    if not text.startswith("[", start):
        line, col = parser.lines.at(start)
        what = "an object" if text.startswith("{", start) else "a single value"
        raise _fail(relpath, line, col, "not-an-array", f"file holds {what}, not a JSON array of rows")
    root_value, end = parser.value(start, "", 0)
    end = parser.ws(end)
    if end < len(text):
        raise parser.fail(end, "json-syntax", "extra data after the JSON array; keep exactly one array per file")
    return [(doc.values.get(f"/{n}", (1, 1))[0], v) for n, v in enumerate(root_value)]


def load_written(path: Path, *, root: Path | None = None, max_bytes: int = DEFAULT_LIMITS.max_bytes) -> dict[str, Any]:
    """One JSON object from a file propeval wrote and reads back itself, never one that can come
    in a pull request (see the module docstring): the standard parser, with the size capped at
    ``max_bytes`` and NaN/Infinity refused. Raises :class:`LoadError` naming the line and column."""
    relpath = relative_path(path, root)
    try:
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as e:
        raise _fail(relpath, 1, 1, "read", f"cannot read file: {e.strerror}") from e

    def fail(offset: int, rule: str, message: str) -> LoadError:
        line = raw.count(b"\n", 0, offset) + 1
        return _fail(relpath, line, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1, rule, message)

    if len(raw) > max_bytes:
        raise fail(0, "file-size", f"file is over the {max_bytes}-byte limit; the file is damaged")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise fail(e.start, "encoding", f"not valid UTF-8 at byte offset {e.start}; the file is damaged") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise fail(len(text[: e.pos].encode("utf-8")), "json-syntax", f"{e.msg}; the file is damaged") from None
    except RecursionError:
        raise fail(0, "json-depth", "the file nests too deeply to read; the file is damaged") from None
    except ValueError as e:  # NaN/Infinity, or an integer past Python's digit limit
        raise fail(0, "json-syntax", f"{e}; the file is damaged") from None
    if not isinstance(data, dict):
        what = {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(data), "number")
        raise fail(0, "not-a-mapping", f"file holds a {what}, not a mapping of fields")
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_text(
    path: Path, *, root: Path | None = None, max_bytes: int = DEFAULT_LIMITS.max_bytes, bom: bool = False
) -> str:
    """The text of a plain regular file, with the loader's guards: no link or device, at most
    ``max_bytes``, UTF-8 without a byte-order mark (with ``bom``, one UTF-8 byte-order mark at the
    start is dropped: an input file, not a corpus file), no NUL byte. For files the loader does not
    parse itself (CSV). Raises :class:`LoadError`."""
    relpath = relative_path(path, root)
    return _read(path, relpath, dataclasses.replace(DEFAULT_LIMITS, max_bytes=max_bytes), root, bom=bom)


def _under(full: str, base: str) -> str | None:
    """``full`` relative to ``base`` with forward slashes, for a path built under it; else None."""
    if full.startswith(base) and full[len(base) : len(base) + 1] == os.sep and ".." not in full:
        return full[len(base) + 1 :].replace(os.sep, "/")
    return None


def relative_name(full: str, base: str, root: Path) -> str:
    """:func:`relative_path` of the path string ``full`` under ``root`` (``base`` is ``str(root)``),
    without making a Path in the common case (a corpus load asks it for every file)."""
    rel = _under(full, base)
    return rel if rel is not None else relative_path(Path(full), root)


def relative_path(path: Path, root: Path | None) -> str:
    """``path`` relative to ``root`` with forward slashes (resolving links only when needed)."""
    if root is not None:
        # The common case, a path built under root, without pathlib's part-by-part comparison.
        rel = _under(str(path), str(root))
        if rel is not None:
            return rel
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def dumps_json(data: Any) -> str:
    """Canonical JSON used for hashes and ledger files: sorted keys, UTF-8, no spaces."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
