"""Near-duplicate detection: three passes, explained pairs, a reviewed-pair allowlist, clusters.

What is compared:

* every active item's prompt against the prompts of other claims' items (items of one claim are
  framings and translations of each other, not duplicates);
* every claim fact against the facts of other claims (two claims with the same facts are one
  claim written twice).

The passes, each reported on its own, all on :func:`propeval.textnorm.normalise`'d text:

* ``exact``: equal normalised-text hashes;
* ``lexical``: rapidfuzz ``token_sort_ratio`` / 100 over candidate pairs that share a rare word
  bigram or are semantic neighbours;
* ``semantic``: cosine of the configured encoder's embeddings, via faiss k nearest neighbours.

A pair at or above a pass's threshold is *flagged*. A flagged pair in the allowlist
(``dedup-allowlist.yaml``) whose two texts are unchanged since review is *reviewed*; any other is
*unreviewed* and makes the run exit 1.

Modules, in the order a run uses them:

* :mod:`~propeval.dedup.units`: the texts compared, from the corpus (:meth:`propeval.corpus.Corpus.compared`);
* :mod:`~propeval.dedup.embedding`: their vectors, through :mod:`propeval.embed`'s one cache;
* :mod:`~propeval.dedup.lexical`, :mod:`~propeval.dedup.candidates`, :mod:`~propeval.dedup.rescore`: the
  exact and lexical passes, the semantic space, and its second model;
* :mod:`~propeval.dedup.explain`: what explains a pair, and its problem line;
* :mod:`~propeval.dedup.allowlist`: reviewed pairs, and reviews gone stale;
* :mod:`~propeval.dedup.engine`: the passes, in order, for every command that compares texts;
* :mod:`~propeval.dedup.result`, :mod:`~propeval.dedup.find`: the result and the run's steps;
* :mod:`~propeval.dedup.calibrate`: ``propeval dedup calibrate``;
* :mod:`~propeval.dedup.record`: the signed record of the last full run, which the card shows.

This face imports nothing heavy: the result types, options, allowlist and explanations come from
light modules, and the two names whose modules load numpy (:func:`find_duplicates`,
:func:`embed_units`) are imported on first use (PEP 562), so ``cli/dedup.py``, export and the
report can type their results as :class:`DedupResult` without the dedup extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from propeval.dedup.allowlist import ALLOWLIST_FIELDS, AllowEntry, add_allow_entry, load_allowlist
from propeval.dedup.explain import (
    pair_problem,
    pair_rule,
    pair_scores,
    review_problem,
    shared_source,
    shared_terms,
    terms,
)
from propeval.dedup.result import PASSES, DedupResult, Options, Pair, clusters
from propeval.dedup.units import Unit, load_units, units_of_corpus

if TYPE_CHECKING:
    from propeval.dedup.embedding import embed_units
    from propeval.dedup.find import find_duplicates


def __getattr__(name: str) -> Any:
    # The two names whose modules import numpy, imported when first asked for.
    if name == "find_duplicates":
        from propeval.dedup.find import find_duplicates

        return find_duplicates
    if name == "embed_units":
        from propeval.dedup.embedding import embed_units

        return embed_units
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALLOWLIST_FIELDS",
    "PASSES",
    "AllowEntry",
    "DedupResult",
    "Options",
    "Pair",
    "Unit",
    "add_allow_entry",
    "clusters",
    "embed_units",
    "find_duplicates",
    "load_allowlist",
    "load_units",
    "pair_problem",
    "pair_rule",
    "pair_scores",
    "review_problem",
    "shared_source",
    "shared_terms",
    "terms",
    "units_of_corpus",
]
