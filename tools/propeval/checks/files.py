"""Files are what they look like: no link, hard link or special file under rubrics/ and ledger/.

The corpus walk refuses such entries under ``questions/`` as it loads (every command sees those
problems); this check walks the rubric and ledger folders, whose files the gates read. Rules:
``file-symlink``, ``file-hardlink``, ``file-special`` (see ``propeval.filetypes``). They are
reported whatever paths a run is narrowed to: a link must not hide behind a narrowed hook run.

Failing (``ln -s /tmp/forged.json ledger/answerability/i0001.json``) gives
``ledger/answerability/i0001.json [file-symlink] a symbolic link (to '/tmp/forged.json'), ...``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from propeval.filetypes import RULES, scan
from propeval.result import Problem, Rule

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "files"
RULE = Rule(
    ID,
    "check",
    description="no symlink, hard link, FIFO, socket or device (file-symlink, -hardlink, -special)",
    wrong=(
        "a symbolic link, hard link, FIFO, socket or device under `questions/`, `rubrics/` or `ledger/` (reported as "
        "`file-symlink`, `file-hardlink` or `file-special`)"
    ),
    fix="as the `file-*` rule reported says",
    draft=True,
    narrowed=False,
)
EMITS = tuple(RULES)


def guarded_folders(ctx: Context) -> list[str]:
    """The rubric and ledger folders (as configured; the defaults too), relative to the root."""
    config = ctx.config
    names = ["rubrics", "ledger", config.settings.judge.rubrics_dir, config.settings.gates.ledger_dir]
    root = os.path.abspath(config.root)
    out = []
    for name in dict.fromkeys(names):
        full = os.path.abspath(os.path.join(root, name))
        if full != root and full.startswith(root + os.sep):
            out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return out


def check(ctx: Context) -> Iterator[Problem]:
    for folder in guarded_folders(ctx):
        yield from scan(ctx.config.root / folder, ctx.config.root).problems
