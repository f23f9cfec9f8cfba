"""Standing notes: what a command says about how it is set up, the same on every run.

"translation drift: skipped, no multilingual encoder is configured; ..." is true until someone
changes ``[tool.propeval.groups]``. Printed on every ``groups`` run (every commit, through the
hook) and as a GitHub notice on every pull request, it is noise that hides the notes that change.
A check keeps such a note apart from its other notes (``CheckResult.standing``); the command
shows it:

- with ``--verbose``: always;
- in text: once per terminal session (the POSIX session: every command typed in one shell, and
  the hooks a ``git commit`` there runs, share it; a new terminal or a CI job is a new one);
- in json: always (a machine reads every note);
- in GitHub annotations and in ``ci``/``run``: never, since it is not about the change under review.

Which notes a session has seen is kept in the user state folder (``standing-notes.json`` under
``platformdirs.user_state_dir("propeval")``), keyed by the session id and its leader's start time
(so a reused id is a new session); entries of sessions that ended are dropped. A state folder
that cannot be written only means the note is shown again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

FILE = "standing-notes.json"
# At most this many sessions are remembered (the oldest are dropped first).
MAX_SESSIONS = 64


def _state_file() -> Path:
    from platformdirs import user_state_dir

    return Path(user_state_dir("propeval")) / FILE


def _leader_start(sid: int) -> str:
    """The session leader's start time (``/proc/<sid>/stat`` field 22), "" where unknown."""
    try:
        stat = Path(f"/proc/{sid}/stat").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def session_key() -> str | None:
    """This process's terminal session as ``<sid>:<leader start>``; None where there is none."""
    try:
        sid = os.getsid(0)
    except (AttributeError, OSError):
        return None
    return f"{sid}:{_leader_start(sid)}"


def _alive(key: str) -> bool:
    sid, _, start = key.partition(":")
    if not sid.isdigit():
        return False
    if start and _leader_start(int(sid)) != start:
        return False  # the leader exited (or its id went to another process)
    try:
        os.kill(int(sid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, but not ours to signal
    return True


def _digest(note: str) -> str:
    return hashlib.sha256(note.encode("utf-8")).hexdigest()[:16]


def unseen(notes: Sequence[str]) -> list[str]:
    """The notes this terminal session has not been shown yet; they count as shown from now on.

    Outside any session (no ``os.getsid``), or when the state cannot be read or written, every
    note is returned: a note shown twice is better than one never shown.
    """
    if not notes:
        return []
    key = session_key()
    if key is None:
        return list(notes)
    path = _state_file()
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        sessions = state.get("sessions") if isinstance(state, dict) else None
        if not isinstance(sessions, dict):
            sessions = {}
    except (OSError, ValueError):
        sessions = {}
    mine = sessions.get(key)
    seen = {str(d) for d in mine} if isinstance(mine, list) else set()
    new = [n for n in notes if _digest(n) not in seen]
    if not new:
        return []
    kept = {k: v for k, v in sessions.items() if k != key and isinstance(v, list) and _alive(k)}
    kept = dict(list(kept.items())[-(MAX_SESSIONS - 1) :])
    kept[key] = sorted(seen | {_digest(n) for n in new})
    from propeval.errors import StorageError
    from propeval.fsutil import atomic_write

    with contextlib.suppress(StorageError, OSError):
        atomic_write(path, json.dumps({"format": 1, "sessions": kept}, indent=1) + "\n")
    return new


def shown(notes: Sequence[str], fmt: str, verbose: bool) -> list[str]:
    """Which standing notes a command writes in ``fmt`` (see the module docstring)."""
    if verbose or fmt == "json":
        return list(notes)
    if fmt == "text":
        return unseen(notes)
    return []
