"""``propeval schema show``: the schema as JSON, whole or as the view ``check`` applies to one kind."""

from __future__ import annotations

import json
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError, UsageError


def _load(config: Config | None) -> tuple[dict[str, Any], str]:
    """The built-in schema (``config`` None), or the one ``config``'s corpus checks with, loaded
    strictly, and its text; a ConfigError names the file when it does not load."""
    from propeval.builtin import SCHEMA
    from propeval.loader import read_text
    from propeval.schema import load_schema

    path, root = (SCHEMA, None) if config is None else (config.schema_path, config.schema_root)
    schema, problems = load_schema(path, root=root)
    if schema is None:
        first = problems[0] if problems else None
        where = f"{first.path}:{first.line}:{first.col} [{first.rule}] {first.message}" if first else str(path)
        raise ConfigError(f"the schema does not load: {where}; fix it (propeval check says more)")
    return schema.data, read_text(path, root=root)


def kind_text(data: dict[str, Any], kind: str) -> str | None:
    """One kind's view of ``data`` as the editor's schema file holds it; None when the schema has
    no definition per kind."""
    from propeval.schema import kind_schema

    view = kind_schema(data, kind)
    return None if view is None else json.dumps(view, indent=2, ensure_ascii=False) + "\n"


def schema_text(config: Config | None, kind: str = "all") -> str:
    """The schema file's text as it is (``kind`` "all"), or one kind's view as indented JSON."""
    data, text = _load(config)
    if kind == "all":
        return text if text.endswith("\n") else text + "\n"
    view = kind_text(data, kind)
    if view is None:
        raise UsageError(
            "this schema does not define claims and items apart (if facts -> $defs/claim, else $defs/item); "
            "show it whole (--kind all)"
        )
    return view
