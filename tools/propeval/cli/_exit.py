"""How the ``propeval`` process ends: set by :func:`propeval.cli.main`, read by the commands
(:mod:`propeval.cli._common`). A module of its own, importing nothing, so that ``main()`` loads no
more of the package than the command line needs before a command runs."""

from __future__ import annotations

FAST_EXIT: list[bool] = [False]  # the command asked to end the process at once
ENTRY_POINT: list[bool] = [False]  # this process is the propeval command, not a CliRunner
