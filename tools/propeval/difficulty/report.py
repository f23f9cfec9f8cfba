"""``propeval difficulty --report``: band counts of the active items by category, language and framing."""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.difficulty.bands import BANDS
from propeval.errors import DependencyError

if TYPE_CHECKING:
    from propeval.workspace import Workspace


@dataclass
class Report:
    """Band counts by category, language and framing."""

    tables: dict[str, dict[str, dict[str, int]]]
    values: list[tuple[float, str | None]]  # (basis value, band) per banded item
    basis: str
    cut_values: list[float | None]
    stability: dict[str, Any] | None = None  # the ledger's: draws, what each refits, the caveat
    unstable: int = 0  # active items flagged unstable

    def to_dict(self) -> dict[str, Any]:
        return {
            "basis": self.basis,
            "cut_values": self.cut_values,
            "tables": self.tables,
            "stability": self.stability,
            "unstable": self.unstable,
        }


_COLUMNS = (*BANDS, "none")


def build_report(ws: Workspace, ledger: dict[str, Any]) -> Report:
    """Count bands of active corpus items per category, language and framing.

    An active item that the ledger does not know, or whose content changed since, counts as
    ``none``; category comes from the item's claim (an item counts once per category).
    """
    corpus = ws.corpus
    entries = ledger["items"]
    tables: dict[str, dict[str, dict[str, int]]] = {"category": {}, "language": {}, "framing": {}}
    values: list[tuple[float, str | None]] = []
    basis = ledger.get("settings", {}).get("basis", "mean")
    key = "irt_b" if basis == "irt" else "mean"

    def bump(table: str, group: str, band: str) -> None:
        row = tables[table].setdefault(group, dict.fromkeys(_COLUMNS, 0))
        row[band] += 1

    unstable = 0
    for item in sorted(corpus.active_items(), key=lambda i: i.id):
        entry = entries.get(item.id)
        fresh = isinstance(entry, dict) and entry.get("item_hash") == item.hash
        unstable += bool(fresh and isinstance(entry, dict) and "unstable" in (entry.get("flags") or []))
        band = entry.get("band") if fresh and isinstance(entry, dict) else None
        band = band if band in BANDS else "none"
        claim = corpus.claim_of(item)
        categories = (claim.data.get("categories") if claim else None) or ["(none)"]
        for cat in categories:
            bump("category", str(cat), band)
        bump("language", item.language or "(none)", band)
        bump("framing", item.framing or "(none)", band)
        if fresh and isinstance(entry, dict) and isinstance(entry.get(key), int | float):
            values.append((float(entry[key]), entry.get("band")))
    if not corpus.items:  # a ledger without a corpus (a matrix alone): report its own items
        for entry in entries.values():
            band = entry.get("band") if entry.get("band") in BANDS else "none"
            bump("category", "(no corpus)", band)
            if isinstance(entry.get(key), int | float):
                values.append((float(entry[key]), entry.get("band")))
    cuts = ledger.get("settings", {}).get("cut_values", [None, None])
    stability = ledger.get("stability") if isinstance(ledger.get("stability"), dict) else None
    return Report(tables, values, basis, cuts, stability, unstable)


def format_report(report: Report) -> str:
    """Text tables, one per grouping."""
    lines: list[str] = []
    for name, rows in report.tables.items():
        lines.append(f"bands by {name}")
        width = max([len(name), *(len(g) for g in rows)])
        lines.append(f"  {name:<{width}}  " + "  ".join(f"{c:>6}" for c in (*_COLUMNS, "total")))
        totals = dict.fromkeys(_COLUMNS, 0)
        for group in sorted(rows):
            row = rows[group]
            for c in _COLUMNS:
                totals[c] += row[c]
            lines.append(
                f"  {group:<{width}}  " + "  ".join(f"{row[c]:>6}" for c in _COLUMNS) + f"  {sum(row.values()):>6}"
            )
        if not rows:
            lines.append("  (no active items)")
        lines.append("")
    s = report.stability
    if s and s.get("draws"):
        lines.append(f"unstable: {report.unstable} active item(s) over {s['draws']} bootstrap draws; {s['caveat']}")
    elif s is None:
        lines.append("stability: the ledger predates the record of how it was computed; run propeval difficulty")
    return "\n".join(lines) + ("\n" if s is None or s.get("draws") else "")


def plot_report(report: Report, path: Path) -> None:
    """A histogram of the band basis, coloured by band, with the cut points: a PNG at ``path``."""
    try:
        import matplotlib
    except ImportError as e:
        raise DependencyError("matplotlib", "stats") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    colours = {"easy": "#4c9a2a", "medium": "#e0a526", "hard": "#b22222", None: "#888888"}
    groups: dict[str | None, list[float]] = defaultdict(list)
    for value, band in report.values:
        groups[band if band in BANDS else None].append(value)
    data = [groups[b] for b in (*BANDS, None) if groups[b]]
    labels = [b or "none" for b in (*BANDS, None) if groups[b]]
    colors = [colours[b] for b in (*BANDS, None) if groups[b]]
    if data:
        ax.hist(data, bins=20, stacked=True, label=labels, color=colors)
    for cut in report.cut_values:
        if isinstance(cut, int | float):
            ax.axvline(cut, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("IRT difficulty b" if report.basis == "irt" else "mean normalised fact score")
    ax.set_ylabel("items")
    ax.set_title(f"Item difficulty ({len(report.values)} items)")
    if data:
        ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    from propeval.fsutil import atomic_write

    atomic_write(path, buf.getvalue())


def band_counts(ledger: dict[str, Any]) -> dict[str, int]:
    counts = dict.fromkeys(_COLUMNS, 0)
    for entry in ledger["items"].values():
        counts[entry["band"] if entry["band"] in BANDS else "none"] += 1
    return counts
