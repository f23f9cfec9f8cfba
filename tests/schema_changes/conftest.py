"""Fixtures for schema-change tests."""

from __future__ import annotations

from pathlib import Path

import pytest

import propeval.migrations


@pytest.fixture
def migrations_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that `propeval migrate` and the gate use instead of the package's."""
    folder = tmp_path / "migrations"
    folder.mkdir()
    monkeypatch.setattr(propeval.migrations, "DEFAULT_DIR", folder)
    return folder


@pytest.fixture(autouse=True)
def schema_at_1_0_0(request: pytest.FixtureRequest) -> None:
    """These tests bump a schema from 1.0.0; the corpus's copy of the real schema.json is set to
    that version, whatever version the repository's schema has reached since."""
    if "corpus" not in request.fixturenames:
        return
    root: Path = request.getfixturevalue("corpus").root
    path = root / "schema.json"
    text = path.read_text(encoding="utf-8")
    import re

    path.write_text(re.sub(r'"schema_version": "[^"]+"', '"schema_version": "1.0.0"', text, count=1), encoding="utf-8")
