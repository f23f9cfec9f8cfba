"""Edit the list of maintainer keys, ``[tool.propeval.signers]`` in pyproject.toml (with tomlkit, comments kept)."""

from __future__ import annotations

from pathlib import Path

from propeval.errors import ConfigError, UsageError
from propeval.fsutil import atomic_write


def add_signer(pyproject: Path, name: str, public_key: str) -> None:
    """Add ``name = "ssh-ed25519 ..."``; refuse a name already bound to another key, or a key listed twice."""
    import tomlkit

    from propeval.signing import normal_public

    try:
        pub = normal_public(public_key)
    except ValueError as e:
        raise UsageError(f"{public_key[:40]!r}: {e}") from None
    if not name.replace("-", "").replace("_", "").isalnum():
        raise UsageError(f"signer name {name!r}: use letters, digits, - and _")
    try:
        doc = tomlkit.parse(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomlkit.exceptions.TOMLKitError) as e:
        raise ConfigError(f"{pyproject}: {e}") from None
    tool = doc.setdefault("tool", tomlkit.table())
    propeval = tool.setdefault("propeval", tomlkit.table())
    if "signers" not in propeval:
        table = tomlkit.table()
        table.add(tomlkit.comment("Maintainer keys that sign ledger records (propeval keys add); ci reads them"))
        table.add(tomlkit.comment("from the base branch, so a key counts once a maintainer merged it."))
        propeval["signers"] = table
    signers = propeval["signers"]
    for other, value in signers.items():
        if str(value).split()[:2] == pub.split()[:2] and other != name:
            raise UsageError(f"that key is already listed as {other!r}")
    if name in signers and normal_public(str(signers[name])) != pub:
        raise UsageError(f"signer {name!r} already has another key; remove it from pyproject.toml first")
    signers[name] = pub
    atomic_write(pyproject, tomlkit.dumps(doc))
