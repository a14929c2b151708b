"""Drive-side transmissions: gear ratios, joint coupling, motor-side recordings (configuration key ``transmission``).

A drive train is described by the motor-from-joint matrix ``R`` (n × n): motor ``m`` turns
``R[m, j]`` times per turn of joint ``j``. Its diagonal holds the gear ratios (signed: a negative
ratio turns the motor the other way); off-diagonal entries are mechanical couplings, e.g. the
Stäubli TX40 wrist, whose motor 6 also turns when joint 5 does: ``R = diag(N); R[5, 4] = N[5]``.
Power is conserved through the gears (their losses are the friction terms), so::

    q_motor   = R (q_joint - offsets)        q_joint = R^-1 q_motor + offsets
    qd_motor  = R qd_joint                   tau_joint = R^T tau_motor

``offsets`` [rad or m] is the joint position at motor position zero. A recording may hold
positions (with velocities and accelerations) and torques on either side; :meth:`Transmission.to_joint`
converts it to the joint side at the edge (the readers call it), so everything inside dynid stays
joint side, SI. A motor whose row of ``R`` has more than one non-zero entry (a *coupled* motor)
moves with several joints; its rotor inertia and friction act along ``R[m, :]`` and cannot be written
as per-joint terms: the shared friction block adds them as the ``motor_*`` terms
(:class:`dynid.models.base.FrictionModel`).

Configuration (JSON/YAML/TOML)::

    transmission:
      gear_ratios: [32, 32, 45, -48, 45, 32]      # diagonal of R: motor turns per joint turn
      coupling: [[6, 5, 32]]                       # extra entries [motor, joint, R value], 1-based
      offsets: [0, -1.5707963, 1.5707963, 0, 0, 0] # joint position at motor zero [rad or m], default 0
      recorded: motor                              # motor | joint | {position: motor|joint, torque: motor|joint}

Examples
--------
>>> tr = Transmission.from_dict({"gear_ratios": [10, 20], "coupling": [[2, 1, 20]], "recorded": "motor"})
>>> tr.matrix.tolist()
[[10.0, 0.0], [20.0, 20.0]]
>>> tr.coupled_motors
(1,)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError, ShapeError
from ..recording import Recording

__all__ = ["Transmission", "SIDES"]

SIDES = ("motor", "joint")
_KEYS = ("gear_ratios", "coupling", "offsets", "recorded")


@dataclass(frozen=True)
class Transmission:
    """Gear ratios, couplings and offsets between motors and joints, and which side a recording holds.

    Parameters
    ----------
    gear_ratios : tuple of float, (n_joints,)
        Diagonal of ``R`` [motor rad per joint rad, or motor rad per joint m]; non-zero, signed.
    coupling : tuple of (int, int, float)
        Off-diagonal entries ``(motor, joint, value)`` of ``R``, 0-based indices.
    offsets : tuple of float, (n_joints,)
        Joint position at motor position zero [rad or m].
    position : {"motor", "joint"}
        Side of the recorded positions, velocities and accelerations.
    torque : {"motor", "joint"}
        Side of the recorded torques.
    """

    gear_ratios: tuple[float, ...]
    coupling: tuple[tuple[int, int, float], ...] = ()
    offsets: tuple[float, ...] = ()
    position: str = "joint"
    torque: str = "joint"

    def __post_init__(self) -> None:
        n = len(self.gear_ratios)
        if n == 0:
            raise ConfigError("transmission.gear_ratios must list one ratio per joint, got none")
        for i, g in enumerate(self.gear_ratios):
            if not (isinstance(g, (int, float)) and not isinstance(g, bool) and math.isfinite(g) and g != 0):
                raise ConfigError(f"transmission.gear_ratios[{i + 1}] must be a finite non-zero number, got {g!r}")
        object.__setattr__(self, "gear_ratios", tuple(float(g) for g in self.gear_ratios))
        offsets = tuple(self.offsets) if self.offsets else (0.0,) * n
        if len(offsets) != n:
            raise ConfigError(f"transmission.offsets has {len(offsets)} values but gear_ratios has {n}",
                              hint="give one offset per joint [rad or m]")
        for i, o in enumerate(offsets):
            if isinstance(o, bool) or not isinstance(o, (int, float)) or not math.isfinite(o):
                raise ConfigError(f"transmission.offsets[{i + 1}] must be a finite number, got {o!r}")
        object.__setattr__(self, "offsets", tuple(float(o) for o in offsets))
        seen = set()
        for m, j, v in self.coupling:
            if not (0 <= m < n and 0 <= j < n):
                raise ConfigError(f"transmission.coupling entry [{m + 1}, {j + 1}, {v}] is outside 1..{n}",
                                  hint="entries are [motor, joint, value] with 1-based indices")
            if m == j:
                raise ConfigError(f"transmission.coupling entry [{m + 1}, {j + 1}, {v}] is on the diagonal",
                                  hint="diagonal entries are the gear_ratios")
            if (m, j) in seen:
                raise ConfigError(f"transmission.coupling names entry [{m + 1}, {j + 1}] twice")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v == 0:
                raise ConfigError(f"transmission.coupling value of [{m + 1}, {j + 1}] must be a finite non-zero number, "
                                  f"got {v!r}")
            seen.add((m, j))
        object.__setattr__(self, "coupling", tuple((int(m), int(j), float(v)) for m, j, v in self.coupling))
        for name in ("position", "torque"):
            if getattr(self, name) not in SIDES:
                raise ConfigError(f"transmission.recorded {name} must be 'motor' or 'joint', got {getattr(self, name)!r}")
        cond = np.linalg.cond(self.matrix)
        if not np.isfinite(cond) or cond > 1e12:
            raise ConfigError(f"transmission matrix R is singular (condition number {cond:.3g})",
                              hint="a motor-from-joint matrix must be invertible: check gear_ratios and coupling")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Transmission":
        """Validate the ``transmission`` configuration mapping (1-based ``coupling`` indices)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"transmission must be a mapping {{gear_ratios, coupling, offsets, recorded}}, got {data!r}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ConfigError(f"unknown transmission key {unknown[0]!r}", hint=f"transmission keys are: {', '.join(_KEYS)}")
        if "gear_ratios" not in data:
            raise ConfigError("transmission needs gear_ratios (one per joint, motor turns per joint turn)")
        ratios = data["gear_ratios"]
        if not isinstance(ratios, (list, tuple)):
            raise ConfigError(f"transmission.gear_ratios must be a list of numbers, got {ratios!r}")
        if "recorded" not in data:
            raise ConfigError("transmission needs 'recorded': which side the recording holds",
                              hint="recorded: motor (motor positions and torques), joint, or "
                                   "{position: motor|joint, torque: motor|joint}")
        rec = data["recorded"]
        if isinstance(rec, str):
            position = torque = rec
        elif isinstance(rec, Mapping):
            extra = sorted(set(rec) - {"position", "torque"})
            if extra:
                raise ConfigError(f"unknown transmission.recorded key {extra[0]!r}", hint="keys are position and torque")
            position, torque = rec.get("position", "joint"), rec.get("torque", "joint")
        else:
            raise ConfigError(f"transmission.recorded must be 'motor', 'joint' or a mapping, got {rec!r}")
        coupling = []
        for entry in data.get("coupling") or ():
            if not isinstance(entry, (list, tuple)) or len(entry) != 3:
                raise ConfigError(f"transmission.coupling entries must be [motor, joint, value], got {entry!r}")
            m, j, v = entry
            if not all(isinstance(k, int) and not isinstance(k, bool) for k in (m, j)):
                raise ConfigError(f"transmission.coupling indices must be integers (1-based), got {entry!r}")
            coupling.append((m - 1, j - 1, v))
        offsets = data.get("offsets") or ()
        if not isinstance(offsets, (list, tuple)):
            raise ConfigError(f"transmission.offsets must be a list of numbers, got {offsets!r}")
        return cls(tuple(ratios), tuple(coupling), tuple(offsets), position, torque)

    def to_dict(self) -> dict[str, Any]:
        """The configuration mapping (what result.json records; inverse of :meth:`from_dict`)."""
        d: dict[str, Any] = {"gear_ratios": list(self.gear_ratios)}
        if self.coupling:
            d["coupling"] = [[m + 1, j + 1, v] for m, j, v in self.coupling]
        if any(self.offsets):
            d["offsets"] = list(self.offsets)
        d["recorded"] = self.position if self.position == self.torque else {"position": self.position,
                                                                            "torque": self.torque}
        return d

    # ------------------------------------------------------------------ description
    @property
    def n_joints(self) -> int:
        return len(self.gear_ratios)

    @property
    def matrix(self) -> np.ndarray:
        """Motor-from-joint matrix ``R`` ``(n_joints, n_joints)``."""
        R = np.diag(np.array(self.gear_ratios, dtype=float))
        for m, j, v in self.coupling:
            R[m, j] = v
        return R

    @property
    def coupled_motors(self) -> tuple[int, ...]:
        """0-based indices of the motors whose row of ``R`` has more than one non-zero entry."""
        R = self.matrix
        return tuple(int(m) for m in range(self.n_joints) if np.count_nonzero(R[m]) > 1)

    def motor_directions(self) -> np.ndarray:
        """Rows of ``R`` of the coupled motors divided by their gear ratio ``(n_coupled, n_joints)``.

        ``u = R[m, :] / R[m, m]``: the motor's velocity in joint units of its own joint is ``u · qd``
        (TX40 motor 6: ``qd5 + qd6``), and a motor torque reaches joint ``j`` with weight ``u_j``.
        """
        R = self.matrix
        rows = list(self.coupled_motors)
        return R[rows] / np.diag(R)[rows][:, None]

    @property
    def records_motor_side(self) -> bool:
        return self.position == "motor" or self.torque == "motor"

    def check_joints(self, n_joints: int, where: str = "model") -> None:
        """Raise :class:`ConfigError` unless the transmission has ``n_joints`` joints."""
        if self.n_joints != n_joints:
            raise ConfigError(f"transmission.gear_ratios has {self.n_joints} values but the {where} has {n_joints} joints",
                              hint="give one gear ratio per joint")

    # ------------------------------------------------------------------ conversion
    def joint_positions(self, q_motor) -> np.ndarray:
        """``q_joint = R^-1 q_motor + offsets`` ``(N, n_joints)`` from motor positions ``(N, n_joints)`` [rad]."""
        qm = self._check("q_motor", q_motor)
        return np.linalg.solve(self.matrix, qm.T).T + np.array(self.offsets)

    def motor_positions(self, q_joint) -> np.ndarray:
        """``q_motor = R (q_joint - offsets)`` ``(N, n_joints)`` [rad]."""
        qj = self._check("q_joint", q_joint)
        return (qj - np.array(self.offsets)) @ self.matrix.T

    def joint_torques(self, tau_motor) -> np.ndarray:
        """``tau_joint = R^T tau_motor`` ``(N, n_joints)`` [N m or N] from motor torques ``(N, n_joints)`` [N m]."""
        return self._check("tau_motor", tau_motor) @ self.matrix

    def motor_torques(self, tau_joint) -> np.ndarray:
        """``tau_motor = R^-T tau_joint`` ``(N, n_joints)`` [N m]."""
        return np.linalg.solve(self.matrix.T, self._check("tau_joint", tau_joint).T).T

    def to_joint(self, rec: Recording) -> Recording:
        """The recording with its motor-side signals converted to the joint side (others unchanged).

        Positions use :meth:`joint_positions`; velocities and accelerations ``R^-1 qd`` (no offset);
        torques :meth:`joint_torques`. The metadata gain ``transmission: converted to joint side``.
        """
        self.check_joints(rec.n_joints, where=f"recording {rec.source}")
        if not self.records_motor_side:
            return rec
        q, qd, qdd, tau = rec.q, rec.qd, rec.qdd, rec.tau
        if self.position == "motor":
            Rinv = np.linalg.inv(self.matrix)
            q = self.joint_positions(q)
            qd = None if qd is None else qd @ Rinv.T
            qdd = None if qdd is None else qdd @ Rinv.T
        if self.torque == "motor" and tau is not None:
            tau = self.joint_torques(tau)
        meta = {**rec.meta, "transmission": f"{self.position}-side positions, {self.torque}-side torques "
                                            "converted to the joint side"}
        return Recording(rec.t, q, tau, qd, qdd, meta, rec.source)

    def to_motor(self, rec: Recording) -> Recording:
        """Inverse of :meth:`to_joint`: a joint-side recording expressed on the recorded sides."""
        self.check_joints(rec.n_joints, where=f"recording {rec.source}")
        q, qd, qdd, tau = rec.q, rec.qd, rec.qdd, rec.tau
        if self.position == "motor":
            R = self.matrix
            q = self.motor_positions(q)
            qd = None if qd is None else qd @ R.T
            qdd = None if qdd is None else qdd @ R.T
        if self.torque == "motor" and tau is not None:
            tau = self.motor_torques(tau)
        return Recording(rec.t, q, tau, qd, qdd, rec.meta, rec.source)

    def _check(self, name: str, x) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        if a.ndim != 2 or a.shape[1] != self.n_joints:
            raise ShapeError(f"{name} must have shape (n_samples, {self.n_joints}), got {a.shape}")
        return a
