"""The docs site builds, documents every command and option, and anchors every rule.

- `mkdocs build --strict` (what `make docs` runs) passes: a broken link, a missing page or anchor
  fails it; and the built pages load nothing from the network (no web font, no remote script).
- The CLI reference (docs/cli.md, a cog block of every `--help`) has a section for every command
  and subcommand click knows, and every option of each is in its section: a command added without
  regenerating the page fails here, before the cog staleness test (which is slow) says so.
- Every rule id is an anchor of the built rule page: SARIF's helpUri links `rules.html#<id>`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from helpers import REPO
from propeval.cli import cli
from propeval.rules import RULES


def _paths(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        assert sub is not None
        found.append(((*path, name), sub))
        if isinstance(sub, click.Group):
            found.extend(_paths(sub, (*path, name)))
    return found


def _sections() -> dict[str, str]:
    """docs/cli.md: "propeval <command path>" -> the text of its section."""
    sections: dict[str, str] = {}
    current = ""
    for line in (REPO / "docs/cli.md").read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"#{2,4} (propeval(?: [\w-]+)*)", line)
        if heading:
            current = heading.group(1)
            assert current not in sections, f"docs/cli.md has two sections for {current}"
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return sections


def test_the_cli_reference_documents_every_command_and_option() -> None:
    sections = _sections()
    walked = _paths()
    assert len(walked) > 30
    missing = []
    for path, command in walked:
        name = "propeval " + " ".join(path)
        if name not in sections:
            missing.append(name)
            continue
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                missing += [f"{name} {opt}" for opt in param.opts if opt not in sections[name]]
    assert missing == [], "not in docs/cli.md (run `make docs-examples`): " + ", ".join(missing)
    assert set(sections) == {"propeval", *("propeval " + " ".join(p) for p, _ in walked)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return out


@pytest.mark.slow
def test_the_site_builds_strict_and_loads_nothing_remote(site: Path) -> None:
    pages = sorted(site.glob("*.html"))
    assert {"index.html", "cli.html", "rules.html", "security.html", "benchmarks.html"} <= {p.name for p in pages}
    for page in pages:
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:link|script|img)\b[^>]*(?:href|src)="(https?://[^"]+)"', html)
        assert remote == [], f"{page.name} loads {remote}"
        assert "fonts.googleapis" not in html, page.name
    # The included files are there, not the include lines.
    assert "--8&lt;--" not in (site / "security.html").read_text(encoding="utf-8")
    assert "Benchmarks" in (site / "benchmarks.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_rule_is_an_anchor_of_the_built_rule_page(site: Path) -> None:
    html = (site / "rules.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'<h3 id="([^"]+)"', html))
    assert set(RULES) <= ids, sorted(set(RULES) - ids)
