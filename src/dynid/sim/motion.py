"""Commanded motions (SI units): softMC SineWave and arbitrary sampled trajectories."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .._validation import as_vector
from ..errors import ConfigError

__all__ = ["Motion", "SineMotion", "TrajectoryMotion"]


class Motion(Protocol):
    """Anything that gives the commanded ``(q, qd, qdd)`` ``(N, n_joints)`` at times ``t`` ``(N,)`` [s]."""

    n_joints: int

    def command(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    @property
    def duration(self) -> float: ...


@dataclass(frozen=True)
class SineMotion:
    """softMC ``SineWave``: each joint oscillates between ``start`` and ``target`` (spec/identification.md §2).

    ``q_j(t) = c_j − A_j·cos(2π f_j t)`` with ``c = (start + target)/2``, ``A = (target − start)/2``: the
    joint leaves the start point at rest (after ``Move startPoint``) and reaches the target half a
    period later. Frequencies are in Hz (the spec's documented choice).

    Parameters
    ----------
    start, target : array-like, (n_joints,)
        [rad or m].
    freqs_hz : array-like, (n_joints,)
    record_s : float
        Recording time [s] (softMC ``sleep`` between IdentificationStart and IdentificationFinish).
    settle_s : float
        Motion before the recording starts (the source's ``sleep 2000``).
    """

    start: np.ndarray
    target: np.ndarray
    freqs_hz: np.ndarray
    record_s: float = 20.0
    settle_s: float = 2.0

    def __post_init__(self) -> None:
        start = np.atleast_1d(np.asarray(self.start, dtype=float))
        n = start.size
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "target", as_vector("target", self.target, n))
        object.__setattr__(self, "freqs_hz", as_vector("freqs_hz", self.freqs_hz, n))
        if np.any(self.freqs_hz <= 0):
            raise ConfigError(f"sine frequencies must be positive, got {self.freqs_hz.tolist()}")
        if self.record_s <= 0 or self.settle_s < 0:
            raise ConfigError("record_s must be positive and settle_s non-negative")

    @property
    def n_joints(self) -> int:
        return int(self.start.size)

    @property
    def duration(self) -> float:
        return self.settle_s + self.record_s

    def command(self, t):
        t = np.asarray(t, dtype=float)[:, None]
        c = 0.5 * (self.start + self.target)
        a = 0.5 * (self.target - self.start)
        w = 2 * np.pi * self.freqs_hz
        q = c - a * np.cos(w * t)
        qd = a * w * np.sin(w * t)
        qdd = a * w**2 * np.cos(w * t)
        return q, qd, qdd


@dataclass(frozen=True)
class TrajectoryMotion:
    """A sampled trajectory ``(t, q)``; velocity and acceleration from a cubic spline (or given)."""

    t: np.ndarray
    q: np.ndarray
    settle_s: float = 0.0

    def __post_init__(self) -> None:
        from scipy.interpolate import CubicSpline

        t = np.asarray(self.t, dtype=float)
        q = np.asarray(self.q, dtype=float)
        if q.ndim == 1:
            q = q[:, None]
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "_spline", CubicSpline(t, q, axis=0))

    @property
    def n_joints(self) -> int:
        return int(self.q.shape[1])

    @property
    def record_s(self) -> float:
        return float(self.t[-1] - self.t[0]) - self.settle_s

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def command(self, t):
        t = np.clip(np.asarray(t, dtype=float) + self.t[0], self.t[0], self.t[-1])
        s = self._spline
        return s(t), s(t, 1), s(t, 2)
