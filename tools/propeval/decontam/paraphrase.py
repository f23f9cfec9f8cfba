"""The optional embedding pass: paraphrases of corpus texts in a sample of the training documents.

n-grams find copies; a reworded prompt shares none. Embedding every sentence of a terabyte corpus
is out of reach, so this pass reads a deterministic sample (``--embed RATE``: a document is in it
when a hash of its shard path and line falls below RATE, so every engine and every rerun picks the
same documents), cuts each sampled document into sentences, embeds them with the project's
encoder (:mod:`propeval.embed`, ``[tool.propeval.dedup]`` backend and model) and reports each
sentence whose cosine with a corpus text is at or above the threshold. It estimates how much
paraphrase overlap the corpus holds; it does not drop anything (the drop list is the n-gram pass's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from propeval.decontam.scan import SPAN_CHARS, Finding

MAX_SENTENCES = 64
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a document worth embedding: at least five words (or characters, in
    Chinese and Japanese), at most :data:`MAX_SENTENCES` of them, each clipped."""
    from propeval.decontam.ngrams import tokens

    out = []
    for part in _SENTENCE.split(text):
        part = part.strip()
        if len(tokens(part)) >= 5:
            out.append(part[:SPAN_CHARS])
        if len(out) >= MAX_SENTENCES:
            break
    return out


def paraphrases(
    texts: Sequence[tuple[str, str]],
    sample: Sequence[tuple[str, int, str, str]],
    encoder: Any,
    threshold: float,
) -> list[Finding]:
    """Sentences of the sample whose embedding is within ``threshold`` cosine of a corpus text.

    Args:
        texts: (label, text) of the corpus texts.
        sample: (shard, line, doc id, text) of the sampled documents.
        encoder: an :class:`propeval.embed.protocol.Encoder`.
        threshold: the cosine at or above which a sentence is reported.

    Returns:
        One finding per document and corpus text: its best sentence, ``score`` its cosine.
    """
    cut = [(shard, line, doc, s) for shard, line, doc, text in sample for s in sentences(text)]
    if not cut or not texts:
        return []
    left = _unit(encoder.encode([t for _, t in texts]))
    right = _unit(encoder.encode([s for *_, s in cut]))
    best: dict[tuple[str, int, int], tuple[float, int]] = {}
    for start in range(0, len(cut), 4096):
        scores = right[start : start + 4096] @ left.T
        rows, cols = np.nonzero(scores >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            shard, line, _, _ = cut[start + r]
            key = (shard, line, c)
            score = float(scores[r, c])
            if key not in best or score > best[key][0]:
                best[key] = (score, start + r)
    findings = []
    for (shard, line, c), (score, k) in best.items():
        findings.append(
            Finding(
                shard=shard,
                line=line,
                doc=cut[k][2],
                label=texts[c][0],
                kind="paraphrase",
                matched=0,
                total=0,
                span=cut[k][3],
                score=round(score, 4),
            )
        )
    findings.sort(key=Finding.sort_key)
    return findings


def _unit(rows: Any) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)
