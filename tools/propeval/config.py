"""``[tool.propeval]`` in the corpus repository's pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.errors import ConfigError

DEFAULT_BLOCKLIST: tuple[str, ...] = ()


@dataclass
class Config:
    """The corpus root and its settings. Sub-tables (``dedup``, ``groups``, ...) stay raw dicts."""

    root: Path
    questions_dir: str = "questions"
    schema: str = "schema.json"
    max_claims_per_source: int = 13
    source_blocklist: tuple[str, ...] = DEFAULT_BLOCKLIST
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def questions(self) -> Path:
        return self.root / self.questions_dir

    @property
    def schema_path(self) -> Path:
        return self.root / self.schema

    def section(self, name: str) -> dict[str, Any]:
        """A sub-table such as ``[tool.propeval.dedup]``; empty when absent."""
        value = self.raw.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"[tool.propeval.{name}] must be a table", key=name)
        return value


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


def load_config(root: Path | None = None) -> Config:
    """Read ``[tool.propeval]`` from ``root``/pyproject.toml (``root`` found upwards when None)."""
    root = (root or find_root()).resolve()
    pyproject = root / "pyproject.toml"
    table: dict[str, Any] = {}
    if pyproject.is_file():
        try:
            with pyproject.open("rb") as fh:
                table = tomllib.load(fh).get("tool", {}).get("propeval", {})
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"pyproject.toml: {e}") from e
    return config_from_table(root, table)


def config_from_table(root: Path, table: dict[str, Any]) -> Config:
    """A Config for the corpus at ``root`` with the ``[tool.propeval]`` table ``table``.

    ``propeval ci --base REF`` builds its Config from REF's table: policy comes from the base.
    """
    cfg = Config(root=root, raw=table)
    for key in ("questions_dir", "schema"):
        if key in table:
            if not isinstance(table[key], str):
                raise ConfigError(f"[tool.propeval] {key} must be a string", key=key)
            setattr(cfg, key, table[key])
    if "max_claims_per_source" in table:
        value = table["max_claims_per_source"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(
                "[tool.propeval] max_claims_per_source must be a positive integer",
                key="max_claims_per_source",
            )
        cfg.max_claims_per_source = value
    if "source_blocklist" in table:
        value = table["source_blocklist"]
        if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
            raise ConfigError("[tool.propeval] source_blocklist must be a list of domain names", key="source_blocklist")
        cfg.source_blocklist = tuple(d.lower().lstrip(".") for d in value)
    return cfg
