"""``[tool.propeval]`` in the corpus repository's pyproject.toml: finding it, parsing it safely.

The tables themselves (keys, types, defaults, errors) are :mod:`propeval.settings`; the claim kinds
``[tool.propeval.groups.languages]`` may name come from the schema the config names.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import ConfigError
from propeval.result import Problem, clip
from propeval.settings import DEFAULT_SOURCE, CoreSettings, ProjectSettings, read_settings

if TYPE_CHECKING:
    from propeval.loader import Document

MAX_PYPROJECT_BYTES = 1_048_576


@dataclass
class Config:
    """The corpus root and its ``[tool.propeval]`` table (``raw``), read through :attr:`settings`.

    ``source`` names where the table came from in every settings error (``pyproject.toml``, or
    ``pyproject.toml at REF`` when policy is read from a base ref).
    """

    root: Path
    raw: dict[str, Any] = field(default_factory=dict)
    source: str = DEFAULT_SOURCE
    # The schema file to check claims and items against instead of the one ``schema`` names in
    # the tree: ``propeval ci`` puts the base branch's schema here, so that a pull request's own
    # schema.json (a policy change) never decides whether its items pass.
    schema_override: Path | None = None

    @functools.cached_property
    def settings(self) -> ProjectSettings:
        """Every table, read and checked once; a ConfigError names the first problem."""
        return read_settings(self.raw, self.source, claim_kinds=self._claim_kinds)

    def _claim_kinds(self, core: CoreSettings) -> tuple[str, ...] | None:
        """The claim kinds of the schema ``core`` names, for ``[tool.propeval.groups.languages]``."""
        from propeval.schema import claim_kinds

        if core.schema != self._raw_schema:
            return claim_kinds(_load_schema_file(*self._schema_file(core.schema))[0])
        return claim_kinds(self.schema_source[0])

    @property
    def _raw_schema(self) -> str:
        value = self.raw.get("schema", "schema.json")
        return value if isinstance(value, str) else "schema.json"

    @functools.cached_property
    def schema_source(self) -> tuple[Document | None, Problem | None]:
        """The schema file this config names, through the strict loader once: its document, or the
        problem that stopped it (settings read its claim kinds, ``check`` validates against it)."""
        return _load_schema_file(*self._schema_file(self._raw_schema))

    def _schema_file(self, schema: str) -> tuple[Path, Path | None]:
        """The schema file the ``schema`` key names, and the root to read it under (None: the built-in one)."""
        from propeval.builtin import BUILTIN, SCHEMA

        if self.schema_override is not None:
            return self.schema_override, self.schema_override.parent
        if schema == BUILTIN or ("schema" not in self.raw and not (self.root / schema).is_file()):
            return SCHEMA, None
        return self.root / schema, self.root

    @property
    def questions_dir(self) -> str:
        return self.settings.core.questions_dir

    @property
    def schema(self) -> str:
        return self.settings.core.schema

    @property
    def max_claims_per_source(self) -> int:
        return self.settings.core.max_claims_per_source

    @property
    def source_blocklist(self) -> tuple[str, ...]:
        return self.settings.core.source_blocklist

    @property
    def questions(self) -> Path:
        return self.root / self.questions_dir

    @property
    def builtin_schema(self) -> bool:
        """True when claims and items are checked against the schema propeval ships: ``schema =
        "builtin"``, or no ``schema`` key and no schema.json at the root."""
        return self.schema_root is None

    @property
    def schema_path(self) -> Path:
        return self._schema_file(self.schema)[0]

    @property
    def schema_root(self) -> Path | None:
        """The root to read the schema under (its links checked there); None for the built-in one."""
        return self._schema_file(self.schema)[1]


def _load_schema_file(path: Path, root: Path | None) -> tuple[Document | None, Problem | None]:
    from propeval.loader import LoadError, load_file

    try:
        return load_file(path, root=root), None
    except LoadError as e:
        return None, e.problem


def find_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` whose pyproject.toml has ``[tool.propeval]``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.propeval" in pyproject.read_text(encoding="utf-8", errors="replace"):
            return folder
    raise ConfigError(
        f"no pyproject.toml with a [tool.propeval] table at or above {here}; "
        "run propeval inside a corpus repository or pass --root"
    )


LOOKED_FOR = "a pyproject.toml with a [tool.propeval] table, and the questions folder it names (questions_dir)"


def require_corpus(root: Path | None) -> Config:
    """The corpus at ``root`` (found upwards when None), or a UsageError that says what was looked for.

    Every command goes through here, so ``--root`` at a folder that is not a corpus is exit 2, never
    an empty success (an empty result over no corpus reads like a clean corpus).
    """
    from propeval.errors import UsageError

    if root is not None:
        shown = str(root)
        if not root.is_dir():
            raise UsageError(f"--root {shown}: no such folder; looked for {LOOKED_FOR}")
        pyproject = root / "pyproject.toml"
        if not pyproject.is_file():
            raise UsageError(f"--root {shown} is not a propeval corpus: no pyproject.toml; looked for {LOOKED_FOR}")
        data = parse_toml(pyproject.read_bytes(), f"{shown}/pyproject.toml")
        if not isinstance(data.get("tool"), dict) or "propeval" not in data["tool"]:
            raise UsageError(
                f"--root {shown} is not a propeval corpus: its pyproject.toml has no [tool.propeval] table; "
                f"looked for {LOOKED_FOR} (propeval init makes one)"
            )
    config = load_config(root)
    if not config.questions.is_dir():
        where = f"--root {root}" if root is not None else str(config.root)
        raise UsageError(
            f"{where} is not a propeval corpus: no {config.questions_dir}/ folder beside its pyproject.toml; "
            f"looked for {LOOKED_FOR} (propeval init makes one)"
        )
    return config


def load_config(root: Path | None = None) -> Config:
    """Read ``[tool.propeval]`` from ``root``/pyproject.toml (``root`` found upwards when None)."""
    root = (root or find_root()).resolve()
    pyproject = root / "pyproject.toml"
    table: dict[str, Any] = {}
    if pyproject.is_file():
        # A pull request's own pyproject.toml is untrusted input, like every other file in it.
        if pyproject.stat().st_size > MAX_PYPROJECT_BYTES:
            raise ConfigError(f"pyproject.toml is over {MAX_PYPROJECT_BYTES} bytes; trim it")
        table = propeval_table(parse_toml(pyproject.read_bytes(), "pyproject.toml"), "pyproject.toml")
    return config_from_table(root, table)


def parse_toml(data: bytes, source: str) -> dict[str, Any]:
    """A TOML document, every way it can fail a ConfigError naming ``source``: the one TOML reader
    for pyproject.toml (here or at a base ref) and the maintainer's config.toml."""
    if len(data) > MAX_PYPROJECT_BYTES:
        raise ConfigError(f"{source} is over {MAX_PYPROJECT_BYTES} bytes; trim it")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{source}: not valid UTF-8 at byte offset {e.start}; save it as UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: {e}") from e
    except ValueError as e:  # tomllib lets int()'s 4,300-digit limit through as a bare ValueError
        raise ConfigError(f"{source}: a value cannot be read ({clip(str(e), 200)}); shorten it") from e
    except RecursionError:
        raise ConfigError(f"{source} nests arrays or tables too deeply to read; flatten it") from None


def propeval_table(document: dict[str, Any], source: str) -> dict[str, Any]:
    """``[tool.propeval]`` of a parsed pyproject.toml; empty when absent."""
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{source}: [tool] must be a table")
    table = tool.get("propeval", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.propeval] must be a table")
    return table


def config_from_table(root: Path, table: Any, source: str = DEFAULT_SOURCE) -> Config:
    """A Config for the corpus at ``root`` with the ``[tool.propeval]`` table ``table``, every table checked.

    ``propeval ci --base REF`` builds its Config from REF's table: policy comes from the base.
    """
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.propeval] must be a table")
    cfg = Config(root=root, raw=table, source=source)
    cfg.settings  # noqa: B018 - read and check every table now, so a typo fails every command alike
    return cfg
