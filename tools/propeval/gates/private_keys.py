"""A private key anywhere in a pull request is an error (``private-key``), wherever it hides.

Looked at: every file the tree changed since the merge base (its bytes now, in any format), and
every blob any commit of the branch added or changed (``base..HEAD``): a key committed and then
deleted is still in the branch's history, and a merge carries it into the base. Looked for: the
PEM armour line that begins a private key (PKCS#1, PKCS#8, encrypted PKCS#8, EC, DSA, OpenSSH,
and PGP's private key block), and the first line of a PuTTY key file. Public keys and
certificates are fine. A key found is leaked: the message says so, and to replace it as well as
to remove it. (The patterns are built from pieces, so that this file holds no armour line itself.)
"""

from __future__ import annotations

import re
from pathlib import Path

from propeval import gitutil
from propeval.result import Problem

RULE = "private-key"
MAX_BYTES = 64 << 20  # per file: a key is near the start of anything that holds one
_ARMOUR = re.compile(
    rb"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE" rb" KEY(?: BLOCK)?)-----|(PuTTY-User-Key" rb"-File-\d+):",
)


def find(data: bytes) -> tuple[int, str] | None:
    """``(line, what)`` of the first private key in ``data``, or None."""
    m = _ARMOUR.search(data)
    if m is None:
        return None
    what = (m.group(1) or m.group(2)).decode("ascii")
    return data.count(b"\n", 0, m.start()) + 1, what


def _message(what: str, where: str) -> str:
    return (
        f"a private key ({what}) is {where}: remove it from every commit of the branch (rewrite them, or squash), "
        "and treat the key as leaked: revoke it and make a new one. propeval keys live outside the repository "
        "(propeval keys new)"
    )


def scan(root: Path, merge_base: str) -> list[Problem]:
    """A ``private-key`` problem for each changed file or branch blob that holds a private key."""
    top = gitutil.toplevel(root)
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"

    def shown(path: str) -> str:
        return path.removeprefix(prefix)

    out: list[Problem] = []
    flagged: set[str] = set()
    for path in gitutil.changed_repo_paths(root, merge_base):
        file = top / path
        if file.is_symlink() or not file.is_file():
            continue
        try:
            with file.open("rb") as fh:
                data = fh.read(MAX_BYTES)
        except OSError:
            continue
        found = find(data)
        if found is not None:
            flagged.add(path)
            out.append(Problem(shown(path), found[0], 1, RULE, _message(found[1], "in this file")))
    seen: set[str] = set()
    for commit, path, blob in gitutil.added_blobs(root, merge_base):
        if blob in seen or path in flagged:
            continue
        seen.add(blob)
        found = find(gitutil.blob_bytes(root, blob, MAX_BYTES))
        if found is not None:
            flagged.add(path)
            out.append(
                Problem(
                    shown(path),
                    0,
                    0,
                    RULE,
                    _message(
                        found[1], f"in this file as commit {commit[:12]} wrote it (the branch's history holds it)"
                    ),
                )
            )
    return out
