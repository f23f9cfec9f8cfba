"""The test session's own user folders, and a guard against writes into the real ones.

Every cache a test could fill (propeval's embeddings and ONNX exports, Hugging Face, matplotlib,
pre-commit, Chromium's profile, the bundled GGUF that ``assemble()`` writes under ``~/.cache``)
lives under HOME or an XDG folder, so pointing those at a session folder keeps the real ones clean.
The model packages themselves are installed in the virtualenv and are only read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

SESSION_ENV = "PROPEVAL_TEST_SESSION"  # the session folder, for xdist's workers too
REAL_DIRS_ENV = "PROPEVAL_TEST_REAL_DIRS"  # the real folders the guard watches

# variable -> folder under the session folder
SESSION_DIRS = {
    "HOME": "home",
    "XDG_CACHE_HOME": "cache",
    "XDG_STATE_HOME": "state",
    "XDG_DATA_HOME": "data",
    "XDG_CONFIG_HOME": "config",
    "HF_HOME": "cache/huggingface",
    "MPLCONFIGDIR": "cache/matplotlib",
    "PRE_COMMIT_HOME": "cache/pre-commit",
    "PROPEVAL_STATE_DIR": "state/propeval",
}
# The key that authenticates propeval's cache entries (propeval.cachekey): one for the session, as a
# user has one, while each test gets a config folder of its own (conftest.own_user_config). A key
# per test would make every entry of the session's embedding cache fail authentication.
CACHE_KEY_ENV = "PROPEVAL_CACHE_KEY"
CACHE_KEY_FILE = "config-session/propeval/cache-key"
# Variables that would point a cache somewhere else than HF_HOME says.
CLEARED = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "SENTENCE_TRANSFORMERS_HOME", "TORCH_HOME")


def real_user_dirs(env: dict[str, str] | None = None) -> list[Path]:
    """The real user cache, state and config folders, as the environment names them now."""
    env = dict(os.environ if env is None else env)
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    return [
        Path(env.get("XDG_CACHE_HOME") or home / ".cache"),
        Path(env.get("XDG_STATE_HOME") or home / ".local" / "state"),
        Path(env.get("XDG_CONFIG_HOME") or home / ".config"),
    ]


def isolate_user_dirs(session: Path) -> None:
    """Point HOME, the XDG folders and the library caches into ``session`` (for this process and
    every child it starts)."""
    for var, sub in SESSION_DIRS.items():
        folder = session / sub
        folder.mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(folder)
    for var in CLEARED:
        os.environ.pop(var, None)
    os.environ[CACHE_KEY_ENV] = str(session / CACHE_KEY_FILE)


def user_dirs_env() -> dict[str, str]:
    """The session's user-folder variables, for a subprocess started with an environment of its own."""
    return {var: os.environ[var] for var in (*SESSION_DIRS, CACHE_KEY_ENV) if var in os.environ}


_WRITE_MODES = frozenset("wax+")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# audit event -> indexes of the path arguments that get written, created or removed
_PATH_EVENTS = {
    "os.mkdir": (0,),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.move": (1,),
}


class WriteGuard:
    """Records, through a ``sys.addaudithook``, every file this process opens for writing, creates,
    renames or removes under a guarded folder. Writes by child processes are not seen here: they
    inherit the session folders instead. Native code that writes without Python's file calls is not
    seen either."""

    def __init__(self) -> None:
        self.guarded: tuple[str, ...] = ()
        self.allowed: tuple[str, ...] = ()
        self.seen: list[tuple[str, str]] = []
        self._installed = False

    def install(self, guarded: Iterable[Path], allowed: Iterable[Path]) -> None:
        self.guarded = tuple(_prefix(p) for p in guarded)
        self.allowed = tuple(_prefix(p) for p in allowed)
        if not self._installed:
            sys.addaudithook(self._hook)
            self._installed = True

    def check(self, event: str, path: object) -> None:
        """Record ``event`` on ``path`` when the path lies in a guarded folder."""
        if isinstance(path, int) or path is None:
            return
        try:
            text = os.fsdecode(os.fspath(path))  # type: ignore[arg-type]
        except TypeError:
            return
        full = os.path.realpath(text) + os.sep
        if full.startswith(self.guarded) and not full.startswith(self.allowed):
            self.seen.append((event, full.rstrip(os.sep)))

    def _hook(self, event: str, args: tuple[object, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if isinstance(mode, str):
                if _WRITE_MODES.isdisjoint(mode):
                    return
            elif not (isinstance(flags, int) and flags & _WRITE_FLAGS):
                return
            self.check(event, path)
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                self.check(event, args[i])


def _prefix(path: Path) -> str:
    return os.path.realpath(path) + os.sep


GUARD = WriteGuard()  # one per process: an audit hook cannot be removed
