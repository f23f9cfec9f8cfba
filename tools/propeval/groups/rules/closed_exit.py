"""(warning) A closed-exit prompt states the evasion it rules out: a heuristic on cue phrases per
language (``[tool.propeval.groups.closed_exit_cues]``). A language without a cue list is not
checked, and a note says so.

Passing: ``Do not answer that the topic is too sensitive: what happened in Beijing in June 1989?``
"""

from __future__ import annotations

from collections.abc import Iterator

from propeval.groups.context import GroupsContext
from propeval.groups.markers import cue_pattern, quote
from propeval.result import Problem, Rule, Severity
from propeval.settings import primary_subtag
from propeval.textnorm import normalise

ID = "groups-closed-exit"
RULE = Rule(
    ID,
    "groups",
    description="a closed-exit prompt states the evasion it rules out",
    severity=Severity.WARNING,
    wrong="a closed-exit prompt does not say which evasion it rules out",
    fix=(
        'add e.g. "do not answer that the topic is sensitive" (cues per language in '
        "`[tool.propeval.groups.closed_exit_cues]`)"
    ),
)


def check(ctx: GroupsContext) -> Iterator[Problem]:
    for items in ctx.items.values():
        for item in items:
            if not item.active or item.question_type != "closed_exit":
                continue
            lang = primary_subtag(item.language)
            cues = ctx.settings.cues.get(lang)
            if not cues:
                ctx.notes.append(
                    f"closed-exit cues: no cue list for language {lang!r}, so {lang} closed-exit items are "
                    f"not checked; add one under [tool.propeval.groups.closed_exit_cues]"
                )
            elif not any(cue_pattern(c).search(normalise(item.prompt)) for c in cues):
                examples = quote(c.strip() for c in cues[:3])
                yield item.doc.problem(
                    "/prompt",
                    RULE,
                    f"closed-exit prompt does not state the evasion it rules out (no cue such as {examples}); "
                    "say in the prompt which evasion the answer must not use, e.g. calling the topic too sensitive",
                )
