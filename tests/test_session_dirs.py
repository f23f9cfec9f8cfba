"""The test session's own user folders (tests/userdirs.py), and the guard that keeps tests out of the
real ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from userdirs import GUARD, REAL_DIRS_ENV, SESSION_DIRS, SESSION_ENV


def test_every_user_folder_points_into_the_session_folder_in_children_too(tmp_path: Path) -> None:
    """The session folder, or this test's own (the user config folder is one per test: conftest.py)."""
    session = Path(os.environ[SESSION_ENV])
    real = [Path(p) for p in os.environ[REAL_DIRS_ENV].split(os.pathsep)]
    code = (
        "import os, platformdirs\n"
        "print(platformdirs.user_cache_dir('propeval'))\n"
        "print(platformdirs.user_state_dir('propeval'))\n"
        f"print('\\n'.join(os.environ[v] for v in {sorted(SESSION_DIRS)!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        assert Path(line).is_relative_to(session) or Path(line).is_relative_to(tmp_path), line
        assert not any(Path(line).is_relative_to(r) for r in real), line


@pytest.mark.parametrize("how", ["open", "os.open", "mkdir", "replace", "copy"])
def test_the_guard_names_a_write_under_a_guarded_folder(tmp_path: Path, how: str) -> None:
    """The guard, pointed at a stand-in for the real cache, sees each way of writing there."""
    fake_real = tmp_path / "real-cache"
    fake_real.mkdir()
    (fake_real / "kept").write_text("read, never written", encoding="utf-8")
    (tmp_path / "src").write_text("x", encoding="utf-8")
    target = fake_real / "propeval" if how == "mkdir" else fake_real / "file"
    saved = GUARD.guarded
    GUARD.guarded = (str(fake_real.resolve()) + os.sep,)
    try:
        (tmp_path / "elsewhere").write_text("not guarded", encoding="utf-8")
        if how == "open":
            target.write_text("x", encoding="utf-8")
        elif how == "os.open":
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT))
        elif how == "mkdir":
            target.mkdir()
        elif how == "replace":
            os.replace(tmp_path / "src", target)
        else:
            shutil.copy(tmp_path / "elsewhere", target)
        assert (fake_real / "kept").read_text(encoding="utf-8")  # a read is no write
        seen = [path for _, path in GUARD.seen]
    finally:
        GUARD.guarded = saved
        GUARD.seen.clear()
    assert seen and set(seen) == {str(target.resolve())}
