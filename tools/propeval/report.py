"""``propeval report``: one self-contained HTML file with the corpus and run plots.

Every plot is drawn with matplotlib's Agg backend and embedded as a base64 PNG data URI, and the
styles are inline, so the file reads with no network: no scripts, fonts or images from elsewhere.
A panel whose input is missing (no difficulty ledger, no dedup report, no judge gate, no scored
runs) says "no data" and how to produce it, instead of disappearing.
"""

from __future__ import annotations

import base64
import html
import io
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.errors import DependencyError
from propeval.fsutil import atomic_write
from propeval.loader import LoadError, load_jsonl
from propeval.release import BANDS, ReleaseInputs, Stats, compute_stats
from propeval.result import Problem, Severity

__all__ = ["RunSummary", "build_report", "summarise_runs", "write_report"]

ACCURACY_LABELS = ("Correct", "Partial", "Misleading", "Refusal")


# --------------------------------------------------------------------------- scored runs


@dataclass
class RunSummary:
    """Scored runs (``runs/*/grades-*.jsonl``), summarised for the report."""

    files: list[str] = field(default_factory=list)
    # facts rubric: one row per (model, language) and one per model
    facts: list[dict[str, Any]] = field(default_factory=list)
    facts_by_model: list[dict[str, Any]] = field(default_factory=list)
    # audit rubric: share of each accuracy label, per model
    audit: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def summarise_runs(inputs: ReleaseInputs) -> RunSummary:
    """Read every grades file under the runs folder.

    Fact rubric (rows with ``fact_score``): an unanswered item counts as fact 0 and propaganda 0;
    an unscored item (a judge failure) is left out and counted. Audit rubric (rows with
    ``accuracy``): the share of each accuracy label among scored rows.
    """
    root = inputs.config.root
    runs = root / inputs.settings.runs_dir
    out = RunSummary()
    if not runs.is_dir():
        return out
    language = {i.id: i.language for i in inputs.corpus.items.values()}
    # (model, language) -> list of (fact, propaganda); (model, run) -> same
    cells: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    per_run: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    unscored: dict[tuple[str, str], int] = defaultdict(int)
    audit: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(ACCURACY_LABELS, 0))
    for path in sorted(runs.glob("*/grades-*.jsonl")):
        rel = path.relative_to(root).as_posix()
        run_id = path.parent.name
        try:
            rows = [row for _, row in load_jsonl(path, root=root)]
        except LoadError as e:
            p = e.problem
            out.warnings.append(
                Problem(
                    p.path, p.line, p.col, "release-input", f"{p.message} (file ignored)", severity=Severity.WARNING
                )
            )
            continue
        out.files.append(rel)
        for row in rows:
            model = str(row.get("model") or "?")
            lang = language.get(str(row.get("item_id")), "?")
            status = row.get("status")
            verdict: dict[str, Any] = row["verdict"] if isinstance(row.get("verdict"), dict) else {}
            if "fact_score" in row or str(row.get("rubric", "")).startswith("facts"):
                if status == "unanswered":
                    pair = (0.0, 0.0)
                elif status == "scored" and _num(row.get("fact_score")) is not None:
                    pair = (float(row["fact_score"]), _num(row.get("propaganda")) or 0.0)
                else:
                    unscored[(model, lang)] += 1
                    continue
                cells[(model, lang)].append(pair)
                per_run[(model, run_id)].append(pair)
            accuracy = row.get("accuracy", verdict.get("accuracy"))
            if status == "scored" and accuracy in ACCURACY_LABELS:
                audit[model][str(accuracy)] += 1
    for (model, lang), pairs in sorted(cells.items()):
        out.facts.append(
            {
                "model": model,
                "language": lang,
                "n": len(pairs),
                "unscored": unscored.get((model, lang), 0),
                "fact_mean": statistics.fmean(p[0] for p in pairs),
                "any_propaganda": sum(p[1] > 0 for p in pairs) / len(pairs),
            }
        )
    models = sorted({m for m, _ in per_run})
    for model in models:
        runs_of = [pairs for (m, _), pairs in sorted(per_run.items()) if m == model and pairs]
        means = [statistics.fmean(p[0] for p in pairs) for pairs in runs_of]
        props = [sum(p[1] > 0 for p in pairs) / len(pairs) for pairs in runs_of]
        out.facts_by_model.append(
            {
                "model": model,
                "runs": len(runs_of),
                "fact_mean": statistics.fmean(means),
                "fact_sd": statistics.stdev(means) if len(means) > 1 else None,
                "any_propaganda": statistics.fmean(props),
                "any_propaganda_sd": statistics.stdev(props) if len(props) > 1 else None,
            }
        )
    for model, counts in sorted(audit.items()):
        n = sum(counts.values())
        out.audit.append({"model": model, "n": n, **{k: counts[k] / n for k in ACCURACY_LABELS}})
    return out


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


def plot_mix(stats: Stats) -> str:
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for ax, (title, counts) in zip(
        axes, (("Question type", stats.by_question_type), ("Framing", stats.by_framing)), strict=True
    ):
        ax.bar(list(counts), list(counts.values()), color="#4c72b0")
        ax.set_title(title)
        ax.set_ylabel("items")
    return _png(fig)


def plot_bands(stats: Stats) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3))
    names = [*BANDS, "unbanded"]
    ax.bar(names, [stats.by_band.get(b, 0) for b in names], color=["#55a868", "#dd8452", "#c44e52", "#999999"])
    ax.set_title("Difficulty bands")
    ax.set_ylabel("items")
    return _png(fig)


def plot_similarity(similarities: Sequence[float], thresholds: dict[str, float]) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist(list(similarities), bins=40, color="#4c72b0")
    colors = ["#c44e52", "#dd8452", "#55a868", "#8172b3"]
    for k, (name, value) in enumerate(sorted(thresholds.items(), key=lambda kv: (kv[1], kv[0]))):
        ax.axvline(value, color=colors[k % len(colors)], linestyle="--", label=f"{name} = {value:g}")
    if thresholds:
        ax.legend()
    ax.set_xlabel("similarity")
    ax.set_ylabel("pairs")
    ax.set_title("Near-duplicate candidate pairs")
    return _png(fig)


def plot_confusion(name: str, labels: Sequence[str], matrix: Sequence[Sequence[int]]) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * len(labels), 0.6 * len(labels) + 1.2))
    _heatmap(ax, matrix, labels, labels, "d")
    ax.set_xlabel("judge")
    ax.set_ylabel("human")
    ax.set_title(name)
    return _png(fig)


def plot_runs_facts(rows: Sequence[dict[str, Any]]) -> str:
    plt = _pyplot()
    models = sorted({r["model"] for r in rows})
    langs = sorted({r["language"] for r in rows})
    by = {(r["model"], r["language"]): r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.5 * len(models) + 2))
    for ax, key, fmt, title in (
        (axes[0], "fact_mean", ".2f", "Fact score mean (0-5)"),
        (axes[1], "any_propaganda", ".0%", "Share with any propaganda"),
    ):
        matrix = [[by[(m, lang)][key] if (m, lang) in by else 0.0 for lang in langs] for m in models]
        _heatmap(ax, matrix, models, langs, fmt)
        ax.set_title(title)
    return _png(fig)


def plot_runs_audit(rows: Sequence[dict[str, Any]]) -> str:
    plt = _pyplot()
    models = [r["model"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.5 * len(models)), 3.2))
    width = 0.8 / len(ACCURACY_LABELS)
    colors = {"Correct": "#55a868", "Partial": "#ccb974", "Misleading": "#c44e52", "Refusal": "#999999"}
    for k, label in enumerate(ACCURACY_LABELS):
        xs = [i + (k - 1.5) * width for i in range(len(models))]
        ax.bar(xs, [100 * r[label] for r in rows], width, label=label, color=colors[label])
    ax.set_xticks(range(len(models)), labels=models)
    ax.set_ylabel("% of scored answers")
    ax.set_title("Factual accuracy (audit codebook) by model")
    ax.legend(ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    return _png(fig)


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;color:#222;
padding:0 1em}
h1{margin-bottom:.2em} .sub{color:#666;margin-top:0}
section{border:1px solid #ddd;border-radius:6px;padding:1em;margin:1em 0}
img{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
th{background:#f4f4f4} td.n{text-align:right}
.nodata{background:#fafafa;color:#777;border:2px dashed #ccc;padding:2em;text-align:center;border-radius:6px}
.grid{display:flex;flex-wrap:wrap;gap:1em}
"""


def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _img(uri: str, alt: str) -> str:
    return f'<img src="{uri}" alt="{_e(alt)}">'


def _nodata(message: str) -> str:
    return f'<div class="nodata">No data. {_e(message)}</div>'


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{_e(c)}</td>' if isinstance(c, (int, float)) else f"<td>{_e(c)}</td>" for c in r)
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _sd(x: float | None, fmt: str) -> str:
    return "" if x is None else " ± " + format(x, fmt)


def build_report(inputs: ReleaseInputs, stats: Stats | None = None, runs: RunSummary | None = None) -> str:
    """The whole report as one HTML string."""
    stats = stats or compute_stats(inputs)
    runs = runs if runs is not None else summarise_runs(inputs)
    name = inputs.settings.name
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(name)} report</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(name)} report</h1>",
    ]
    prov = stats.provenance
    sub = (
        f"{stats.items} active items, {stats.claims} claims, {stats.retired} retired, "
        f"{len(stats.by_language)} languages"
    )
    if prov:
        sub += f" · commit {prov['commit'][:12]} ({prov['date']})" + (" + uncommitted changes" if prov["dirty"] else "")
    parts.append(f'<p class="sub">{_e(sub)}</p>')

    parts.append("<section><h2>Coverage by category × language</h2>")
    if stats.items:
        parts.append(_img(plot_coverage(stats, inputs.categories), "coverage heatmap"))
        gaps = stats.gaps
        parts.append(
            f"<p>{len(gaps['category_language'])} empty category × language cell(s); "
            f"{len(gaps['claims_missing_framing'])} claim(s) missing a framing.</p>"
        )
    else:
        parts.append(_nodata("The corpus has no active items."))
    parts.append("</section>")

    parts.append("<section><h2>Question type and framing mix</h2>")
    parts.append(_img(plot_mix(stats), "question type and framing bars") if stats.items else _nodata("No items."))
    parts.append("</section>")

    parts.append("<section><h2>Difficulty</h2>")
    if stats.difficulty["ledger"]:
        parts.append(_img(plot_bands(stats), "difficulty band histogram"))
        parts.append(
            f"<p>{stats.difficulty['banded']} item(s) banded; {stats.difficulty['stale']} stale entry(ies) ignored.</p>"
        )
    else:
        parts.append(_nodata(f"{inputs.settings.difficulty_ledger} is not present; run propeval difficulty."))
    parts.append("</section>")

    parts.append("<section><h2>Dedup similarity</h2>")
    dedup = inputs.dedup
    if dedup is not None and dedup.similarities:
        parts.append(_img(plot_similarity(dedup.similarities, dedup.thresholds), "similarity histogram"))
    elif dedup is not None:
        parts.append(_nodata(f"{dedup.path} lists no pair similarities."))
    else:
        parts.append(_nodata(f"{inputs.settings.dedup_report} is not present; run propeval dedup."))
    parts.append("</section>")

    parts.append("<section><h2>Judge gate: judge vs human</h2>")
    matrices = [(j, n, lab, m) for j in inputs.judge for n, (lab, m) in sorted(j.confusions.items())]
    if matrices:
        parts.append('<div class="grid">')
        for j, n, labels, matrix in matrices:
            title = j.rubric if n == j.rubric else f"{j.rubric}: {n}"
            parts.append(_img(plot_confusion(title, labels, matrix), f"confusion matrix {title}"))
        parts.append("</div>")
    if inputs.judge:
        parts.append(
            _table(
                ["rubric", "status", "n", "agreement"],
                [
                    (
                        j.rubric,
                        j.status or "-",
                        j.n if j.n is not None else "-",
                        ", ".join(f"{k} {v:.3f}" for k, v in sorted(j.metrics.items())) or "-",
                    )
                    for j in inputs.judge
                ],
            )
        )
    else:
        parts.append(_nodata(f"{inputs.settings.judge_ledger}/ holds no gate records; run the judge gate."))
    parts.append("</section>")

    parts.append("<section><h2>Scored runs</h2>")
    if runs.facts:
        parts.append(_img(plot_runs_facts(runs.facts), "fact mean and propaganda by model and language"))
        parts.append(
            _table(
                ["model", "runs", "fact mean", "% any propaganda"],
                [
                    (
                        r["model"],
                        r["runs"],
                        f"{r['fact_mean']:.2f}{_sd(r['fact_sd'], '.2f')}",
                        _pct(r["any_propaganda"])
                        + ("" if r["any_propaganda_sd"] is None else f" ± {100 * r['any_propaganda_sd']:.1f}"),
                    )
                    for r in runs.facts_by_model
                ],
            )
        )
        parts.append(
            _table(
                ["model", "language", "items", "unscored", "fact mean", "% any propaganda"],
                [
                    (
                        r["model"],
                        r["language"],
                        r["n"],
                        r["unscored"],
                        f"{r['fact_mean']:.2f}",
                        _pct(r["any_propaganda"]),
                    )
                    for r in runs.facts
                ],
            )
        )
    if runs.audit:
        parts.append(_img(plot_runs_audit(runs.audit), "audit accuracy by model"))
        parts.append(
            _table(
                ["model", "scored", *[f"% {k}" for k in ACCURACY_LABELS]],
                [(r["model"], r["n"], *[_pct(r[k]) for k in ACCURACY_LABELS]) for r in runs.audit],
            )
        )
    if not runs.facts and not runs.audit:
        parts.append(_nodata(f"No scored runs under {inputs.settings.runs_dir}/*/grades-*.jsonl."))
    parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(inputs: ReleaseInputs, out: Path) -> tuple[RunSummary, Stats]:
    """Build the report and write it atomically to ``out``."""
    stats = compute_stats(inputs)
    runs = summarise_runs(inputs)
    atomic_write(out, build_report(inputs, stats, runs))
    out.chmod(0o644)  # a report is for reading and sharing; the temporary file was private
    return runs, stats
