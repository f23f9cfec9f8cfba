"""The dataset card (``README.md`` of a release), rendered from ``templates/card.md.j2``.

The template holds the card's prose and layout, in the order a Hugging Face user expects (what the
dataset is, who it is for, how to load it; Uses, Out-of-scope use, structure, Bias, risks and
limitations with the curation evidence, Personal information, Citation); this module gives it the
numbers, the citation and the few formatting filters it needs. The card is Markdown with Hugging
Face YAML front matter, so jinja2's HTML autoescape is off; every value built from corpus fields (a
source URL, a domain, a category, a warning quoting a file) goes through the ``md`` filter instead,
which makes it inert text in both languages a card is read in: HTML (``<``, ``>`` and ``&`` become
entities, so no tag, comment or autolink survives) and Markdown (a ``]`` before ``(`` or ``[`` is
escaped, so no link or image can form; ``|`` and line breaks cannot end a table cell or row).
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from propeval.langtags import language_key

if TYPE_CHECKING:
    import jinja2

    from propeval.release.inputs import ReleaseInputs
    from propeval.release.stats import Stats

# The dedup report's pass fields that come first in the card's table, in this order.
_PASS_ORDER = ("name", "pass", "method", "threshold", "pairs", "flagged", "kept", "removed", "before", "after")


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` bucket of ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid YAML flow scalar


def _md(s: Any) -> str:
    """``s`` as inert text in a Markdown card (a table cell or a list line): no HTML, no link, no
    image, and nothing that ends the cell (``|``) or the row (a line break)."""
    text = " ".join(str(s).split())
    text = html.escape(text.replace("\\", "\\\\"), quote=False)
    # A link or image needs "](" or "][" (a reference definition needs a line of its own, which a
    # cell or list line cannot start): escaping that "]" is enough, and leaves "accuracy[stated]".
    return text.replace("|", "\\|").replace("](", "\\](").replace("][", "\\][")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _num(x: float) -> str:
    return f"{x:.3f}"


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return _num(v)
    return str(v)


def _pass_columns(passes: Sequence[dict[str, Any]]) -> list[str]:
    """The columns of the dedup passes table: the scalar fields any pass has, known ones first."""
    keys = {k for p in passes for k, v in p.items() if not isinstance(v, (dict, list))}
    return [k for k in _PASS_ORDER if k in keys] + sorted(keys - set(_PASS_ORDER))


def _bib(s: Any) -> str:
    """``s`` as the inside of a BibTeX ``{...}`` field in a Markdown code block: no brace,
    backslash or backtick (they would end the field, escape, or end the block), one line."""
    return re.sub(r"[{}\\`]", "", " ".join(str(s).split()))


@dataclass(frozen=True)
class Citation:
    """The card's BibTeX entry: key, authors (``and``-joined), year and URL (None when none is known)."""

    key: str
    authors: str
    year: int
    url: str | None


def _origin_url(inputs: ReleaseInputs) -> str | None:
    """The corpus repository's ``origin`` remote as an https URL without credentials, or None."""
    from propeval import gitutil

    remote = gitutil.config_value(inputs.config.root, "remote.origin.url")
    if not remote:
        return None
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):(.+)", remote)  # git@github.com:owner/repo.git
    if scp:
        remote = f"https://{scp.group(1)}/{scp.group(2)}"
    parts = urlsplit(remote)
    if parts.scheme not in ("http", "https", "ssh", "git") or not parts.hostname:
        return None
    host = parts.hostname + (f":{parts.port}" if parts.port and parts.scheme in ("http", "https") else "")
    path = parts.path.removesuffix("/").removesuffix(".git")
    return urlunsplit(("https", host, path, "", ""))  # no user name, password, query or fragment


def citation(inputs: ReleaseInputs, stats: Stats) -> Citation:
    """The citation from ``[tool.propeval.release]``: ``authors`` (default "<name> contributors"),
    ``year`` (default the release commit's year), ``url`` (default the Hub page of ``hub_id``, else
    the repository's ``origin`` remote)."""
    s = inputs.settings
    authors = " and ".join(s.authors) if s.authors else f"{s.name} contributors"
    year = s.year
    if not year:
        date = stats.provenance["date"] if stats.provenance else ""
        year = int(date[:4]) if date[:4].isdigit() else datetime.now(UTC).year
    url = s.url or (f"https://huggingface.co/datasets/{s.hub_id}" if s.hub_id else None) or _origin_url(inputs)
    key = re.sub(r"\W+", "_", f"{s.name}_{s.version}").strip("_") or "dataset"
    return Citation(key, authors, year, url)


@functools.cache
def _template() -> jinja2.Template:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("propeval.release", "templates"),
        autoescape=False,  # Markdown, not HTML: cells go through the md filter
        undefined=jinja2.StrictUndefined,  # a misspelt name in the template is an error, not a blank
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(md=_md, bib=_bib, pct=_pct, num=_num, cell=_cell, yaml_str=_yaml_str, pass_columns=_pass_columns)
    return env.get_template("card.md.j2")


def evidence_warnings(inputs: ReleaseInputs) -> list[str]:
    """The card's and the report's "Warnings" list: self-judging (``judge.selfjudge``), then one line
    per piece of curation evidence that does not hold, then ``inputs.card_warnings``."""
    out = []
    for j in inputs.judge:
        if j.status != "pass":
            model = f" ({j.judge_model})" if j.judge_model else ""
            out.append(f"Judge for {j.rubric}{model}: {j.verdict}.")
    a = inputs.answerability
    unchecked = a.items - a.missing - a.counted
    if unchecked:
        out.append(
            f"Answerability: {unchecked} record(s) are not checked and are not counted as evidence (see Answerability)."
        )
    if a.items and not a.counted:
        out.append("Answerability: no item has answerability evidence that counts.")
    if inputs.dedup.status != "current":
        out.append(f"Dedup: {inputs.dedup.status}" + (f" ({inputs.dedup.detail})" if inputs.dedup.detail else "") + ".")
    from propeval.judge.selfjudge import card_lines

    return [*card_lines(inputs.ws), *out, *inputs.card_warnings]


def render_card(inputs: ReleaseInputs, stats: Stats) -> str:
    """The dataset card: Hugging Face YAML front matter and generated tables."""
    from propeval.outcomes import ADVISORY, FAILED, MEANING, OK
    from propeval.release.rows import FEATURES, SPLIT, data_files

    langs = sorted(stats.by_language)
    configs = {
        name: {"path": path, "rows": stats.items if name == "default" else stats.by_language[name]}
        for name, path in data_files(langs).items()
    }
    text = _template().render(
        settings=inputs.settings,
        stats=stats,
        languages=sorted({language_key(lang) for lang in stats.by_language}),
        size_category=size_category(stats.items),
        features=FEATURES,
        configs=configs,
        split=SPLIT,
        warnings=evidence_warnings(inputs),
        judge=inputs.judge,
        answerability=inputs.answerability,
        dedup=inputs.dedup,
        citation=citation(inputs, stats),
        load=inputs.settings.hub_id or "path/to/this/folder",
        meaning={w: MEANING[w] for w in (OK, ADVISORY, FAILED)},
    )
    return text.rstrip("\n") + "\n"
