"""Conditioning a recording of any length block by block (the streaming identification's signal stage).

A long log is read in consecutive blocks (:class:`~dynid.recording.RecordingSource`); each block is conditioned
with ``margin`` rows of its neighbours on each side (:func:`extended_blocks`), so the zero-phase filters see the
signal around the block as they would on the whole recording: their impulse response decays as
``exp(−2π sin(π/8) f t)`` (the forward-backward order-4 Butterworth), and ``MARGIN_PERIODS`` (12) periods of the
lowest corner frequency used leave less than 1e-12 of it at the block's edges — the blocks join seamlessly.

What needs the whole recording — the sample period, the default cutoff (the motion bandwidth), the velocity
thresholds (peak velocity and noise), the stick threshold — is decided first, from passes that keep only running
statistics (:class:`StepMedian`, :class:`Spectrum`, :class:`Sample`), and handed to every block as a
:class:`BlockPlan`; :func:`condition_block` then runs the same steps as
:func:`~dynid.signal.conditioning.condition` (:func:`~dynid.signal.conditioning.filter_signals`,
:func:`~dynid.signal.conditioning.gate_rows`) on the block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

import numpy as np

from .._numeric import median
from ..recording import Recording
from .conditioning import (Conditioned, ConditioningOptions, Gate, StickCarry, _shift, default_trim, filter_signals,
                           gate_rows)

__all__ = ["Extended", "extended_blocks", "BlockPlan", "condition_block", "margin_rows", "StepMedian", "Spectrum",
           "Sample", "PickedRows", "MARGIN_PERIODS"]

MARGIN_PERIODS = 12.0
"""Rows of the neighbouring blocks on each side, in periods of the lowest corner frequency a pass uses."""


@dataclass(frozen=True)
class Extended:
    """One block of a recording with up to ``margin`` rows of its neighbours on each side.

    ``t`` ``(M,)``, ``q``, ``tau``, ``qd``, ``qdd`` ``(M, n)`` (None where not recorded) are the extended rows;
    ``first`` is the recording's index of the first of them; rows ``lo:hi`` of them are the block's own.
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None
    qd: np.ndarray | None
    qdd: np.ndarray | None
    first: int
    lo: int
    hi: int

    @property
    def start(self) -> int:
        """The recording's index of the block's first own row."""
        return self.first + self.lo

    @property
    def stop(self) -> int:
        return self.first + self.hi


_FIELDS = ("t", "q", "tau", "qd", "qdd")


def extended_blocks(blocks: Iterable[Recording], rows: int, margin: int) -> Iterator[Extended]:
    """The recording of ``blocks`` (any block sizes) as consecutive blocks of ``rows`` own rows (the last one
    shorter), each with ``margin`` rows of the neighbours on each side where the recording has them. Holds about
    ``rows + 2·margin`` rows at a time."""
    rows, margin = max(1, int(rows)), max(0, int(margin))
    buf: dict[str, np.ndarray | None] = {}
    first = 0                    # the recording's index of buf's first row
    emit = 0                     # the next own row to emit
    it = iter(blocks)
    done = False
    while True:
        end = first + (buf["t"].shape[0] if buf else 0)
        while not done and end - emit < rows + margin:
            try:
                b = next(it)
            except StopIteration:
                done = True
                break
            new = {k: getattr(b, k) for k in _FIELDS}
            buf = new if not buf else {k: None if buf[k] is None or new[k] is None else np.concatenate([buf[k], new[k]])
                                       for k in _FIELDS}
            end = first + buf["t"].shape[0]
        if emit >= end:
            return
        stop = min(emit + rows, end)
        lo, hi = max(emit - margin, first), min(stop + margin, end)
        view = {k: None if v is None else v[lo - first:hi - first] for k, v in buf.items()}
        yield Extended(**view, first=lo, lo=emit - lo, hi=stop - lo)
        emit = stop
        drop = emit - margin - first
        if drop > 0:
            buf = {k: None if v is None else v[drop:] for k, v in buf.items()}
            first += drop


def margin_rows(lowest_hz: float, dt: float) -> int:
    """Rows of margin for filters whose lowest corner frequency is ``lowest_hz``."""
    return int(math.ceil(MARGIN_PERIODS / (lowest_hz * dt)))


@dataclass(frozen=True)
class BlockPlan:
    """What the conditioning of every block shares, decided from the whole recording.

    ``n_samples`` rows in all, sample period ``dt`` [s], ``cutoff`` [Hz], ``trim`` rows dropped at each end, the
    :class:`~dynid.signal.conditioning.Gate` (None in a pass that is still measuring what it needs: the rows are
    then not gated), the options, and what step 0 found of the time base (``time_base``, result.json's record).
    """

    n_samples: int
    dt: float
    cutoff: float
    options: ConditioningOptions
    gate: Gate | None = None
    time_base: dict = field(default_factory=dict)
    trim: int = -1

    def __post_init__(self) -> None:
        if self.trim < 0:
            trim = self.options.trim if self.options.trim is not None else default_trim(self.cutoff, self.dt)
            trim += int(math.ceil(abs(self.options.torque_delay_s) / self.dt - 1e-6))
            object.__setattr__(self, "trim", trim)

    @property
    def data_length(self) -> int:
        """Rows left after trimming."""
        return max(self.n_samples - 2 * self.trim, 0)

    @property
    def margin(self) -> int:
        """Rows of margin each block's conditioning needs: the low-pass filters, the torque shift, and the stick
        detection's reach (:attr:`noise_margin`: also the velocity noise's high-pass at half the cutoff)."""
        shift = int(math.ceil(abs(self.options.torque_delay_s) / self.dt)) + 1
        return margin_rows(self.cutoff, self.dt) + shift + int(math.ceil(1.0 / (self.cutoff * self.dt)))

    @property
    def noise_margin(self) -> int:
        """The margin of the velocity noise's pass: the velocity's own margin, then the high-pass at half the
        cutoff's decay from where that leaves the velocity inexact."""
        return self.margin + margin_rows(0.5 * self.cutoff, self.dt)

    def with_gate(self, gate: Gate) -> "BlockPlan":
        return replace(self, gate=gate)


def condition_block(ext: Extended, plan: BlockPlan, carry: StickCarry | None = None) -> Conditioned | None:
    """The block's own rows of ``ext`` conditioned as :func:`~dynid.signal.conditioning.condition` conditions the
    whole recording (``plan``: what it decided from the whole), or None where none of them is left after trimming.
    Without a gate in the plan every row counts as moving and nothing is stuck. ``carry``: a pass's slow stretches
    left open by its previous block (:class:`~dynid.signal.conditioning.StickCarry`; one per pass and cutoff, the
    blocks in order): a joint at rest for longer than the margins is judged on its whole stretch."""
    lo_valid, hi_valid = plan.trim, plan.n_samples - plan.trim
    own_lo, own_hi = max(lo_valid, ext.start), min(hi_valid, ext.stop)
    if own_hi <= own_lo:
        return None
    opts, dt = plan.options, plan.dt
    tau = ext.tau
    if tau is not None and opts.torque_delay_s:
        tau = _shift(tau, opts.torque_delay_s / dt)
    f = filter_signals(ext.q, tau, ext.qd, ext.qdd, cutoff=plan.cutoff, dt=dt, options=opts)
    # gated over every extended row the recording keeps, so a stick reaching into the margins is judged whole
    keep = slice(max(lo_valid, ext.first) - ext.first, min(hi_valid, ext.first + ext.t.shape[0]) - ext.first)
    own = slice(own_lo - ext.first, own_hi - ext.first)
    sub = slice(own.start - keep.start, own.stop - keep.start)
    n = ext.q.shape[1]
    if plan.gate is not None:
        moving, stuck, near = (a[sub] for a in gate_rows(f, keep, plan.gate, plan.cutoff, dt, opts, carry,
                                                          ext.first + keep.start))
        gate = plan.gate
    else:
        moving = np.ones((own.stop - own.start, n), dtype=bool)
        stuck = near = np.zeros_like(moving)
        gate = Gate(np.zeros(n), None, np.zeros(n), None)
    return Conditioned(
        t=ext.t[own], q=f.q[own], qd=f.qd[own], qdd=f.qdd[own], tau=None if f.tau is None else f.tau[own],
        q_raw=ext.q[own], tau_raw=None if tau is None else tau[own], sign=f.sign[own], moving=moving,
        velocity_threshold=gate.threshold, upper_velocity_threshold=gate.upper, cutoff_hz=float(plan.cutoff),
        sample_period_s=float(dt), raw_length=plan.n_samples, start=own_lo, options=opts, stuck=stuck,
        near_stuck=near, time_base=plan.time_base, velocity_noise=gate.noise)


# ---------------------------------------------------------------------------------------- running statistics

class StepMedian:
    """The median time step of a recording read in blocks: exact (a count of every distinct step) while the
    steps take few distinct values — time stamps on a clock's ticks —, else the median of a :class:`Sample`."""

    MAX_DISTINCT = 20_000

    def __init__(self, seed: int = 0) -> None:
        self.counts: dict[float, int] | None = {}
        self.sample = Sample(1, 200_000, seed)
        self.n = 0

    def add(self, steps: np.ndarray) -> None:
        self.n += steps.size
        self.sample.add(steps[:, None])
        if self.counts is None:
            return
        values, counts = np.unique(steps, return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist()):      # (distinct values: few)
            self.counts[v] = self.counts.get(v, 0) + c
        if len(self.counts) > self.MAX_DISTINCT:
            self.counts = None

    def skipped_cycles(self, period: float) -> int:
        """Controller cycles of ``period`` the steps skip (a step of ``m`` periods, within a quarter period, skips
        ``m − 1``): counted exactly from the distinct steps, else estimated from the sample."""
        if self.counts is not None:
            values = np.array(list(self.counts), dtype=float)
            weight = np.array(list(self.counts.values()), dtype=float)
        else:
            values = self.sample.values()[:, 0]
            weight = np.full(values.size, self.n / max(values.size, 1))
        ratio = values / period
        m = np.rint(ratio)
        skip = (m >= 2) & (np.abs(ratio - m) <= 0.25)
        return int(round(float(np.sum((m[skip] - 1) * weight[skip]))))

    def median(self) -> float:
        if not self.n:
            return float("nan")
        if self.counts is None:
            return float(median(self.sample.values()[:, 0]))
        values = np.array(sorted(self.counts))
        cum = np.cumsum([self.counts[v] for v in values])
        mid = (self.n - 1) / 2.0                 # the median of n values: the mean of the two middle ones
        a = values[np.searchsorted(cum, math.floor(mid) + 1)]
        b = values[np.searchsorted(cum, math.ceil(mid) + 1)]
        return float((a + b) / 2.0)


class Sample:
    """A uniform random sample of the rows of a stream (seeded), of ``size`` to ``2·size`` rows of ``columns``
    values: each row is kept with a probability that halves whenever the sample reaches twice its size (the kept
    rows thinned by half alike). For medians of a recording of any length."""

    def __init__(self, columns: int, size: int, seed: int = 0) -> None:
        self.size, self.columns = int(size), int(columns)
        self.rng = np.random.default_rng(seed)
        self.p = 1.0
        self.parts: list[np.ndarray] = []
        self.count = 0

    def add(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=float).reshape(-1, self.columns)
        keep = rows[self.rng.random(rows.shape[0]) < self.p] if self.p < 1.0 else rows.copy()
        self.parts.append(keep)
        self.count += keep.shape[0]
        while self.count > 2 * self.size:
            kept = np.concatenate(self.parts)
            kept = kept[self.rng.random(kept.shape[0]) < 0.5]
            self.parts, self.count, self.p = [kept], kept.shape[0], self.p / 2.0

    def values(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.zeros((0, self.columns))


class PickedRows:
    """The values of chosen rows of a recording read in blocks, for medians over the whole recording: every row
    while it has at most ``limit`` rows (the median is then the whole recording's, exactly), else ``limit`` rows at
    seeded random places, one in each of ``limit`` equal stretches (no stride that could lock onto a periodic
    motion). Holds at most ``limit`` rows of ``columns`` values."""

    def __init__(self, n_rows: int, limit: int, columns: int, seed: int = 0) -> None:
        self.columns = int(columns)
        self.rows: np.ndarray | None = None
        if n_rows > limit:
            edges = np.linspace(0.0, n_rows, int(limit) + 1)
            u = np.random.default_rng(seed).uniform(size=int(limit))
            self.rows = np.unique(np.minimum((edges[:-1] + u * np.diff(edges)).astype(np.int64), n_rows - 1))
        self.parts: list[np.ndarray] = []

    def add(self, first: int, values: np.ndarray) -> None:
        """Values ``(m, columns)`` of the recording's rows ``first .. first + m - 1``."""
        values = np.asarray(values, dtype=float).reshape(-1, self.columns)
        if self.rows is None:
            self.parts.append(values.copy())
            return
        a, b = np.searchsorted(self.rows, [first, first + values.shape[0]])
        self.parts.append(values[self.rows[a:b] - first])

    def values(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.zeros((0, self.columns))


class Spectrum:
    """The power spectrum of the positions of a recording read in blocks, for the motion bandwidth
    (:func:`~dynid.signal.conditioning.motion_bandwidth`: the frequency below which 99 % of the detrended position
    power lies). The whole recording's, exactly as that function computes it, while it holds at most
    ``EXACT_VALUES`` values; beyond, Welch's average of the periodograms of consecutive segments of ``SEGMENT``
    rows (each detrended and Hann-windowed: a resolution of ``1 / (SEGMENT · dt)``)."""

    EXACT_VALUES = 1 << 21
    SEGMENT = 1 << 17

    def __init__(self, n_joints: int) -> None:
        self.n = n_joints
        self.whole: list[np.ndarray] | None = []
        self.held = 0
        self.segment: list[np.ndarray] = []
        self.in_segment = 0
        self.power: np.ndarray | None = None
        self.segments = 0

    def add(self, q: np.ndarray) -> None:
        if self.whole is not None:
            self.whole.append(np.array(q))
            self.held += q.size
            if self.held > self.EXACT_VALUES:
                self.whole = None
        self.segment.append(q)
        self.in_segment += q.shape[0]
        while self.in_segment >= self.SEGMENT:
            rows = np.concatenate(self.segment)
            self._periodogram(rows[: self.SEGMENT])
            rest = rows[self.SEGMENT:]
            self.segment, self.in_segment = [rest], rest.shape[0]

    def _periodogram(self, x: np.ndarray) -> None:
        from .conditioning import _detrend

        P = np.abs(np.fft.rfft(_detrend(x) * np.hanning(x.shape[0])[:, None], axis=0)) ** 2
        self.power = P if self.power is None else self.power + P
        self.segments += 1

    def bandwidth(self, dt: float, moves: np.ndarray, fraction: float = 0.99) -> np.ndarray:
        """Per joint the frequency [Hz] below which ``fraction`` of the power lies (0 for a joint that does not
        move: ``moves`` False)."""
        from .conditioning import motion_bandwidth

        out = np.zeros(self.n)
        if self.whole is not None:
            q = np.concatenate(self.whole)
            for j in range(self.n):
                out[j] = motion_bandwidth(q[:, [j]], dt, fraction) if moves[j] else 0.0
            return out
        if self.power is None:                          # (shorter than a segment: cannot happen past EXACT_VALUES)
            return out
        P = self.power.copy()
        P[0] = 0.0
        f = np.fft.rfftfreq(self.SEGMENT, dt)
        total = P.sum(axis=0)
        for j in range(self.n):                         # per joint
            if moves[j] and total[j] > 0:
                out[j] = float(f[np.searchsorted(np.cumsum(P[:, j]) / total[j], fraction)])
        return out

    @property
    def exact(self) -> bool:
        return self.whole is not None
