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

* :mod:`~propeval.dedup.records`, :mod:`~propeval.dedup.units`: the texts compared, from a record
  cache of unchanged files;
* :mod:`~propeval.dedup.embedding`: their vectors, through :mod:`propeval.embed`'s one cache;
* :mod:`~propeval.dedup.candidates`: candidate pairs and scores per pass;
* :mod:`~propeval.dedup.explain`: what explains a pair, and its problem line;
* :mod:`~propeval.dedup.allowlist`: reviewed pairs, and reviews gone stale;
* :mod:`~propeval.dedup.result`, :mod:`~propeval.dedup.find`: the result and the run's steps;
* :mod:`~propeval.dedup.calibrate`: ``propeval dedup calibrate``.
"""

from __future__ import annotations

from propeval.dedup.allowlist import ALLOWLIST_FIELDS, AllowEntry, add_allow_entry, load_allowlist
from propeval.dedup.embedding import embed_units
from propeval.dedup.explain import pair_problem, pair_rule, pair_scores, shared_source, shared_terms, terms
from propeval.dedup.find import find_duplicates
from propeval.dedup.result import PASSES, DedupResult, Options, Pair, clusters
from propeval.dedup.units import Unit, load_units, units_of_records

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
    "shared_source",
    "shared_terms",
    "terms",
    "units_of_records",
]
