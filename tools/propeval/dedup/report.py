"""A dedup result as a report: each unreviewed pair a problem on its second text, the review band's
pairs as notices, the reviewed pairs and clusters, notes, and the summary in short lines."""

from __future__ import annotations

from typing import TextIO

from propeval.dedup.result import PASSES, DedupResult
from propeval.reporters import Report, printable


def dedup_report(result: DedupResult) -> Report:
    """Problems, then each unreviewed pair as a problem on its second text (text shows both texts
    under it), the reviewed pairs and the clusters (text only), notes and a one-line summary."""
    from propeval.dedup import pair_problem, pair_scores
    from propeval.dedup.explain import capped, review_problem
    from propeval.settings.dedup import band_provenance

    pairs = [(pair_problem(pair), pair) for pair in result.unreviewed]
    pairs += [(review_problem(pair), pair) for pair in result.review if not pair.reviewed]
    summary = _summary(result)
    details = {
        problem: [
            f"    {u.id} ({u.claim_id}{f', {u.language}' if u.language else ''}): {u.text.strip()}"
            for u in (pair.a, pair.b)
        ]
        for problem, pair in pairs
    }
    payload = {
        "pairs": [p.to_dict() for p in result.pairs],
        "clusters": result.clusters,
        "counts": result.counts,
        "unreviewed": len(result.unreviewed),
        "reviewed": len(result.reviewed),
        "problems": [p.to_dict() for p in result.problems],
        "notes": result.notes,
        "texts_loaded": result.units,
        "texts_embedded": sum(result.embedded.values()),
        "texts_encoded_now": result.encoded,
        "embedded_by_language": result.embedded,
        "not_embedded_by_language": result.not_embedded,
        "not_embedded_reason": result.not_embedded_reason or None,
        "thresholds_provenance": result.thresholds_provenance or None,
        "scoring_model": result.settings.scoring_model,
        "uncalibrated_pairs": result.uncalibrated,
        "vetoed": [p.to_dict() for p in result.vetoed],
        "review": [p.to_dict() for p in result.review],
        "bands": result.bands(),
        "review_band_provenance": band_provenance(result.settings.scoring_model) or None,
        "thresholds": {
            "semantic": result.settings.semantic_limit(True),
            "cross_lingual": result.settings.semantic_limit(False),
            "fact_semantic": result.settings.semantic_limit(kind="fact"),
            "lexical": result.settings.lexical_threshold,
            "pairs": {p.ids[0] + " " + p.ids[1]: p.threshold for p in result.pairs if p.threshold is not None},
        },
    }

    def view(out: TextIO, styled: bool) -> None:
        if result.reviewed:
            out.write(f"reviewed and kept ({len(result.reviewed)}):\n")
            for pair in result.reviewed:
                e = pair.allowed
                assert e is not None  # a reviewed pair is one its allowlist entry keeps
                why = printable(f"{e.reason} ({e.reviewer}, {e.date})")
                out.write(f"  {pair.a.id} / {pair.b.id}: {pair_scores(pair)} — {why}\n")
        if result.clusters:
            out.write(f"clusters of unreviewed pairs ({len(result.clusters)}):\n")
            for n, group in enumerate(result.clusters, start=1):
                out.write(f"  {n}. {', '.join(group)}\n")

    return Report(
        problems=capped([*result.problems, *(problem for problem, _ in pairs)], result.settings.max_problems_per_rule),
        notes=result.notes,
        files_checked=result.units,
        details=details,
        data=payload,
        view=view,
        view_in_log=False,
        summary=summary[0],
        summary_lines=summary[1:],
    )


def _summary(result: DedupResult) -> list[str]:
    """The closing summary as short lines: what was loaded and embedded, then each further figure
    on a line of its own (long ones wrapped at :data:`SUMMARY_WIDTH`)."""
    import textwrap

    counts = ", ".join(f"{name} {result.counts.get(name, 0)}" for name in PASSES)

    def langs(d: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))

    embedded = sum(result.embedded.values())
    text = f"dedup: {result.units} text(s) loaded, {embedded} embedded"
    if result.embedded:
        text += f" ({langs(result.embedded)})"
    text += f", {result.encoded} encoded now (the rest cached)"
    more = []
    if result.not_embedded:
        more.append(
            f"NOT compared by meaning: {sum(result.not_embedded.values())} ({langs(result.not_embedded)}), "
            f"because {result.not_embedded_reason}"
        )
    more.append(
        f"flagged pairs by pass: {counts}; {len(result.unreviewed)} unreviewed, {len(result.reviewed)} reviewed"
    )
    if result.vetoed:
        more.append(
            f"{len(result.vetoed)} pair(s) at or above their threshold not flagged, as they write different numbers "
            "or name different people or places (json: vetoed)"
        )
    review = [p for p in result.review if not p.reviewed]
    if review:  # an empty band leaves the summary as it was (json: bands)
        more.append(
            f"review band (shown, not blocking): {len(review)}; per language pair: "
            + ", ".join(f"{k} {v['duplicate']} duplicate / {v['review']} review" for k, v in result.bands().items())
        )
    more.append(f"scores: {result.settings.scoring_model}")
    if result.uncalibrated:
        more.append(f"UNCALIBRATED language pairs (a conservative threshold applies): {', '.join(result.uncalibrated)}")
    if result.thresholds_provenance:
        more.append(f"thresholds: {result.thresholds_provenance}")
    lines = [text]
    for line in more:
        wrapped = textwrap.wrap(line, SUMMARY_WIDTH, break_long_words=False, break_on_hyphens=False)
        lines += [wrapped[0], *(f"  {w}" for w in wrapped[1:])]
    return lines


SUMMARY_WIDTH = 100  # columns of a summary line after its indent
