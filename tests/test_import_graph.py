"""The package's import graph has no cycle, and its light faces stay light.

The graph is built from the source with :mod:`ast`, without importing anything. An edge is a
runtime import of one ``propeval`` module by another:

* module-level imports, and imports inside functions too. A function-local import is how a module
  keeps a heavy library (numpy, torch, faiss) lazy, and the library is not a ``propeval`` module,
  so it adds no edge; but a function-local import of another ``propeval`` module is still an arrow
  between the two, and a cycle drawn with it is a cycle (it only moves the failure from import time
  to the first call). So both count.
* imports under ``if TYPE_CHECKING:`` do not count: they never run.
* ``import a.b.c`` and ``from a.b import c`` also run the faces of ``a`` and ``a.b``, so they are edges
  to those ``__init__`` modules, except to a package the importing module itself sits in (Python has
  that face started before the module runs). Naming one's own package face explicitly
  (``from propeval.checks import Context`` inside ``propeval/checks/x.py``) at run time does count.
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tools" / "propeval"


def _modules(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _runtime_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: at module level or in a function, not under TYPE_CHECKING."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _runtime_imports(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(node, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.AST):
                yield from _runtime_imports([s for s in sub if isinstance(s, ast.stmt | ast.excepthandler)])
        if isinstance(node, ast.ExceptHandler | ast.match_case):
            yield from _runtime_imports(node.body)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports at run time (see the module docstring)."""
    mods = _modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for name in names:
                target = known(name)
                if target is None:
                    continue
                targets.add(target)
                parts = target.split(".")
                for i in range(1, len(parts)):  # the faces the import runs first
                    face = ".".join(parts[:i])
                    if face in mods and not mod.startswith(face + "."):
                        targets.add(face)
        graph[mod] = targets - {mod}
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules, the first repeated at the end), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        return list(e.args[1])
    return None


@pytest.fixture(scope="module")
def package_graph() -> dict[str, set[str]]:
    """The package's import graph, read once for the tests that look at it (a second of parsing)."""
    return import_graph(PACKAGE)


def test_the_package_has_no_import_cycle(package_graph: dict[str, set[str]]) -> None:
    graph = package_graph
    assert len(graph) > 200  # the whole package was read
    cycle = cycle_in(graph)
    assert cycle is None, (
        f"import cycle: {' -> '.join(reversed(cycle))}; move what both need into a module below them "
        "(tests/test_import_graph.py says how edges are counted)"
    )


@pytest.mark.parametrize(
    ("a_text", "found"),
    [
        ("from pkg import b\n", True),  # module level
        ("def f():\n    from pkg.b import g\n", True),  # function-local: still an arrow
        ("def f():\n    try:\n        import pkg.b\n    except ImportError:\n        pass\n", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import g\n", False),
        ("import json\n", False),
    ],
)
def test_the_cycle_finder_sees_module_level_and_function_local_cycles(tmp_path: Path, a_text: str, found: bool) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(a_text)
    (pkg / "b.py").write_text("from pkg.a import x\n")
    assert (cycle_in(import_graph(pkg)) is not None) is found


def test_a_package_face_counts_as_an_import(tmp_path: Path) -> None:
    # pkg/sub/__init__.py imports pkg.sub.m, which runs pkg.other's face, which imports pkg.sub.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "other").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.m import y\n")
    (pkg / "sub" / "m.py").write_text("from pkg.other.leaf import z\n")
    (pkg / "other" / "__init__.py").write_text("from pkg.sub import y\n")
    (pkg / "other" / "leaf.py").write_text("z = 1\n")
    assert cycle_in(import_graph(pkg)) is not None


def test_the_settings_read_only_the_backend_declarations_of_embed(package_graph: dict[str, set[str]]) -> None:
    # The settings sit below the embedding backends: they validate names against the registry and
    # take default folders from embed.folders, and never reach into a backend module (which loads
    # numpy, and reads the settings).
    graph = package_graph
    allowed = {"propeval.embed", "propeval.embed.registry", "propeval.embed.folders", "propeval.embed.protocol"}
    reached = {
        (mod, target)
        for mod, targets in graph.items()
        if mod == "propeval.settings" or mod.startswith("propeval.settings.")
        for target in targets
        if target.startswith("propeval.embed") and target not in allowed
    }
    assert not reached


# The faces that must import nothing heavy: a command or module that needs only their types and
# light helpers imports them without paying for numpy.
LIGHT_FACES = (
    "propeval.dedup",
    "propeval.dedup.record",
    "propeval.embed.registry",
    "propeval.agreement",
    "propeval.settings",
)
HEAVY = ("numpy", "torch", "faiss", "onnxruntime", "transformers", "openai", "scipy", "sklearn")


@pytest.mark.slow
@pytest.mark.parametrize("module", LIGHT_FACES)
def test_a_light_face_imports_nothing_heavy(module: str) -> None:
    code = f"import sys, {module}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing {module} loads {out.stdout.strip()}"
