"""A recording of any length read block by block: its first pass (:func:`scan_recording`), the velocity gates of
the cutoffs a pass will use (:func:`measure_gates`), and the passes themselves (:func:`blocks_of`) — what both
the streaming identification (:mod:`dynid.identification.streaming`) and a long recording's prediction
(:meth:`dynid.fitted.FittedModel.predict_blocks`) read a log with.

Everything a whole recording's conditioning decides from all of it is decided here from running statistics:
the sample period (the median step, exact while the steps take few values), the motion bandwidth (the whole
recording's spectrum up to 2 M values, Welch's beyond), the peak velocity, and the velocity noise (the median
spread of the high-passed velocity over every row of a recording the identification would hold in memory,
``STREAM_VALUES`` samples × joints; over as many rows at seeded random places beyond).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .._numeric import median
from ..errors import InputDataError
from ..recording import ArraySource, CachedSource, RecordingSource
from ..threads import num_threads
from .blocks import BlockPlan, Extended, PickedRows, Spectrum, StepMedian, extended_blocks, margin_rows
from .conditioning import (MAX_CUTOFF_SHARE, ConditioningOptions, butterworth_filtfilt, filter_signals, gate_from,
                           stick_cutoff)

__all__ = ["Scan", "scan_recording", "measure_gates", "blocks_of", "cached", "workers", "STREAM_VALUES",
           "BLOCK_VALUES"]

STREAM_VALUES = 500_000
"""Recordings of at least this many samples × joints are identified block by block (:class:`dynid.Identifier`
``streaming="auto"``); below, whole in memory."""
BLOCK_VALUES = 1 << 18
"""Samples × joints per block (each block also reads its margins)."""

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Scan:
    """What the first pass learns of the whole recording (see the module docstring)."""

    n_samples: int
    n_joints: int
    dt: float
    q_min: np.ndarray
    q_max: np.ndarray
    qd_any: np.ndarray
    tau_min: np.ndarray | None
    tau_max: np.ndarray | None
    bandwidth: np.ndarray
    spectrum_exact: bool
    step_min: float
    step_max: float
    repeated_rows: int
    skipped_cycles: int
    has_qd: bool
    has_qdd: bool

    @property
    def motion_bandwidth(self) -> float:
        return float(self.bandwidth.max(initial=0.0))

    def default_cutoff(self, options: ConditioningOptions) -> float:
        """:func:`~dynid.signal.conditioning.default_cutoff` of the whole recording."""
        hi = min(MAX_CUTOFF_SHARE * options.max_cutoff_hz, 0.4 / self.dt)
        return float(np.clip(options.cutoff_factor * self.motion_bandwidth, min(options.min_cutoff_hz, hi), hi))

    def time_base_record(self) -> dict:
        """result.json's ``conditioning.time_base`` for a recording read in blocks (never repaired)."""
        rec = {"repaired": False, "method": None, "rows": self.n_samples, "cycles": self.n_samples,
               "repeated_rows": 0, "skipped_cycles": 0, "interpolated_cycles": 0, "period_s": self.dt,
               "reason": "read in blocks"}
        if self.repeated_rows or self.skipped_cycles:
            rec["note"] = (f"time base not repaired (the recording was read in blocks): {self.repeated_rows} rows "
                           f"repeat the previous one in every joint and {self.skipped_cycles} controller cycles were "
                           "skipped; the rows were filtered as equally spaced (a recording held in memory, "
                           "streaming='never', is put back on the controller's cycle grid)")
        return rec


def _block_rows(n_joints: int, margin: int) -> int:
    return max(BLOCK_VALUES // max(n_joints, 1), 4 * margin, 256)


def scan_recording(source: RecordingSource, progress: Progress | None = None) -> Scan:
    """Pass 1: one read of ``source`` (see :class:`Scan`); checks the time across blocks."""
    step = progress or (lambda stage, frac: None)
    n = source.n_joints
    rows = _block_rows(n, 0)
    steps = StepMedian()
    spectrum = Spectrum(n)
    q_min, q_max = np.full(n, np.inf), np.full(n, -np.inf)
    tau_min = tau_max = None
    qd_any = np.zeros(n, dtype=bool)
    count = repeated = 0
    last_t = last_q = None
    has_qd = has_qdd = False
    step_min, step_max = np.inf, -np.inf
    hint = source.n_samples_hint
    for b in source.blocks(rows):
        if b.n_samples == 0:
            continue
        if last_t is not None and not b.t[0] > last_t:
            what = "repeats" if b.t[0] == last_t else "goes backwards"
            raise InputDataError(f"{source.source}, column t: time {what} at row {count + 1} (t = {last_t:.6g} then "
                                 f"{b.t[0]:.6g})", hint="time must be strictly increasing; remove duplicate rows or "
                                                        "sort by t")
        t = b.t if last_t is None else np.concatenate([[last_t], b.t])
        d = np.diff(t)
        if d.size:
            steps.add(d)
            step_min, step_max = min(step_min, float(d.min())), max(step_max, float(d.max()))
        q = b.q if last_q is None else np.concatenate([last_q[None], b.q])
        repeated += int((~np.any(np.diff(q, axis=0), axis=1)).sum())
        q_min, q_max = np.minimum(q_min, b.q.min(axis=0)), np.maximum(q_max, b.q.max(axis=0))
        if b.tau is not None:
            lo, hi = b.tau.min(axis=0), b.tau.max(axis=0)
            tau_min = lo if tau_min is None else np.minimum(tau_min, lo)
            tau_max = hi if tau_max is None else np.maximum(tau_max, hi)
        if b.qd is not None:
            has_qd = True
            qd_any |= np.any(b.qd != 0, axis=0)
        has_qdd |= b.qdd is not None
        spectrum.add(b.q)
        count += b.n_samples
        last_t, last_q = float(b.t[-1]), b.q[-1].copy()
        step("reading", min(count / hint, 1.0) if hint else 0.0)
    dt = steps.median()
    moves = (q_max > q_min) | qd_any
    skipped = steps.skipped_cycles(dt) if dt > 0 else 0
    return Scan(count, n, dt, q_min, q_max, qd_any, tau_min, tau_max,
                spectrum.bandwidth(dt, moves) if count and dt > 0 else np.zeros(n), spectrum.exact,
                step_min, step_max, repeated, skipped, has_qd, has_qdd)


# ------------------------------------------------------------------------------------------------ gates

@dataclass
class _GateStats:
    """Running statistics of one cutoff's velocity, for its :class:`~dynid.signal.conditioning.Gate`: peaks and
    the high-passed velocities whose median spread is the noise (:class:`~dynid.signal.blocks.PickedRows`)."""

    n: int
    n_rows: int
    peak: np.ndarray = field(init=False)
    sq: np.ndarray = field(init=False)
    count: int = 0
    noise: PickedRows = field(init=False)
    stick_peak: np.ndarray = field(init=False)
    stick_noise: PickedRows = field(init=False)

    def __post_init__(self) -> None:
        self.peak, self.sq, self.stick_peak = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
        self.noise = PickedRows(self.n_rows, _noise_rows(self.n), self.n, 1)
        self.stick_noise = PickedRows(self.n_rows, _noise_rows(self.n), self.n, 3)


def _noise_rows(n_joints: int) -> int:
    """Rows of high-passed velocity whose median spread gives the noise: all of a recording the identification would
    hold in memory (``STREAM_VALUES``: the noise is then exactly the whole recording's), a random choice of that many
    beyond."""
    return max(STREAM_VALUES // max(n_joints, 1), 1000)


def _highpass(x: np.ndarray, corner: float, dt: float) -> np.ndarray | None:
    """What :func:`~dynid.signal.conditioning._noise_std` takes the spread of (None: nothing above the corner)."""
    if corner >= 0.49 / dt:
        return None
    return butterworth_filtfilt(x, corner, dt, 4, highpass=True)


def _mad(sample: PickedRows, n: int) -> np.ndarray:
    v = sample.values()
    if not v.shape[0]:
        return np.zeros(n)
    return 1.4826 * median(np.abs(v - median(v, axis=0)), axis=0)


def measure_gates(source: RecordingSource, scan: Scan, plans: dict[float, BlockPlan], copt: ConditioningOptions,
               step: Progress) -> dict[float, BlockPlan]:
    """Pass 2: every plan's gate (velocity thresholds, noise, stick threshold), as
    :func:`~dynid.signal.conditioning.gate_of` decides it from the whole recording."""
    n, dt = scan.n_joints, scan.dt
    stats = {fc: _GateStats(n, scan.n_samples) for fc in plans}
    opts = replace(copt, smooth_sign=False, sign_directions=())

    def measure(ext: Extended, fc: float) -> None:
        plan, s = plans[fc], stats[fc]
        f = filter_signals(ext.q, None, ext.qd, ext.qdd, cutoff=fc, dt=dt, options=opts)
        own = slice(ext.lo, ext.hi)
        kept = slice(max(plan.trim, ext.start) - ext.first, min(plan.n_samples - plan.trim, ext.stop) - ext.first)
        qd_k = f.qd[kept]
        if qd_k.size:
            s.peak = np.maximum(s.peak, np.abs(qd_k).max(axis=0))
            s.sq += np.einsum("ij,ij->j", qd_k, qd_k)
            s.count += qd_k.shape[0]
        hp = _highpass(f.qd, 0.5 * fc, dt)
        if hp is not None:
            s.noise.add(ext.start, hp[own])
        if f.stick_v is not None:
            v_k = f.stick_v[kept]
            if v_k.size:
                s.stick_peak = np.maximum(s.stick_peak, np.abs(v_k).max(axis=0))
            hv = _highpass(f.stick_v, 0.5 * stick_cutoff(fc, dt), dt)
            if hv is not None:
                s.stick_noise.add(ext.start, hv[own])

    margin = max(p.noise_margin for p in plans.values())
    with workers(len(plans)) as pool:
        for ext in blocks_of(source, scan, margin, step, "measuring the velocity noise"):
            list(pool.map(lambda fc: measure(ext, fc), plans))
    noise = {fc: _mad(stats[fc].noise, n) for fc in plans}
    # as _velocity_noise: where the "noise" is a sizeable share of the velocity, the motion itself is in the band
    # (a cutoff close to the motion's frequencies): measured again above twice the joint's motion bandwidth
    suspect = {fc: noise[fc] > 0.05 * np.sqrt(stats[fc].sq / max(stats[fc].count, 1)) for fc in plans}
    if any(v.any() for v in suspect.values()):
        again = _band_noise(source, scan, plans, suspect, opts, step)
        for fc in plans:
            noise[fc] = np.where(suspect[fc], again.get(fc, noise[fc]), noise[fc])
    out = {}
    for fc, plan in plans.items():
        s = stats[fc]
        stick = np.maximum(0.01 * s.stick_peak, 2.0 * _mad(s.stick_noise, n)) if copt.detect_stick else None
        out[fc] = plan.with_gate(gate_from(s.peak, noise[fc], n, plan.options, stick))
    return out


def _band_noise(source: RecordingSource, scan: Scan, plans: dict[float, BlockPlan], suspect: dict[float, np.ndarray],
                opts: ConditioningOptions, step: Progress) -> dict[float, np.ndarray]:
    """The velocity noise above ``max(cutoff/2, 2 × the joint's motion bandwidth)`` of the joints ``suspect`` of
    each cutoff (one more read; rare: a cutoff given close to the motion's frequencies)."""
    n, dt = scan.n_joints, scan.dt
    bands = {fc: np.maximum(0.5 * fc, 2.0 * scan.bandwidth) for fc in plans}
    samples = {fc: PickedRows(scan.n_samples, _noise_rows(n), n, 2) for fc in plans if suspect[fc].any()}
    margin = max(margin_rows(float(bands[fc][suspect[fc]].min()), dt) for fc in samples)
    margin = max(margin, max(plans[fc].noise_margin for fc in samples))
    for ext in blocks_of(source, scan, margin, step, "measuring the velocity noise"):
        for fc in samples:
            f = filter_signals(ext.q, None, ext.qd, ext.qdd, cutoff=fc, dt=dt, options=opts)
            hp = np.zeros_like(f.qd)
            for j in np.flatnonzero(suspect[fc]):           # the suspect joints (rare)
                if bands[fc][j] < 0.49 / dt:
                    hp[:, j] = butterworth_filtfilt(f.qd[:, j], bands[fc][j], dt, 4, highpass=True)
            samples[fc].add(ext.start, hp[ext.lo:ext.hi])
    return {fc: _mad(sample, n) for fc, sample in samples.items()}


def workers(jobs: int):
    """A pool for independent work per candidate cutoff (numpy's FFTs release the interpreter lock)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max(1, min(num_threads(), jobs)))


def blocks_of(source: RecordingSource, scan: Scan, margin: int, step: Progress, stage: str):
    """One read of ``source`` as :class:`~dynid.signal.blocks.Extended` blocks, with progress; at its end the memory
    the pass freed is given back to the system (:func:`_release`)."""
    rows = _block_rows(scan.n_joints, margin)
    for ext in extended_blocks(source.blocks(rows), rows, margin):
        step(stage, ext.stop / max(scan.n_samples, 1))
        yield ext
    _release()


def _release() -> None:
    """Give the heap's free memory back to the system (glibc's ``malloc_trim``; nothing elsewhere): a pass frees its
    blocks, but the allocator keeps their pages — the more so with worker threads, each with its own arena — and the
    next pass's peak would stand on them."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def cached(source: RecordingSource) -> RecordingSource:
    """``source`` read once and kept as binary rows for the later passes where the temporary folder has room for
    them (with a quarter of its free space to spare); a recording in memory is read as it is."""
    import shutil
    import tempfile

    if isinstance(source, (ArraySource, CachedSource)):
        return source
    try:
        free = shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        return source
    return CachedSource(source, limit_bytes=int(0.75 * free))
