"""``docs/settings.md``, generated from the tables' fields: ``python -m propeval.settings > docs/settings.md``."""

from __future__ import annotations

from dataclasses import MISSING, Field
from typing import Any

from propeval.settings.gates import GateSettings
from propeval.settings.judge import JudgeSettings
from propeval.settings.project import TABLES
from propeval.settings.table import ValueType


def _toml(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return str(value)


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    factory: Any = f.default_factory
    return factory()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_docs() -> str:
    """``docs/settings.md``: one section per table, a row per key (type, default, description)."""
    out = [
        "# Settings: `[tool.propeval.*]` in pyproject.toml",
        "",
        "Generated from `tools/propeval/settings/` by `python -m propeval.settings > docs/settings.md`;",
        "a test checks that this file is up to date. Every key is optional. An unknown key, a key of the",
        "wrong type and a key that moved are errors (exit 2) that name the file, the table and the key.",
        "",
    ]
    for cls in TABLES:
        header = f"[tool.propeval.{cls.NAME}]" if cls.NAME else "[tool.propeval]"
        out += [f"## `{header}`", "", cls.DOC, ""]
        out += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
        for name, f in cls.keys().items():
            vtype: ValueType = f.metadata["type"]
            out.append(
                f"| `{name}` | {_cell(vtype.doc)} | `{_cell(_toml(_default(f)))}` | {_cell(f.metadata['doc'])} |"
            )
        if cls is JudgeSettings:
            out.append("| `endpoints` | tables | `local` (below) | one `[tool.propeval.judge.endpoints.NAME]` each |")
        for old, hint in cls.MOVED.items():
            out.append(f"| ~~`{old}`~~ | refused | | {_cell(hint)} |")
        out.append("")
        if cls is GateSettings:
            out += [
                "## `[tool.propeval.signers]`",
                "",
                "The maintainer keys a ledger record must be signed by: one line per maintainer,",
                '`name = "ssh-ed25519 AAAA..."` (`propeval keys new`, then `propeval keys add`). Empty by default.',
                "",
            ]
    return "\n".join(out)
