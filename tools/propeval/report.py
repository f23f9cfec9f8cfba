"""``propeval report``: one self-contained HTML file with the corpus and run plots.

Every plot is drawn with matplotlib's Agg backend and embedded as a base64 PNG data URI; the page
is the jinja2 template ``templates/report.html.j2`` (autoescaped), the styles are inline, and one
inline script (``templates/report.js``, vanilla: search and filters over the items) is the only
script the page's Content-Security-Policy lets run (by its sha256), so the file reads with no
network: no scripts, fonts or images from elsewhere, and no script a corpus text could inject.
The page works without the script too: every section is a ``<details>`` that opens by a click.

Items are grouped under their claim, whose facts, source and frame markers are shown once; a long
section starts collapsed. The CSS names fonts for each script the corpus is written in (CJK,
Cyrillic, Latin), and every prompt carries its language as ``lang``, so the browser picks a CJK
font for Chinese (``make setup`` installs Debian's fonts-noto-cjk).
A panel whose input is missing (no difficulty ledger, no dedup report, no judge gate, no scored
runs) says "no data" and how to produce it, instead of disappearing.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import DependencyError, UsageError
from propeval.fsutil import atomic_write
from propeval.judge.kinds.base import Drawer, Image, Panel, Row, Table
from propeval.loader import LoadError
from propeval.release import BANDS, ReleaseInputs, Stats, compute_stats
from propeval.result import Problem, Severity

if TYPE_CHECKING:
    from propeval.dedup.record import DedupEvidence
    from propeval.judge.rubric import Rubric
    from propeval.release.evidence import AnswerabilityEvidence

__all__ = ["RunSummary", "build_report", "claim_views", "summarise_runs", "write_report"]

TEMPLATE = "report.html.j2"
_SELF_JUDGING = ("self-judged", "reference-model", "partial-run")  # shown in the runs panel


# --------------------------------------------------------------------------- scored runs


@dataclass
class RunSummary:
    """Scored runs (``runs/*/grades-*.jsonl``), read by the judge engine's one reader and grouped
    by rubric: every rubric is its own panel, drawn by its kind."""

    files: list[str] = field(default_factory=list)
    rubrics: list[tuple[Rubric, list[Row]]] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    # Why a rubric's runs were left out: different judges, judge settings or rubric versions
    # (propeval.judge.compare), unless allow_mixed; then each model is labelled with its judge group.
    refused: list[Problem] = field(default_factory=list)
    # One line per grades file: how many of its grades took their verdict from the response cache.
    cache_notes: list[str] = field(default_factory=list)

    def panels(self, draw: Drawer | None = None) -> list[Panel]:
        """One panel per rubric with graded items (``draw`` None: numbers and tables, no plots)."""
        out = [rubric.spec.view.report_panel(rubric, rows, draw) for rubric, rows in self.rubrics]
        return [p for p in out if p.cells]


def _warning(p: Problem, suffix: str = "") -> Problem:
    return Problem(p.path, p.line, p.col, p.rule, p.message + suffix, severity=Severity.WARNING)


def _compare(rows: list[Row], metas: dict[str, dict[str, Any]], warn_share: float, allow_mixed: bool) -> Any:
    """Check that one rubric's runs may share a panel; the comparison and the rows to draw (with
    ``allow_mixed``, each model labelled by its judge group, so groups never pool)."""
    import dataclasses

    from propeval.judge.compare import compare, describe

    by_run: dict[str, list[Row]] = {}
    for r in rows:
        by_run.setdefault(r.run, []).append(r)
    infos = [describe(run, metas.get(run, {}), rs) for run, rs in sorted(by_run.items())]
    comparison = compare(infos, truncated_warn_share=warn_share)
    if comparison.refusals and allow_mixed:
        rows = [dataclasses.replace(r, model=f"{r.model} [{comparison.groups[r.run]}]") for r in rows]
    return comparison, rows


def _cache_notes(rubric: str, rows: list[Row], runs_dir: str) -> list[str]:
    """How many grades of each run of ``rubric`` came from the response cache (``cached: true``)."""
    from propeval.judge.runs import grades_file

    by_run: dict[str, list[Row]] = {}
    for r in rows:
        by_run.setdefault(r.run, []).append(r)
    out = []
    for run, rs in sorted(by_run.items()):
        asked = [r.grade for r in rs if r.grade is not None and r.grade.get("status") != "unanswered"]
        cached = sum(g.get("cached") is True for g in asked)
        out.append(
            f"{runs_dir}/{run}/{grades_file(rubric)}: {cached} of {len(asked)} grade(s) took their verdict from the "
            "response cache (read back and MAC-checked, not asked again)"
        )
    return out


def summarise_runs(inputs: ReleaseInputs, *, allow_mixed: bool = False) -> RunSummary:
    """Read every grades file under the runs folder, the latest validated record per item.

    The rubric named by a file (``grades-<rubric>.jsonl``) is loaded from the rubrics folder and
    its kind reads and scores the grades: nothing is guessed from a record's keys. A file whose
    rubric cannot be loaded, or that is not JSON Lines, is a warning and is left out; a record
    that fails validation is a warning and its item counts as ungraded.
    """
    from propeval.judge import runs

    ws = inputs.ws
    root = ws.root
    out = RunSummary()
    js = ws.settings.judge
    metas: dict[str, dict[str, Any]] = {}
    by_rubric: dict[str, tuple[Rubric, list[Row]]] = {}
    for path in ws.runs.graded():
        name = runs.rubric_of(path) or ""
        rel = path.relative_to(root).as_posix()
        try:
            rubric = by_rubric[name][0] if name in by_rubric else ws.rubrics.load(name)
            graded = ws.runs.read(path, rubric)
        except (LoadError, UsageError) as e:
            path_, line, col, message = (
                (e.problem.path, e.problem.line, e.problem.col, e.problem.message)
                if isinstance(e, LoadError)
                else (rel, 0, 0, str(e))
            )
            where = "" if path_ == rel else f" (needed by {rel})"
            out.warnings.append(
                Problem(
                    path_, line, col, "release-input", f"{message}{where} (file ignored)", severity=Severity.WARNING
                )
            )
            continue
        out.files.append(rel)
        out.warnings += [_warning(p, " (item counted as ungraded)") for p in graded.problems]
        if graded.partial:
            out.warnings.append(
                Problem(
                    rel,
                    0,
                    0,
                    "partial-run",
                    f"run {graded.run} is PARTIAL: {graded.partial}; its figures cover only the items answered so far",
                    severity=Severity.WARNING,
                )
            )
        metas[graded.run] = graded.meta
        by_rubric.setdefault(name, (rubric, []))[1].extend(graded.rows)
    # Self-judging is read on the models as recorded, before --allow-mixed labels them.
    self_judged = _self_judging(inputs, RunSummary(rubrics=[by_rubric[k] for k in sorted(by_rubric)]))
    for key in sorted(by_rubric):
        rubric, rows = by_rubric[key]
        out.cache_notes += _cache_notes(key, rows, inputs.settings.runs_dir)
        comparison, rows = _compare(rows, metas, js.truncated_warn_share, allow_mixed)
        where = f"{inputs.settings.runs_dir}/*/{runs.grades_file(key)}"
        out.warnings += [Problem(where, 0, 0, "run-pitfall", f, severity=Severity.WARNING) for f in comparison.flags]
        if comparison.refusals and not allow_mixed:
            out.refused += [
                Problem(where, 0, 0, "mixed-comparison", f"{r} (rubric {key} left out of the report)")
                for r in comparison.refusals
            ]
            continue
        out.warnings += [
            Problem(
                where, 0, 0, "mixed-comparison", f"shown side by side (--allow-mixed): {r}", severity=Severity.WARNING
            )
            for r in comparison.refusals
        ]
        out.rubrics.append((rubric, rows))
    out.warnings += self_judged
    return out


def _self_judging(inputs: ReleaseInputs, summary: RunSummary) -> list[Problem]:
    """A warning per grades file whose answer model judged itself or is the reference model."""
    from propeval.judge import selfjudge
    from propeval.judge.score import judge_models

    ledger = selfjudge.ledger_for(inputs.ws)
    by_file: dict[str, tuple[set[str], set[str]]] = {}
    for rubric, rows in summary.rubrics:
        for r in rows:
            path = f"{inputs.settings.runs_dir}/{r.run}/grades-{rubric.name}.jsonl"
            models, judges = by_file.setdefault(path, (set(), set()))
            if r.model != "?":
                models.add(r.model)
            judges.update(judge_models(r.grade))
    return [
        Problem(path, 0, 0, rule, message, severity=Severity.WARNING)
        for path, (models, judges) in sorted(by_file.items())
        for rule, message in selfjudge.warnings(models, judges, ledger)
    ]


# --------------------------------------------------------------------------- plots


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise DependencyError("matplotlib", "stats") from e
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "propeval", "font.size": 9})
    return plt


def _png(fig: Any) -> str:
    plt = _pyplot()
    buf = io.BytesIO()
    # No "Software" metadata, so the same data gives the same bytes across matplotlib versions.
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _heatmap(ax: Any, matrix: Sequence[Sequence[float]], rows: Sequence[str], cols: Sequence[str], fmt: str) -> None:
    # Colours run from 0, so a cell's shade and its label colour agree with its value.
    peak = max((v for r in matrix for v in r), default=0) or 1
    ax.imshow(matrix, cmap="Blues", aspect="auto", vmin=0, vmax=peak)
    ax.set_xticks(range(len(cols)), labels=cols, rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), labels=rows)
    for i, r in enumerate(matrix):
        for j, v in enumerate(r):
            ax.text(j, i, format(v, fmt), ha="center", va="center", color="white" if v > peak / 2 else "black")


def plot_coverage(stats: Stats, categories: Sequence[str]) -> str:
    plt = _pyplot()
    langs = list(stats.by_language) or ["-"]
    matrix = [[stats.coverage.get(f"{c}|{lang}", 0) for lang in langs] for c in categories]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.0 + 0.8 * len(langs)), 0.5 * len(categories) + 1.5))
    _heatmap(ax, matrix, categories, langs, "d")
    ax.set_title("Active items by category × language (0 = gap)")
    return _png(fig)


def _counts_axis(ax: Any) -> None:
    """A y axis of counts: whole numbers from 0."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(bottom=0)


def plot_mix(stats: Stats) -> str:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for ax, (title, counts) in zip(
        axes, (("Question type", stats.by_question_type), ("Framing", stats.by_framing)), strict=True
    ):
        ax.bar(list(counts), list(counts.values()), color="#4c72b0")
        ax.set_title(title)
        ax.set_ylabel("items")
        _counts_axis(ax)
    return _png(fig)


def plot_bands(stats: Stats) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3))
    names = [*BANDS, "unbanded"]
    ax.bar(names, [stats.by_band.get(b, 0) for b in names], color=["#55a868", "#dd8452", "#c44e52", "#999999"])
    ax.set_title("Difficulty bands")
    ax.set_ylabel("items")
    _counts_axis(ax)
    return _png(fig)


def score_range(values: Sequence[float], marks: Sequence[float]) -> tuple[float, float]:
    """The x range of a score histogram: the scores and the thresholds marked on it, padded by 5%
    of their span (at least 0.01), never past 1 when no score is (a cosine or a margin is at most 1).
    A single value, or many equal ones, gets a narrow range around it, not matplotlib's ±0.5."""
    points = [*values, *marks]
    lo, hi = min(points), max(points)
    pad = max(0.05 * (hi - lo), 0.01)
    top = hi + pad
    if hi <= 1.0:
        top = min(top, 1.0)
    return lo - pad, top


def plot_similarity(similarities: Sequence[float], thresholds: dict[str, float]) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3))
    lo, hi = score_range(similarities, list(thresholds.values()))
    step = (hi - lo) / 30
    edges = [lo + k * step for k in range(31)]
    ax.hist(list(similarities), bins=edges, color="#4c72b0")
    colors = ["#c44e52", "#dd8452", "#55a868", "#8172b3"]
    for k, (name, value) in enumerate(sorted(thresholds.items(), key=lambda kv: (kv[1], kv[0]))):
        ax.axvline(value, color=colors[k % len(colors)], linestyle="--", label=f"{name} = {value:g}")
    if thresholds:
        ax.legend(fontsize=7, ncols=2)
    ax.set_xlim(lo, hi)
    _counts_axis(ax)
    ax.set_xlabel("score (the pair's semantic pass score)")
    ax.set_ylabel("pairs")
    ax.set_title(f"Flagged near-duplicate pairs ({len(similarities)})")
    return _png(fig)


def plot_confusion(name: str, labels: Sequence[str], matrix: Sequence[Sequence[int]]) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * len(labels), 0.6 * len(labels) + 1.2))
    _heatmap(ax, matrix, labels, labels, "d")
    ax.set_xlabel("judge")
    ax.set_ylabel("human")
    ax.set_title(name)
    return _png(fig)


_PALETTE = ["#55a868", "#ccb974", "#c44e52", "#999999", "#4c72b0", "#8172b3", "#dd8452", "#64b5cd"]


class Plots:
    """The :class:`~propeval.judge.kinds.base.Drawer` a kind draws its report panel with."""

    def heatmaps(
        self, rows: Sequence[str], cols: Sequence[str], maps: Sequence[tuple[str, list[list[float]], str]]
    ) -> str:
        plt = _pyplot()
        fig, axes = plt.subplots(1, len(maps), figsize=(5 * len(maps), 0.5 * len(rows) + 2), squeeze=False)
        for ax, (title, matrix, fmt) in zip(axes[0], maps, strict=True):
            _heatmap(ax, matrix, rows, cols, fmt)
            ax.set_title(title)
        return _png(fig)

    def bars(self, groups: Sequence[str], series: dict[str, list[float]], title: str, ylabel: str) -> str:
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(max(5.0, 1.5 * len(groups)), 3.2))
        width = 0.8 / max(1, len(series))
        for k, (label, values) in enumerate(series.items()):
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
            ax.bar(xs, values, width, label=label, color=_PALETTE[k % len(_PALETTE)])
        ax.set_xticks(range(len(groups)), labels=list(groups))
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(ncols=max(1, len(series)), loc="upper center", bbox_to_anchor=(0.5, -0.12))
        return _png(fig)


# --------------------------------------------------------------------------- HTML

SCRIPT = "report.js"  # the one script, inline; the Content-Security-Policy names its hash


def _script() -> tuple[str, str]:
    """The page's script and its CSP source expression (``'sha256-...'``)."""
    text = (Path(__file__).parent / "templates" / SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return text, f"'sha256-{digest}'"


def _render(**context: Any) -> str:
    import jinja2  # a base dependency (the dataset card is a template too), loaded only to render

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return env.get_template(TEMPLATE).render(**context)


def build_report(inputs: ReleaseInputs, stats: Stats | None = None, runs: RunSummary | None = None) -> str:
    """The whole report as one HTML string: the numbers and plots here, the page in the template."""
    from propeval.outcomes import MEANING
    from propeval.release.card import evidence_warnings

    stats = stats or compute_stats(inputs)
    runs = runs if runs is not None else summarise_runs(inputs)
    settings = inputs.settings
    prov = stats.provenance
    sub = (
        f"{stats.items} active items, {stats.claims} claims, {stats.retired} retired, "
        f"{len(stats.by_language)} languages"
    )
    if prov:
        sub += f" · commit {prov['commit'][:12]} ({prov['date']})" + (" + uncommitted changes" if prov["dirty"] else "")
    dedup = inputs.dedup
    confusions, judge = _judge_panel(inputs)
    a = inputs.answerability
    dedup_passes, dedup_thresholds, thresholds = _dedup_panel(dedup)
    claims = claim_views(inputs, stats)
    script, script_hash = _script()
    words = {j.word for j in inputs.judge} | {a.word}
    return _render(
        name=settings.name,
        sub=sub,
        gates=gate_views(inputs, stats),
        meaning={w: MEANING[w] for w in MEANING if w in words},
        warnings=evidence_warnings(inputs),
        coverage=Image(plot_coverage(stats, inputs.categories), "coverage heatmap") if stats.items else None,
        gaps={
            "cells": len(stats.gaps["category_language"]),
            "framing": len(stats.gaps["claims_missing_framing"]),
        },
        mix=Image(plot_mix(stats), "question type and framing bars") if stats.items else None,
        items_missing=f"No active item under {inputs.config.questions_dir}/; add one with propeval new.",
        bands=Image(plot_bands(stats), "difficulty band histogram") if stats.difficulty["ledger"] else None,
        difficulty=stats.difficulty,
        difficulty_missing=(
            f"{inputs.difficulty_ledger} is not present: grade runs (propeval answer, propeval grade), "
            "then run propeval difficulty."
        ),
        dedup=dedup,
        dedup_passes=dedup_passes,
        dedup_thresholds=dedup_thresholds,
        similarity=(
            Image(plot_similarity(dedup.similarities, thresholds), "similarity histogram")
            if dedup.similarities
            else None
        ),
        dedup_missing=f"{dedup.path} is not present; a maintainer records it with propeval run --record "
        "(or propeval dedup --record).",
        confusions=confusions,
        judge=judge if inputs.judge else None,
        judge_evidence=inputs.judge,
        judge_missing=f"No rubric under {settings.rubrics_dir}/ has a rubric.yaml; add one, then run "
        "propeval gate judge --rubric NAME --online.",
        answerability=_answerability_table(a) if a.groups else None,
        answerability_summary=a,
        answerability_missing=(
            f"No answerability record under {a.ledger}/; run propeval gate answerability --online --all."
        ),
        panels=runs.panels(Plots()),
        runs_missing=(
            f"No scored runs under {settings.runs_dir}/*/grades-*.jsonl; run propeval answer, then propeval grade."
            if not runs.refused
            else "Refused: " + "; ".join(p.message for p in runs.refused)
        ),
        claims=claims,
        filters=filter_options(claims),
        item_count=sum(len(c["rows"]) for c in claims),
        run_warnings=[f"{w.path}: [{w.rule}] {w.message}" for w in runs.warnings if w.rule in _SELF_JUDGING],
        run_notes=runs.cache_notes,
        script=script,
        script_hash=script_hash,
        record_state={
            "pass": "its record passes",
            "fail": "its record fails a threshold",
            "not checked": "its record is not checked",
            "not current": "its record is not current",
            "not run": "no record",
        },
    )


def gate_views(inputs: ReleaseInputs, stats: Stats) -> list[dict[str, str]]:
    """The line of outcomes under the title: each gate in the words ``propeval run`` uses for it
    (:mod:`propeval.outcomes`), the dedup record's state and the difficulty bands."""
    out = [
        {"what": f"judge gate {j.rubric}", "word": j.word, "detail": j.verdict, "href": "#judge"} for j in inputs.judge
    ]
    a = inputs.answerability
    out.append(
        {
            "what": "answerability gate",
            "word": a.word,
            "detail": f"{a.counted} of {a.items} active item(s) have evidence that counts; {a.passed} pass",
            "href": "#answerability",
        }
    )
    d = inputs.dedup
    out.append(
        {
            "what": "dedup record",
            "word": d.status,
            "detail": d.detail or f"{len(d.pairs)} flagged pair(s)",
            "href": "#dedup",
        }
    )
    banded = stats.difficulty.get("banded", 0)
    out.append(
        {
            "what": "difficulty",
            "word": f"{banded} banded" if stats.difficulty["ledger"] else "not measured",
            "detail": "bands of the difficulty ledger" if stats.difficulty["ledger"] else "no difficulty ledger",
            "href": "#difficulty",
        }
    )
    return out


def _judge_panel(inputs: ReleaseInputs) -> tuple[list[Image], Table]:
    """The judge gate's confusion matrices (one per rubric and field) and its summary table."""
    confusions = []
    for j in inputs.judge:
        for field_name, (labels, matrix) in sorted(j.confusions.items()):
            title = f"{j.rubric}: {field_name}"
            confusions.append(Image(plot_confusion(title, labels, matrix), f"confusion matrix {title}"))
    judge = Table(
        ["rubric", "judge model", "gold cases", "best chance-corrected agreement", "threshold", "judge gate"],
        [
            [
                j.rubric,
                j.judge_model or "-",
                j.cases or "-",
                f"{j.headline.name} {j.headline.value:.3f}" if j.headline and j.headline.value is not None else "-",
                f"{j.headline.threshold_key} {j.headline.threshold}" if j.headline else "-",
                j.word,
            ]
            for j in inputs.judge
        ],
    )
    return confusions, judge


def _answerability_table(a: AnswerabilityEvidence) -> Table:
    """One row per reference model, judge and rubric: how many of its records count."""
    return Table(
        ["reference model", "judge", "judge gate", "records", "counted", "passed", "not checked"],
        [
            [
                g.answer_model,
                g.judge_model,
                f"{g.rubric}: {g.judge_label}",
                g.records,
                g.counted,
                f"{g.passed} of {g.counted}" if g.counted else "not checked",
                "; ".join(f"{n}: {reason}" for reason, n in g.not_checked.items()) or "-",
            ]
            for g in a.groups
        ],
    )


def _dedup_panel(dedup: DedupEvidence) -> tuple[Table | None, Table | None, dict[str, float]]:
    """The dedup record's passes and per-language-pair thresholds (None when it has none), and the
    same-language thresholds the similarity histogram marks."""
    passes = Table(
        ["pass", "threshold", "pairs found", "allowlisted", "unreviewed"],
        [
            [p.get("name"), p.get("threshold"), p.get("found"), p.get("allowlisted"), p.get("unreviewed")]
            for p in dedup.passes
        ],
    )
    table = Table(
        ["languages", "score threshold", "from"],
        [[pair, t.get("value"), t.get("source")] for pair, t in dedup.pair_thresholds.items()],
    )
    thresholds = {
        pair: float(t["value"])
        for pair, t in dedup.pair_thresholds.items()
        if isinstance(t.get("value"), (int, float)) and pair.split("-")[0] == pair.split("-")[1]
    }
    return passes if dedup.passes else None, table if dedup.pair_thresholds else None, thresholds


_ANSWERABILITY_KEYS = ("pass", "fail", "not checked", "no record", "retired")


def _safe_link(url: str) -> str | None:
    """``url`` when it is an http(s) address the report may link to, else None (shown as text only)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        return url if parts.scheme in ("http", "https") and parts.hostname else None
    except ValueError:  # not a URL urlsplit can read (an unclosed IPv6 bracket): text only
        return None


def claim_views(inputs: ReleaseInputs, stats: Stats) -> list[dict[str, Any]]:
    """One entry per claim with its items, for the Items section: the claim's facts, source and
    frame markers once, then each item (active first, then retired) with its band, answerability
    status, dedup neighbours and flags. Flags are what a maintainer filters for: a near-duplicate
    neighbour (unreviewed or allowlisted), a claim missing a framing that ``groups`` requires of
    its kind (the same completeness table, so the report and ``propeval groups`` agree), no band
    where bands exist."""
    from propeval.groups.matrix import FRAMINGS, build_matrix
    from propeval.langtags import language_key

    neighbours = inputs.dedup.neighbours()
    groups = inputs.ws.settings.groups
    measured = bool(stats.difficulty["ledger"])
    corpus = inputs.corpus
    out = []
    for claim in sorted(corpus.claims.values(), key=lambda c: c.id):
        needed = {m.framing for m in build_matrix(claim, corpus.items_of(claim.id), groups, corpus).missing}
        claim_flags = [f"missing {f}" for f in FRAMINGS if f in needed]
        items: list[dict[str, Any]] = []
        for item in sorted(corpus.items_of(claim.id), key=lambda i: (not i.active, i.id)):
            near, flags = [], list(claim_flags)
            for n in neighbours.get(item.id, []):
                raw = n.get("passes")
                passes: dict[str, Any] = raw if isinstance(raw, dict) else {}
                scores = ", ".join(f"{k} {v:.3f}" for k, v in sorted(passes.items()) if isinstance(v, (int, float)))
                allowed = bool(n.get("allowlisted"))
                near.append(f"{n['other']} ({scores}{', allowlisted' if allowed else ''})")
                flags.append("allowlisted pair" if allowed else "near-duplicate")
            if item.active:
                gate = inputs.answerability.per_item.get(item.id, "no record")
                band = inputs.bands.get(item.id) or "unbanded"
                if measured and band == "unbanded":
                    flags.append("no band")
            else:
                gate, band = "retired", "-"
            items.append(
                {
                    "id": item.id,
                    "language": item.language,
                    "lang_key": language_key(item.language),
                    "framing": item.framing,
                    "question_type": item.question_type,
                    "translation_of": item.translation_of,
                    "prompt": item.prompt,
                    "status": item.status,
                    "retired_reason": str(item.data.get("retired_reason", "")) if not item.active else "",
                    "band": band,
                    "gate": gate,
                    "gate_key": next(k for k in _ANSWERABILITY_KEYS if gate.startswith(k)) if gate else "no record",
                    "neighbours": near,
                    "flags": sorted(set(flags)),
                }
            )
        active = [i for i in items if i["status"] == "active"]
        out.append(
            {
                "id": claim.id,
                "title": str(claim.data.get("title", "")),
                "kind": claim.kind,
                "source_url": claim.source_url,
                "source_link": _safe_link(claim.source_url),
                "source_date": str(claim.data.get("source_date") or ""),
                "anchor": str(claim.data.get("anchor") or ""),
                "facts": [{"id": f.id, "text": f.text} for f in claim.facts],
                "markers": [{"language": lang, "text": text} for lang, text in claim.markers],
                "rows": items,
                "active": len(active),
                "retired": len(items) - len(active),
                "languages": sorted({i["lang_key"] for i in active}),
                "flags": sorted({f for i in items for f in i["flags"]}),
            }
        )
    return out


def filter_options(claims: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The values each filter of the Items section offers: those the items have, in a fixed order."""
    items = [i for c in claims for i in c["rows"]]
    bands = [*BANDS, "unbanded", "-"]
    return {
        "language": sorted({i["lang_key"] for i in items}),
        "claim": [c["id"] for c in claims],
        "band": [b for b in bands if any(i["band"] == b for i in items)],
        "status": sorted({i["status"] for i in items}),
        "answerability": [k for k in _ANSWERABILITY_KEYS if any(i["gate_key"] == k for i in items)],
        "flag": sorted({f for i in items for f in i["flags"]}),
    }


def write_report(inputs: ReleaseInputs, out: Path, *, allow_mixed: bool = False) -> tuple[RunSummary, Stats]:
    """Build the report and write it atomically to ``out``; a rubric whose runs may not share a
    panel is left out and named in ``refused`` (see :func:`summarise_runs`)."""
    stats = compute_stats(inputs)
    runs = summarise_runs(inputs, allow_mixed=allow_mixed)
    atomic_write(out, build_report(inputs, stats, runs))
    out.chmod(0o644)  # a report is for reading and sharing; the temporary file was private
    return runs, stats
