"""Ed25519 signatures on ledger records, with the ``cryptography`` package.

A maintainer's key pair:

* the private key is a PKCS#8 PEM file *outside* the repository: ``$PROPEVAL_SIGNING_KEY``, or
  ``signing-key.pem`` in the user config folder (``propeval keys new`` makes it, mode 0600);
* the public key is one OpenSSH line (``ssh-ed25519 AAAA...``) on the committed list of
  maintainer keys, ``[tool.propeval.signers]`` in pyproject.toml (``name = "ssh-ed25519 ..."``).
  ``propeval ci`` reads that list from the base branch, so a pull request cannot add its own key.

A signed record carries ``"signature": {"alg": "ed25519", "key": "ssh-ed25519 ...", "value": b64}``.
The signed message is a fixed context line plus the canonical JSON of the record without its
``signature``: every byte of the record, its kind, subject, binding and result, is covered.

What a signature proves: a holder of a listed key vouched for these exact bytes. It does not
prove that a model produced them: that is why the gates also re-derive what can be derived.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from propeval.errors import ConfigError, DependencyError, UsageError
from propeval.loader import dumps_json

if TYPE_CHECKING:
    from propeval.config import Config
    from propeval.ledger.records import LedgerRecord

ALG = "ed25519"
CONTEXT = b"propeval ledger record v1\n"
KEY_ENV = "PROPEVAL_SIGNING_KEY"
KEY_FILE = "signing-key.pem"
FIELDS = ("alg", "key", "value")  # a signature object holds these and nothing else


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as e:  # pragma: no cover - a core dependency
        raise DependencyError("cryptography", "judge") from e
    return ed25519


def user_config_dir() -> Path:
    """The maintainer's own propeval folder (``$XDG_CONFIG_HOME/propeval`` on Linux)."""
    from platformdirs import user_config_path

    return Path(user_config_path("propeval"))


def default_key_path() -> Path:
    """Where the private key is looked for: ``$PROPEVAL_SIGNING_KEY``, else the user config folder."""
    env = os.environ.get(KEY_ENV, "").strip()
    return Path(env).expanduser() if env else user_config_dir() / KEY_FILE


def message(record: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the context line and the record without ``signature``."""
    body = {k: v for k, v in record.items() if k != "signature"}
    return CONTEXT + dumps_json(body).encode("utf-8")


@dataclass(frozen=True)
class SigningKey:
    """A loaded private key and its public OpenSSH line."""

    private: Any
    public: str
    path: Path

    def sign(self, record: LedgerRecord) -> LedgerRecord:
        """``record`` with a fresh signature (any old one replaced) over all of it but the signature."""
        return replace(record, signature=self.signature(message(record.to_json())))

    def signature(self, data: bytes) -> dict[str, str]:
        """A signature object over ``data`` (the caller's message, with its own context line)."""
        value = self.private.sign(data)
        return {"alg": ALG, "key": self.public, "value": base64.b64encode(value).decode("ascii")}


def public_line(public_key: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public_key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return bytes(raw).decode("ascii")


def parse_public(text: str) -> Any:
    """An Ed25519 public key from its OpenSSH line (a trailing comment is allowed). ValueError if not one."""
    from cryptography.hazmat.primitives import serialization

    ed25519 = _crypto()
    parts = text.strip().split()
    if len(parts) < 2 or parts[0] != "ssh-ed25519":
        raise ValueError("a public key is one line 'ssh-ed25519 AAAA...' (from propeval keys new)")
    try:
        key = serialization.load_ssh_public_key(f"{parts[0]} {parts[1]}".encode("ascii"))
    except (ValueError, UnicodeEncodeError) as e:
        raise ValueError(f"not a valid ssh-ed25519 public key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise ValueError("not an Ed25519 key")
    return key


def normal_public(text: str) -> str:
    """The ``ssh-ed25519 AAAA...`` part of a public key line, without a comment."""
    return public_line(parse_public(text))


def inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def new_key(path: Path, *, forbidden: list[Path]) -> SigningKey:
    """Make a key pair; write the private key to ``path`` (mode 0600, never over an existing file)."""
    from cryptography.hazmat.primitives import serialization

    for folder in forbidden:
        if inside(path, folder):
            raise UsageError(
                f"{path} is inside the repository at {folder}; a private key never enters a repository: "
                f"keep it in your config folder (the default) or point {KEY_ENV} elsewhere"
            )
    ed25519 = _crypto()
    private = ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"{path} already exists; propeval never overwrites a key (give --out PATH)") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
        fh.flush()
        os.fsync(fh.fileno())
    return SigningKey(private, public_line(private.public_key()), path)


def load_key(path: Path | None = None, *, required: bool = True) -> SigningKey | None:
    """The maintainer's private key, or None (``required=False``) when there is none."""
    from cryptography.hazmat.primitives import serialization

    ed25519 = _crypto()
    path = path or default_key_path()
    if not os.path.lexists(path):
        if not required:
            return None
        raise ConfigError(
            f"no signing key at {path}; make one with `propeval keys new`, or point {KEY_ENV} at yours",
            key=KEY_ENV,
        )
    check_key_file(path)
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{path} is not an unencrypted PEM private key ({e})", key=KEY_ENV) from None
    if not isinstance(private, ed25519.Ed25519PrivateKey):
        raise ConfigError(f"{path} is not an Ed25519 key; make one with `propeval keys new`", key=KEY_ENV)
    return SigningKey(private, public_line(private.public_key()), path)


def check_key_file(path: Path) -> None:
    """Refuse a private key file anyone but its owner could read, swap or commit.

    It must be a regular file (not a link, which could be pointed elsewhere, nor a FIFO or device),
    owned by the user who runs propeval, with no permission for group or others (0600 or
    stricter), and outside every git repository (a key in a work tree is one ``git add -A`` from
    being pushed). Each refusal says the command that fixes it.
    """
    import stat

    try:
        st = os.lstat(path)
    except OSError as e:
        raise ConfigError(f"cannot read the signing key {path}: {e.strerror or e}", key=KEY_ENV) from None
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(
            f"the signing key {path} is a symbolic link (to {os.readlink(path)}); a link can be pointed at another "
            f'key behind your back: point {KEY_ENV} at the key file itself (export {KEY_ENV}="$(realpath {path})")',
            key=KEY_ENV,
        )
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            f"the signing key {path} is not a regular file; make one with `propeval keys new`", key=KEY_ENV
        )
    if os.name == "posix":
        if st.st_uid != os.getuid():
            raise ConfigError(
                f"the signing key {path} belongs to another user (uid {st.st_uid}); use a key file of your own "
                "(propeval keys new)",
                key=KEY_ENV,
            )
        if st.st_mode & 0o077:
            raise ConfigError(
                f"the signing key {path} has mode {stat.S_IMODE(st.st_mode):04o}: others can read or change it; "
                f"run: chmod 600 {path}",
                key=KEY_ENV,
            )
    repo = _enclosing_repository(path)
    if repo is not None:
        raise ConfigError(
            f"the signing key {path} is inside the git repository at {repo}, one `git add -A` from being "
            f"committed: move it out (mv {path} {user_config_dir() / KEY_FILE}) and point {KEY_ENV} at it, "
            "or unset it to use that default",
            key=KEY_ENV,
        )


def _enclosing_repository(path: Path) -> Path | None:
    """The work tree (a folder holding ``.git``) that ``path`` lies in, if any. No git is run: a
    key must be refused even where git is missing or the repository is broken."""
    for folder in path.resolve().parents:
        if os.path.lexists(folder / ".git"):
            return folder
    return None


@dataclass(frozen=True)
class Verdict:
    """How a record's signature checks out against the list of maintainer keys."""

    state: str  # signed | unsigned | malformed | unknown-key | bad
    signer: str | None = None
    detail: str = ""


def verify(record: dict[str, Any], signers: dict[str, str], *, data: bytes | None = None) -> Verdict:
    """Check ``record``'s signature against ``signers`` (name -> ``ssh-ed25519 ...``): over
    :func:`message` of the record, or over ``data`` when given (an object with its own context)."""
    from cryptography.exceptions import InvalidSignature

    sig = record.get("signature")
    if sig is None:
        return Verdict("unsigned")
    shape = isinstance(sig, dict) and sig.get("alg") == ALG and all(isinstance(sig.get(k), str) for k in FIELDS[1:])
    if not shape:
        return Verdict("malformed", detail='it must be {"alg": "ed25519", "key": "ssh-ed25519 ...", "value": "..."}')
    unknown = sorted(set(sig) - set(FIELDS))
    if unknown:
        # The signature object is not covered by the signature: a field in it could say anything.
        return Verdict(
            "malformed",
            detail=f"unknown field(s) {', '.join(map(repr, unknown))} in it; a signature holds only "
            f"{', '.join(FIELDS)} (nothing in it is signed)",
        )
    try:
        key = parse_public(sig["key"])
        value = base64.b64decode(sig["value"], validate=True)
    except ValueError as e:
        return Verdict("malformed", detail=str(e))
    listed = {normal_public(v): name for name, v in signers.items()}
    name = listed.get(public_line(key))
    if name is None:
        return Verdict("unknown-key", detail=sig["key"][:40] + "...")
    try:
        key.verify(value, message(record) if data is None else data)
    except InvalidSignature:
        return Verdict("bad", signer=name)
    return Verdict("signed", signer=name)


def load_signers(config: Config) -> dict[str, str]:
    """``[tool.propeval.signers]``: each maintainer's name and Ed25519 public key (OpenSSH line),
    each key parsed (the settings layer only checks they are strings: parsing needs cryptography)."""
    out = {}
    for name, value in config.settings.gates.signers.items():
        try:
            out[name] = normal_public(value)
        except ValueError as e:
            raise ConfigError(f"{config.source}: [tool.propeval.signers] {name}: {e}", key=name) from None
    return out
