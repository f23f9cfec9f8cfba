"""How far the judges of a panel agree, with each other and with humans (`propeval agree judges`).

A panel's grade records keep every judge's own verdict (``judges``). Each field a rubric's kind
rates (:meth:`~propeval.judge.kinds.base.Kind.rating_units`: a facts rubric rates each fact's
state apart, and the fact and propaganda scores per item) becomes a raters x units table, one row
per judge; Krippendorff's alpha (the ``krippendorff`` package, through
:func:`propeval.agreement.krippendorff_alpha`) is computed over it at the field's level (nominal
states and labels, ordinal scores). A judge that gave no valid verdict on an item is a missing
rating there, which alpha allows. With a human label file, each judge and the combined panel are
compared with the human one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.errors import UsageError
from propeval.judge import runs
from propeval.judge.rubric import load_rubric
from propeval.loader import load_jsonl
from propeval.settings import JudgeSettings

Unit = tuple[str, str, str]  # (run, item_id, unit suffix such as a fact id)


@dataclass
class PanelAgreement:
    rubric: str
    runs: list[str]
    judges: list[str]  # "endpoint (model)", in panel order
    records: int  # panel grade records read
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rubric": self.rubric,
            "runs": self.runs,
            "judges": self.judges,
            "records": self.records,
            "fields": self.fields,
        }


def _rater(sub: dict[str, Any]) -> str:
    return f"{sub.get('endpoint')} ({sub.get('judge_model')})"


def panel_agreement(
    config: Config, settings: JudgeSettings, run_ids: tuple[str, ...], rubric_name: str, human: Path | None
) -> PanelAgreement:
    """Krippendorff's alpha per field between the panel's judges over ``run_ids``, and of each
    judge and the panel against the ``human`` label file (JSON Lines: ``item_id`` and the
    rubric's fields, as a grade record writes them)."""
    from propeval import agreement as ag

    rubric = load_rubric(config.root / settings.rubrics_dir, rubric_name, root=config.root)
    kind = rubric.spec
    judges: list[str] = []
    labels: dict[str, dict[str, dict[Unit, Any]]] = {}  # rater -> field -> unit -> label
    records = 0
    for run in run_ids:
        graded = runs.read_graded(
            runs.resolve_run(config.root / settings.runs_dir, run) / runs.grades_file(rubric.name),
            kind,
            root=config.root,
            rubric=rubric,
        )
        for row in graded.rows:
            subs = (row.grade or {}).get("judges")
            if row.status != "scored" or not isinstance(subs, list):
                continue
            records += 1
            raters = [("panel", row.grade or {})]
            raters += [(_rater(s), s) for s in subs if isinstance(s, dict)]
            for name, rec in raters:
                if name != "panel" and name not in judges:
                    judges.append(name)
                if rec.get("status") != "scored":
                    continue
                for fname, units in kind.rating_units(rec).items():
                    for suffix, label in units.items():
                        labels.setdefault(name, {}).setdefault(fname, {})[(graded.run, row.item_id, suffix)] = label
    if not records:
        raise UsageError(
            f"no scored panel record under {rubric.name} in {', '.join(run_ids)}: grade with two or more "
            "--judge (or [tool.propeval.judge] panel) first"
        )
    humans: dict[str, dict[tuple[str, str], Any]] = {}
    if human is not None:
        for _, line in load_jsonl(human, root=config.root):
            for fname, rated in kind.rating_units(line).items():
                for suffix, label in rated.items():
                    if label is not None:
                        humans.setdefault(fname, {})[(str(line.get("item_id")), suffix)] = label
    out = PanelAgreement(rubric.name, list(run_ids), judges, records)
    for fname, (level, scale) in kind.rating_scales(rubric.labels).items():
        cells = sorted({u for r in labels.values() for u in r.get(fname, {})})
        table = [[labels.get(j, {}).get(fname, {}).get(u) for u in cells] for j in judges]
        entry: dict[str, Any] = {
            "level": level,
            "units": len(cells),
            "between_judges": ag.krippendorff_alpha(table, level=level, labels=scale).to_dict(),
        }
        if human is not None:
            h = [humans.get(fname, {}).get((item, suffix)) for _, item, suffix in cells]
            entry["against_human"] = [
                {
                    "rater": name,
                    "stat": ag.krippendorff_alpha(
                        [h, [labels.get(name, {}).get(fname, {}).get(u) for u in cells]], level=level, labels=scale
                    ).to_dict(),
                }
                for name in [*judges, "panel"]
            ]
        out.fields[fname] = entry
    return out


def format_text(result: PanelAgreement) -> str:
    def stat(s: dict[str, Any]) -> str:
        if s["value"] is None:
            return f"undefined ({s['reason']})"
        return f"{s['value']:.3f} (n={s['n']})"

    lines = [
        f"rubric {result.rubric}: {result.records} panel record(s) in {', '.join(result.runs)}",
        f"judges: {', '.join(result.judges)}",
    ]
    for fname, e in result.fields.items():
        lines.append(f"{fname} ({e['level']}, {e['units']} unit(s)): alpha between judges {stat(e['between_judges'])}")
        for x in e.get("against_human", []):
            lines.append(f"  {x['rater']} vs human: alpha {stat(x['stat'])}")
    return "\n".join(lines) + "\n"
