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
        check_values(arrays, self.source)
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


def check_values(arrays: Mapping[str, np.ndarray], source: str, first_row: int = 0,
                 previous_t: float | None = None) -> None:
    """Reject non-finite values and time that does not increase, naming the column and the row (rows count data
    rows from 1; ``first_row``: the rows before these, for a block of a longer recording; ``previous_t``: the time
    of the row before them).

    ``arrays``: ``t`` ``(N,)`` and any of ``q``, ``tau``, ``qd``, ``qdd`` ``(N, n)``.

    Raises
    ------
    InputDataError
    """
    for name, a in arrays.items():
        if a is None:
            continue
        bad = ~np.isfinite(a)
        if bad.any():
            row, col = np.argwhere(bad.reshape(a.shape[0], -1))[0]
            column = name if a.ndim == 1 else f"{_column_prefix(name)}{col + 1}"
            raise InputDataError(
                f"{source}, column {column}: value {a.reshape(a.shape[0], -1)[row, col]} at row {first_row + row + 1} "
                "is not finite",
                hint="remove or interpolate the bad samples before identification",
            )
    t = arrays["t"]
    if previous_t is not None and t.size:
        t = np.concatenate([[previous_t], t])
        first_row -= 1
    dt = np.diff(t)
    if dt.size and not (dt > 0).all():
        k = int(np.argmax(~(dt > 0)))
        what = "repeats" if dt[k] == 0 else "goes backwards"
        raise InputDataError(
            f"{source}, column t: time {what} at row {first_row + k + 2} (t = {t[k]:.6g} then {t[k + 1]:.6g})",
            hint="time must be strictly increasing; remove duplicate rows or sort by t",
        )


def _column_prefix(name: str) -> str:
    return {"q": "q", "tau": "tau", "qd": "dq", "qdd": "ddq"}[name]


class RecordingSource:
    """A recording read in consecutive blocks of rows: a log of any length, never whole in memory.

    Each block is a :class:`Recording` (SI units, joint side) of the next rows; every call of :meth:`blocks`
    reads the recording anew from its first row (the streaming identification passes over it several times).
    ``n_joints``, ``has_tau`` and ``meta`` are known before the first block; ``n_samples_hint`` where the rows can
    be counted without reading them (None otherwise: progress then shows the time read).
    """

    source: str = "<memory>"
    meta: Mapping[str, str] = MappingProxyType({})
    n_joints: int = 0
    has_tau: bool = True
    n_samples_hint: int | None = None

    def blocks(self, rows: int):
        """Consecutive blocks of about ``rows`` rows each, from the first row (an iterator of :class:`Recording`)."""
        raise NotImplementedError


class ArraySource(RecordingSource):
    """A :class:`Recording` in memory read in blocks (views of its arrays, nothing copied but a block at a time)."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.source, self.meta, self.n_joints = rec.source, rec.meta, rec.n_joints
        self.has_tau = rec.tau is not None
        self.n_samples_hint = rec.n_samples

    def blocks(self, rows: int):
        for start in range(0, self.rec.n_samples, max(1, int(rows))):
            yield self.rec.slice(start, start + rows)


class CachedSource(RecordingSource):
    """A :class:`RecordingSource` whose first read is kept as binary rows in a temporary file (deleted when closed or
    collected), which later reads read back instead of parsing the file again — where the temporary folder has room
    for them (``limit_bytes``; else every read reads the source). The same blocks, bit for bit."""

    def __init__(self, inner: RecordingSource, limit_bytes: int | None = None) -> None:
        self.inner = inner
        self.source, self.meta, self.n_joints, self.has_tau = inner.source, inner.meta, inner.n_joints, inner.has_tau
        self.n_samples_hint = inner.n_samples_hint
        self.limit_bytes = limit_bytes
        self._file = None
        self._layout: tuple[bool, bool, bool] | None = None      # (tau, qd, qdd) present
        self._blocks: list[int] = []                              # rows of each cached block
        self._complete = False

    def _width(self) -> int:
        n = self.n_joints
        return 1 + n * (1 + sum(self._layout))

    def blocks(self, rows: int):
        if self._complete:
            yield from self._read()
            return
        import tempfile

        self.close()
        fh = tempfile.TemporaryFile(prefix="dynid-blocks-")
        written, ok = 0, True
        try:
            for b in self.inner.blocks(rows):
                if ok:
                    layout = (b.tau is not None, b.qd is not None, b.qdd is not None)
                    if self._layout is None:
                        self._layout = layout
                    ok = layout == self._layout
                    data = np.column_stack([b.t] + [a for a in (b.q, b.tau, b.qd, b.qdd) if a is not None])
                    written += data.nbytes
                    if self.limit_bytes is not None and written > self.limit_bytes:
                        ok = False
                    if ok:
                        data.tofile(fh)
                        self._blocks.append(b.n_samples)
                yield b
        except BaseException:
            fh.close()
            self._blocks = []
            raise
        if ok:
            self._file, self._complete = fh, True
        else:
            fh.close()
            self._blocks = []

    def _read(self):
        fh = self._file
        fh.seek(0)
        width, n = self._width(), self.n_joints
        for rows in self._blocks:
            data = np.fromfile(fh, count=rows * width).reshape(rows, width)
            parts, k = [], 1 + n
            for present in self._layout:
                parts.append(data[:, k:k + n] if present else None)
                k += n if present else 0
            yield Recording(data[:, 0], data[:, 1:1 + n], parts[0], parts[1], parts[2], self.meta, self.source)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._complete, self._blocks = None, False, []

    def __del__(self) -> None:
        self.close()
