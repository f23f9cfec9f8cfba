"""The code and the items are MIT-licensed, everywhere the project says what its license is."""

from __future__ import annotations

import tomllib
from pathlib import Path

from propeval.settings import ReleaseSettings

REPO = Path(__file__).resolve().parents[1]


def test_the_license_is_mit_for_the_code_and_the_items_and_names_the_sources_terms() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    terms = " ".join(text.split("What this license covers, and what it does not", 1)[1].split())
    assert "the claims and items under questions/" in terms
    assert "The cited sources themselves are not part of this repository, and this license does not extend" in terms


def test_pyproject_and_the_release_card_say_mit() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == "MIT"
    assert pyproject["tool"]["propeval"]["release"]["license"] == "mit"
    assert ReleaseSettings().license == "mit"
