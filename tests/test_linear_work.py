"""A guard against work quadratic in corpus size, in the fast lane: calls are counted, never timed.

Each core path runs on corpora of N, 2N and 4N claims (five items each, four of them translations),
under cProfile, and every function of propeval must be called a number of times that grows no
faster than the corpus: the increment from 2N to 4N is at most :data:`SLACK` times the increment
from N to 2N (2 for linear work; 4 for quadratic work, such as ``Corpus.items_of`` scanning every
item for every claim, 1.0M calls at 1k items and 100.2M at 10k before the fix). Counting per function
keeps a quadratic term visible however much linear work surrounds it. A quadratic loop written
entirely in C (``x in a_list`` inside a loop) makes no calls and is not seen here; the scale
benchmark (``benchmarks/scale.py``) times the real commands at 1k, 10k and 50k items.
"""

from __future__ import annotations

import cProfile
import pstats
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, CorpusDir, item_yaml
from propeval.config import load_config
from propeval.workspace import Workspace

SIZES = (6, 12, 24)  # claims; five items each
SLACK = 2.6  # linear: 2.0; n log n at these sizes: about 2.2; quadratic: 4.0
LANGUAGES = ("en", "ru", "uk", "de", "zh")
WORDS = [
    "archive",
    "border",
    "census",
    "court",
    "decree",
    "ferry",
    "harbour",
    "ledger",
    "market",
    "orchard",
    "quarry",
    "tunnel",
]


def _words(n: int, k: int) -> str:
    return " ".join(WORDS[(n * 7 + i * 5 + k) % len(WORDS)] + str((n * 31 + i) % 97) for i in range(6))


def write(root: Path, claims: int) -> CorpusDir:
    c = CorpusDir(root)
    shutil.copytree(REPO / "rubrics" / "facts-v1", root / "rubrics" / "facts-v1")
    for n in range(1, claims + 1):
        cid = f"c{n:04d}"
        c.claim(cid, source_url=f"https://example.org/{n}", title=f"Claim {n}")
        first = None
        for k, lang in enumerate(LANGUAGES):
            iid = f"i{(n - 1) * 5 + k + 1:04d}"
            c.write(
                f"questions/{cid}/{iid}.yaml",
                item_yaml(iid, cid, language=lang, prompt=f'"{_words(n, k)}?"', translation_of=first),
            )
            first = first or iid
    return c


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("linear")
    return [write(base / f"n{size}", size).root for size in SIZES]


def calls(fn: Callable[[], Any]) -> dict[str, int]:
    """How many times ``fn`` calls each function of propeval (by file:line:name)."""
    profile = cProfile.Profile()
    profile.runcall(fn)
    raw: Any = pstats.Stats(profile).stats  # type: ignore[attr-defined]  # pstats keeps it untyped
    return {
        f"{Path(filename).name}:{line}:{name}": nc
        for (filename, line, name), (_cc, nc, _tt, _ct, _callers) in raw.items()
        if "/propeval/" in filename
    }


def superlinear(counts: list[dict[str, int]]) -> dict[str, tuple[int, int, int]]:
    """The functions whose calls grow faster than the corpus, with their three counts."""
    small, mid, large = counts
    out = {}
    for name, n4 in large.items():
        n1, n2 = small.get(name, 0), mid.get(name, 0)
        if n4 - n2 > SLACK * max(n2 - n1, 1) and n4 >= 20:
            out[name] = (n1, n2, n4)
    return out


def _check_one_file(ws: Workspace) -> Any:
    from propeval.checker import check_corpus

    return check_corpus(ws, [ws.root / "questions" / "c0001" / "i0002.yaml"])


def _check(ws: Workspace) -> Any:
    """Every rule but schema, whose jsonschema work is per file by construction (and counted below:
    a narrowed check validates one file), and under a profiler would cost the fast lane seconds."""
    from propeval.checker import check_corpus
    from propeval.checks import CHECKS

    return check_corpus(ws, rules=[r for r in CHECKS if r != "schema"])


def _groups(ws: Workspace) -> Any:
    from propeval.groups import check_groups

    return check_groups(ws)


def _groups_one_claim(ws: Workspace) -> Any:
    from propeval.groups import check_groups

    return check_groups(ws, ["c0002"])


def _answerability(ws: Workspace) -> Any:
    from propeval.gates.answerability import Selection, answerability_gate

    return answerability_gate(ws, Selection(all_items=True))


def _stats(ws: Workspace) -> Any:
    from propeval.release import compute_stats, load_inputs

    return compute_stats(load_inputs(ws))


OPERATIONS: dict[str, Callable[[Workspace], Any]] = {
    "check": _check,
    "check one file": _check_one_file,
    "groups": _groups,
    "groups one claim": _groups_one_claim,
    "answerability gate": _answerability,
    "stats": _stats,
}


def workspaces(roots: list[Path]) -> Iterator[Workspace]:
    for root in roots:
        ws = Workspace(load_config(root))
        ws.corpus  # noqa: B018 - loaded before counting: the load has its own test below
        yield ws


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_core_path_does_work_linear_in_corpus_size(corpora: list[Path], operation: str) -> None:
    counts = [calls(lambda ws=ws: OPERATIONS[operation](ws)) for ws in workspaces(corpora)]
    assert superlinear(counts) == {}


def test_loading_the_corpus_is_linear(corpora: list[Path]) -> None:
    from propeval.corpus import load_corpus

    counts = [calls(lambda root=root: load_corpus(load_config(root), cache=False)) for root in corpora]
    assert superlinear(counts) == {}


def test_a_narrowed_check_validates_only_the_files_it_reports_on(corpora: list[Path]) -> None:
    """Per-file rules look only at the files asked about: one new item among thousands is one schema
    validation, whatever the corpus size."""
    for ws in workspaces(corpora):
        counts = calls(lambda ws=ws: _check_one_file(ws))
        validated = sum(n for name, n in counts.items() if name.startswith("schema.py:") and ":validate" in name)
        assert validated == 1


def test_the_guard_sees_quadratic_work(corpora: list[Path]) -> None:
    """The guard itself: the old items_of (every item scanned for every claim) is flagged."""

    def old_items_of(ws: Workspace) -> None:
        corpus = ws.corpus
        for cid in corpus.claims:
            [i for i in corpus.items.values() if i.claim_id == cid]

    counts = [calls(lambda ws=ws: old_items_of(ws)) for ws in workspaces(corpora)]
    assert "corpus.py" in " ".join(superlinear(counts))
