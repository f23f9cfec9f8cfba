"""Policy comes from the base branch; data comes from the pull request.

``[tool.propeval]`` in pyproject.toml is policy: gate modes, thresholds, signers, the source
blocklist, id rules, folders, models and endpoints. ``propeval ci --base REF`` reads it from REF
(the blob, through gitutil) and names every key the pull request changed: a "policy change" that
needs a maintainer. ``--online`` gates send requests, and API keys, only to endpoints from the
base ref or from the maintainer's own config file, never from the tree being judged.

The maintainer's config file is ``$PROPEVAL_CONFIG``, else ``config.toml`` in the user config
folder (``~/.config/propeval/`` on Linux)::

    [endpoints.openai]
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"
    response_format = "json_schema"
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from propeval import gitutil
from propeval.config import Config, config_from_table, parse_toml
from propeval.errors import ConfigError, PolicyError, UsageError
from propeval.settings import ProjectSettings, Where, read_endpoints, read_settings, unknown_key

CONFIG_ENV = "PROPEVAL_CONFIG"
# The keys that say where requests (and keys) go, and which endpoint a gate uses.
ENDPOINT_KEYS = (
    "judge.endpoints",
    "judge.answer_endpoint",
    "judge.judge_endpoint",
    "gates.answer_endpoint",
    "gates.judge_endpoint",
)


def table_at(root: Path, ref: str) -> dict[str, Any]:
    """``[tool.propeval]`` of pyproject.toml at ``ref``; a ConfigError when it is missing or broken."""
    blob = gitutil.blob_at(root, ref, "pyproject.toml")
    if blob is None:
        raise ConfigError(f"{ref} has no pyproject.toml, so there is no policy to read from it; check --base")
    source = f"pyproject.toml at {ref}"
    tool = parse_toml(blob, source).get("tool")
    table = tool.get("propeval") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        raise ConfigError(f"pyproject.toml at {ref} has no [tool.propeval] table; the policy comes from there")
    return table


def changed_keys(base: Any, tree: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two tables (a key added or removed counts; an
    absent table and an empty one are the same)."""
    if (isinstance(base, dict) and tree is None) or (isinstance(tree, dict) and base is None):
        base, tree = base or {}, tree or {}
    if isinstance(base, dict) and isinstance(tree, dict):
        out = []
        for key in sorted(set(base) | set(tree), key=str):
            out += changed_keys(base.get(key), tree.get(key), f"{prefix}.{key}" if prefix else str(key))
        return out
    return [] if base == tree else [prefix or "(the whole table)"]


def _lookup(table: dict[str, Any], dotted: str) -> Any:
    node: Any = table
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def describe(table: dict[str, Any], dotted: str) -> str:
    value = _lookup(table, dotted)
    return "unset" if value is None else repr(value) if not isinstance(value, dict) else "a table"


@dataclass
class BasePolicy:
    """The Config a run uses (the PR's files, the base's policy) and the keys the PR changed."""

    config: Config
    ref: str
    changed: list[str] = field(default_factory=list)


def from_base(tree: Config, ref: str) -> BasePolicy:
    """The tree's files under ``ref``'s ``[tool.propeval]``, and what the tree changed in it since
    its merge base with ``ref`` (a branch behind ``ref`` did not change what ``ref`` changed since)."""
    base = table_at(tree.root, ref)
    config = config_from_table(tree.root, base, f"pyproject.toml at {ref}")
    return BasePolicy(config, ref, changed_since_fork(tree, ref))


def changed_since_fork(tree: Config, ref: str) -> list[str]:
    """The ``[tool.propeval]`` keys the tree changed since its merge base with ``ref`` (against
    ``ref`` itself when the merge base has no such table)."""
    try:
        fork = table_at(tree.root, gitutil.merge_base(tree.root, ref))
    except ConfigError:
        fork = table_at(tree.root, ref)
    return changed_keys(fork, tree.raw)


def policy_message(tree: Config, ref: str, dotted: str, base: dict[str, Any]) -> str:
    return (
        f"policy change: needs a maintainer: [tool.propeval] {dotted} is {describe(tree.raw, dotted)} here "
        f"but {describe(base, dotted)} at {ref}; this run uses {ref}'s value. A maintainer who reviewed it "
        f"approves it (`propeval ledger approve --base {ref}`: a signed record of this pyproject.toml) or accepts "
        "it in the merge queue (`propeval ci --accept-policy-change`)"
    )


# --------------------------------------------------------------------------- the maintainer's own config


def user_config_path() -> Path:
    env = os.environ.get(CONFIG_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    from propeval.signing import user_config_dir

    return user_config_dir() / "config.toml"


def user_config() -> dict[str, Any]:
    """The maintainer's config file as a table; empty when there is none. Its ``[endpoints.NAME]``
    tables are checked like ``[tool.propeval.judge.endpoints.NAME]``; no other key is known."""
    path = user_config_path()
    if not path.is_file():
        return {}
    try:
        data = parse_toml(path.read_bytes(), str(path))
    except OSError as e:
        raise ConfigError(f"{path}: {e}") from None
    where = Where(str(path), "", root="")
    for name in data:
        if name != "endpoints":
            raise unknown_key(where, str(name), ["endpoints"])
    read_endpoints(data.get("endpoints", {}), replace(where, table="endpoints"))
    return data


def _used_endpoints(settings: ProjectSettings) -> list[str]:
    """The endpoints the gates send requests to, each once."""
    return list(dict.fromkeys(settings.gates.endpoint_names(settings.judge)))


def default_base(root: Path) -> str | None:
    """The branch a checkout's pull requests merge into, as git knows it: ``origin/HEAD`` (what a
    clone sets), else ``origin/main``, else None."""
    for ref in ("origin/HEAD", "origin/main"):
        if gitutil.commit_of(root, ref) is not None:
            return ref
    return None


def endpoints_moved(tree: Config, base: str | None) -> list[str]:
    """The endpoint keys of ``[tool.propeval]`` (where requests and API keys go) the tree changed
    since its merge base with ``base`` (default :func:`default_base`); [] outside git or with no base."""
    from propeval.errors import GitError

    try:
        base = base or default_base(tree.root)
        if base is None:
            return []
        return [k for k in changed_since_fork(tree, base) if k.startswith(ENDPOINT_KEYS)]
    except (GitError, ConfigError):
        return []


def refuse_moved_endpoints(tree: Config, base: str | None, trusted: bool) -> None:
    """A PolicyError when the tree moved an endpoint since it forked from ``base``, unless
    ``trusted`` (the user said they trust this tree's endpoints): ``answer`` and ``grade`` use the
    tree's endpoints, and a pull request's checkout could send the API key anywhere."""
    moved = [] if trusted else endpoints_moved(tree, base)
    if moved:
        shown = "; ".join(f"{k}: {describe(tree.raw, k)} here" for k in moved[:3])
        raise PolicyError(
            f"this checkout changes where requests and API keys go since it forked from "
            f"{base or default_base(tree.root)} ({shown}); refused. Read the change; if you trust it, run "
            "again with --trust-endpoints (or give --base-url yourself)",
            key=moved[0],
        )


def online_config(tree: Config, base: str | None) -> tuple[Config, list[str]]:
    """The Config an ``--online`` gate runs with: endpoints a maintainer set, never the tree's.

    With ``base``: REF's ``[tool.propeval]``, and a PolicyError when the tree changed where requests
    go. Without it: the tree's table, with every endpoint the gate uses taken from the maintainer's
    config file (a UsageError when it is not there). In both, the maintainer's config file's
    endpoints replace those of the same name, and every endpoint used must be https or loopback.
    """
    mine = user_config()
    my_eps: dict[str, Any] = mine.get("endpoints", {})
    notes: list[str] = []
    if base is not None:
        base_table = table_at(tree.root, base)
        changed = changed_since_fork(tree, base)
        moved = [k for k in changed if k.startswith(ENDPOINT_KEYS)]
        if moved:
            detail = "; ".join(f"{k}: {describe(tree.raw, k)} here, {describe(base_table, k)} at {base}" for k in moved)
            raise PolicyError(
                f"policy change: needs a maintainer: this tree changes where --online sends requests and keys "
                f"({detail}); --online is refused. Review the change; run from {base}'s endpoints by reverting it, "
                f"or define the endpoint in your own config ({user_config_path()})",
                key=moved[0],
            )
        other = [k for k in changed if not k.startswith(ENDPOINT_KEYS)]
        if other:
            notes.append(f"this tree changes [tool.propeval] {', '.join(other[:5])}: --online uses {base}'s values")
        table = copy.deepcopy(base_table)
        source = f"pyproject.toml at {base}"
        used = _used_endpoints(read_settings(table, source))
    else:
        table = copy.deepcopy(tree.raw)
        source = str(user_config_path())
        used = _used_endpoints(tree.settings)
        missing = [n for n in used if n not in my_eps]
        if missing:
            raise UsageError(
                f"--online sends requests and API keys only to endpoints a maintainer set, never to those of the "
                f"tree it checks: define [endpoints.{missing[0]}] in your config ({user_config_path()}), or give "
                "--base REF (the branch the pull request merges into) to use that branch's endpoints"
            )
    if my_eps:
        judge = table.setdefault("judge", {})
        endpoints = judge.setdefault("endpoints", {})
        tree_eps = _lookup(tree.raw, "judge.endpoints") or {}
        for name, ep in my_eps.items():
            if name in used:
                endpoints[name] = dict(ep)
                source = str(user_config_path())
                if name in tree_eps and tree_eps[name] != ep:
                    notes.append(f"pyproject.toml's endpoint {name!r} differs from your config's and is not used")
    cfg = config_from_table(tree.root, table, f"pyproject.toml at {base}" if base is not None else tree.source)
    from propeval.settings import check_url

    js = cfg.settings.judge
    for name in used:
        check_url(js.endpoint(name))
    notes.append(f"--online endpoints from {source}")
    return cfg, notes
