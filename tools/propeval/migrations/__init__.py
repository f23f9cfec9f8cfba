'''Corpus migrations: one module per schema version step, found by file name.

A step that takes the corpus from schema 1.0.0 to 2.0.0 lives in
``tools/propeval/migrations/v1_0_0__to__v2_0_0.py`` and looks like this::

    """2.0.0 renames `notes` to `comment` and gives every item a `reviewed` flag."""

    from propeval.migrations.ops import rename_field, set_default, split_field

    FROM = "1.0.0"
    TO = "2.0.0"


    def migrate(doc, kind):
        """Change one file's data in place. ``kind`` is "claim" or "item"."""
        rename_field(doc, "notes", "comment")
        if kind == "item":
            set_default(doc, "reviewed", False, after="status")

``doc`` is a round-trip mapping (its comments and quoting survive) or, when propeval checks the
result, a plain dict: use only the operations in :mod:`propeval.migrations.ops` and ordinary
mapping access, so the same code serves both. Every operation is idempotent, so running a
migration twice (or after a kill, over a half-migrated corpus) changes nothing the second time.
'''

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from propeval.errors import ConfigError

__all__ = ["DEFAULT_DIR", "Migration", "Registry", "load_registry", "module_name"]

_PACKAGE_DIR = Path(__file__).resolve().parent
# Where `propeval migrate` looks for steps; tests point it at a folder of their own.
DEFAULT_DIR = _PACKAGE_DIR
_NAME = re.compile(r"v(\d+)_(\d+)_(\d+)__to__v(\d+)_(\d+)_(\d+)")

MigrateFn = Callable[[MutableMapping[str, Any], str], None]


def module_name(source: str, target: str) -> str:
    """The file a step from ``source`` to ``target`` must be saved as."""
    return f"v{source.replace('.', '_')}__to__v{target.replace('.', '_')}.py"


@dataclass(frozen=True)
class Migration:
    """One version step."""

    name: str
    source: str
    target: str
    apply: MigrateFn
    description: str = ""


@dataclass
class Registry:
    """Every step, by the version it starts from."""

    steps: dict[str, Migration]

    def path(self, source: str, target: str) -> list[Migration] | None:
        """The steps from ``source`` to ``target`` in order; None when the chain is broken."""
        out: list[Migration] = []
        here = source
        while here != target:
            step = self.steps.get(here)
            if step is None or len(out) > len(self.steps):
                return None
            out.append(step)
            here = step.target
        return out

    def missing(self, source: str, target: str) -> str:
        """The module to write next when ``path`` is None."""
        here = source
        seen = 0
        while here in self.steps and seen <= len(self.steps):
            here = self.steps[here].target
            seen += 1
        return module_name(here, target)


def _import(path: Path, folder: Path) -> ModuleType:
    if folder == _PACKAGE_DIR:
        return importlib.import_module(f"{__name__}.{path.stem}")
    spec = importlib.util.spec_from_file_location(f"_propeval_migration_{path.stem}", path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a spec
        raise ConfigError(f"cannot import migration {path.name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_registry(folder: Path | None = None) -> Registry:
    """Import every ``v*__to__v*.py`` in ``folder`` (default: this package) and check it.

    Raises:
        ConfigError: a module's name disagrees with its FROM/TO, it has no ``migrate`` function,
            or two modules start from the same version.
    """
    folder = (folder or DEFAULT_DIR).resolve()
    steps: dict[str, Migration] = {}
    for path in sorted(folder.glob("v*__to__v*.py")):
        m = _NAME.fullmatch(path.stem)
        if m is None:
            raise ConfigError(f"migration {path.name}: name it vMAJ_MIN_PAT__to__vMAJ_MIN_PAT.py")
        try:
            module = _import(path, folder)
        except Exception as e:
            raise ConfigError(f"migration {path.name} does not import: {type(e).__name__}: {e}") from e
        source, target = getattr(module, "FROM", None), getattr(module, "TO", None)
        fn = getattr(module, "migrate", None)
        expected = (".".join(m.groups()[:3]), ".".join(m.groups()[3:]))
        if (source, target) != expected:
            raise ConfigError(
                f"migration {path.name} declares FROM={source!r}, TO={target!r}; "
                f"its name says FROM = {expected[0]!r}, TO = {expected[1]!r}"
            )
        if not callable(fn):
            raise ConfigError(f"migration {path.name} has no migrate(doc, kind) function")
        if source in steps:
            raise ConfigError(f"two migrations start from {source}: {steps[source].name} and {path.stem}")
        doc = (module.__doc__ or "").strip().splitlines()
        steps[str(source)] = Migration(path.stem, str(source), str(target), fn, doc[0] if doc else "")
    return Registry(steps)
