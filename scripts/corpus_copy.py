"""A git repository holding a copy of a checkout's corpus: the scratch space of the docs examples
(docs_examples.py) and of the CLI snapshot (cli_snapshot.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def git(root: Path, env: Mapping[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **env}, check=True, capture_output=True)


def corpus_repo(src: Path, root: Path, parts: Sequence[str], env: Mapping[str, str]) -> None:
    """Copy ``parts`` (files or folders) of ``src`` into ``root`` and commit them on ``main``."""
    root.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if (src / part).is_dir():
            shutil.copytree(src / part, root / part)
        elif (src / part).is_file():
            shutil.copy2(src / part, root / part)
    git(root, env, "init", "-q", "-b", "main")
    git(root, env, "add", "-A")
    git(root, env, "commit", "-qm", "corpus")
