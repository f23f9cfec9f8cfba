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
