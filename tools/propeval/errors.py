"""The exceptions propeval raises.

Core code raises these; only the CLI edge turns them into messages and exit codes::

    PropevalError                 base; ``exit_code`` says how the CLI exits
    ├── UsageError                a bad option or argument (exit 2)
    ├── ConfigError               ``[tool.propeval]`` is wrong (exit 2)
    │   └── PolicyError           a tree changes policy that only a maintainer may change (exit 2)
    ├── GitError                  a ref is missing, the clone is shallow, git failed (exit 3)
    ├── DependencyError           an optional extra is not installed (exit 3)
    ├── ModelError                an embedding or judge model cannot be loaded (exit 3)
    ├── EndpointError             an LLM endpoint failed for good (exit 3)
    └── StorageError              a file could not be written: disk full, size limit, read-only (exit 3)

Problems in user files are not exceptions: they are ``result.Problem`` values, so a run
collects all of them.
"""

from __future__ import annotations


class PropevalError(Exception):
    """Base of every error propeval raises on purpose."""

    exit_code = 3


class UsageError(PropevalError):
    """A command was called wrongly."""

    exit_code = 2


class ConfigError(PropevalError):
    """The ``[tool.propeval]`` configuration is invalid."""

    exit_code = 2

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class PolicyError(ConfigError):
    """A tree changes policy (endpoints, gates, signers) that only the base branch may set."""


class GitError(PropevalError):
    """Git could not answer: missing ref, shallow clone, not a repository."""

    def __init__(self, message: str, *, ref: str | None = None) -> None:
        super().__init__(message)
        self.ref = ref


def install_hint(extra: str) -> str:
    """How to install an extra: into this clone when propeval runs from one (an editable install),
    else from a clone of its repository (propeval is not on a package index)."""
    from pathlib import Path

    top = Path(__file__).resolve().parents[2]
    if (top / "pyproject.toml").is_file() and (top / "tools" / "propeval").is_dir():
        return f"into this clone's venv: pip install -e '{top}[{extra}]' (make setup there installs every extra)"
    return f"in a clone of the propeval repository: pip install -e '.[{extra}]' (make setup there installs every extra)"


class DependencyError(PropevalError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(f"this command needs the Python module {module!r}; install it {install_hint(extra)}")
        self.module = module
        self.extra = extra


class ModelError(PropevalError):
    """A configured model is missing or cannot be loaded."""


class EndpointError(PropevalError):
    """An OpenAI-compatible endpoint failed and retries are exhausted."""


class StorageError(PropevalError, OSError):
    """A write failed (full disk, file size limit, read-only or refused); nothing was left half-written.

    It is an OSError too, with the errno and the file name, so code that shrugs off a cache that
    cannot be written (``except OSError``) still does.
    """

    def __init__(
        self, message: str, *, path: str | None = None, errno: int | None = None, reason: str | None = None
    ) -> None:
        # strerror stays the system's own words ("File too large"), as for any OSError.
        OSError.__init__(self, errno, reason or message, path)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RecordError(ValueError):
    """A run or ledger record that is not what propeval writes (``from_json`` of
    :mod:`propeval.judge.records` and :class:`propeval.ledger.records.LedgerRecord`): the message
    names the field and what is wrong. Readers turn it into a Problem at the record's file and line."""


def require(module: str, extra: str) -> None:
    """Raise DependencyError unless ``module`` can be imported."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise DependencyError(module, extra)
