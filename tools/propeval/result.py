"""Problems are data: every check yields them, every reporter prints them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum

# A message longer than this is cut in the middle: a problem quotes values from files people write,
# and a 1 GB value must not become 1 GB of terminal output or of GitHub annotations.
MAX_MESSAGE = 1000


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to about ``limit`` characters, the cut marked; the head and the tail are kept.

    The tail survives because messages end with their fix ("...; use one of those values").
    """
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    return f"{text[:head]}…[{len(text) - head - tail} characters cut]…{text[-tail:]}"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one place in one file.

    ``path`` is relative to the corpus root, with forward slashes. ``line`` and ``col`` are
    1-based; 0 means the whole file. ``pointer`` is an RFC 6901 JSON pointer into the file's data.
    """

    path: str
    line: int
    col: int
    rule: str
    message: str
    pointer: str = ""
    severity: Severity = Severity.ERROR
    fix: str = ""

    def __post_init__(self) -> None:
        # Frozen, so the cap goes in through object.__setattr__; every producer gets it for free.
        if len(self.message) > MAX_MESSAGE:
            object.__setattr__(self, "message", clip(self.message))
        if len(self.fix) > MAX_MESSAGE:
            object.__setattr__(self, "fix", clip(self.fix))

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["severity"] = self.severity.value
        return d


@dataclass(frozen=True)
class Rule:
    """One rule id and every fact about it, declared once: by the module that checks it (a check
    rule in ``checks/<name>.py``, a groups rule in ``groups/rules/<name>.py``) or in
    :mod:`propeval.rules`' table for a command's own rules. :mod:`propeval.rules` only collects them.

    ``description`` is what it checks (one line, in ``--help``), ``severity`` what its problems are,
    ``wrong`` and ``fix`` what a problem of it means and how to fix one (Markdown: the rule
    reference, CONTRIBUTING's error tables and SARIF's help); ``also`` the other severities some of its problems carry.
    ``draft``: a draft claim or item is held to it too (besides loading, drafts keep only the rules
    that guard identity and safety). ``narrowed``: a run on
    some paths reports its problems only for those paths; a rule that speaks for files that are gone,
    hidden behind a link or added elsewhere sets it False.
    """

    id: str
    area: str
    description: str
    severity: Severity = Severity.ERROR
    wrong: str = ""
    fix: str = ""
    draft: bool = False
    narrowed: bool = True
    # Other severities a problem of it may carry, each chosen at the call for a named case (a
    # comparison allowed with --allow-mixed is a warning; `migrate --check` reports errors).
    also: tuple[Severity, ...] = ()

    def problem(
        self,
        path: str,
        line: int,
        col: int,
        message: str,
        *,
        pointer: str = "",
        fix: str = "",
        severity: Severity | None = None,
    ) -> Problem:
        """A problem of this rule, with this rule's severity; ``severity`` picks one of ``also``
        (an opaque archive link is the ``sources`` rule's one warning), and no other.

        Raises:
            ValueError: ``severity`` is not one this rule declares (a bug in the calling check).
        """
        if severity is not None and severity is not self.severity and severity not in self.also:
            raise ValueError(f"rule {self.id!r} declares no {severity.value} problems")
        return Problem(path, line, col, self.id, message, pointer=pointer, severity=severity or self.severity, fix=fix)

    @property
    def help_text(self) -> str:
        """What is wrong and how to fix it, in plain text (SARIF ``help.text``)."""
        return f"What is wrong: {_plain(self.wrong)}.\nHow to fix it: {_plain(self.fix)}."

    @property
    def help_markdown(self) -> str:
        """What is wrong and how to fix it, in Markdown (SARIF ``help.markdown``)."""
        tag = "" if self.severity is Severity.ERROR else f" ({self.severity.value})"
        return (
            f"**`{self.id}`**{tag}: {self.description}.\n\n**What is wrong:** {self.wrong}.\n\n"
            f"**How to fix it:** {self.fix}."
        )


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


@dataclass
class CheckResult:
    """The problems of one run, plus what was looked at."""

    problems: list[Problem] = field(default_factory=list)
    files_checked: int = 0
    notes: list[str] = field(default_factory=list)
    # Notes about how the run is set up, the same on every run ("translation drift: skipped, no
    # encoder configured"): shown once per terminal session or with --verbose (propeval.standing).
    standing: list[str] = field(default_factory=list)

    def extend(self, problems: Iterable[Problem]) -> None:
        self.problems.extend(problems)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def sorted(self) -> list[Problem]:
        return sorted(set(self.problems))
