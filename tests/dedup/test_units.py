"""The texts dedup compares come from the Workspace's corpus; a warm load keeps them in the load cache."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from propeval.config import load_config
from propeval.corpus import load_corpus
from propeval.dedup.units import Unit, units_of_corpus
from propeval.textnorm import text_hash


def _age(root: Path) -> None:
    """Make corpus files a minute older than the racy window, as files are between commits."""
    past = time.time_ns() - 60 * 10**9
    for p in (root / "questions").rglob("*.yaml"):
        os.utime(p, ns=(past, past))


def test_a_warm_load_parses_nothing_and_gives_the_same_units(corpus: Any) -> None:
    corpus.claim("c0001")
    corpus.item("i0002", "c0001", prompt='"Who gave the order to clear the square?"')
    corpus.item("i0001", "c0001")
    corpus.claim("c0002", status="draft")
    corpus.item("i0003", "c0002")  # of a draft claim: not in the corpus
    corpus.item("i0004", "c0001", status="retired")
    _age(corpus.root)
    config = load_config(corpus.root)
    cold = load_corpus(config)
    warm = load_corpus(config)
    assert (cold.parsed, warm.parsed) == (6, 0)
    units = units_of_corpus(warm)
    assert units == units_of_corpus(cold)
    assert [u.id for u in units] == ["i0001", "i0002", "c0001/f1", "c0001/f2"]
    assert units[1] == Unit(
        "i0002",
        "item",
        "c0001",
        "Who gave the order to clear the square?",
        "questions/c0001/i0002.yaml",
        6,
        9,
        "en",
        units[1].source_url,
        units[1].anchor,
        "who gave the order to clear the square?",
        text_hash("Who gave the order to clear the square?"),
        framing="neutral",
        question_type="named_fact",
    )
    assert units[1].source_url.startswith("https://")
    # a changed file's texts are read again
    item = corpus.root / "questions" / "c0001" / "i0002.yaml"
    item.write_text(item.read_text(encoding="utf-8").replace("square", "street"), encoding="utf-8")
    again = load_corpus(config)
    assert again.parsed == 1
    assert units_of_corpus(again)[1].text == "Who gave the order to clear the street?"
