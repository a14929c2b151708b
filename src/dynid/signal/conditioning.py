"""Signal conditioning before the fit (spec/identification.md §3).

0. Time base (:mod:`dynid.signal.time_base`, option ``repair_time_base``, on by default). A logger that
   reads the controller asynchronously repeats some cycles (a row equal to the previous one in *all*
   joints while the motion runs through it) and skips others; its time stamps jitter. The controller
   cycle of every row is found — from the time stamps when they lie on a grid of whole sample periods,
   else from the positions (each step is a whole number of the local per-cycle step) — and steps 1–3 run
   on that uniform cycle grid, the repeats left out and the skipped cycles linearly interpolated (1 ms
   of motion: far below any cutoff). The results are read back at each recorded row's cycle, so the
   conditioned rows remain the recorded rows (a repeated row gets its cycle's values) and predictions
   are scored on them. Rows already one cycle apart (uniform time stamps, no repeats) are left exactly
   as they are; a joint or a robot at rest is never a repeat. ``Conditioned.time_base`` counts what was
   repaired and carries a ``note`` for reports.
1. Sample period = median time step, or the cycle of step 0's grid (time-stamp jitter is logging
   jitter: the samples are treated as equally spaced, which matched measured velocities better on
   real data than differentiating against the jittery stamps).
2. Zero-phase Butterworth low-pass on positions and torques alike, so neither is delayed against the
   other: the magnitude of a forward-backward order-4 Butterworth, ``1 / (1 + (f/fc)^8)`` (-6 dB at the
   cutoff), applied in the frequency domain after an odd-symmetric extension of both ends (as
   ``filtfilt`` pads) — vectorised FFTs, no recursion over samples.
3. Velocity and acceleration by central differences of the filtered position
   (``(q[k+1] - q[k-1]) / 2Ts`` and ``(q[k+1] - 2 q[k] + q[k-1]) / Ts²``), unless measured ``dq``/``ddq``
   are given, which are then filtered the same way.
4. Edge trimming: two cutoff periods plus the derivative stencil at each end (the filter's edge
   transient; a record usually ends mid-motion).
5. Per-axis velocity gating: a sample of joint j is used when ``|qd_j| > threshold_j``.
6. Stick detection: a friction-dominated joint can stick at a reversal (velocity exactly zero while
   the torque sweeps through the static friction), which no ``Fc·sign(qd)`` model describes and which
   the filter smears into neighbouring samples. A reversal is a stick when the joint stays below the
   threshold much longer (``STICK_FACTOR`` = 3 times) than its deceleration implies
   (``2·threshold/|qdd|``), judged on a velocity filtered at 4 times the cutoff; samples within one
   filter length (``1/cutoff``) of a stick are not used.

Default cutoff ("derived from the data"): ``cutoff_factor`` (20) times the motion bandwidth, the
frequency below which 99 % of the detrended position power lies (largest over the joints), within
``[min_cutoff_hz, min(0.99·max_cutoff_hz, 0.4·fs)]`` (softMC's rule: below 125 Hz). Default velocity threshold per joint:
``max(threshold_fraction · max|qd_j|, threshold_noise_factor · noise_std(qd_j))`` with the fraction
1 % and the factor 2; the noise is the robust (MAD) spread of the velocity above half the cutoff.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .._numeric import median
from .._validation import as_vector
from ..errors import ConfigError, InputDataError
from ..recording import Recording
from ..units import velocity_unit
from .time_base import TimeBase, find_time_base, regrid

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["ConditioningOptions", "Conditioned", "condition", "motion_bandwidth", "default_cutoff", "default_trim",
           "lowpass", "butterworth_filtfilt", "fft_length", "Filtered", "filter_signals", "Gate", "gate_of", "gate_from",
           "gate_rows", "stick_velocity", "stick_threshold", "stick_cutoff", "check_recording", "StickCarry"]


STICK_FACTOR = 3.0


@dataclass(frozen=True)
class ConditioningOptions:
    """Options of :func:`condition`. ``None`` means "derive from the data" (documented rule above).

    cutoff_hz : float, optional
        Low-pass cutoff [Hz] applied to positions and torques (softMC ``IdentFilterFreq``).
    filter_order : int
        Butterworth order of each pass (forward and backward).
    cutoff_factor : float
        Default cutoff = this × motion bandwidth.
    min_cutoff_hz, max_cutoff_hz : float
        Bounds of the default cutoff (softMC: below 125 Hz).
    velocity_threshold : float or sequence, optional
        Per-joint gating threshold [rad/s or m/s].
    threshold_fraction, threshold_noise_factor : float
        Default threshold rule.
    upper_velocity_threshold : float or sequence, optional
        Also drop samples faster than this (semi-static models).
    upper_velocity_fraction : float, optional
        Default upper threshold as a fraction of each axis' peak velocity (a semi-static model sets it).
    trim : int, optional
        Samples dropped at each end (cycles of step 0's grid when it repaired the time base); default
        ``ceil(2 / (cutoff·Ts)) + 2``.
    use_recorded_derivatives : bool
        Use ``dq``/``ddq`` columns when present.
    smooth_sign : bool
        Low-pass ``sign(qd)`` with the same filter for the Coulomb columns, so the friction step is
        smoothed exactly like the filtered torque ("parallel filtering").
    torque_delay_s : float
        The torque lags the kinematics by this much [s]; it is shifted back (linear interpolation)
        before filtering. ``dynid identify --align`` estimates it.
    detect_stick : bool
        Leave out the samples around reversals where a joint sticks (step 6 above).
    repair_time_base : bool
        Step 0: put rows that repeat a controller cycle or skip cycles back on the uniform cycle grid
        before filtering (:mod:`dynid.signal.time_base`); ``False`` treats the rows as equally spaced, as
        recorded. A recording already one cycle per row is untouched either way.
    sign_directions : tuple of tuple of float
        Extra velocity directions ``u`` (each ``n_joints`` long) whose ``sign(u·qd)`` is computed, and
        smoothed when ``smooth_sign``, like the joints' own: the coupled motors of a transmission
        (``plant.friction.sign_directions``), so their Coulomb columns are filtered like the torque.
        Their columns follow the joints' in :attr:`Conditioned.sign`.
    """

    cutoff_hz: float | None = None
    filter_order: int = 4
    cutoff_factor: float = 20.0
    min_cutoff_hz: float = 0.5
    max_cutoff_hz: float = 125.0
    velocity_threshold: float | Sequence[float] | None = None
    threshold_fraction: float = 0.01
    threshold_noise_factor: float = 2.0
    upper_velocity_threshold: float | Sequence[float] | None = None
    upper_velocity_fraction: float | None = None
    trim: int | None = None
    use_recorded_derivatives: bool = True
    smooth_sign: bool = True
    torque_delay_s: float = 0.0
    detect_stick: bool = True
    sign_directions: tuple[tuple[float, ...], ...] = ()
    repair_time_base: bool = True

    def __post_init__(self) -> None:
        if self.cutoff_hz is not None and not (math.isfinite(self.cutoff_hz) and self.cutoff_hz > 0):
            raise ConfigError(f"cutoff must be a positive frequency in Hz, got {self.cutoff_hz!r}")
        if self.filter_order < 1:
            raise ConfigError(f"filter_order must be >= 1, got {self.filter_order}")
        if self.trim is not None and self.trim < 0:
            raise ConfigError(f"trim must be >= 0 samples, got {self.trim}")
        if not math.isfinite(self.torque_delay_s):
            raise ConfigError(f"the torque delay must be a finite time in seconds, got {self.torque_delay_s!r}",
                              options=("torque_delay",))


@dataclass(frozen=True)
class Conditioned:
    """Signals ready for the fit, trimmed: ``N = data_length`` samples, SI units.

    t : (N,) ; q, qd, qdd, tau : (N, n_joints) filtered ; q_raw, tau_raw : (N, n_joints) as recorded
    sign : (N, n_joints + n_directions) sign of qd as used by the Coulomb columns (smoothed when ``smooth_sign``),
        then ``sign(u·qd)`` of the options' ``sign_directions`` (coupled motors)
    moving : (N, n_joints) bool, the gated samples ; velocity_threshold : (n_joints,) ; velocity_noise :
    (n_joints,) robust spread of qd above half the cutoff
    stuck : (N, n_joints) bool, samples inside a detected stick (reversal where the joint stuck)
    near_stuck : (N, n_joints) bool, samples within one filter length of a stick (not used by the fit)
    time_base : dict, what step 0 repaired: ``repaired`` (bool), ``method`` ("time stamps", "positions" or
        None), ``rows``, ``cycles``, ``repeated_rows``, ``skipped_cycles``, ``interpolated_cycles``,
        ``period_s``, and ``note`` (one line for reports) when repaired or ``reason`` when not.
        The rows stay the recorded rows (``t``, ``q_raw``, ``tau_raw`` as recorded); ``q``, ``qd``, ``qdd``,
        ``tau`` are the grid's values at each row's cycle, and ``sample_period_s`` is the cycle.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None
    q_raw: np.ndarray
    tau_raw: np.ndarray | None
    sign: np.ndarray
    moving: np.ndarray
    velocity_threshold: np.ndarray
    upper_velocity_threshold: np.ndarray | None
    cutoff_hz: float
    sample_period_s: float
    raw_length: int
    start: int
    options: ConditioningOptions = field(repr=False, default_factory=ConditioningOptions)
    stuck: np.ndarray | None = field(repr=False, default=None)
    near_stuck: np.ndarray | None = field(repr=False, default=None)
    time_base: dict = field(repr=False, default_factory=dict)
    velocity_noise: np.ndarray | None = field(repr=False, default=None)

    @property
    def data_length(self) -> int:
        return int(self.t.shape[0])

    @property
    def moving_samples(self) -> np.ndarray:
        return self.moving.sum(axis=0)

    @property
    def n_joints(self) -> int:
        return int(self.q.shape[1])


def _detrend(x: np.ndarray) -> np.ndarray:
    """Remove the least-squares straight line from each column."""
    n = x.shape[0]
    A = np.column_stack([np.ones(n), np.linspace(-1.0, 1.0, n)])
    coef, *_ = np.linalg.lstsq(A, x, rcond=None)
    return x - A @ coef


def motion_bandwidth(q: np.ndarray, dt: float, fraction: float = 0.99) -> float:
    """Frequency [Hz] below which ``fraction`` of the detrended position power lies (max over joints).

    Joints that do not move are ignored; returns 0 when nothing moves.
    """
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    x = _detrend(q) * np.hanning(n)[:, None]
    P = np.abs(np.fft.rfft(x, axis=0)) ** 2
    P[0] = 0.0
    f = np.fft.rfftfreq(n, dt)
    total = P.sum(axis=0)
    best = 0.0
    for j in range(q.shape[1]):  # per joint, not per sample
        if total[j] <= 0 or np.ptp(q[:, j]) == 0:
            continue
        c = np.cumsum(P[:, j]) / total[j]
        best = max(best, float(f[np.searchsorted(c, fraction)]))
    return best


MAX_CUTOFF_SHARE = 0.99
"""The default and the automatic cutoffs stay below ``MAX_CUTOFF_SHARE × max_cutoff_hz`` (softMC: below 125 Hz)."""


def default_cutoff(q: np.ndarray, dt: float, options: ConditioningOptions = ConditioningOptions()) -> float:
    """The documented default cutoff [Hz] for positions ``q`` sampled every ``dt`` seconds."""
    fs = 1.0 / dt
    hi = min(MAX_CUTOFF_SHARE * options.max_cutoff_hz, 0.4 * fs)   # softMC's rule: below 125 Hz
    bw = motion_bandwidth(q, dt)
    return float(np.clip(options.cutoff_factor * bw, min(options.min_cutoff_hz, hi), hi))


def butterworth_filtfilt(x: np.ndarray, cutoff_hz: float, dt: float, order: int = 4, *,
                         highpass: bool = False) -> np.ndarray:
    """Zero-phase Butterworth filter along axis 0 with the magnitude of a forward-backward pass.

    ``|H(f)|² = 1 / (1 + (f/fc)^(2·order))`` (low-pass) or ``1 − that`` (high-pass), applied to the FFT
    of the signal extended at both ends by its odd reflection (``3/fc`` long, like ``filtfilt``'s
    padding) with the end-to-end ramp removed, so the circular transform does not wrap.

    Parameters
    ----------
    x : ndarray, shape (N,) or (N, n_columns)
    cutoff_hz : float
    dt : float
        Sample period [s].
    order : int
        Butterworth order of one pass.

    Returns
    -------
    ndarray, same shape as ``x``
    """
    x = np.asarray(x, dtype=float)
    squeeze = x.ndim == 1
    if squeeze:
        x = x[:, None]
    n = x.shape[0]
    pad = int(min(n - 1, max(3 * (2 * order + 1), math.ceil(3.0 / (cutoff_hz * dt)))))
    m = n + 2 * pad
    nfft = fft_length(m + pad)
    # the extended signal minus its end-to-end ramp, built in place in the zero-padded transform buffer, one row per
    # column (each transform then runs over contiguous memory: a fifth faster than down the columns; the same
    # numbers); few full-size temporaries: each costs its page faults
    xT = x.T
    xe = np.zeros((x.shape[1], nfft))
    np.subtract(2.0 * xT[:, :1], xT[:, pad:0:-1], out=xe[:, :pad])
    xe[:, pad:pad + n] = xT
    np.subtract(2.0 * xT[:, -1:], xT[:, -2:-pad - 2:-1], out=xe[:, pad + n:m])
    x0 = xe[:, :1].copy()
    slope = xe[:, m - 1:m] - x0
    t = np.linspace(0.0, 1.0, m)
    body = xe[:, :m]
    body -= x0
    body -= slope * t
    f = np.fft.rfftfreq(nfft, dt)
    H = 1.0 / (1.0 + (f / cutoff_hz) ** (2 * order))
    if highpass:
        H = 1.0 - H
    X = np.fft.rfft(xe, axis=1)
    X *= H
    y = np.fft.irfft(X, nfft, axis=1)[:, pad:pad + n]
    if not highpass:
        y += x0
        y += slope * t[pad:pad + n]
    return y[0].copy() if squeeze else np.ascontiguousarray(y.T)


def fft_length(n: int) -> int:
    """The smallest ``2^a 3^b 5^c >= n``: a length numpy's FFT transforms fast (about 20 % faster than the next
    power of two on a recording's columns; measured)."""
    best = 1 << max(n - 1, 0).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def lowpass(x: np.ndarray, cutoff_hz: float, dt: float, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass along axis 0 (see :func:`butterworth_filtfilt`)."""
    return butterworth_filtfilt(x, cutoff_hz, dt, order)


def default_trim(cutoff_hz: float, dt: float) -> int:
    """Samples dropped at each end: two cutoff periods plus the 3-point derivative stencil."""
    return int(math.ceil(2.0 / (cutoff_hz * dt) - 1e-6)) + 2


def _shift(x: np.ndarray, samples: float) -> np.ndarray:
    """``y[k] = x[k + samples]`` along axis 0, linear interpolation inside, linear extrapolation outside."""
    n = x.shape[0]
    pos = np.arange(n) + samples
    k = np.clip(np.floor(pos).astype(int), 0, n - 2)
    frac = (pos - k)[:, None]
    return x[k] + frac * (x[k + 1] - x[k])


def _central_first(x: np.ndarray, dt: float) -> np.ndarray:
    d = np.empty_like(x)
    d[1:-1] = (x[2:] - x[:-2]) / (2.0 * dt)
    d[0] = (x[1] - x[0]) / dt
    d[-1] = (x[-1] - x[-2]) / dt
    return d


def _central_second(x: np.ndarray, dt: float) -> np.ndarray:
    d = np.empty_like(x)
    d[1:-1] = (x[2:] - 2.0 * x[1:-1] + x[:-2]) / dt**2
    d[0] = d[1]
    d[-1] = d[-2]
    return d


def _stick_velocity(q_raw: np.ndarray, cutoff: float, dt: float, order: int, keep: slice):
    """What :func:`_stick` needs of the positions alone: the velocity filtered at 4x the cutoff over the kept
    samples, and its threshold per joint (independent of the rest of the conditioning)."""
    v = stick_velocity(q_raw, cutoff, dt, order)
    return v[keep], stick_threshold(v, keep, cutoff, dt)


def stick_velocity(q_raw: np.ndarray, cutoff: float, dt: float, order: int) -> np.ndarray:
    """The velocity the stick detection judges (every row of ``q_raw``): the positions filtered at 4x the cutoff
    (below 0.4 fs), central differences."""
    hi = stick_cutoff(cutoff, dt)
    return _central_first(lowpass(q_raw, hi, dt, order), dt)


def stick_cutoff(cutoff: float, dt: float) -> float:
    """The cutoff of :func:`stick_velocity` [Hz]."""
    return min(4.0 * cutoff, 0.4 / dt)


def stick_threshold(v: np.ndarray, keep: slice, cutoff: float, dt: float) -> np.ndarray:
    """Per joint, the stick velocity ``v`` (all rows) below which a joint is slow: 1 % of its peak over the kept
    rows, at least twice its noise."""
    noise = _noise_std(v, stick_cutoff(cutoff, dt), dt)
    return np.maximum(0.01 * np.abs(v[keep]).max(axis=0), 2.0 * noise)


@dataclass
class StickCarry:
    """A slow stretch running past the rows one block of a long recording showed, per joint (``start``: the
    recording's row it began on, -1 for none; ``acc``: its peak ``|qdd|`` so far), for the next block
    (:func:`_stick` ``carry``): a joint standing still for longer than a block's margins is judged on its whole
    stretch, as on the whole recording."""

    start: np.ndarray
    acc: np.ndarray

    @classmethod
    def empty(cls, n_joints: int) -> "StickCarry":
        return cls(np.full(n_joints, -1, dtype=np.int64), np.zeros(n_joints))


def _stick(velocity: tuple[np.ndarray, np.ndarray], qdd: np.ndarray, keep: slice, cutoff: float, dt: float,
           carry: StickCarry | None = None, first: int = 0):
    """Stuck samples and the samples near them (within ``1/cutoff``), both ``(N_kept, n_joints)``, from the
    :func:`_stick_velocity` ``velocity`` and the acceleration ``qdd`` (all samples; ``keep`` the kept ones).
    ``carry``: the slow stretch the previous block of a long recording left open (updated for the next one);
    ``first``: the recording's row of the first kept sample."""
    v, thr = velocity
    n_keep = v.shape[0]
    stuck = np.zeros((n_keep, v.shape[1]), dtype=bool)
    near = np.zeros_like(stuck)
    reach = int(math.ceil(1.0 / (cutoff * dt)))
    acc_kept = np.abs(qdd[keep])
    for j in range(v.shape[1]):  # per joint; the loop below runs over the stuck stretches, not samples
        slow = np.abs(v[:, j]) < thr[j]
        d = np.diff(np.concatenate([[0], slow.astype(np.int8), [0]]))
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
        if not starts.size:
            if carry is not None:
                carry.start[j] = -1
            continue
        # every slow stretch's peak acceleration at once: maxima over [start, end) of the disjoint, ordered stretches
        bounds = np.stack([starts, ends], axis=1).ravel()
        acc = np.maximum.reduceat(acc_kept[:, j], bounds[:-1] if bounds[-1] == n_keep else bounds)[::2]
        length = ends - starts
        if carry is not None:
            begun = first + starts                         # the recording's rows the stretches began on
            if starts[0] == 0 and 0 <= carry.start[j] < first:      # continues the one the last block left open
                begun[0] = carry.start[j]
                length[0] += first - carry.start[j]
                acc[0] = max(acc[0], carry.acc[j])
            open_ = ends[-1] == n_keep
            carry.start[j], carry.acc[j] = (begun[-1], acc[-1]) if open_ else (-1, 0.0)
        expected = np.full(acc.shape, np.inf)
        np.divide(2.0 * thr[j], acc, out=expected, where=acc > 0)
        long = length * dt > STICK_FACTOR * expected + 2 * dt
        for a, b in zip(starts[long], ends[long]):
            stuck[a:b, j] = True
            near[max(0, a - reach):b + reach, j] = True
    return stuck, near


def _noise_std(v: np.ndarray, cutoff_hz: float, dt: float) -> np.ndarray:
    """Robust spread of ``v`` above half the cutoff (where motion has no power), per column."""
    lo = 0.5 * cutoff_hz
    if lo >= 0.49 / dt:
        return np.zeros(v.shape[1])
    hp = butterworth_filtfilt(v, lo, dt, 4, highpass=True)
    mad = median(np.abs(hp - median(hp, axis=0)), axis=0)
    return 1.4826 * mad


NOISE_SUSPECT = 0.05
"""A joint's velocity "noise" above this share of its velocity RMS is its motion, not noise (see
:func:`_velocity_noise`)."""


def _velocity_noise(qd: np.ndarray, q: np.ndarray, cutoff: float, dt: float, qd_kept: np.ndarray) -> np.ndarray:
    """Per joint, the noise of the velocity ``qd`` (:func:`_noise_std` above half the cutoff).

    That band holds no motion when the cutoff is well above the motion's frequencies (the default is 20 x its
    bandwidth). A cutoff given close to them (below about 2 x the highest) lets the motion itself into the band,
    and the "noise" — hence the velocity threshold, twice it — came out as large as the velocity: no sample
    passed and the run failed as if the joint did not move. Where the estimate exceeds ``NOISE_SUSPECT`` of the
    joint's velocity RMS, the band starts above twice the joint's motion bandwidth instead."""
    noise = _noise_std(qd, cutoff, dt)
    rms = np.sqrt(np.mean(qd_kept**2, axis=0))
    for j in np.flatnonzero(noise > NOISE_SUSPECT * rms):     # (rare: a low cutoff given)
        band = max(0.5 * cutoff, 2.0 * motion_bandwidth(q[:, [j]], dt))
        noise[j] = _noise_std(qd[:, [j]], 2.0 * band, dt)[0]
    return noise


@dataclass(frozen=True)
class Filtered:
    """The filtered signals of some consecutive rows (one row out per row in, nothing trimmed), SI units.

    q, qd, qdd : (M, n_joints) ; tau : (M, n_joints) or None ; sign : (M, n_joints + n_directions) the Coulomb
    columns' sign (smoothed when ``smooth_sign``) ; stick_v : (M, n_joints) the stick detection's velocity
    (:func:`stick_velocity`), None when the options do not detect sticks
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None
    sign: np.ndarray
    stick_v: np.ndarray | None


def filter_signals(q_in: np.ndarray, tau: np.ndarray | None, qd_in: np.ndarray | None, qdd_in: np.ndarray | None, *,
                   cutoff: float, dt: float, options: ConditioningOptions, pool: Executor | None = None) -> Filtered:
    """Steps 2–3 (and step 6's velocity) on rows on the uniform grid: zero-phase low-pass of positions and torques,
    derivatives (or the measured ones filtered), the Coulomb columns' sign. ``pool``: an idle worker for the torque's
    filter and the stick velocity meanwhile (the same numbers)."""
    order = options.filter_order
    n = q_in.shape[1]

    def torque_and_stick():                 # what needs neither the filtered positions nor the velocity
        return (lowpass(tau, cutoff, dt, order) if tau is not None else None,
                stick_velocity(q_in, cutoff, dt, order) if options.detect_stick else None)

    aside = pool.submit(torque_and_stick) if pool is not None else None     # (on an idle worker meanwhile)
    q_f = lowpass(q_in, cutoff, dt, order)
    if options.use_recorded_derivatives and qd_in is not None:
        qd = lowpass(qd_in, cutoff, dt, order)
        qdd = lowpass(qdd_in, cutoff, dt, order) if qdd_in is not None else _central_first(qd, dt)
    else:
        qd = _central_first(q_f, dt)
        qdd = _central_second(q_f, dt)
    sgn = np.sign(qd)
    if options.sign_directions:
        U = np.array(options.sign_directions, dtype=float).reshape(-1, n)
        sgn = np.concatenate([sgn, np.sign(qd @ U.T)], axis=1)
    if options.smooth_sign:
        sgn = lowpass(sgn, cutoff, dt, order)
    tau_f, v = aside.result() if aside is not None else torque_and_stick()
    return Filtered(q_f, qd, qdd, tau_f, sgn, v)


@dataclass(frozen=True)
class Gate:
    """What step 5 (and 6) decide from the whole recording, per joint: the velocity ``threshold`` and ``upper``
    threshold (None: none), the velocity ``noise`` behind the default threshold, and the stick detection's
    threshold on :func:`stick_velocity` (None when sticks are not detected)."""

    threshold: np.ndarray
    upper: np.ndarray | None
    noise: np.ndarray
    stick_threshold: np.ndarray | None


def gate_of(f: Filtered, keep: slice, q_in: np.ndarray, cutoff: float, dt: float, options: ConditioningOptions) -> Gate:
    """The :class:`Gate` of a whole recording's filtered signals ``f`` (``keep``: the rows left after trimming,
    ``q_in`` the positions on the grid)."""
    n = f.qd.shape[1]
    qd_k = f.qd[keep]
    noise = _velocity_noise(f.qd, q_in, cutoff, dt, qd_k)
    peak = np.abs(qd_k).max(axis=0)
    stick = stick_threshold(f.stick_v, keep, cutoff, dt) if f.stick_v is not None else None
    return gate_from(peak, noise, n, options, stick)


def gate_from(peak: np.ndarray, noise: np.ndarray, n: int, options: ConditioningOptions,
              stick: np.ndarray | None = None) -> Gate:
    """The :class:`Gate` of per-joint peak velocity ``peak`` and velocity ``noise`` (the options' thresholds where
    given, else the documented rule)."""
    if options.velocity_threshold is not None:
        thr = as_vector("velocity_threshold", options.velocity_threshold, n)
    else:
        thr = np.maximum(options.threshold_fraction * peak, options.threshold_noise_factor * noise)
    upper = None
    if options.upper_velocity_threshold is not None:
        upper = as_vector("upper_velocity_threshold", options.upper_velocity_threshold, n)
    elif options.upper_velocity_fraction is not None:
        upper = np.maximum(options.upper_velocity_fraction * peak, 2 * thr)
    return Gate(np.asarray(thr, dtype=float), upper, np.asarray(noise, dtype=float), stick)


def gate_rows(f: Filtered, keep: slice, gate: Gate, cutoff: float, dt: float, options: ConditioningOptions,
              carry: StickCarry | None = None, first: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 5–6 on the rows ``keep`` of ``f``: ``(moving, stuck, near)``, each ``(rows, n_joints)`` bool
    (``carry``, ``first``: a block of a long recording, :func:`_stick`)."""
    qd_k = f.qd[keep]
    moving = np.abs(qd_k) > gate.threshold
    if gate.upper is not None:
        moving &= np.abs(qd_k) < gate.upper
    stuck = near = np.zeros_like(moving)
    if options.detect_stick and f.stick_v is not None:
        stuck, near = _stick((f.stick_v[keep], gate.stick_threshold), f.qdd, keep, cutoff, dt, carry, first)
        moving &= ~near
    return moving, stuck, near


def check_recording(dt: float, q_moves: np.ndarray, qd_moves: np.ndarray | None, source: str) -> None:
    """What no conditioning repairs: a sample period that cannot be found or is slower than 20 Hz (time in
    milliseconds, say), a joint that never moves (``q_moves`` per joint: its position changes; ``qd_moves``: its
    recorded velocity is not all 0, None when not recorded).

    Raises
    ------
    InputDataError
    """
    if not (dt > 0 and math.isfinite(dt)):
        raise InputDataError(f"{source}, column t: cannot determine the sample period")
    if dt > 0.05:
        raise InputDataError(
            f"{source}, column t: median sample period is {dt:.4g} s (slower than 20 Hz)"
            + (": t looks like milliseconds" if 0.5 <= dt <= 20 else ""),
            hint="t must be in seconds; if it is in milliseconds divide it by 1000")
    for j in range(len(q_moves)):
        if not q_moves[j] and (qd_moves is None or not qd_moves[j]):
            raise InputDataError(f"{source}, column q{j + 1}: joint {j + 1} never moves (constant position)",
                                 hint="every joint of the model must move during the identification run")


def _time_base(rec: Recording, options: ConditioningOptions) -> tuple[TimeBase | None, dict]:
    """Step 0: the recording's cycle grid (None when nothing is repaired) and its summary."""
    N = rec.n_samples
    if not options.repair_time_base:
        tb, reason = None, "switched off (repair_time_base=False)"
    else:
        tb, reason = find_time_base(rec.t, rec.q)
    if tb is None:
        return None, {"repaired": False, "method": None, "rows": N, "cycles": N, "repeated_rows": 0,
                      "skipped_cycles": 0, "interpolated_cycles": 0, "period_s": rec.sample_period, "reason": reason}
    dt = np.diff(rec.t)
    return tb, tb.summary((float(dt.min()), float(dt.max())))


def condition(rec: Recording, options: ConditioningOptions = ConditioningOptions(),
              joint_kinds: Sequence[str] | None = None, *, require_motion: bool = True,
              pool: Executor | None = None) -> Conditioned:
    """Repair the time base, filter, differentiate, trim and gate a recording.

    Parameters
    ----------
    rec : Recording
        SI units.
    options : ConditioningOptions
    joint_kinds : sequence of {"rotary", "linear"}, optional
        Only used to word messages (rad/s vs m/s).
    require_motion : bool
        Raise when a joint has too few samples above its velocity threshold (identification).
    pool : Executor, optional
        An idle worker: the torque's filter and the stick detection's velocity (half the work) run there
        meanwhile; the result is the same.

    Returns
    -------
    Conditioned
        One row per recorded row (minus the trimmed ends), whatever the time-base repair did.

    Raises
    ------
    InputDataError
        Too few samples for the filter and trimming, or a joint that never moves.
    """
    n = rec.n_joints
    kinds = list(joint_kinds) if joint_kinds is not None else ["rotary"] * n
    dt = rec.sample_period
    check_recording(dt, np.ptp(rec.q, axis=0) > 0, None if rec.qd is None else np.any(rec.qd != 0, axis=0),
                    rec.source)
    tb, time_base = _time_base(rec, options)
    if tb is None:
        q_in, tau, qd_in, qdd_in = rec.q, rec.tau, rec.qd, rec.qdd
    else:                                   # the cycle grid: repeats left out, skipped cycles interpolated
        q_in, tau, qd_in, qdd_in = regrid(tb, rec.q, rec.tau, rec.qd, rec.qdd)
        dt = tb.period
    cutoff = options.cutoff_hz if options.cutoff_hz is not None else default_cutoff(q_in, dt, options)
    if cutoff >= 0.5 / dt:
        raise ConfigError(f"cutoff {cutoff:g} Hz is not below the Nyquist frequency {0.5 / dt:g} Hz of the recording",
                          hint="choose a lower cutoff", options=("cutoff",))
    trim = options.trim if options.trim is not None else default_trim(cutoff, dt)
    trim += int(math.ceil(abs(options.torque_delay_s) / dt - 1e-6))  # shifted-in samples have no data
    N = q_in.shape[0]
    if N - 2 * trim < 20:
        raise InputDataError(
            f"{rec.source}: {N} samples leave only {max(N - 2 * trim, 0)} after trimming {trim} at each end "
            f"for the {cutoff:.3g} Hz filter", hint="record longer or raise the cutoff", options=("cutoff",))
    keep = slice(trim, N - trim)
    if tau is not None and options.torque_delay_s:
        tau = _shift(tau, options.torque_delay_s / dt)
    f = filter_signals(q_in, tau, qd_in, qdd_in, cutoff=cutoff, dt=dt, options=options, pool=pool)
    if tb is None:
        rows, at = keep, slice(None)
    else:                                   # the recorded rows whose cycle is kept, and that cycle
        r0, r1 = (int(i) for i in np.searchsorted(tb.tick, [trim, N - trim]))
        rows, at = slice(r0, r1), tb.tick[r0:r1] - trim
    gate = gate_of(f, keep, q_in, cutoff, dt, options)
    moving, stuck, near = gate_rows(f, keep, gate, cutoff, dt, options)
    moving, stuck, near = moving[at], stuck[at], near[at]
    thr, upper, noise = gate.threshold, gate.upper, gate.noise
    q_f, qd, qdd, tau_f, sgn = f.q, f.qd, f.qdd, f.tau, f.sign
    qd_k = qd[keep]
    if require_motion:
        min_moving = 20
        for j in range(n):
            if moving[:, j].sum() < min_moving:
                unit = velocity_unit(kinds[j])
                raise InputDataError(
                    f"{rec.source}, column q{j + 1}: joint {j + 1} has only {int(moving[:, j].sum())} of "
                    f"{moving.shape[0]} samples above the velocity threshold {thr[j]:.4g} {unit}",
                    hint="the joint barely moves: excite it (move faster / wider) or lower the velocity threshold")
    if tau is None:
        tau_raw = None
    elif tb is None or options.torque_delay_s:
        tau_raw = tau[keep][at]
    else:
        tau_raw = rec.tau[rows]
    return Conditioned(
        t=rec.t[rows], q=q_f[keep][at], qd=qd_k[at], qdd=qdd[keep][at],
        tau=None if tau_f is None else tau_f[keep][at],
        q_raw=rec.q[rows], tau_raw=tau_raw,
        sign=sgn[keep][at], moving=moving, velocity_threshold=np.asarray(thr, dtype=float),
        velocity_noise=np.asarray(noise, dtype=float),
        upper_velocity_threshold=upper, cutoff_hz=float(cutoff), sample_period_s=float(dt),
        raw_length=rec.n_samples, start=rows.start, options=options, stuck=stuck, near_stuck=near,
        time_base=time_base)
