"""The recording: time, joint positions and joint torques as logged by a controller (SI units)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ._numeric import median

from .errors import InputDataError, ShapeError

__all__ = ["Recording"]


def _frozen(a: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return None
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Recording:
    """A controller log in SI units. The first axis of every array is time.

    Parameters
    ----------
    t : array-like, shape (N,)
        Time [s], strictly increasing.
    q : array-like, shape (N, n_joints)
        Joint positions [rad or m].
    tau : array-like, shape (N, n_joints), optional
        Measured joint torques [N·m] or forces [N] (joint side). Optional only for motions whose
        torque is to be predicted.
    qd, qdd : array-like, shape (N, n_joints), optional
        Measured joint velocities [rad/s, m/s] and accelerations [rad/s², m/s²].
    meta : mapping of str to str
        Metadata lines of the file (``# key: value``).
    source : str
        Where the data came from (file name), used in error messages.

    Raises
    ------
    ShapeError, InputDataError
        Wrong shapes, non-finite values, non-increasing time. Messages name the column and row
        (rows count data rows from 1).
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None = None
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1:
            raise ShapeError(f"{self.source}: t must be 1-D, got shape {t.shape}")
        q = np.asarray(self.q, dtype=float)
        if q.ndim == 1:
            q = q[:, None]
        if q.ndim != 2 or q.shape[1] == 0:
            raise ShapeError(f"{self.source}: q must have shape (n_samples, n_joints), got {q.shape}")
        n = q.shape[1]
        arrays = {"t": t, "q": q}
        for name in ("tau", "qd", "qdd"):
            a = getattr(self, name)
            if a is None:
                continue
            a = np.asarray(a, dtype=float)
            if a.ndim == 1:
                a = a[:, None]
            if a.shape != q.shape:
                raise ShapeError(
                    f"{self.source}: {name} has shape {a.shape} but q has shape {q.shape}",
                    hint=f"give one {name} column per joint ({n})",
                )
            arrays[name] = a
        for name, a in arrays.items():
            if a.shape[0] != t.shape[0]:
                raise ShapeError(f"{self.source}: length of t ({t.shape[0]}) and {name} ({a.shape[0]}) must match")
            bad = ~np.isfinite(a)
            if bad.any():
                row, col = np.argwhere(bad.reshape(a.shape[0], -1))[0]
                column = name if a.ndim == 1 else f"{_column_prefix(name)}{col + 1}"
                raise InputDataError(
                    f"{self.source}, column {column}: value {a.reshape(a.shape[0], -1)[row, col]} at row {row + 1} is not finite",
                    hint="remove or interpolate the bad samples before identification",
                )
        dt = np.diff(t)
        if dt.size and not (dt > 0).all():
            k = int(np.argmax(~(dt > 0)))
            what = "repeats" if dt[k] == 0 else "goes backwards"
            raise InputDataError(
                f"{self.source}, column t: time {what} at row {k + 2} (t = {t[k]:.6g} then {t[k + 1]:.6g})",
                hint="time must be strictly increasing; remove duplicate rows or sort by t",
            )
        for name, a in arrays.items():
            object.__setattr__(self, name, _frozen(a))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    def __reduce__(self):
        # (its meta is a read-only view, which pickle cannot copy: rebuilt from a plain dict — a recording
        # crosses to a Dask worker or a process pool as it is)
        return (Recording, (self.t, self.q, self.tau, self.qd, self.qdd, dict(self.meta), self.source))

    @property
    def n_samples(self) -> int:
        return int(self.t.shape[0])

    @property
    def n_joints(self) -> int:
        return int(self.q.shape[1])

    @functools.cached_property
    def sample_period(self) -> float:
        """Median time step [s] (the controller cycle; jitter of the time stamps is ignored; computed once:
        the arrays are read-only)."""
        return float(median(np.diff(self.t))) if self.n_samples > 1 else float("nan")

    def slice(self, start: int, stop: int) -> "Recording":
        """Samples ``start:stop`` as a new recording."""
        pick = lambda a: None if a is None else a[start:stop]  # noqa: E731
        return Recording(self.t[start:stop], self.q[start:stop], pick(self.tau), pick(self.qd), pick(self.qdd),
                         self.meta, self.source)


def _column_prefix(name: str) -> str:
    return {"q": "q", "tau": "tau", "qd": "dq", "qdd": "ddq"}[name]
