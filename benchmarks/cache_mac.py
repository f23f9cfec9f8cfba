"""What authenticating cache entries costs (issue #34): reading the embedding cache and a response
cache entry with their MACs checked, against reading the same bytes without the check.

Prints a table of median wall times over interleaved rounds, and the ratio checked / unchecked.
Run from the repository root:

    .venv/bin/python benchmarks/cache_mac.py [--rounds 7] [--entries 1000,10000]

"unchecked" is what the format-1 reader did (np.load of the arrays; json.loads of an entry);
"checked" is :class:`propeval.embed.cache.EmbeddingCache.load` and
:class:`propeval.judge.cache.ResponseCache.get`, which also compute one HMAC-SHA256 per entry.
Both read the same files from the page cache, in one process; the cache key lives in a temporary
folder ($PROPEVAL_CACHE_KEY), never in the user's config folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--entries", default="1000,10000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PROPEVAL_CACHE_KEY"] = str(Path(tmp) / "cache-key")
        from propeval.embed.cache import EmbeddingCache, text_key
        from propeval.judge.cache import ResponseCache

        rows = []
        for n in [int(x) for x in args.entries.split(",")]:
            folder = Path(tmp) / f"emb-{n}"
            cache = EmbeddingCache(folder, "bench-fingerprint")
            rng = np.random.default_rng(n)
            vecs = rng.normal(size=(n, 384)).astype(np.float32)
            cache.add([text_key(f"text {i}") for i in range(n)], vecs, [12] * n)

            def checked(folder: Path = folder) -> None:
                c = EmbeddingCache(folder, "bench-fingerprint")
                c.load()
                assert c.vectors is not None and not c.warnings

            def unchecked(path: Path = cache.path) -> None:
                # the format-1 load: read the arrays, check the header, index the keys
                with np.load(path, allow_pickle=False) as npz:
                    json.loads(str(npz["meta"]))
                    keys, _, _ = npz["keys"], npz["vecs"].astype(np.float32, copy=False), npz["ntok"]
                {bytes(k): i for i, k in enumerate(keys)}

            a, b = [], []
            for _ in range(args.rounds):  # interleaved, so drift in the machine's load hits both
                a.append(timed(checked))
                b.append(timed(unchecked))
            rows.append((f"embedding cache, {n} entries x 384", statistics.median(a), statistics.median(b)))

        rc = ResponseCache(Path(tmp) / "responses")
        key = "ab" * 32
        rc.put(key, json.dumps({"rationale": "x" * 400, "facts": []}), "stop", {"model": "m"})

        def get() -> None:
            for _ in range(1000):
                assert rc.get(key) is not None

        def raw() -> None:
            for _ in range(1000):
                json.loads(rc.path(key).read_bytes())

        a, b = [], []
        for _ in range(args.rounds):
            a.append(timed(get))
            b.append(timed(raw))
        rows.append(("response cache, 1000 reads of one entry", statistics.median(a), statistics.median(b)))

    print(f"{'what':45}  {'checked s':>10}  {'unchecked s':>11}  {'ratio':>6}")
    for what, c, u in rows:
        print(f"{what:45}  {c:10.4f}  {u:11.4f}  {c / u:6.2f}")
    print(f"medians of {args.rounds} interleaved rounds; ratio = checked / unchecked")


if __name__ == "__main__":
    main()
