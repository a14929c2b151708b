"""Joint limits of an excitation motion and the check every planned trajectory must pass.

Limits are SI (rad, m, rad/s, m/s, rad/s², m/s², N m, N). An entry of ``inf`` (or ``-inf`` for a lower
position bound) means "not limited". The check is run on the final trajectory sampled on a fine
grid (1 ms by default): a trajectory that violates any limit there is reported as such, never
silently passed on (peers' optimisers checked only their coarse optimisation grid).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from ..errors import ConfigError, DynidError, ShapeError
from ..units import acceleration_unit, force_unit, position_unit, velocity_unit

__all__ = ["JointLimits", "LimitCheck", "LimitViolationError", "check_limits", "LIMIT_KINDS"]

LIMIT_KINDS = ("position", "velocity", "acceleration", "torque")


class LimitViolationError(DynidError, ValueError):
    """A planned trajectory exceeds a joint limit on the final check grid."""


def _vector(name: str, x, n: int, fill: float) -> np.ndarray:
    if x is None:
        return np.full(n, fill)
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    a = a.ravel()
    if a.size != n:
        raise ShapeError(f"{name} limits must have {n} value(s) (one per joint), got {a.size}")
    a = np.where(np.isnan(a), fill, a)
    return a


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits (SI). Build with :meth:`create` or :meth:`from_model`.

    Attributes
    ----------
    lower, upper : ndarray, shape (n_joints,)
        Position range [rad or m]; ``-inf``/``inf`` when unlimited.
    velocity, acceleration, torque : ndarray, shape (n_joints,)
        Maximum magnitudes [rad/s or m/s], [rad/s² or m/s²], [N m or N]; ``inf`` when unlimited.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    torque: np.ndarray

    def __post_init__(self) -> None:
        n = np.asarray(self.lower).size
        for name in ("lower", "upper", "velocity", "acceleration", "torque"):
            a = np.array(getattr(self, name), dtype=float).ravel()
            if a.size != n:
                raise ShapeError(f"JointLimits.{name} has {a.size} values, expected {n}")
            if np.any(np.isnan(a)):
                raise ConfigError(f"JointLimits.{name} contains NaN: {a.tolist()}")
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        bad = np.nonzero(~(self.lower < self.upper))[0]
        if bad.size:
            j = int(bad[0])
            raise ConfigError(f"joint {j + 1}: position lower limit {self.lower[j]:g} must be below the upper {self.upper[j]:g}")
        for name in ("velocity", "acceleration", "torque"):
            a = getattr(self, name)
            if np.any(a <= 0):
                raise ConfigError(f"{name} limits must be positive, got {a.tolist()}")

    @classmethod
    def create(cls, n_joints: int, *, position=None, velocity=None, acceleration=None, torque=None) -> "JointLimits":
        """Limits from optional arrays.

        Parameters
        ----------
        n_joints : int
        position : array-like, shape (n_joints, 2), optional
            ``[lo, hi]`` per joint [rad or m].
        velocity, acceleration, torque : array-like, shape (n_joints,) or scalar, optional
            ``NaN`` entries mean "not limited".
        """
        if position is None:
            lo, hi = np.full(n_joints, -np.inf), np.full(n_joints, np.inf)
        else:
            p = np.asarray(position, dtype=float)
            if p.shape != (n_joints, 2):
                raise ShapeError(f"position limits must have shape ({n_joints}, 2) ([lo, hi] per joint), got {p.shape}")
            lo = np.where(np.isnan(p[:, 0]), -np.inf, p[:, 0])
            hi = np.where(np.isnan(p[:, 1]), np.inf, p[:, 1])
        return cls(lo, hi, _vector("velocity", velocity, n_joints, np.inf),
                   _vector("acceleration", acceleration, n_joints, np.inf), _vector("torque", torque, n_joints, np.inf))

    @classmethod
    def from_model(cls, model) -> "JointLimits":
        """Limits in a model's configuration (``position_limits``, ``velocity_limits``, ``torque_limits``)."""
        c = model.config
        n = model.n_joints
        for key in ("position_limits", "velocity_limits", "torque_limits"):
            v = getattr(c, key)
            if v is not None and len(v) != n:
                raise ConfigError(f"configuration key {key!r} has {len(v)} entries but model {model.name!r} has {n} joints")
        return cls.create(n, position=c.position_limits, velocity=c.velocity_limits, torque=c.torque_limits)

    @property
    def n_joints(self) -> int:
        return int(self.lower.size)

    @property
    def position(self) -> np.ndarray:
        """``(n_joints, 2)`` ``[lower, upper]``."""
        return np.column_stack([self.lower, self.upper])

    def override(self, other: "JointLimits") -> "JointLimits":
        """These limits with every finite entry of ``other`` taken instead (command-line over config)."""
        if other.n_joints != self.n_joints:
            raise ShapeError(f"limits for {other.n_joints} joints cannot override limits for {self.n_joints}")
        pick = lambda a, b: np.where(np.isfinite(b), b, a)  # noqa: E731
        return JointLimits(pick(self.lower, other.lower), pick(self.upper, other.upper), pick(self.velocity, other.velocity),
                           pick(self.acceleration, other.acceleration), pick(self.torque, other.torque))

    def intersect_position(self, lower, upper) -> "JointLimits":
        """Position range narrowed to ``[lower, upper]`` (e.g. the start/target box)."""
        lo = np.maximum(self.lower, np.asarray(lower, dtype=float))
        hi = np.minimum(self.upper, np.asarray(upper, dtype=float))
        return replace(self, lower=lo, upper=hi)

    def to_dict(self) -> dict:
        f = lambda a: [float(x) if np.isfinite(x) else None for x in a]  # noqa: E731
        return {"position": [[lo, hi] for lo, hi in zip(f(self.lower), f(self.upper))], "velocity": f(self.velocity),
                "acceleration": f(self.acceleration), "torque": f(self.torque)}


@dataclass(frozen=True)
class LimitCheck:
    """Result of :func:`check_limits`.

    ok : bool
        Every limit holds on every sample.
    violations : tuple of str
        One readable line per violated (joint, kind), e.g. ``"joint 2 (A2): velocity 1.31 rad/s exceeds its limit 1.2 rad/s at t = 3.456 s"``.
    usage : dict of str -> ndarray (n_joints,)
        Peak use of each limit: ``|peak| / limit`` for velocity, acceleration and torque; for positions the
        largest of ``(lower - min q)`` and ``(max q - upper)`` relative to the range (negative = inside).
        NaN where the limit is not set.
    dt : float
        Spacing of the grid the check ran on [s].
    configuration_usage : dict of str -> float
        Peak ``value / limit`` of each mechanism limit (:class:`~dynid.models.base.ConfigurationCheck`),
        ``inf`` where the mechanism does not assemble; empty for models without such limits.
    """

    ok: bool
    violations: tuple[str, ...]
    usage: dict = field(default_factory=dict)
    dt: float = 1e-3
    configuration_usage: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"ok": self.ok, "violations": list(self.violations), "grid_s": self.dt,
               "usage": {k: [None if not np.isfinite(x) else float(x) for x in v] for k, v in self.usage.items()}}
        if self.configuration_usage:
            out["configuration_usage"] = {k: (float(v) if np.isfinite(v) else None)
                                          for k, v in self.configuration_usage.items()}
        return out

    def raise_if_violated(self, what: str = "trajectory") -> None:
        """Raise :class:`LimitViolationError` listing the violations (no-op when ``ok``)."""
        if not self.ok:
            more = f" (+{len(self.violations) - 3} more)" if len(self.violations) > 3 else ""
            raise LimitViolationError(f"the {what} violates joint limits on the {1000 * self.dt:g} ms check grid: "
                                      + "; ".join(self.violations[:3]) + more,
                                      hint="lower the speed (factor, velocity/acceleration limits), narrow the range "
                                           "or raise the torque limits")


def check_limits(limits: JointLimits, t, q, qd, qdd, tau=None, *, joint_names: Sequence[str] | None = None,
                 kinds: Sequence[str] | None = None, rtol: float = 1e-9, configuration=None) -> LimitCheck:
    """Check a sampled trajectory against joint limits.

    Parameters
    ----------
    limits : JointLimits
    t : array-like, shape (N,)
        Sample times [s] (for the messages and the grid spacing).
    q, qd, qdd : array-like, shape (N, n_joints)
        Positions [rad, m], velocities, accelerations (SI).
    tau : array-like, shape (N, n_joints), optional
        Predicted joint torques [N m, N]; torque limits are checked only when given.
    joint_names, kinds : sequence of str, optional
        For the messages (units follow ``kinds``: rotary -> rad, linear -> m).
    rtol : float
        Relative tolerance on each limit (rounding only).
    configuration : ConfigurationCheck, optional
        The mechanism's own limits at the samples ``q`` (``model.configuration_check(q)``).

    Returns
    -------
    LimitCheck

    Examples
    --------
    >>> import numpy as np
    >>> lim = JointLimits.create(1, position=[[-1.0, 1.0]], velocity=[1.0])
    >>> t = np.linspace(0.0, 1.0, 5)
    >>> check_limits(lim, t, np.zeros((5, 1)), np.full((5, 1), 2.0), np.zeros((5, 1))).ok
    False
    """
    t = np.asarray(t, dtype=float)
    n = limits.n_joints
    names = list(joint_names) if joint_names is not None else [f"A{j + 1}" for j in range(n)]
    kinds = list(kinds) if kinds is not None else ["rotary"] * n
    pu = [position_unit(k) for k in kinds]
    tu = [force_unit(k) for k in kinds]
    data = {"velocity": (qd, limits.velocity, [velocity_unit(k) for k in kinds]),
            "acceleration": (qdd, limits.acceleration, [acceleration_unit(k) for k in kinds])}
    if tau is not None:
        data["torque"] = (tau, limits.torque, tu)
    q = np.asarray(q, dtype=float)
    violations: list[str] = []
    usage: dict[str, np.ndarray] = {}
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    span = limits.upper - limits.lower
    pos_use = np.full(n, np.nan)
    for j in range(n):  # per joint: a handful of vectorised reductions
        below = limits.lower[j] - q[:, j]
        above = q[:, j] - limits.upper[j]
        if np.isfinite(span[j]):
            pos_use[j] = max(below.max(), above.max()) / span[j]
        tol = rtol * (np.abs(limits.lower[j]) + np.abs(limits.upper[j]) if np.isfinite(span[j]) else 1.0)
        for side, excess, bound in (("lower", below, limits.lower[j]), ("upper", above, limits.upper[j])):
            if np.isfinite(bound) and excess.max() > tol:
                k = int(np.argmax(excess))
                violations.append(f"joint {j + 1} ({names[j]}): position {q[k, j]:.6g} {pu[j]} beyond its {side} limit "
                                  f"{bound:.6g} {pu[j]} at t = {t[k]:.4f} s")
    usage["position"] = pos_use
    for kind, (x, lim, units) in data.items():
        x = np.abs(np.asarray(x, dtype=float))
        peak = x.max(axis=0)
        usage[kind] = np.where(np.isfinite(lim), peak / lim, np.nan)
        for j in np.nonzero(np.isfinite(lim) & (peak > lim * (1 + rtol)))[0]:
            k = int(np.argmax(x[:, j]))
            violations.append(f"joint {j + 1} ({names[j]}): {kind} {peak[j]:.6g} {units[j]} exceeds its limit "
                              f"{lim[j]:.6g} {units[j]} at t = {t[k]:.4f} s")
    config_usage = {}
    if configuration is not None:
        vals = np.asarray(configuration.values, dtype=float)
        for c, (name, lim, unit) in enumerate(zip(configuration.names, configuration.limits, configuration.units)):
            peak = float(vals[:, c].max()) if vals.size else 0.0
            config_usage[name] = peak / lim
            if not np.isfinite(peak):
                k = int(np.argmax(~np.isfinite(vals[:, c])))
                violations.append(f"{name}: the mechanism does not assemble at t = {t[k]:.4f} s")
            elif peak > lim * (1 + rtol):
                k = int(np.argmax(vals[:, c]))
                u = f" {unit}" if unit else ""
                violations.append(f"{name} {peak:.6g}{u} exceeds its limit {lim:.6g}{u} at t = {t[k]:.4f} s")
    return LimitCheck(not violations, tuple(violations), usage, dt, config_usage)
