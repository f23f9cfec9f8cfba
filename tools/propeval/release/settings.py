"""``[tool.propeval.release]``: the dataset's name, licence and task categories, and where the ledgers lie."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from propeval.config import Config
from propeval.errors import ConfigError


@dataclass(frozen=True)
class ReleaseSettings:
    """``[tool.propeval.release]``."""

    name: str = "propeval"
    license: str = "cc-by-4.0"
    task_categories: tuple[str, ...] = ("question-answering", "text-generation")
    dedup_report: str = "ledger/dedup.json"
    difficulty_ledger: str = "ledger/difficulty.json"
    judge_ledger: str = "ledger/judge"
    rubrics_dir: str = "rubrics"
    runs_dir: str = "runs"

    @classmethod
    def from_config(cls, config: Config) -> ReleaseSettings:
        table = config.section("release")
        kw: dict[str, Any] = {}
        for key in ("name", "license", "dedup_report", "difficulty_ledger", "judge_ledger", "rubrics_dir", "runs_dir"):
            if key in table:
                if not isinstance(table[key], str) or not table[key].strip():
                    raise ConfigError(f"[tool.propeval.release] {key} must be a non-empty string", key=key)
                kw[key] = table[key]
        if "task_categories" in table:
            value = table["task_categories"]
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                raise ConfigError(
                    "[tool.propeval.release] task_categories must be a list of Hugging Face task names",
                    key="task_categories",
                )
            kw["task_categories"] = tuple(value)
        return cls(**kw)
