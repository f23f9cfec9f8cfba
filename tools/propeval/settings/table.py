"""The machinery every table is built from: where a value sits, how a value is checked, a table.

* :class:`Where`: a key of a table of a file, which every error names;
* :class:`ValueType` and its subclasses (:class:`Text`, :class:`OneOf`, :class:`Integer`,
  :class:`Number`, :class:`Boolean`, :class:`TextList`, :class:`Pair`, :class:`ListMap`,
  :class:`PairThresholds`): how one key's TOML value is checked and converted, and the type the
  docs name;
* :func:`key` and :func:`derived`: a table's fields;
* :class:`Table`, :func:`read_table` and :func:`unknown_key`: a table read and checked, an
  unknown key refused with the closest known one suggested.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from propeval import names
from propeval.errors import ConfigError
from propeval.langtags import language_key

T = TypeVar("T", bound="Table")


@dataclass(frozen=True)
class Where:
    """A key of a table of a file: what every message names."""

    source: str  # "pyproject.toml", or "pyproject.toml at origin/main"
    table: str  # "dedup", "judge.endpoints.local"; "" for [tool.propeval] itself
    key: str = ""
    root: str = "tool.propeval"  # "" in the maintainer's own config.toml

    @property
    def label(self) -> str:
        dotted = ".".join(p for p in (self.root, self.table) if p)
        return f"[{dotted}]" if dotted else ""

    def at(self, key: str) -> Where:
        return replace(self, key=key)

    def error(self, message: str, *, key: str | None = None) -> ConfigError:
        """``pyproject.toml: [tool.propeval.dedup] batch_size must be ...``"""
        lead = f"{self.source}: {self.label}" if self.label else f"{self.source}:"
        return ConfigError(
            f"{lead} {self.key} {message}" if self.key else f"{lead} {message}", key=key or self.key or None
        )


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def primary_subtag(tag: str) -> str:
    """The primary language subtag of a BCP 47 tag, lower-cased: ``zh-Hans`` -> ``zh``, ``RU`` -> ``ru``.

    The one rule for which language a tag counts as: :func:`propeval.langtags.language_key`.
    """
    return language_key(tag)


# --------------------------------------------------------------------------- value types


class ValueType:
    """How one key's TOML value is checked and converted; ``doc`` names the type in docs and errors."""

    doc = "value"

    def __init__(self, **options: Any) -> None:
        # Plain classes, not dataclasses: a value type is built once per key at import, on every hook call.
        for name, value in options.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no option {name!r}")
            setattr(self, name, value)

    def parse(self, value: Any, where: Where) -> Any:
        raise NotImplementedError

    def wrong(self, value: Any, where: Where) -> ConfigError:
        return where.error(f"must be {self.doc} (got {shown(value)})")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Text(ValueType):
    """A string; ``choices`` limits it, ``nonempty`` refuses "", ``folder`` keeps it inside the repository."""

    choices: tuple[str, ...] = ()
    nonempty: bool = False
    folder: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        if self.folder:
            return "a relative path inside the repository"
        return "a non-empty string" if self.nonempty else "a string"

    def parse(self, value: Any, where: Where) -> str:
        if not isinstance(value, str) or (self.choices and value not in self.choices):
            raise self.wrong(value, where)
        if self.nonempty and not value.strip():
            raise self.wrong(value, where)
        if self.folder:
            try:
                names.folder(value, where.key)
            except ConfigError:
                raise where.error(
                    f"= {shown(value)} must be a relative path inside the repository, without '..'"
                ) from None
        return value


class OneOf(Text):
    """A name in a registry that may grow (the embedding backends, their runtimes): ``names`` is
    asked at every check and for the docs, so a backend registered after import is accepted."""

    names: Any = tuple

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.names())

    def parse(self, value: Any, where: Where) -> str:
        # a name the registry holds is asked of it alone: listing every name may load its plugins
        if isinstance(value, str) and value in self.names():
            return value
        return super().parse(value, where)


class Integer(ValueType):
    lo: int | None = None
    hi: int | None = None

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.lo is not None and self.hi is not None:
            return f"an integer {self.lo}-{self.hi}"
        return f"an integer >= {self.lo}" if self.lo is not None else "an integer"

    def parse(self, value: Any, where: Where) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.wrong(value, where)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise self.wrong(value, where)
        return value


class Number(ValueType):
    """An int or a float, returned as a float; ``lo_open`` excludes ``lo`` itself."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.lo is not None and self.hi is not None:
            return f"a number in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}]"
        return f"a number >= {self.lo:g}" if self.lo is not None else "a number"

    def parse(self, value: Any, where: Where) -> float:
        if not is_number(value):
            raise self.wrong(value, where)
        low_ok = self.lo is None or (value > self.lo if self.lo_open else value >= self.lo)
        if not low_ok or (self.hi is not None and value > self.hi):
            raise self.wrong(value, where)
        return float(value)


class Boolean(ValueType):
    doc = "true or false"

    def parse(self, value: Any, where: Where) -> bool:
        if not isinstance(value, bool):
            raise self.wrong(value, where)
        return value


class TextList(ValueType):
    """A list of non-empty strings, returned as a tuple; ``language`` keeps each tag's primary subtag,
    ``domain`` lower-cases and drops a leading dot."""

    nonempty: bool = False
    language: bool = False
    domain: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        what = "language tags" if self.language else "domain names" if self.domain else "strings"
        return f"a {'non-empty ' if self.nonempty else ''}list of {what}"

    def parse(self, value: Any, where: Where) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.wrong(value, where)
        if self.nonempty and not value:
            raise self.wrong(value, where)
        if self.language:
            return tuple(primary_subtag(v) for v in value)
        if self.domain:
            return tuple(v.lower().lstrip(".") for v in value)
        return tuple(value)


class Pair(ValueType):
    """Two increasing numbers ``[low, high]``, optionally strictly inside ``(lo, hi)``."""

    lo: float | None = None
    hi: float | None = None

    @property
    def doc(self) -> str:  # type: ignore[override]
        inside = f", strictly between {self.lo:g} and {self.hi:g}" if self.lo is not None else ""
        return f"two increasing numbers [low, high]{inside}"

    def parse(self, value: Any, where: Where) -> tuple[float, float]:
        if not isinstance(value, list) or len(value) != 2 or not all(is_number(v) for v in value):
            raise self.wrong(value, where)
        low, high = float(value[0]), float(value[1])
        if not low < high or (self.lo is not None and self.hi is not None and not self.lo < low < high < self.hi):
            raise self.wrong(value, where)
        return low, high


class ListMap(ValueType):
    """A table of name -> list of non-empty strings, merged over ``base`` (a name given replaces
    that name's list). ``language_keys`` keeps each name's primary subtag; ``lower`` lower-cases the
    strings."""

    base: Mapping[str, tuple[str, ...]] = MappingProxyType({})
    lower: bool = False
    language_keys: bool = False

    doc = "a table of names to lists of non-empty strings"

    def parse(self, value: Any, where: Where) -> dict[str, tuple[str, ...]]:
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) and s.strip() for s in v) for v in value.values()
        ):
            raise Where(where.source, f"{where.table}.{where.key}").error(
                "must map names to lists of non-empty strings"
            )
        out = dict(self.base)
        for k, v in value.items():
            name = primary_subtag(str(k)) if self.language_keys else str(k)
            out[name] = tuple(s.strip().lower() if self.lower else s for s in v)
        return out


class PairThresholds(ValueType):
    """A table of language pairs (``"en-zh"``, ``"ru-ru"``; either order) to cosines in (0, 1], keyed
    by :func:`language_pair`."""

    doc = 'a table of language pairs ("en-zh", "ru-ru") to numbers in (0, 1]'

    def parse(self, value: Any, where: Where) -> dict[str, float]:
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        out: dict[str, float] = {}
        for k, v in value.items():
            parts = str(k).split("-")
            if len(parts) != 2 or not all(p.isalpha() and 2 <= len(p) <= 3 for p in parts):
                raise where.error(f'has key {shown(k)}: write a pair of primary language subtags, as "en-zh"')
            if not is_number(v) or not 0 < float(v) <= 1:
                raise where.error(f"[{k!r}] must be a number in (0, 1] (got {shown(v)})")
            out[language_pair(*parts)] = float(v)
        return out


class PairRanges(ValueType):
    """A table of language pairs (``"de-zh"``; either order) to ``[low, high]`` score ranges, keyed by
    :func:`language_pair` (a margin may be below 0: each bound is a number in [-1, 1], low <= high)."""

    doc = 'a table of language pairs ("de-zh") to [low, high] ranges of numbers in [-1, 1]'

    def parse(self, value: Any, where: Where) -> dict[str, tuple[float, float]]:
        if not isinstance(value, dict):
            raise self.wrong(value, where)
        out: dict[str, tuple[float, float]] = {}
        for k, v in value.items():
            parts = str(k).split("-")
            if len(parts) != 2 or not all(p.isalpha() and 2 <= len(p) <= 3 for p in parts):
                raise where.error(f'has key {shown(k)}: write a pair of primary language subtags, as "de-zh"')
            ok = isinstance(v, list) and len(v) == 2 and all(is_number(x) and -1 <= float(x) <= 1 for x in v)
            if not ok or float(v[0]) > float(v[1]):
                raise where.error(
                    f"[{k!r}] must be [low, high], two numbers in [-1, 1] with low <= high (got {shown(v)})"
                )
            out[language_pair(*parts)] = (float(v[0]), float(v[1]))
        return out


def language_pair(a: str, b: str) -> str:
    """The key of a pair of languages, in either order: ``language_pair("zh", "en") == "en-zh"``."""
    x, y = sorted((primary_subtag(a), primary_subtag(b)))
    return f"{x}-{y}"


def key(vtype: ValueType, default: Any, doc: str, *, factory: Any = None) -> Any:
    """A settings key: a dataclass field with its value type and one-line description."""
    meta = {"type": vtype, "doc": doc}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def derived(default: Any, doc: str) -> Any:
    """A field that is not a key of this table: it is read from the table named in ``doc``."""
    return field(default=default, metadata={"derived": doc})


# --------------------------------------------------------------------------- tables


class Table:
    """A ``[tool.propeval.NAME]`` table. Subclasses are frozen dataclasses of :func:`key` fields."""

    NAME: ClassVar[str] = ""  # the dotted table name under tool.propeval
    DOC: ClassVar[str] = ""
    # old key -> where it lives now (the whole sentence after "... has KEY: ")
    MOVED: ClassVar[dict[str, str]] = {}

    @classmethod
    def keys(cls) -> dict[str, Field[Any]]:
        return {f.name: f for f in fields(cls) if "type" in f.metadata}  # type: ignore[arg-type]

    def validate(self, where: Where) -> None:
        """Checks across keys, after each key is read; raise ``where.at(key).error(...)``."""


def unknown_key(where: Where, name: str, known: Collection[str], *, noun: str = "key") -> ConfigError:
    """``unknown key 'treshold'; did you mean 'threshold'?``, or the known names when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"known {noun}s: {', '.join(sorted(known))}"
    return where.error(f"unknown {noun} {name!r}; {hint}", key=name)


def read_table(cls: type[T], raw: Any, where: Where, *, tables: Sequence[str] = ()) -> T:
    """Check ``raw`` against ``cls``'s keys and build it. ``tables`` are sub-table names read elsewhere."""
    if not isinstance(raw, dict):
        raise where.error("must be a table")
    known = cls.keys()
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name in tables:
            continue
        if name in cls.MOVED:
            raise where.at(name).error(cls.MOVED[name])
        if name not in known:
            raise unknown_key(where, str(name), [*known, *tables])
        vtype: ValueType = known[name].metadata["type"]
        values[name] = vtype.parse(value, where.at(name))
    obj = cls(**values)
    obj.validate(where)
    return obj
