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
import os
import pstats
import random
import shutil
import string
import time
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


def _letters(n: int, k: int) -> str:
    """Six random words of their own (seeded by ``n`` and ``k``): texts that no pass finds alike, so
    that a dedup run's output does not grow with the pairs of a corpus of few words."""
    rng = random.Random(n * 1000 + k)
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(5, 9))) for _ in range(6))


def write(root: Path, claims: int, *, own_facts: bool = False) -> CorpusDir:
    """``claims`` claims of five items each; with ``own_facts``, each claim's facts are its own
    and every text is random words (else every claim has the same two facts: one exact group for
    dedup)."""
    words = _letters if own_facts else _words
    c = CorpusDir(root)
    shutil.copytree(REPO / "rubrics" / "facts-v1", root / "rubrics" / "facts-v1")
    for n in range(1, claims + 1):
        cid = f"c{n:04d}"
        facts = {"facts": _facts(n)} if own_facts else {}
        c.claim(cid, source_url=f"https://example.org/{n}", title=f"Claim {n}", **facts)
        first = None
        for k, lang in enumerate(LANGUAGES):
            iid = f"i{(n - 1) * 5 + k + 1:04d}"
            c.write(
                f"questions/{cid}/{iid}.yaml",
                item_yaml(iid, cid, language=lang, prompt=f'"{words(n, k)}?"', translation_of=first),
            )
            first = first or iid
    return c


def _facts(n: int) -> str:
    return "".join(f"\n  - id: f{k}\n    text: {_letters(n, 20 + k).capitalize()}." for k in (1, 2))


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The corpora, their files dated a minute back, as a checked-out corpus's are: a file written
    within memo.RACY_SECONDS of a load is never kept by the load cache, so on a busy machine some
    corpora would be read through the cache and others not, and their counts would differ."""
    base = tmp_path_factory.mktemp("linear")
    roots = [write(base / f"n{size}", size).root for size in SIZES]
    settle(base)
    return roots


def settle(base: Path) -> None:
    """Date every file under ``base`` a minute back."""
    settled = time.time() - 60
    for path in base.rglob("*"):
        os.utime(path, (settled, settled))


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


# dedup and ci: each corpus a git repository whose branch ``pr`` adds one item in a new claim, as a
# pull request or a commit does; dedup with the deterministic fake encoder of tests/dedup (the work
# counted is the search's, whatever the vectors), its embedding cache inside the corpus.


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from helpers import git

    base = tmp_path_factory.mktemp("linear-git")
    out = []
    for size in SIZES:
        c = write(base / f"n{size}", size, own_facts=True)
        with (c.root / "pyproject.toml").open("a", encoding="utf-8") as fh:
            fh.write('\n[tool.propeval.dedup]\ncache_dir = ".cache/embeddings"\n')
        (c.root / ".gitignore").write_text(".cache/\n", encoding="utf-8")
        git(c.root, "init", "-q", "-b", "main")
        git(c.root, "config", "commit.gpgsign", "false")
        git(c.root, "add", "-A")
        git(c.root, "commit", "-qm", "corpus")
        git(c.root, "checkout", "-qb", "pr")
        c.claim("c9999", source_url="https://example.org/new", title="New", facts=_facts(9999))
        c.write("questions/c9999/i9999.yaml", item_yaml("i9999", "c9999", prompt=f'"{_letters(9999, 1)}?"'))
        git(c.root, "add", "-A")
        git(c.root, "commit", "-qm", "one new item")
        out.append(c.root)
    settle(base)  # as corpora's files are
    return out


class Comparisons:
    """Every vector comparison of a dedup run, counted where it happens: the faiss neighbour search
    (``propeval.embed.index.neighbours``: pool size x queries) and the boilerplate stage's
    similarity rows (``propeval.dedup.boilerplate.similar``: rows x vectors)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from propeval.dedup import boilerplate
        from propeval.embed import index

        self.compared = 0
        self.searches = 0
        self.queries = 0
        real_neighbours, real_similar = index.neighbours, boilerplate.similar

        def neighbours(vectors: Any, queries: Any, k: int, settings: Any = None, pool: Any = None) -> Any:
            self.searches += 1
            self.queries += len(queries)
            self.compared += (len(vectors) if pool is None else len(pool)) * len(queries)
            return (
                real_neighbours(vectors, queries, k, pool=pool)
                if settings is None
                else real_neighbours(vectors, queries, k, settings, pool=pool)
            )

        def similar(rows: Any, vectors: Any, threshold: float) -> Any:
            self.compared += len(rows) * len(vectors)
            return real_similar(rows, vectors, threshold)

        monkeypatch.setattr(index, "neighbours", neighbours)
        monkeypatch.setattr(boilerplate, "similar", similar)


def _dedup(ws: Workspace, changed_since: str | None, monkeypatch: pytest.MonkeyPatch) -> tuple[Comparisons, Any]:
    """One dedup run over the workspace's corpus (loaded before counting, as ``run`` and ``ci``
    pass it: the load has its own test, and a load cache warm for one size and not another would
    count files parsed, not dedup's work)."""
    from dedup.conftest import FakeEncoder
    from propeval.dedup import Options, find_duplicates

    seen = Comparisons(monkeypatch)
    result = find_duplicates(ws.config, Options(changed_since=changed_since), encoder=FakeEncoder(), corpus=ws.corpus)
    return seen, result


def _grows_linearly(values: list[int]) -> bool:
    small, mid, large = values
    return large - mid <= SLACK * max(mid - small, 1)


@pytest.mark.parametrize("changed_since", ["main", None], ids=["narrowed", "whole"])
def test_dedup_does_work_linear_in_corpus_size(
    repos: list[Path], changed_since: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Narrowed to a one-item change (the commit hook, ci): the texts searched (the change and the
    neighbours whose means its margins need) stay a handful whatever the corpus, and the vectors
    compared grow with the corpus, not its square. Whole: as many faiss searches at every size (one
    per language), and every function called in proportion to the corpus. (A whole run's exact
    search compares every text with every other of its language by design: faiss does that in C,
    and above exact_index_below texts the index is approximate.)"""
    runs: list[Comparisons] = []
    counts = []
    for ws in workspaces(repos):
        with monkeypatch.context() as m:
            counts.append(calls(lambda ws=ws, m=m: runs.append(_dedup(ws, changed_since, m)[0])))
    assert superlinear(counts) == {}
    searches, queries, compared = ([getattr(r, a) for r in runs] for a in ("searches", "queries", "compared"))
    assert max(searches) <= 2 * min(searches), searches  # per language and stage, not per text
    if changed_since is not None:
        assert max(queries) <= 2 * min(queries), queries  # the change and its neighbours, not the corpus
        assert _grows_linearly(compared), compared


def test_the_dedup_guard_sees_quadratic_comparisons(repos: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard itself: the pre-#40 boilerplate stage, which compared every fact with every other on
    a one-item commit, is flagged."""
    from propeval.dedup import boilerplate

    real = boilerplate._linked_sets

    def every_fact(
        units: Any, idx: Any, vectors: Any, row_of: Any, threshold: float, seeds: Any = None, nearest: Any = None
    ) -> Any:
        return real(units, idx, vectors, row_of, threshold)

    monkeypatch.setattr(boilerplate, "_linked_sets", every_fact)
    compared = [_dedup(ws, "main", monkeypatch)[0].compared for ws in workspaces(repos)]
    assert not _grows_linearly(compared), compared


def test_ci_on_a_one_item_pull_request_does_work_linear_in_corpus_size(repos: list[Path]) -> None:
    """``propeval ci`` for a one-item pull request: every step but dedup (counted above with the same
    narrowing) calls each function in proportion to the corpus at most."""
    from propeval.pipeline.ci import run_ci

    def ci(root: Path) -> Any:
        ws = Workspace(load_config(root))
        ws.corpus  # noqa: B018 - the load has its own test above
        return calls(lambda: run_ci(ws, "main", skip=("dedup",)))

    counts = [ci(root) for root in repos]
    assert superlinear(counts) == {}


def test_the_commit_hook_does_work_linear_in_corpus_size(repos: list[Path]) -> None:
    """``propeval hook`` on a one-item change: its check and groups parts call each function in
    proportion to the corpus at most, and groups looks at the changed group alone (its dedup part is
    ``find_duplicates`` over the same Workspace corpus, counted above with the same narrowing)."""
    from propeval.pipeline.hook import run_hook

    def hook(root: Path) -> tuple[dict[str, int], Any]:
        ws = Workspace(load_config(root))
        ws.corpus  # noqa: B018 - the load has its own test above
        out: list[Any] = []
        counted = calls(lambda: out.append(run_hook(ws, "main", skip=("dedup",))))
        return counted, out[0]

    runs = [hook(root) for root in repos]
    assert superlinear([c for c, _ in runs]) == {}
    for _, result in runs:
        groups = next(p for p in result.parts if p.name == "groups").result
        assert sorted(groups.matrices) == ["c9999"]  # the new claim's group, not every group
