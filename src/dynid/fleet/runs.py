"""When two registry runs are the same run, and when two runs of a robot can be compared.

The same run: two result.json with the same content apart from their creation time (:func:`result_hash`)
are one identification — the same recording through the same options gives the same numbers — and a
registry records it once per robot.

Comparable runs: the parameters of two runs mean the same only when both fitted the same model with the
same configuration (geometry, payload, gravity, known parameters, joint names, transmission...):
:func:`config_fingerprint` hashes result.json's ``config`` without the keys that do not enter the model
(:data:`NOT_MODEL_KEYS`: the friction model a run may choose itself, the PRG's sign convention, limits).
:func:`comparison` picks, for a robot's latest run, the first run it can be compared with and says
which runs it left out and why. A run recorded without a fingerprint (its stored result.json holds no
configuration) is compared by model alone, and the comparison says so.

>>> a = {"model": "rotary3", "config": {"gravity": 9.81, "friction": "viscous"}, "created": "2025-01-01"}
>>> b = {"model": "rotary3", "config": {"gravity": 9.81, "friction": "viscous+coulomb"}, "created": "2025-06-01"}
>>> config_fingerprint(a) == config_fingerprint(b), result_hash(a) == result_hash(dict(a, created="later"))
(True, True)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .._json import jsonable
from ..errors import ConfigError

__all__ = ["result_hash", "config_fingerprint", "comparison", "Comparison", "NOT_MODEL_KEYS", "VOLATILE_KEYS"]

NOT_MODEL_KEYS = ("friction", "friction_sign", "position_limits", "velocity_limits", "torque_limits", "urdf")
"""Configuration keys left out of :func:`config_fingerprint`: the friction model (chosen per run; terms only
one run has are listed without a change), the PRG's friction sign, limits (diagnostics and PRG only) and the
URDF's path (its parsed chain, with the file's sha256, stays in)."""

VOLATILE_KEYS = ("created",)
"""result.json keys left out of :func:`result_hash`: when the result was written is not part of what it is."""


def _sha256(data: Any) -> str:
    text = json.dumps(jsonable(data), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def result_hash(result: Mapping[str, Any]) -> str:
    """sha256 (hex) of a result.json's content without :data:`VOLATILE_KEYS` (key order and layout ignored)."""
    return _sha256({k: v for k, v in result.items() if k not in VOLATILE_KEYS})


def config_fingerprint(result: Mapping[str, Any]) -> str | None:
    """sha256 (hex) of a result.json's model configuration without :data:`NOT_MODEL_KEYS`; None when the
    result holds no configuration."""
    config = result.get("config")
    if not isinstance(config, Mapping):
        return None
    kept = {k: v for k, v in config.items() if k not in NOT_MODEL_KEYS}
    chain = kept.get("chain")
    if isinstance(chain, Mapping) and isinstance(chain.get("source"), Mapping):  # where the URDF was: not what it is
        kept["chain"] = {**chain, "source": {k: v for k, v in chain["source"].items() if k != "urdf"}}
    return _sha256(kept)


@dataclass(frozen=True)
class Comparison:
    """Which of a robot's runs a drift compares.

    ``first`` and ``latest`` are run entries (``id, time, model, config_fingerprint``, and whatever else the
    caller's entries hold; the same entry when nothing earlier is comparable); ``skipped`` lists the runs
    before ``latest`` left out: their entries with the ``reason``.
    """

    first: Mapping[str, Any]
    latest: Mapping[str, Any]
    skipped: tuple[Mapping[str, Any], ...] = ()

    @property
    def compared(self) -> bool:
        """Whether there is an earlier run to compare ``latest`` with."""
        return self.first is not self.latest

    @property
    def by_model_only(self) -> tuple[Mapping[str, Any], ...]:
        """The compared runs recorded without a configuration fingerprint (compared by model alone)."""
        return tuple(r for r in (self.first, self.latest) if r.get("config_fingerprint") is None) \
            if self.compared else ()

    def describe(self, label: Callable[[Mapping[str, Any]], str] = lambda run: f"run {run['id']}") -> list[str]:
        """The comparison in sentences (``label`` names a run; default ``run <id>``)."""
        if self.compared:
            lines = [f"compared {label(self.latest)} with {label(self.first)}, the first run of the same model and "
                     "configuration"]
        else:
            lines = [f"{label(self.latest)} is the first run of its model and configuration: nothing to compare yet"]
        lines += [f"skipped {label(s)}: {s['reason']}" for s in self.skipped]
        return lines + [f"{label(r)} was recorded without a configuration fingerprint: compared by model only"
                        for r in self.by_model_only]


def _reason(run: Mapping[str, Any], latest: Mapping[str, Any]) -> str | None:
    """Why ``run`` cannot be compared with ``latest`` (None: it can)."""
    if run.get("model") != latest.get("model"):
        return f"model {run.get('model')}, not {latest.get('model')}"
    a, b = run.get("config_fingerprint"), latest.get("config_fingerprint")
    if a is not None and b is not None and a != b:
        return f"another configuration of {latest.get('model')} (fingerprint {a[:8]}, not {b[:8]})"
    return None


def comparison(runs: Sequence[Mapping[str, Any]]) -> Comparison:
    """The comparison of the last of ``runs`` (a robot's, oldest first) with the first run it can be compared with.

    Parameters
    ----------
    runs : sequence of mapping
        Entries with at least ``model`` and ``config_fingerprint`` (None: unknown), oldest first.

    Returns
    -------
    Comparison
    """
    if not runs:
        raise ConfigError("no runs to compare")
    latest = runs[-1]
    reasons = [_reason(run, latest) for run in runs[:-1]]
    k = next((i for i, why in enumerate(reasons) if why is None), None)
    first = latest if k is None else runs[k]
    skipped = tuple(dict(run, reason=why) for run, why in zip(runs, reasons) if why is not None)
    return Comparison(first, latest, skipped)
