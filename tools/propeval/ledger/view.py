"""The ledger as one run sees it: each record read once, each signature verified once.

A :class:`LedgerView` belongs to a :class:`propeval.workspace.Workspace`. The gates, the release
(card, stats, report), ``propeval ci``'s policy step and ``propeval ledger sign`` all read records
through it, so a record that several of them look at in one run (``propeval run`` reads each
answerability record in the gate step and again for the card's evidence) is parsed once and its
Ed25519 signature is checked once. What a record *means* (is it fresh, does everything in it
follow) stays with the code that judges it: :mod:`propeval.gates.verify` and the gates.

A write through the view (:meth:`LedgerView.write`) replaces what it remembered of that record.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from propeval import signing
from propeval.ledger.paths import ANSWERABILITY, APPROVALS, JUDGE, LedgerPaths
from propeval.ledger.records import LedgerRecord, Loaded, check_record, unreadable, write_record
from propeval.loader import DEFAULT_LIMITS, Document, Limits, LoadError, load_file, relative_path

# record kind -> the folder its records lie in (dedup: one file, ledger/dedup.json)
KIND_FOLDERS = {ANSWERABILITY: ANSWERABILITY, JUDGE: JUDGE, "approval": APPROVALS}
DEDUP = "dedup"


class LedgerView:
    """The records under one ledger folder, checked against one list of maintainer keys."""

    def __init__(self, paths: LedgerPaths, signers: Callable[[], Mapping[str, str]]) -> None:
        self.paths = paths
        self._signers_of = signers
        self._signers: Mapping[str, str] | None = None
        self._loaded: dict[str, Loaded] = {}
        self._verdicts: dict[str, signing.Verdict] = {}
        self._files: dict[str, tuple[Document | None, LoadError | None]] = {}

    @property
    def signers(self) -> Mapping[str, str]:
        """The maintainer keys a record counts under (name -> ``ssh-ed25519 ...``), parsed once."""
        if self._signers is None:
            self._signers = self._signers_of()
        return self._signers

    def path(self, kind: str, subject: str) -> Path:
        """Where the record of ``kind`` about ``subject`` lies (an invalid id or name is a UsageError)."""
        if kind == ANSWERABILITY:
            return self.paths.answerability(subject)
        if kind == JUDGE:
            return self.paths.judge(subject)
        if kind == DEDUP:
            return self.paths.dedup
        return self.paths.kind_folder(KIND_FOLDERS[kind]) / f"{subject}.json"

    def read(self, kind: str, subject: str) -> Loaded:
        """The record of ``kind`` about ``subject`` as read and format-checked (read once)
        (:func:`propeval.ledger.records.read_record`'s rules)."""
        path = self.path(kind, subject)
        key = str(path)
        if key not in self._loaded:
            rel = relative_path(path, self.paths.root)  # never resolved: a link is named by its own path
            doc, error = self.document(rel)
            if error is not None:
                self._loaded[key] = unreadable(rel, error)
            elif doc is None:
                self._loaded[key] = Loaded(rel, None)
            else:
                self._loaded[key] = check_record(doc, kind=kind, subject=subject)
        return self._loaded[key]

    def verdict(self, loaded: Loaded) -> signing.Verdict:
        """Who signed ``loaded``'s record, against :attr:`signers` (checked once per record)."""
        if loaded.record is None:
            raise ValueError(f"{loaded.relpath} holds no record to verify")
        key = loaded.relpath
        if key not in self._verdicts:
            self._verdicts[key] = signing.verify(loaded.record, dict(self.signers))
        return self._verdicts[key]

    def write(self, kind: str, subject: str, record: LedgerRecord) -> Path:
        """Write ``record`` atomically where it belongs, and forget what was read of it before."""
        path = self.path(kind, subject)
        write_record(path, record)
        self.forget(relative_path(path, self.paths.root))
        return path

    def document(self, rel: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Document | None, LoadError | None]:
        """A ledger file through the strict loader, once: its document, or the LoadError that
        stopped it (a link or special file is refused, never read); (None, None) when there is
        no such path."""
        if rel not in self._files:
            path = self.paths.path(rel)
            if not os.path.lexists(path):
                self._files[rel] = (None, None)
            else:
                try:
                    self._files[rel] = (load_file(path, root=self.paths.root, limits=limits), None)
                except LoadError as e:
                    self._files[rel] = (None, e)
        return self._files[rel]

    def forget(self, rel: str) -> None:
        """Drop what was read of the file at ``rel`` (a command just rewrote it)."""
        self._files.pop(rel, None)
        self._loaded.pop(str(self.paths.path(rel)), None)
        self._verdicts.pop(rel, None)
