"""``[tool.propeval]`` itself: where the corpus's files are, and the source rules of ``check``."""

from __future__ import annotations

from dataclasses import dataclass

from propeval import builtin as _builtin
from propeval.settings.table import Integer, Table, Text, TextList, key


@dataclass(frozen=True)
class CoreSettings(Table):
    NAME = ""
    DOC = "The corpus: where its files are, and the source rules `propeval check` applies."

    questions_dir: str = key(Text(folder=True), "questions", "the claim and item folders: questions/<claim>/")
    schema: str = key(
        Text(folder=True),
        "schema.json",
        'the JSON Schema items and claims are checked against; "builtin": the one propeval ships '
        "(also used when the key is unset and there is no schema.json)",
    )
    max_claims_per_source: int = key(
        Integer(lo=1), _builtin.policy()["max_claims_per_source"], "a source URL may serve at most this many claims"
    )
    source_blocklist: tuple[str, ...] = key(
        TextList(domain=True),
        _builtin.blocklist(),
        "domains that are not acceptable sources of facts (state outlets); unset: propeval's built-in list "
        "(tools/propeval/data/policy.toml); a list given replaces it",
    )
