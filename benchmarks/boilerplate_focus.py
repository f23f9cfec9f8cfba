"""The boilerplate stage of a narrowed dedup run (#40): the changed facts' sets grown outwards
against the whole fact matrix filtered afterwards, as before, in CPU seconds of this process.

    .venv/bin/python benchmarks/boilerplate_focus.py [--facts 4000,20000] [--reps 5] [--changed 2]

Facts are random unit vectors (dimension 384, as multilingual-e5-small's), all of one source
domain and kind (the synthetic corpora's shape: every claim's facts in one group), two per claim,
with a chain of near-identical facts planted across six claims, one of them changed: both ways
must report that one set. ``--changed`` facts of the last claim are the commit's. Rounds interleave
the two ways; each figure is the median CPU time (``time.process_time``) of ``--reps`` rounds; the
load average is printed beside it.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time

import numpy as np

from propeval.dedup import boilerplate
from propeval.dedup.units import make_unit
from propeval.settings import DedupSettings


def corpus(n: int, seed: int = 40) -> tuple[list, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    lead = rng.standard_normal(384).astype(np.float32)
    for k in range(6):  # a boilerplate chain over six claims, the last one the changed claim's
        row = n - 1 - 2 * k
        vectors[row] = lead + 0.05 * rng.standard_normal(384).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    units = [
        make_unit(
            f"c{k // 2:06d}/f{k % 2 + 1}",
            "fact",
            f"c{k // 2:06d}",
            f"fact {k}",
            f"questions/c{k // 2:06d}/claim.yaml",
            1,
            1,
            "",
            "https://example.org/x",
            "",
            "censorship",
        )
        for k in range(n)
    ]
    return units, vectors


def _whole_then_filter(real, *a, seeds=None):
    """The stage before #40: every fact compared with every other, the sets filtered afterwards."""
    return real(*a[:5])


def timed(fn) -> tuple[float, object]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", default="4000,20000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--changed", type=int, default=2)
    args = ap.parse_args()
    settings = DedupSettings()
    print(f"{'facts':>7} {'grown (s)':>10} {'whole matrix (s)':>17} {'ratio':>7}  load")
    for n in (int(x) for x in args.facts.split(",")):
        units, vectors = corpus(n)
        row_of = {i: i for i in range(n)}
        focus = set(range(n - args.changed, n))
        real = boilerplate._linked_sets
        whole_then_filter = functools.partial(_whole_then_filter, real)

        grown, old, loads = [], [], []
        for rnd in range(args.reps):
            ways = [("grown", None), ("old", whole_then_filter)]
            for name, patch in ways if rnd % 2 else ways[::-1]:
                boilerplate._linked_sets = patch or real
                try:
                    loads.append(os.getloadavg()[0])
                    seconds, (found, _) = timed(
                        functools.partial(boilerplate.find_boilerplate, units, vectors, row_of, settings, {}, focus)
                    )
                finally:
                    boilerplate._linked_sets = real
                assert len(found) == 1, f"{name}: {len(found)} sets"
                (grown if name == "grown" else old).append(seconds)
        g, o = statistics.median(grown), statistics.median(old)
        print(f"{n:>7} {g:>10.3f} {o:>17.3f} {g / o:>7.3f}  {statistics.median(loads):.1f}")


if __name__ == "__main__":
    main()
