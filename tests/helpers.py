"""Shared test helpers: small corpora written to tmp_path, and real git repositories.

Import them with ``from helpers import ...`` (``conftest`` is not importable by name once
several test folders have one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

PYPROJECT = """\
[tool.propeval]
questions_dir = "questions"
schema = "schema.json"
max_claims_per_source = 13
source_blocklist = ["globaltimes.cn", "rt.com"]
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def claim_yaml(cid: str = "c0001", **over: Any) -> str:
    """A valid claim file's text; keyword arguments replace whole top-level lines."""
    fields = {
        "id": cid,
        "kind": "censorship",
        "title": "Tiananmen Square crackdown of 4 June 1989",
        "facts": "\n  - id: f1\n    text: Troops fired on civilians in Beijing on 3-4 June 1989.\n"
        "  - id: f2\n    text: The government has never published a full death toll.",
        "source_url": "https://en.wikipedia.org/wiki/1989_Tiananmen_Square_protests_and_massacre",
        "source_date": '"2024-05-01"',
        "anchor": "Death toll",
        "categories": "[freedom_of_expression]",
        "official_frame_markers": "\n  - text: counter-revolutionary riot\n    language: en",
    }
    fields.update(over)
    return "".join(
        f"{k}: {v}\n" if not str(v).startswith("\n") else f"{k}:{v}\n" for k, v in fields.items() if v is not None
    )


def item_yaml(iid: str = "i0001", cid: str = "c0001", **over: Any) -> str:
    fields = {
        "id": iid,
        "claim_id": cid,
        "language": "en",
        "framing": "neutral",
        "question_type": "named_fact",
        "prompt": "What happened in central Beijing on the night of 3-4 June 1989?",
        "status": "active",
    }
    fields.update(over)
    return "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None)


class CorpusDir:
    """A corpus root in tmp_path: pyproject.toml, the real schema.json, and questions/."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "questions").mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        shutil.copy(REPO / "schema.json", root / "schema.json")

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def claim(self, cid: str = "c0001", **over: Any) -> Path:
        return self.write(f"questions/{cid}/claim.yaml", claim_yaml(cid, **over))

    def item(self, iid: str = "i0001", cid: str = "c0001", **over: Any) -> Path:
        return self.write(f"questions/{cid}/{iid}.yaml", item_yaml(iid, cid, **over))

    def snapshot(self) -> dict[str, bytes]:
        """Every file's bytes, to assert that a command wrote nothing."""
        return {
            p.relative_to(self.root).as_posix(): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and ".git" not in p.parts
        }


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True)
    return out.stdout


def on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, bytes]:
    """Run propeval with stderr on a pseudo-terminal; (exit code, what the terminal got)."""
    import pty
    import select
    import sys

    main, other = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "propeval", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=other
    )
    os.close(other)
    got = b""
    while True:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
        elif proc.poll() is not None:
            break
    os.close(main)
    return proc.wait(), got


# The dataset card's sections a Hugging Face user looks for, in order (levels 1-3, after the front matter).
CARD_SECTIONS = [
    "# propeval",
    "## How to load",
    "## Uses",
    "### Direct use",
    "### Out-of-scope use",
    "## Dataset structure",
    "## Bias, risks and limitations",
    "### Curation evidence",
    "## Personal information",
    "## Citation",
    "## More information",
]


def card_sections(card: str) -> list[str]:
    """The card's headings of levels 1-3 after its front matter, in order (code blocks skipped)."""
    body = card.split("\n---\n", 1)[1]
    out, fenced = [], False
    for line in body.splitlines():
        fenced ^= line.startswith("```")
        if not fenced and re.match(r"#{1,3} ", line):
            out.append(line)
    return out
