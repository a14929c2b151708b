"""Unit conversions at the edges (files, command line). Inside dynid everything is SI.

softMC user units: rotary joints in degrees, linear joints in millimetres (spec/models.md §0).
Torques and forces are N·m and N in both systems.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["ROTARY", "LINEAR", "position_scale", "to_si", "from_si", "velocity_unit", "position_unit", "force_unit",
           "acceleration_unit", "inertia_unit", "kind_of_position_unit"]

ROTARY = "rotary"
LINEAR = "linear"

_SOFTMC_TO_SI = {ROTARY: math.pi / 180.0, LINEAR: 1e-3}
_SI_POSITION_UNIT = {ROTARY: "rad", LINEAR: "m"}
_SOFTMC_POSITION_UNIT = {ROTARY: "deg", LINEAR: "mm"}
_FORCE_UNIT = {ROTARY: "N m", LINEAR: "N"}
_INERTIA_UNIT = {ROTARY: "kg m^2", LINEAR: "kg"}


def position_scale(kinds: Sequence[str], units: str) -> np.ndarray:
    """Factors that convert positions (and their time derivatives) in ``units`` to SI.

    Parameters
    ----------
    kinds : sequence of {"rotary", "linear"}, length n_joints
    units : {"si", "softmc"}

    Returns
    -------
    scale : ndarray, shape (n_joints,)
        Multiply a value in ``units`` by this to get rad or m.

    Examples
    --------
    >>> position_scale(["rotary", "linear"], "softmc").round(6).tolist()
    [0.017453, 0.001]
    """
    if units == "si":
        return np.ones(len(kinds))
    if units == "softmc":
        return np.array([_SOFTMC_TO_SI[k] for k in kinds])
    raise ValueError(f"units must be 'si' or 'softmc', got {units!r}")


def to_si(x, kinds: Sequence[str], units: str) -> np.ndarray:
    """Convert joint positions/velocities/accelerations ``(N, n_joints)`` from ``units`` to SI."""
    return np.asarray(x, dtype=float) * position_scale(kinds, units)


def from_si(x, kinds: Sequence[str], units: str) -> np.ndarray:
    """Convert joint positions/velocities/accelerations ``(N, n_joints)`` from SI to ``units``."""
    return np.asarray(x, dtype=float) / position_scale(kinds, units)


def position_unit(kind: str, units: str = "si") -> str:
    """Name of the position unit of a joint kind: rad, m, deg or mm."""
    return (_SI_POSITION_UNIT if units == "si" else _SOFTMC_POSITION_UNIT)[kind]


def velocity_unit(kind: str, units: str = "si") -> str:
    """Name of the velocity unit of a joint kind, e.g. ``rad/s``."""
    return position_unit(kind, units) + "/s"


def acceleration_unit(kind: str, units: str = "si") -> str:
    """Name of the acceleration unit of a joint kind, e.g. ``rad/s^2``."""
    return position_unit(kind, units) + "/s^2"


def force_unit(kind: str) -> str:
    """Torque unit of a rotary joint (``N m``) or force unit of a linear joint (``N``)."""
    return _FORCE_UNIT[kind]


def inertia_unit(kind: str) -> str:
    """Unit of an inertia about a rotary joint (``kg m^2``) or of a mass on a linear one (``kg``)."""
    return _INERTIA_UNIT[kind]


def kind_of_position_unit(unit: str) -> str:
    """The joint kind whose position is in ``unit`` (rad, deg: rotary; m, mm: linear)."""
    for table in (_SI_POSITION_UNIT, _SOFTMC_POSITION_UNIT):
        for kind, u in table.items():
            if u == unit:
                return kind
    raise ValueError(f"unknown position unit {unit!r}")
