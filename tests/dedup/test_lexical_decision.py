"""The lexical pass decides as one function in `propeval dedup` and `propeval overlap`
(``propeval.dedup.lexical.decide_lexical``): the same pairs flagged, the same ones vetoed, for
the same reasons, through the real CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from propeval.cli import cli

MINILM = (
    '\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\nbackend = "sentence-transformers"\n'
    "compare_facts = false\n"
)

# ours / theirs: a rewording (flagged), another year (vetoed: numbers), another country (vetoed:
# names), a threshold's width apart (below it), and a text that shares nothing
OURS = [
    "How many soldiers crossed the border near Kharkiv in February 2022?",
    "How many soldiers crossed the border near Kharkiv in February 2022, according to the report?",
    "Which books are still banned in France by the national library board?",
    "What did the government say about the protests in the capital last week?",
    "Who painted the ceiling of the Sistine Chapel?",
]
THEIRS = [
    "How many soldiers crossed the border near Kharkiv in February of 2022?",
    "How many soldiers crossed the border near Kharkiv in February 2014, according to the report?",
    "Which books are still banned in Canada by the national library board?",
    "What did the government say about protests in the capital city during the last week?",
    "What is the boiling point of water at sea level?",
]


def run_json(*args: str) -> Any:
    r = CliRunner().invoke(cli, [*args, "--format", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


@pytest.mark.slow
def test_overlap_and_dedup_take_one_lexical_decision(corpus: Any, bundled_model: None) -> None:
    with (corpus.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(MINILM)
    text_of: dict[str, str] = {}
    for n, text in enumerate([*OURS, *THEIRS], start=1):
        cid, iid = f"c{n:04d}", f"i{n:04d}"
        corpus.claim(cid)
        corpus.item(iid, cid, prompt=json.dumps(text))
        text_of[iid] = text
    ext = corpus.write(
        "in/ext.jsonl", "".join(json.dumps({"id": f"e{n}", "prompt": t}) + "\n" for n, t in enumerate(THEIRS))
    )

    dd = run_json("dedup", "--pass", "lexical")
    ov = run_json("overlap", str(ext), "--pass", "lexical")

    def ours_theirs(a: str, b: str) -> tuple[str, str] | None:
        x, y = sorted((a, b), key=lambda t: t not in OURS)
        return (x, y) if x in OURS and y in THEIRS else None

    dedup_flagged = {
        k for p in dd["pairs"] if (k := ours_theirs(text_of[p["a"]["id"]], text_of[p["b"]["id"]])) is not None
    }
    dedup_vetoed = {
        (k, p["veto"])
        for p in dd["vetoed"]
        if (k := ours_theirs(text_of[p["a"]["id"]], text_of[p["b"]["id"]])) is not None
    }
    overlap_flagged = {
        (m["corpus"]["text"], m["external"]["text"]) for m in ov["matches"] if m["corpus"]["text"] in OURS
    }
    overlap_vetoed = {
        ((m["corpus"]["text"], m["external"]["text"]), m["veto"]) for m in ov["vetoed"] if m["corpus"]["text"] in OURS
    }
    assert dedup_flagged == overlap_flagged
    assert dedup_vetoed == overlap_vetoed
    # and the decision is the one described: the rewording flagged, the other year and country vetoed
    assert (OURS[0], THEIRS[0]) in overlap_flagged
    assert ((OURS[1], THEIRS[1]), "numbers 2022 / 2014") in overlap_vetoed
    assert ((OURS[2], THEIRS[2]), "names france / canada") in overlap_vetoed
    assert not any(pair[0] == OURS[4] for pair in overlap_flagged)
