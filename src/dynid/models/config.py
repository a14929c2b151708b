"""Model configuration: common keys (spec/interfaces.md §4) plus model-specific keys.

Files may be JSON, YAML or TOML. Common keys:

``gravity``           [m/s²], default 9.80665
``payload``           ``{mass [kg], inertia [kg m²]}``, default 0
``friction``          friction/actuator model, terms joined by ``+`` (default ``viscous+coulomb``)
``joint_names``       axis names used in the PRG (default A1..An)
``parameters``        known parameter values ``{name: value}``; they are held fixed, never fitted
``position_limits``   per joint ``[lo, hi]`` [rad or m] (diagnostics, excitation design)
``velocity_limits``   per joint [rad/s or m/s]; ``torque_limits`` per joint [N m or N]
``stribeck_velocity`` [rad/s or m/s] for the ``stribeck`` friction term, default 0.1
``friction_sign``     sign of friction in the PRG: -1 softMC (default), +1 conventional
``transmission``      gear ratios, joint coupling and offsets between motors and joints, and which side
                      the recording holds (:mod:`dynid.models.transmission`); default none (joint side)
``torque_constants``  per joint [N m/A]: torque = current × constant for logs that give motor currents
                      (UR RTDE ``actual_current_*``, :mod:`dynid.io.rtde`); default none
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from .._json import jsonable
from ..errors import ConfigError, FileFormatError
from .transmission import Transmission

__all__ = ["Payload", "ModelConfig", "load_config_file", "COMMON_KEYS"]

COMMON_KEYS: dict[str, str] = {
    "gravity": "gravitational acceleration [m/s^2], default 9.80665",
    "payload": "payload {mass [kg], inertia [kg m^2]}, default none",
    "friction": "friction/actuator terms joined by '+': viscous, coulomb, offset, coulomb_asym, stribeck, "
                "armature (default viscous+coulomb); 'auto' chooses by held-out validation error",
    "joint_names": "axis names used in the PRG (default A1..An)",
    "parameters": "known parameter values {name: value}, held fixed and not identified",
    "position_limits": "per joint [lo, hi] in rad or m",
    "velocity_limits": "per joint maximum speed in rad/s or m/s",
    "torque_limits": "per joint maximum torque in N m or N",
    "stribeck_velocity": "Stribeck velocity [rad/s or m/s] of the 'stribeck' friction term, default 0.1",
    "friction_sign": "sign convention of friction in the PRG: -1 softMC (default) or +1",
    "transmission": "drive trains: {gear_ratios: [motor turns per joint turn, signed], coupling: [[motor, joint, "
                    "value], ...] (extra entries of the motor-from-joint matrix R, 1-based), offsets: [joint position "
                    "at motor zero, rad or m], recorded: motor|joint|{position: .., torque: ..}}; motor-side "
                    "recordings are converted to the joint side when read (q = R^-1 q_motor + offsets, "
                    "tau = R^T tau_motor); coupled motors get the friction terms motor_viscous, motor_coulomb, "
                    "motor_armature",
    "torque_constants": "per joint torque constant [N m/A] (one number: every joint): logs that give motor currents "
                        "(UR RTDE actual_current_*) are read as current x constant; default none",
}


@dataclass(frozen=True)
class Payload:
    """Payload carried by the robot (spec/models.md §0 "Payload").

    mass : float
        [kg]
    inertia : float
        [kg m²] about the tool axis (rotary models) — softMC ``PayloadInertia``.
    """

    mass: float = 0.0
    inertia: float = 0.0

    def __post_init__(self) -> None:
        for name in ("mass", "inertia"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ConfigError(f"payload.{name} must be a finite number, got {v!r}")
            if v < 0:
                raise ConfigError(f"payload.{name} must be >= 0, got {v!r}")
            object.__setattr__(self, name, float(v))

    @property
    def is_zero(self) -> bool:
        return self.mass == 0.0 and self.inertia == 0.0


@dataclass(frozen=True)
class ModelConfig:
    """Validated configuration of a model. Build it with :meth:`from_dict`."""

    gravity: float = 9.80665
    payload: Payload = field(default_factory=Payload)
    friction: str = "viscous+coulomb"
    joint_names: tuple[str, ...] | None = None
    parameters: Mapping[str, float] = field(default_factory=dict)
    position_limits: tuple[tuple[float, float], ...] | None = None
    velocity_limits: tuple[float, ...] | None = None
    torque_limits: tuple[float, ...] | None = None
    stribeck_velocity: float = 0.1
    friction_sign: int = -1
    transmission: Transmission | None = None
    torque_constants: tuple[float, ...] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, model_keys: Mapping[str, str] | None = None,
                  *, model_name: str = "model") -> "ModelConfig":
        """Validate a configuration mapping.

        Unknown keys are an error that lists the known ones (a typo must not pass silently).
        """
        data = dict(data or {})
        model_keys = dict(model_keys or {})
        unknown = sorted(set(data) - set(COMMON_KEYS) - set(model_keys))
        if unknown:
            known = ", ".join(sorted(set(COMMON_KEYS) | set(model_keys)))
            raise ConfigError(f"unknown configuration key {unknown[0]!r} for model {model_name!r}",
                              hint=f"known keys: {known}")
        kw: dict[str, Any] = {}
        if "gravity" in data:
            kw["gravity"] = _number("gravity", data["gravity"])
        if "payload" in data and data["payload"] is not None:
            p = data["payload"]
            if not isinstance(p, Mapping):
                raise ConfigError(f"payload must be a mapping {{mass, inertia}}, got {p!r}")
            extra = sorted(set(p) - {"mass", "inertia"})
            if extra:
                raise ConfigError(f"unknown payload key {extra[0]!r}", hint="payload keys are mass [kg] and inertia [kg m^2]")
            kw["payload"] = Payload(**{k: p[k] for k in ("mass", "inertia") if k in p})
        if "friction" in data:
            if not isinstance(data["friction"], str):
                raise ConfigError(f"friction must be a string like 'viscous+coulomb', got {data['friction']!r}")
            kw["friction"] = data["friction"]
        if "joint_names" in data:
            names = data["joint_names"]
            if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n.isidentifier() for n in names):
                raise ConfigError(f"joint_names must be a list of identifiers (e.g. [A1, A2]), got {names!r}")
            kw["joint_names"] = tuple(names)
        if "parameters" in data:
            ps = data["parameters"]
            if not isinstance(ps, Mapping):
                raise ConfigError(f"parameters must be a mapping {{name: value}}, got {ps!r}")
            kw["parameters"] = {str(k): _number(f"parameters.{k}", v) for k, v in ps.items()}
        if data.get("position_limits") is not None:
            lims = data["position_limits"]
            try:
                kw["position_limits"] = tuple((float(lo), float(hi)) for lo, hi in lims)
            except (TypeError, ValueError):
                raise ConfigError(f"position_limits must be a list of [lo, hi] pairs, got {lims!r}") from None
            for j, (lo, hi) in enumerate(kw["position_limits"]):
                if not lo < hi:
                    raise ConfigError(f"position_limits of joint {j + 1}: lower {lo} must be below upper {hi}")
        for key in ("velocity_limits", "torque_limits"):
            if data.get(key) is not None:
                vals = data[key]
                if isinstance(vals, (int, float)):
                    vals = [vals]
                try:
                    kw[key] = tuple(_number(key, v) for v in vals)
                except TypeError:
                    raise ConfigError(f"{key} must be a list of numbers, got {vals!r}") from None
                if any(v <= 0 for v in kw[key]):
                    raise ConfigError(f"{key} must be positive, got {list(vals)!r}")
        if "stribeck_velocity" in data:
            kw["stribeck_velocity"] = _number("stribeck_velocity", data["stribeck_velocity"])
            if kw["stribeck_velocity"] <= 0:
                raise ConfigError("stribeck_velocity must be positive")
        if "friction_sign" in data:
            if data["friction_sign"] not in (-1, 1):
                raise ConfigError(f"friction_sign must be -1 (softMC) or +1, got {data['friction_sign']!r}")
            kw["friction_sign"] = int(data["friction_sign"])
        if data.get("transmission") is not None:
            tr = data["transmission"]
            kw["transmission"] = tr if isinstance(tr, Transmission) else Transmission.from_dict(tr)
        if data.get("torque_constants") is not None:
            kc = data["torque_constants"]
            try:
                kw["torque_constants"] = tuple(_number("torque_constants", v) for v in
                                               ([kc] if isinstance(kc, (int, float)) else kc))
            except TypeError:
                raise ConfigError(f"torque_constants must be a list of numbers [N m/A], got {kc!r}") from None
            if not kw["torque_constants"] or any(v == 0 for v in kw["torque_constants"]):
                raise ConfigError(f"torque_constants must be non-zero numbers [N m/A], got {kc!r}")
        kw["options"] = {k: data[k] for k in data if k in model_keys}
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain JSON-able data (what result.json records)."""
        d: dict[str, Any] = {
            "gravity": self.gravity,
            "payload": {"mass": self.payload.mass, "inertia": self.payload.inertia},
            "friction": self.friction,
        }
        if self.joint_names is not None:
            d["joint_names"] = list(self.joint_names)
        if self.parameters:
            d["parameters"] = dict(self.parameters)
        if self.position_limits is not None:
            d["position_limits"] = [list(p) for p in self.position_limits]
        if self.velocity_limits is not None:
            d["velocity_limits"] = list(self.velocity_limits)
        if self.torque_limits is not None:
            d["torque_limits"] = list(self.torque_limits)
        if self.stribeck_velocity != 0.1:
            d["stribeck_velocity"] = self.stribeck_velocity
        if self.friction_sign != -1:
            d["friction_sign"] = self.friction_sign
        if self.transmission is not None:
            d["transmission"] = self.transmission.to_dict()
        if self.torque_constants is not None:
            d["torque_constants"] = list(self.torque_constants)
        d.update(jsonable(dict(self.options)))
        return d


def _number(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{name} must be a finite number, got {v!r}")
    return float(v)


def load_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """Read a JSON, YAML or TOML configuration file into a dict (by extension; JSON otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise FileFormatError(f"{path}: configuration file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise FileFormatError(f"{path}: cannot read the configuration ({err})") from err
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif suffix == ".toml":
            try:
                import tomllib
            except ImportError:  # Python 3.10
                import tomli as tomllib
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except Exception as err:  # each parser has its own error class
        raise FileFormatError(f"{path}: not valid {suffix.lstrip('.') or 'JSON'} ({err})",
                              hint="fix the syntax of the configuration file") from err
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: the configuration must be a mapping of keys to values")
    return data
