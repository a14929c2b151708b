"""Counterbalance cylinders of ``serial`` models (spec/interfaces.md §4, configuration key ``counterbalance``).

A heavy robot's axis 2 often carries a hydropneumatic (gas) or spring cylinder that holds the arm
against gravity. The cylinder joins a point ``P`` fixed to the link before joint ``j``, at distance
``D`` (``base_distance``) from joint ``j``'s axis, to a point ``Q`` on link ``j`` at distance ``k``
(``link_distance``) from the axis. With ``δ = q_j + δ0`` (``angle_offset``) the angle between the
two lever arms::

    l = sqrt(D² + k² − 2 D k cos δ)          cylinder length [m]
    h = dl/dq_j = D k sin δ / l               moment arm [m]
    s = l − (D − k)                           stroke [m]

and the torque on joint ``j`` is ``h·F``, linear in the identified parameters:

=========  ==========================  ======================================  ===================================
kind       force F [N]                 regressor column(s) on joint j          parameters (name, unit)
=========  ==========================  ======================================  ===================================
``gas``    ``c·A / (V0 − A s)``        ``h·A / (V0 − A s)``                    ``CB<j>.c`` [J] (p·V of the charge)
``spring`` ``k_s s + F0``              ``h·s``, ``h``                          ``CB<j>.k`` [N/m], ``CB<j>.F0`` [N]
=========  ==========================  ======================================  ===================================

(``A`` = ``area`` [m²], ``V0`` = ``volume`` [m³], gas only; ``<j>`` the 1-based joint number; a
second cylinder on the same joint makes the names ``CB<j>a``, ``CB<j>b``, ...)

Sign: ``h·F`` is ``+dE/dq_j`` with ``E`` the energy stored in the cylinder (gas:
``E = −c·ln(1 − A s/V0)``, the work of ``F`` over the stroke; spring: ``E = ½ k_s s² + F0 s``), i.e.
the drive torque that holds the cylinder's load, the same convention as gravity in the model's
torque. A cylinder that pushes the other way just identifies a negative ``c`` (or ``k``, ``F0``):
the identified sign absorbs the direction.

A spring's ``k_s`` is often not identifiable on its own: ``½ k_s s²`` contains ``−k_s D k cos δ``,
a gravity-like potential of link ``j``. Where link ``j``'s first moments act only through gravity
(e.g. axis 2 of an arm whose vertical axis 1 intersects it) the ``h·s`` column is exactly a
combination of the link columns and ``h``; otherwise (an offset ``a1``) ``k_s`` shows only through the
inertial effects of those first moments, i.e. weakly. The model therefore prefers ``CB<j>.k``
dependent (``prefer_dependent``): when collinear, the base parameters keep ``CB<j>.F0`` (regrouped
with ``k``) and the link parameters absorb the rest. A gas column is never collinear with the
rigid-body ones (it is not a trigonometric polynomial in ``q_j``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError

__all__ = ["Counterbalance", "parse_counterbalances", "KINDS", "KEYS", "PARAMETERS"]

KINDS = ("gas", "spring")
KEYS = ("joint", "kind", "base_distance", "link_distance", "angle_offset", "area", "volume")
_REQUIRED = ("joint", "kind", "base_distance", "link_distance", "angle_offset")
_GAS_ONLY = ("area", "volume")
_KEY_HINT = ("counterbalance entries are {joint: 1-based joint number (or joint name), kind: gas|spring, "
             "base_distance [m], link_distance [m], angle_offset [rad], area [m^2] and volume [m^3] (gas only)}")
#: (suffix, unit, description) of the identified parameters, in column order
PARAMETERS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "gas": (("c", "J", "gas charge p*V: force c*A/(V0 - A*s)"),),
    "spring": (("k", "N/m", "spring stiffness: force k*s + F0"), ("F0", "N", "spring preload at zero stroke")),
}


@dataclass(frozen=True)
class Counterbalance:
    """One counterbalance cylinder on joint ``joint`` (0-based actuated joint index).

    kind : {"gas", "spring"}
    base_distance, link_distance : float
        ``D``, ``k`` [m] (positive, different).
    angle_offset : float
        ``δ0`` [rad]: ``δ = q_j + δ0``.
    area, volume : float or None
        ``A`` [m²], ``V0`` [m³] (gas only).
    name : str
        Parameter-name prefix (``CB2``).
    """

    joint: int
    kind: str
    base_distance: float
    link_distance: float
    angle_offset: float
    area: float | None = None
    volume: float | None = None
    name: str = ""

    @property
    def suffixes(self) -> tuple[str, ...]:
        return tuple(s for s, _, _ in PARAMETERS[self.kind])

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(f"{self.name}.{s}" for s in self.suffixes)

    @property
    def n_params(self) -> int:
        return len(PARAMETERS[self.kind])

    def geometry(self, qj) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(l, h, s)`` [m] at joint positions ``qj`` ``(N,)``: length, moment arm ``dl/dq_j``, stroke."""
        D, k = self.base_distance, self.link_distance
        delta = np.asarray(qj, dtype=float) + self.angle_offset
        length = np.sqrt(D * D + k * k - 2.0 * D * k * np.cos(delta))
        return length, D * k * np.sin(delta) / length, length - (D - k)

    def columns(self, qj) -> np.ndarray:
        """Regressor columns ``(N, n_params)`` of the torque on joint ``joint`` (module table)."""
        _, h, s = self.geometry(qj)
        if self.kind == "gas":
            A = self.area
            return (h * A / (self.volume - A * s))[:, None]
        return np.stack([h * s, h], axis=1)

    def force(self, qj, values: Sequence[float]) -> np.ndarray:
        """Cylinder force ``F`` [N] ``(N,)`` for parameter values ``values`` (``(c,)`` or ``(k, F0)``)."""
        _, _, s = self.geometry(qj)
        if self.kind == "gas":
            return values[0] * self.area / (self.volume - self.area * s)
        return values[0] * s + values[1]

    def max_stroke(self, lo: float, hi: float) -> float:
        """Largest stroke [m] for ``q_j`` in ``[lo, hi]`` (the length is largest where ``cos δ`` is smallest)."""
        a, b = lo + self.angle_offset, hi + self.angle_offset
        if math.floor((b - math.pi) / (2 * math.pi)) >= math.ceil((a - math.pi) / (2 * math.pi)):
            cmin = -1.0                                             # an odd multiple of π lies in [a, b]
        else:
            cmin = min(math.cos(a), math.cos(b))
        D, k = self.base_distance, self.link_distance
        return math.sqrt(D * D + k * k - 2.0 * D * k * cmin) - (D - k)


def parse_counterbalances(entries: Any, joints: Sequence[Any],
                          limits: Sequence[tuple[float, float] | None]) -> tuple[Counterbalance, ...]:
    """Validate the ``counterbalance`` configuration list.

    Parameters
    ----------
    entries : list of mapping or None
        The configuration value (module docstring; ``joint`` 1-based or a joint name).
    joints : sequence of Joint
        The model's joints (names, kinds).
    limits : sequence of (lo, hi) or None, (n_joints,)
        Known position range of each joint [rad]; ``None``: unknown (a gas cylinder is then checked over
        the whole revolution, the range dynid samples for such a joint).

    Raises
    ------
    ConfigError
        Naming the entry and the key: unknown key, missing key, joint out of range or not rotary,
        ``D``/``k`` not positive or equal, gas without positive ``area``/``volume`` or with a
        gas volume ``V0 − A s`` that reaches 0 inside the joint's range.
    """
    if entries is None:
        return ()
    if isinstance(entries, Mapping):
        entries = [entries]
    if not isinstance(entries, (list, tuple)):
        raise ConfigError(f"counterbalance must be a list of entries, got {entries!r}", hint=_KEY_HINT)
    names = [j.name for j in joints]
    parsed: list[dict[str, Any]] = []
    for e, entry in enumerate(entries):
        where = f"counterbalance entry {e + 1}"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be a mapping, got {entry!r}", hint=_KEY_HINT)
        extra = sorted(set(map(str, entry)) - set(KEYS))
        if extra:
            raise ConfigError(f"{where}: unknown key {extra[0]!r}", hint=_KEY_HINT)
        missing = [key for key in _REQUIRED if key not in entry]
        if missing:
            raise ConfigError(f"{where}: missing key {missing[0]!r}", hint=_KEY_HINT)
        kind = entry["kind"]
        if kind not in KINDS:
            raise ConfigError(f"{where}: kind must be 'gas' or 'spring', got {kind!r}")
        joint = _joint_index(entry["joint"], names, where)
        if joints[joint].kind != "rotary":
            raise ConfigError(f"{where}: joint {joint + 1} ({names[joint]}) is {joints[joint].kind}; "
                              "a counterbalance cylinder acts on a rotary joint")
        num = {key: _number(f"{where}: {key}", entry[key]) for key in ("base_distance", "link_distance", "angle_offset")}
        D, k = num["base_distance"], num["link_distance"]
        for key in ("base_distance", "link_distance"):
            if num[key] <= 0:
                raise ConfigError(f"{where}: {key} must be positive [m], got {entry[key]!r}")
        if D == k:
            raise ConfigError(f"{where}: base_distance and link_distance must differ (got both {D!r} m): "
                              "with D = k the cylinder length reaches 0 and its moment arm is undefined")
        if kind == "gas":
            for key in _GAS_ONLY:
                if key not in entry:
                    raise ConfigError(f"{where}: a gas counterbalance needs {key!r}", hint=_KEY_HINT)
                num[key] = _number(f"{where}: {key}", entry[key])
                if num[key] <= 0:
                    raise ConfigError(f"{where}: {key} must be positive [{'m^2' if key == 'area' else 'm^3'}], "
                                      f"got {entry[key]!r}")
        else:
            given = [key for key in _GAS_ONLY if key in entry]
            if given:
                raise ConfigError(f"{where}: {given[0]!r} is for gas counterbalances only (kind is 'spring')",
                                  hint="remove it, or set kind: gas")
        parsed.append({"joint": joint, "kind": kind, **num})
    per_joint = [sum(p["joint"] == j for p in parsed) for j in range(len(joints))]
    seen = [0] * len(joints)
    out = []
    for e, p in enumerate(parsed):
        j = p["joint"]
        tag = "" if per_joint[j] == 1 else chr(ord("a") + seen[j])
        seen[j] += 1
        cb = Counterbalance(name=f"CB{j + 1}{tag}", **p)
        if cb.kind == "gas":
            lim = limits[j]
            lo, hi = lim if lim is not None else (-math.pi, math.pi)
            s_max = cb.max_stroke(lo, hi)
            margin = cb.volume - cb.area * s_max
            if not margin > 0:
                span = f"joint {j + 1}'s range [{lo:.6g}, {hi:.6g}] rad" if lim is not None else \
                    f"a whole revolution of joint {j + 1} (its limits are not known)"
                raise ConfigError(
                    f"counterbalance entry {e + 1}: the gas volume V0 - A*s = {margin:.6g} m^3 is not positive over "
                    f"{span} (stroke up to {s_max:.6g} m, area {cb.area:.6g} m^2, volume {cb.volume:.6g} m^3)",
                    hint="check area, volume, base_distance, link_distance and angle_offset"
                         + ("" if lim is not None else ", or give the joint's limits (position_limits)"),
                    options=("position_limits",) if lim is None else ())
        out.append(cb)
    return tuple(out)


def _joint_index(value: Any, names: Sequence[str], where: str) -> int:
    n = len(names)
    if isinstance(value, str):
        if value in names:
            return names.index(value)
        raise ConfigError(f"{where}: joint {value!r} is not a joint name of the model",
                          hint=f"joints are {', '.join(names)} (or their numbers 1..{n})")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ConfigError(f"{where}: joint must be a joint number 1..{n} or a joint name, got {value!r}")
    if not 1 <= int(value) <= n:
        raise ConfigError(f"{where}: joint {int(value)} is out of range: the model has joints 1..{n}")
    return int(value) - 1


def _number(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{name} must be a finite number, got {v!r}")
    return float(v)
