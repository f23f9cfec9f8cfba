"""``[tool.propeval.gates]``: which gates are required, their thresholds, and the ledger folder.

The table itself is :class:`propeval.settings.gates.GateSettings`; this module adds the signers'
keys, parsed with cryptography only when a gate needs them.
"""

from __future__ import annotations

from dataclasses import replace

from propeval.config import Config
from propeval.errors import ConfigError
from propeval.settings import GATE_MODES as MODES
from propeval.settings import GATES, THRESHOLDS, GateSettings

__all__ = ["GATES", "MODES", "THRESHOLDS", "GateSettings", "load_gate_settings", "load_signers"]


def load_gate_settings(config: Config) -> GateSettings:
    """``[tool.propeval.gates]`` with ``[tool.propeval.signers]``'s keys checked."""
    return replace(config.settings.gates, signers=load_signers(config))


def load_signers(config: Config) -> dict[str, str]:
    """``[tool.propeval.signers]``: each maintainer's name and Ed25519 public key (OpenSSH line)."""
    from propeval.signing import normal_public

    out = {}
    for name, value in config.settings.gates.signers.items():
        try:
            out[name] = normal_public(value)
        except ValueError as e:
            raise ConfigError(f"{config.source}: [tool.propeval.signers] {name}: {e}", key=name) from None
    return out
