"""The options and the session of commands that make records: ``--base``'s install check, ``--pr``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import click

from propeval.config import Config

pr_option = click.option(
    "--pr",
    metavar="REF",
    default=None,
    help="Make the records for the pull request at REF (a local branch or a commit), read from git objects: "
    "a temporary work tree of REF, with every git hook off, where the records are written and committed "
    "(no hook runs); a local branch is moved to that commit. Run it from a trusted install of --base "
    "(see SECURITY.md); it needs --base.",
)


@dataclass
class RecordSession:
    """Where a record-making command reads and writes, and what it says about it."""

    config: Config  # the corpus whose records are made: the pull request's work tree with --pr
    notes: list[str] = field(default_factory=list)
    commit: Callable[[Sequence[str], str], str | None] = lambda paths, message: None


@contextmanager
def record_session(config: Config, base: str | None, pr: str | None) -> Iterator[RecordSession]:
    """Check the running install against ``base``; with ``pr``, the pull request as data.

    ``session.commit(paths, message)`` commits ``paths`` (relative to the corpus root) in the
    pull request's work tree with no hook, and says what it did (None without ``--pr``).
    """
    from propeval.errors import UsageError
    from propeval.trusted import check_install

    if pr is not None and base is None:
        raise UsageError(
            "--pr reads the pull request as data and takes the policy from the branch it merges into: give --base REF"
        )
    notes = [check_install(config.root, base).note] if base is not None else []
    if pr is None:
        yield RecordSession(config, notes)
        return
    from propeval import gitutil
    from propeval.config import require_corpus
    from propeval.trusted import commit_records, pr_checkout, pr_root

    with pr_checkout(config.root, pr) as tree:
        data = require_corpus(pr_root(tree, config.root))
        prefix = data.root.resolve().relative_to(gitutil.toplevel(data.root).resolve()).as_posix()

        def commit(paths: Sequence[str], message: str) -> str | None:
            rel = [p if prefix == "." else f"{prefix}/{p}" for p in paths]
            return commit_records(tree, rel, message)

        notes.append(f"the pull request {pr} ({tree.commit[:12]}) is read from git objects; none of its hooks run")
        yield RecordSession(data, notes, commit)
