"""``propeval dedup``, ``propeval dedup allow`` and ``propeval dedup calibrate``."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from propeval.cli._common import changed_since_option, config_from, exit_fast, format_option, show, workspace_from
from propeval.cli._progress import embedding_progress
from propeval.cli._suggest import SuggestingGroup
from propeval.dedup.report import dedup_report
from propeval.dedup.result import PASSES as PASS_CHOICES
from propeval.reporters import Report

if TYPE_CHECKING:
    from propeval.dedup.calibrate import Calibration
    from propeval.dedup.calibrate_corpus import CorpusCalibration


def _announce(message: str) -> None:
    click.echo(f"propeval dedup: {message}", err=True)


@click.group("dedup", invoke_without_command=True, cls=SuggestingGroup)
@changed_since_option
@format_option
@click.option(
    "--pass",
    "passes",
    multiple=True,
    type=click.Choice(PASS_CHOICES),
    help="Run only this pass (repeatable). Default: exact, lexical and semantic.",
)
@click.option(
    "--record",
    is_flag=True,
    help="Also write the run's record to ledger/dedup.json (under [tool.propeval.gates] ledger_dir) for the "
    "dataset card: date, commit, encoder, thresholds per language pair, pairs found and allowlisted per pass. "
    "Whole-corpus runs only.",
)
@click.option(
    "--sign/--no-sign",
    default=True,
    show_default=True,
    help="With --record: sign the record with your key ($PROPEVAL_SIGNING_KEY, or signing-key.pem in your user "
    "config folder); without a key it is written unsigned.",
)
@click.pass_context
def command(
    ctx: click.Context, changed_since: str | None, fmt: str, passes: tuple[str, ...], record: bool, sign: bool
) -> None:
    """Find near-duplicate prompts and facts across claims, and explain each pair.

    Three passes run on normalised text (NFKC, format characters removed, case and whitespace
    folded): exact (same hash), lexical (rapidfuzz token-sort ratio) and semantic (embedding
    cosine, faiss). Items of one claim are never compared with each other; claim facts are
    compared with other claims' facts. Pairs reviewed and kept are listed in the allowlist
    (dedup-allowlist.yaml); an entry stops applying when either text changes.

    Exits 1 when an unreviewed pair is at or above a threshold ([tool.propeval.dedup]).

    \b
    Examples:
      propeval dedup                                   # the whole corpus
      propeval dedup --changed-since HEAD              # staged and uncommitted changes (the hook)
      propeval dedup --changed-since origin/main --format github
      propeval dedup --record                          # and write ledger/dedup.json for the card
      propeval dedup allow i0003 i0042 --reason "same event, different facts asked"
      propeval dedup calibrate tests/dedup/data/labelled-pairs.tsv
    """
    if ctx.invoked_subcommand is not None:
        return
    ws = workspace_from(ctx)
    from propeval.errors import UsageError
    from propeval.extras import require_dedup

    if record and changed_since is not None:
        raise UsageError("--record records a whole-corpus run; leave out --changed-since")
    settings = ws.config.settings.dedup
    # before numpy, faiss or torch is imported: name what is missing for the configured backend
    require_dedup(settings.backend, settings.second_model, "dedup")
    from propeval.dedup import PASSES, Options, find_duplicates

    options = Options(changed_since=changed_since, passes=tuple(p for p in PASSES if p in passes) if passes else PASSES)
    with embedding_progress(fmt):
        result = find_duplicates(ws.config, options, announce=_announce, corpus=ws.corpus)
    if record:
        from propeval.dedup.record import record_run

        result.notes.append(record_run(ws, result, options.passes, sign=sign))
    show(dedup_report(result), fmt)
    exit_fast(ctx, result.exit_code)


# --------------------------------------------------------------------------- output


# --------------------------------------------------------------------------- allow


@command.command("allow")
@click.argument("a")
@click.argument("b")
@click.option("--reason", required=True, help="Why the pair is kept (it is recorded).")
@click.option("--reviewer", default=None, help="Who reviewed it. Default: git config user.name.")
@click.option(
    "--sign",
    is_flag=True,
    help="Sign the entry with your maintainer key ($PROPEVAL_SIGNING_KEY, or signing-key.pem in your user config "
    "folder): a maintainer's review, which counts in a pull request.",
)
@click.pass_context
def allow_cmd(ctx: click.Context, a: str, b: str, reason: str, reviewer: str | None, sign: bool) -> None:
    """Record that the pair A B was reviewed and is kept (writes dedup-allowlist.yaml).

    A and B are item ids (i0003) or fact ids (c0001/f2). The entry stores both texts' hashes, so
    it stops applying when either text changes.

    An entry is an approval. One that is not on the base branch counts only when a maintainer
    signed it (--sign here, or propeval ledger sign dedup-allowlist.yaml for an entry someone
    else wrote) with a key on [tool.propeval.signers]; until then its pair stays unreviewed.

    \b
    Examples:
      propeval dedup allow i0003 i0042 --reason "same event, different facts asked"
      propeval dedup allow i0003 i0042 --reason "same event, different facts asked" --sign
    """
    from propeval import gitutil
    from propeval.dedup import add_allow_entry
    from propeval.dedup.allowlist import allow_messages
    from propeval.errors import UsageError

    config = config_from(ctx)
    name = reviewer or gitutil.config_value(config.root, "user.name")
    if not name:
        raise UsageError("say who reviewed the pair: --reviewer NAME (or set git config user.name)")
    key = None
    if sign:
        from propeval.signing import load_key

        key = load_key()
    path, entry, replaced = add_allow_entry(config, a, b, reason=reason, reviewer=name, key=key)
    for line in allow_messages(config, path, entry, replaced, key):
        click.echo(line)


# --------------------------------------------------------------------------- calibrate


@command.command("calibrate")
@click.argument("pairs", type=click.Path(path_type=Path))
@format_option
@click.option("--all-thresholds", is_flag=True, help="Print every threshold from 0.50 to 0.99, not every 0.05.")
@click.option(
    "--cross-lingual",
    is_flag=True,
    help="The pairs are in two languages: calibrate cross_lingual_threshold (semantic pass only).",
)
@click.option(
    "--min-precision",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.90,
    show_default=True,
    help="A corpus file: recommend, per language pair, a threshold among those whose precision on the calibration "
    "split reaches this (the targets are precision >= 0.80 on data not tuned on: 0.90 leaves room for drift).",
)
@click.option(
    "--objective",
    type=click.Choice(["recall", "f1"]),
    default="f1",
    show_default=True,
    help="A corpus file: of those thresholds, the one of the highest recall (of equal recall, the highest "
    "threshold), or of the best F1.",
)
@click.option(
    "--cross-validate-floor",
    is_flag=True,
    help="A corpus file: choose --min-precision among 0.80-0.95 by 5-fold cross-validation on the calibration "
    "split: the floor whose thresholds, chosen on four folds, reach recall 0.85 and precision 0.80 on the fifth in "
    "the most language pairs (then the higher floor).",
)
@click.option(
    "--cross-min-precision",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="For pairs of two languages, recommend the best F1 among the thresholds whose precision reaches this "
    "(e.g. 0.9), not the best F1 overall.",
)
@click.pass_context
def calibrate_cmd(
    ctx: click.Context,
    pairs: Path,
    fmt: str,
    all_thresholds: bool,
    min_precision: float,
    objective: str,
    cross_lingual: bool,
    cross_validate_floor: bool,
    cross_min_precision: float | None,
) -> None:
    """Precision, recall, F1 and base rate per threshold for each pass and language pair; recommends
    thresholds.

    A corpus file calibrates at corpus level, as a run sees texts: JSON Lines of {"text", "language",
    "meaning"} (texts of one meaning are duplicates: translations, rewordings; optional "near": meanings
    too close to call, "corpus": texts of one corpus meet each other, "split": "calibration" or
    "heldout"). Every text of a corpus meets every other through the real passes, scored with the
    configured model; per language pair, the threshold is the one of the best F1 (--objective f1;
    or the highest recall) among those whose precision on the calibration split reaches
    --min-precision (a same-language pair with a "templated" corpus: the one that finds the most of
    its rewordings at <= 1 false flag per 100 distinct items there, when that finds more), and
    recall and precision are shown on both splits. It prints the table for
    [tool.propeval.dedup] with the thresholds_model it was made for. benchmarks/dedup_corpus.py writes
    such a file.

    PAIRS is a TSV file with the header a<TAB>b<TAB>label (optionally <TAB>lang_a<TAB>lang_b and
    <TAB>source), or JSON Lines {"a", "b", "label", "lang_a", "lang_b"}; label 1 marks a duplicate
    (paraphrase or translation), 0 a related but different question. Pairs that name their languages
    are swept per language pair, against the threshold now applied to it. A pass that cannot
    separate the classes (ROC AUC < 0.75 or best F1 < 0.5) is warned about, not recommended. Uses
    the configured embedding model and the embedding cache.

    \b
    Examples:
      propeval dedup calibrate tests/dedup/data/corpus/corpus.jsonl            # pair_thresholds
      propeval dedup calibrate tests/dedup/data/multilingual/calibration.tsv   # pair level
      propeval dedup calibrate --cross-min-precision 0.9 tests/dedup/data/multilingual/calibration.tsv
      propeval dedup calibrate tests/dedup/data/multilingual/heldout.tsv       # how they hold up
      propeval dedup calibrate tests/dedup/data/labelled-pairs.tsv
      propeval dedup calibrate --cross-lingual tests/dedup/data/crosslingual-pairs.tsv
    """
    from propeval.dedup.calibrate import calibrate
    from propeval.dedup.calibrate_corpus import calibrate_corpus, is_corpus_file
    from propeval.embed.registry import configured_encoder, rescore_encoder

    config = config_from(ctx)
    settings = config.settings.dedup
    encoder = configured_encoder(settings, config.root, announce=_announce)
    if is_corpus_file(pairs):
        floor = None if cross_validate_floor else min_precision
        result = calibrate_corpus(pairs, config, settings, encoder, min_precision=floor, objective=objective)
        show(
            Report(
                data=_corpus_payload(result),
                json_options={"ensure_ascii": True},
                view=partial(_corpus_table, result, pairs),
            ),
            fmt,
        )
        return
    # labelled pairs have cosines, not margins: the second model is the cosine scoring's (none by default)
    rescorer = rescore_encoder(replace(settings, score="cosine"), config.root)
    cache = settings.cache_folder(config.root)
    with embedding_progress(fmt):
        cal = calibrate(
            pairs,
            settings,
            encoder,
            cross_lingual=cross_lingual,
            cache=cache,
            rescorer=rescorer,
            cross_min_precision=cross_min_precision,
        )
    model = getattr(encoder, "name", settings.model)
    note = ""
    if settings.score != "cosine":
        note = (
            "labelled pairs have cosines, not margins (a margin needs the corpus around a pair): these figures are "
            f'for score = "cosine" (thresholds_model = "{settings.backend}-cosine"); to calibrate '
            f"{settings.scoring_model}, give a corpus file (JSON Lines of text, language, meaning)"
        )
    from propeval.embed.registry import BACKENDS

    if rescorer is not None and BACKENDS[settings.backend].KNOWN is not None:  # its second model: other languages
        model += f"; pairs with a language it does not know (uk), and close pairs within ru or zh: {rescorer.name}"
    elif rescorer is not None:
        model += f"; pairs of two languages it knows (not uk): {rescorer.name}"
    payload = {
        "pairs": cal.pairs,
        "positives": cal.positives,
        "model": model,
        "warnings": cal.warnings,
        "passes": {
            p.name: {
                "recommended": p.best.threshold,
                "criterion": p.criterion,
                "current": p.current,
                "current_source": p.current_source,
                "at_current": None if p.at_current is None else p.at_current.__dict__,
                "pairs": p.pairs,
                "positives": p.positives,
                "base_rate": p.base_rate,
                "roc_auc": p.auc,
                "warning": p.warning or None,
                "rows": [r.__dict__ for r in p.rows],
            }
            for p in cal.passes
        },
    }
    if note:
        payload["note"] = note
    view = partial(_calibration_table, cal, all_thresholds, model, note)
    show(Report(data=payload, json_options={"ensure_ascii": True}, view=view), fmt)
    for w in cal.warnings:
        click.echo(f"warning: {w}", err=True)


def _corpus_payload(result: CorpusCalibration) -> dict[str, Any]:
    return {
        "thresholds_model": result.model,
        "min_precision": result.min_precision,
        "objective": result.objective,
        "texts": result.texts,
        "distinct_items": result.meanings,
        "pair_thresholds": result.table,
        "grey_zones": {k: list(v) for k, v in result.zones.items()},
        "uncalibrated": [p.pair for p in result.pairs if p.threshold is None],
        "weak": [p.pair for p in result.pairs if p.threshold is not None and p.weak],
        "pairs": {
            p.pair: {
                "threshold": p.threshold,
                "criterion": p.criterion,
                "grey_zone": None if p.zone is None else list(p.zone),
                "current": p.current,
                "current_source": p.current_source,
                "positives": p.positives,
                "found": p.found,
                "false": p.false,
                "recall": {s: p.recall(s) for s in p.positives},
                "precision": {s: p.precision(s) for s in p.positives},
                "review_band": {
                    "width": p.width,
                    "suggested_width": p.suggested_width,
                    "found": p.review_found,
                    "false": p.review_false,
                    "size": p.review_size,
                    "per_100_items": {s: p.review_per_100(s) for s in p.positives},
                    "precision": {s: p.review_precision(s) for s in p.positives},
                    "recall_both_bands": {s: p.recall_both(s) for s in p.positives},
                },
            }
            for p in result.pairs
        },
        "corpora": [{"corpus": c, "split": s, **figures} for (c, s), figures in result.per_corpus.items()],
        "cross_validation": [
            {"min_precision": r.min_precision, "met": r.met, "recall": r.recall, "precision": r.precision}
            for r in result.floors
        ],
    }


def _corpus_table(result: CorpusCalibration, path: Path, out: TextIO, styled: bool) -> None:
    """Per language pair: planted duplicates, the threshold, recall and precision on both splits;
    per corpus: false flags per 100 distinct items; then the table for pyproject.toml."""
    from propeval.dedup.calibrate_corpus import floor_text

    def pct(x: float | None) -> str:
        return "   -" if x is None else f"{x:.2f}"

    out.write(
        f"corpus-level calibration of {result.model} on {path.name}: calibration split {result.texts['calibration']} "
        f"texts ({result.meanings['calibration']} distinct items), held-out {result.texts['heldout']} texts\n"
        f"threshold per language pair: {'highest recall' if result.objective == 'recall' else 'best F1'} at "
        f"precision >= {floor_text(result.min_precision)} on the calibration split\n\n"
    )
    if result.floors:
        out.write(
            "precision floor chosen by 5-fold cross-validation on the calibration split (per floor: language pairs "
            "whose held-back folds reach recall 0.85 and precision 0.80; recall/precision per pair):\n"
        )
        for r in result.floors:
            mark = " <-" if r.min_precision == result.min_precision else ""
            cells = " ".join(f"{k} {r.recall[k]:.2f}/{r.precision[k]:.2f}" for k in sorted(r.recall))
            out.write(f"  {r.min_precision:.3f}: {r.met:2d} met | {cells}".rstrip() + f"{mark}\n")
        out.write("\n")
    out.write("  pair   planted  threshold | calibration recall precision false | held-out recall precision false\n")
    for p in result.pairs:
        t = "uncalibrated" if p.threshold is None else f"{p.threshold:9.4f}   "
        note = ""
        if p.threshold is None:
            note = f"  {p.criterion}; falls back to {p.current:.4f} ({p.current_source})"
        elif p.weak:
            note = f"  weak: rests on {p.positives.get('calibration', 0)} pairs"
        if p.threshold is not None and p.criterion.startswith(("best F1 (no", "most rewordings")):
            note += f"  ({p.criterion})"
        if p.threshold is not None and p.zone is not None:
            note += f"  e5 and USE where e5's margin is in [{p.zone[0]:.4f}, {p.zone[1]:.4f})"
        out.write(
            f"  {p.pair}  {p.positives.get('calibration', 0):7d}  {t} | {pct(p.recall('calibration')):>18} "
            f"{pct(p.precision('calibration')):>9} {p.false.get('calibration', 0):5d} | "
            f"{pct(p.recall('heldout')):>15} {pct(p.precision('heldout')):>9} {p.false.get('heldout', 0):5d}{note}\n"
        )
    out.write(
        "\nexpected recall and precision of each band per language pair (duplicate: at the threshold above; review: "
        "the configured band width under it, and the vetoed pairs above it; load: review pairs per 100 distinct "
        "items; suggested: the widths that reach both-band recall 0.95 with the fewest review pairs, at most 10 per "
        "100 distinct items of each corpus):\n"
        "  pair    width | calibration duplicate R/P  review R/P  both R  load | held-out duplicate R/P  review R/P  "
        "both R  load | suggested\n"
    )
    for p in result.pairs:
        band_cells: list[str] = []
        for split in ("calibration", "heldout"):
            rev_recall = None
            if p.positives.get(split):
                rev_recall = p.review_found.get(split, 0) / p.positives[split]
            load = p.review_per_100(split)
            band_cells.append(
                f"{pct(p.recall(split)):>18}/{pct(p.precision(split))} {pct(rev_recall):>6}/"
                f"{pct(p.review_precision(split))} {pct(p.recall_both(split)):>6} "
                f"{'   -' if load is None else f'{load:5.1f}'}"
            )
        suggested = "-" if p.suggested_width is None else f"{p.suggested_width:.4f}"
        out.write(f"  {p.pair}  {p.width:.4f} | {band_cells[0]} | {band_cells[1]} | {suggested}\n")
    out.write("\nper corpus at these thresholds: planted found, false flags per 100 distinct items\n")
    for (corpus, split), f in result.per_corpus.items():
        out.write(
            f"  {split:11} {corpus:28} {f['found']:4d}/{f['planted']:<4d} found, {f['false']:4d} false "
            f"({f['false_per_100']:.2f} per 100 of {f['meanings']}); review band {f['review']:4d} "
            f"({f['review_per_100']:.2f} per 100)\n"
        )
    table = ", ".join(f'"{k}" = {v:.4f}' for k, v in result.table.items())
    out.write(
        f'\nfor [tool.propeval.dedup]:\n  thresholds_model = "{result.model}"\n  pair_thresholds = {{ {table} }}\n'
    )
    if result.zones:
        zones = ", ".join(f'"{k}" = [{lo:.4f}, {hi:.4f}]' for k, (lo, hi) in result.zones.items())
        out.write(f"  grey_zones = {{ {zones} }}\n")
    missing = [p.pair for p in result.pairs if p.threshold is None]
    if missing:
        out.write(f"  uncalibrated (too few planted duplicates): {', '.join(missing)}\n")


def _calibration_table(
    cal: Calibration, all_thresholds: bool, model: str, note: str, out: TextIO, styled: bool
) -> None:
    """Per pass and language pair: base rate, ROC AUC, precision, recall and F1 per threshold, the
    figures at the threshold now applied and any warning; then the recommended settings."""
    out.write(
        f"{cal.pairs} labelled pairs ({cal.positives} duplicates, {cal.pairs - cal.positives} not), model {model}\n"
    )
    if note:
        out.write(f"note: {note}\n")
    for p in cal.passes:
        auc = f", ROC AUC {p.auc:.3f}" if p.auc is not None else ""
        out.write(f"\n{p.name}: {p.pairs} pairs, base rate {p.base_rate:.2f}{auc}\n")
        out.write("  threshold  precision  recall     f1  flagged\n")
        for r in p.rows:
            show_row = all_thresholds or round(r.threshold * 1000) % 50 == 0 or r is p.best
            if p.name == "exact" and r.threshold != p.rows[-1].threshold:
                continue
            if show_row:
                mark = f"  <- {p.criterion}" if r is p.best else ""
                out.write(
                    f"  {r.threshold:9.3f}  {r.precision:9.3f}  {r.recall:6.3f}  {r.f1:5.3f}  {r.flagged:7d}{mark}\n"
                )
        if p.at_current is not None:
            r = p.at_current
            out.write(
                f"  now {r.threshold:.3f} ({p.current_source}): precision {r.precision:.3f}, recall {r.recall:.3f}, "
                f"F1 {r.f1:.3f}, {r.flagged} flagged\n"
            )
        if p.warning:
            out.write(f"  warning: {p.warning}\n")
    out.write("\nrecommended thresholds for [tool.propeval.dedup]:\n")
    pair_rows = []
    for p in cal.passes:
        if p.name == "exact" or p.warning:
            continue
        if p.name.startswith("semantic "):
            pair_rows.append(f'"{p.name.split(" ", 1)[1]}" = {p.best.threshold:.3f}')
            continue
        cur = f" (now {p.current:.3f})" if p.current is not None else ""
        out.write(
            f"  {p.name}_threshold = {p.best.threshold:.3f}{cur}: precision {p.best.precision:.3f}, "
            f"recall {p.best.recall:.3f}, F1 {p.best.f1:.3f}\n"
        )
    if pair_rows:
        out.write("  pair_thresholds = { " + ", ".join(pair_rows) + " }\n")
