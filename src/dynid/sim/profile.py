"""Motion profiles of a point-to-point move: jerk-limited (S-curve) 1-D profile and straight lines.

All in SI units; the profile is sampled at the controller cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError

__all__ = ["Profile", "scurve", "line_path"]


@dataclass(frozen=True)
class Profile:
    """A 1-D motion ``s(t)`` from 0 to ``distance``.

    t : (N,) [s] ; s, sd, sdd : (N,) position [m or rad], velocity, acceleration ;
    t_end : time the profile completes [s] ; v_peak : reached speed
    """

    t: np.ndarray
    s: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray
    t_end: float
    v_peak: float


def _phases(distance: float, v: float, a: float, j: float) -> tuple[float, float, float, float]:
    """(T_j, T_a, T_c, v) of the symmetric 7-segment S-curve."""
    if v * j < a * a:                   # a is not reached before v
        a_pk = np.sqrt(v * j)
        tj, ta = a_pk / j, 0.0
    else:
        tj, ta = a / j, v / a - a / j
    d_acc = v * (2 * tj + ta) / 2.0
    if 2 * d_acc <= distance:
        return tj, ta, (distance - 2 * d_acc) / v, v
    lo, hi = 0.0, v                     # v too high for this distance: find the speed with no cruise
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        tj_, ta_, tc_, _ = _phases(np.inf, mid, a, j)
        if mid * (2 * tj_ + ta_) <= distance:
            lo = mid
        else:
            hi = mid
    tj, ta, _, _ = _phases(np.inf, lo, a, j)
    return tj, ta, 0.0, lo


def scurve(distance: float, v_max: float, a_max: float, j_max: float, dt: float, *,
           t_before: float = 0.0, t_after: float = 0.0) -> Profile:
    """Jerk-limited trapezoidal profile from 0 to ``distance``, sampled every ``dt``.

    Parameters
    ----------
    distance : float
        > 0 [m or rad].
    v_max, a_max, j_max : float
        Speed, acceleration and jerk limits (> 0).
    dt : float
        Controller cycle [s].
    t_before, t_after : float
        Standstill before the move and after it completes [s].

    Returns
    -------
    Profile
        ``t`` starts at 0; the move starts at ``t_before`` and completes at ``t_end``.

    Examples
    --------
    >>> p = scurve(0.6, 0.9, 10.0, 200.0, 1e-3)
    >>> round(float(p.s[-1]), 9), round(p.v_peak, 3)
    (0.6, 0.9)
    """
    for name, x in (("distance", distance), ("v_max", v_max), ("a_max", a_max), ("j_max", j_max), ("dt", dt)):
        if not (np.isfinite(x) and x > 0):
            raise ConfigError(f"{name} must be positive, got {x!r}")
    tj, ta, tc, v = _phases(distance, v_max, a_max, j_max)
    durations = np.array([tj, ta, tj, tc, tj, ta, tj])
    jerks = np.array([1, 0, -1, 0, -1, 0, 1], dtype=float) * j_max
    starts = np.concatenate([[0.0], np.cumsum(durations)])
    state = np.zeros((8, 3))                                  # s, v, a at each segment start
    for k in range(7):
        s0, v0, a0 = state[k]
        T, J = durations[k], jerks[k]
        state[k + 1] = (s0 + v0 * T + a0 * T**2 / 2 + J * T**3 / 6, v0 + a0 * T + J * T**2 / 2, a0 + J * T)
    T_move = starts[-1]
    n = int(np.ceil((t_before + T_move + t_after) / dt - 1e-9)) + 1
    t = np.arange(n) * dt
    tau = np.clip(t - t_before, 0.0, T_move)
    seg = np.clip(np.searchsorted(starts, tau, side="right") - 1, 0, 6)
    x = tau - starts[seg]
    s0, v0, a0 = state[seg].T
    J = jerks[seg]
    s = s0 + v0 * x + a0 * x**2 / 2 + J * x**3 / 6
    sd = v0 + a0 * x + J * x**2 / 2
    sdd = a0 + J * x
    done = t - t_before >= T_move
    s = np.where(done, distance, s)                          # exact end value (no round-off drift)
    sd = np.where(done | (t < t_before), 0.0, sd)
    sdd = np.where(done | (t < t_before), 0.0, sdd)
    return Profile(t, s, sd, sdd, float(t_before + T_move), float(v))


def line_path(p0: npt.ArrayLike, p1: npt.ArrayLike, profile: Profile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Straight line from ``p0`` to ``p1`` ``(d,)`` [m] along ``profile`` (whose distance is |p1 − p0|).

    Returns position, velocity, acceleration ``(N, d)``.
    """
    p0 = np.asarray(p0, dtype=float)
    p1 = np.asarray(p1, dtype=float)
    L = float(np.linalg.norm(p1 - p0))
    if L == 0:
        raise ConfigError("line_path: start and end points coincide")
    u = (p1 - p0) / L
    return p0 + profile.s[:, None] * u, profile.sd[:, None] * u, profile.sdd[:, None] * u
