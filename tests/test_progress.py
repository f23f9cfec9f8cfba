"""The one progress bar for long embedding work: on a terminal it shows, in CI, in a pipe and with
--format json it does not (propeval/cli/_progress.py)."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO
from propeval.cli._progress import MIN_TEXTS, embedding_progress, shown
from propeval.progress import current


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_shown_only_for_text_output_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert shown("text", Terminal())
    assert not shown("json", Terminal()) and not shown("github", Terminal()) and not shown("sarif", Terminal())
    assert not shown("text", io.StringIO())  # a pipe or a file
    monkeypatch.setenv("CI", "true")
    assert not shown("text", Terminal())
    monkeypatch.setenv("CI", "")  # set but empty: not CI
    assert shown("text", Terminal())


def test_the_listener_asks_for_a_bar_only_over_a_few_hundred_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    screen = Terminal()
    with embedding_progress("text", stream=screen):
        listener = current()
        assert listener is not None
        assert listener(MIN_TEXTS) is None
        step = listener(MIN_TEXTS + 1)
        assert step is not None
        step(MIN_TEXTS + 1)
    assert current() is None
    assert "embedding" in screen.getvalue()
    with embedding_progress("json", stream=Terminal()):
        assert current() is None


def _run_on_a_terminal(root: Path, args: list[str], ci: bool) -> tuple[int, str, str]:
    """``propeval ARGS`` with stderr on a pseudo-terminal; (exit code, stdout, what the terminal got)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(PYTHONPATH=str(REPO / "tools"), TERM="xterm-256color", COLUMNS="100", **({"CI": "true"} if ci else {}))
    master, slave = pty.openpty()
    seen: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed its end
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.run(
        [sys.executable, "-m", "propeval", *args], cwd=root, env=env, stdout=subprocess.PIPE, stderr=slave, timeout=600
    )
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(seen).decode(errors="replace"))  # colours, cursor
    return proc.returncode, proc.stdout.decode(), screen


@pytest.mark.slow
def test_dedup_shows_the_bar_on_a_terminal_and_not_in_ci_or_json(bundled_e5: Path, corpus: Any) -> None:
    n = MIN_TEXTS + 20
    corpus.write(
        "pyproject.toml",
        (corpus.root / "pyproject.toml").read_text()
        + '\n[tool.propeval.dedup]\ncache_dir = ".cache"\ncompare_facts = false\n',
    )
    for k in range(n):
        cid = f"c{k // 4 + 1:04d}"
        if k % 4 == 0:
            corpus.claim(cid, source_url=f"https://example.org/{cid}")
        corpus.item(f"i{k + 1:04d}", cid, prompt=f'"Question {k} about topic {k * 7919 % 1000} in year {1900 + k}?"')

    code, out, screen = _run_on_a_terminal(corpus.root, ["dedup"], ci=False)
    assert code in (0, 1), out + screen
    assert "embedding ━" in screen and f"{n}/{n} texts" in screen, screen
    assert f"{n} encoded now" in out

    (corpus.root / ".cache").rename(corpus.root / ".cache-old")  # cold again: the same work
    code, out, screen = _run_on_a_terminal(corpus.root, ["dedup"], ci=True)
    assert f"{n} encoded now" in out and "embedding" not in screen, screen

    (corpus.root / ".cache").rename(corpus.root / ".cache-ci")
    code, out, screen = _run_on_a_terminal(corpus.root, ["dedup", "--format", "json"], ci=False)
    assert '"texts_encoded_now": ' + str(n) in out and "embedding" not in screen, screen


def test_off_a_terminal_a_long_run_writes_a_plain_line_now_and_then(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Piped (or in CI), no bar: a line every PLAIN_EVERY seconds says how far the run is, so a
    run of minutes is not silent; a short run writes nothing."""
    from propeval import progress

    monkeypatch.setenv("CI", "")
    with progress.bar("answering") as update:
        assert update is not None
        update(1, 10)
    assert capsys.readouterr().err == ""  # under PLAIN_EVERY: nothing
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    with progress.bar("answering") as update:
        assert update is not None
        update(3, 10)
    with progress.phases("import") as step:
        assert step is not None
        step("dedup: embedding", 40, 200)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("answering: 3/10, ") and err[0].endswith(" s")
    assert err[1].startswith("import: dedup: embedding 40/200, ")
    with progress.bar("answering", enabled=False) as update:
        assert update is None  # json output: nothing at all
