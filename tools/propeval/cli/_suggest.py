"""Click groups that answer a mistyped command with the commands it may have meant.

click has no "did you mean" of its own: ``propeval chek`` says only "No such command 'chek'".
:class:`SuggestingGroup` looks the name up among the group's commands with :mod:`difflib` (the
standard library's close-match ratio, as git's "did you mean" does with its own distance) before
click fails, and names up to three, still as a usage error (exit 2).
"""

from __future__ import annotations

import difflib

import click


def close_commands(name: str, commands: list[str]) -> list[str]:
    """The commands ``name`` may be a typo of, best first (a prefix of exactly one command counts too)."""
    scored = sorted(((difflib.SequenceMatcher(None, name, c).ratio(), c) for c in commands), reverse=True)
    best = scored[0][0] if scored else 0.0
    # The best match, and any about as close: "chek" is "check", not also "schema".
    close = [c for r, c in scored if r >= 0.6 and r >= best - 0.1][:3]
    prefixed = [c for c in commands if name and c.startswith(name)]
    if len(prefixed) == 1 and prefixed[0] not in close:
        close.insert(0, prefixed[0])
    return close[:3]


class SuggestingGroup(click.Group):
    """A click group whose unknown-command error names the closest commands."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            close = close_commands(name, self.list_commands(ctx))
            if close:
                shown = " or ".join(repr(c) for c in close)
                ctx.fail(f"No such command {name!r}. Did you mean {shown}?")
        return super().resolve_command(ctx, args)
