"""What the whole conditioned recording says, gathered row block by row block: :class:`LogSummary`.

The numbers result.json reports about the recording (lengths, moving samples, fit rows, the softMC errors, the
residual RMS) and the whole-recording quantities the diagnoses judge (ranges and peaks, motion cycles, sticks,
torque and noise levels) are sums, maxima and counts over the conditioned rows. A :class:`LogSummary` collects them
from the rows as they come — all at once for a recording in memory (:meth:`LogSummary.of`), block by block for one
read in blocks — so both give the same numbers, and a recording of any length needs no more memory than a block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..metrics import RelativeErrors

__all__ = ["LogSummary", "STICK_LIST"]

STICK_LIST = 50
"""Sticks whose times are listed per joint (the first ones)."""


def _columns(x: np.ndarray) -> np.ndarray:
    """``(rows, n)`` as ``(n, rows)``, each joint's values contiguous."""
    return np.ascontiguousarray(np.asarray(x).T)


def _runs(flag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.diff(np.concatenate([[0], flag.astype(np.int8), [0]]))
    return np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]


@dataclass
class _Sticks:
    """One joint's stuck stretches: their count, samples, the first :data:`STICK_LIST` (start, end) times, and a
    stretch still open at the end of the rows so far (its start time and samples)."""

    count: int = 0
    samples: int = 0
    starts: list = field(default_factory=list)
    ends: list = field(default_factory=list)
    open_start: float | None = None
    open_samples: int = 0
    last_t: float = 0.0

    def add(self, stuck: np.ndarray, t: np.ndarray) -> None:
        if not stuck.size:
            return
        a, b = _runs(stuck)
        for s, e in zip(a, b):                          # per stretch, not per sample
            if s == 0 and self.open_start is not None:  # continues the stretch open at the last block's end
                start, n = self.open_start, self.open_samples + e
            else:
                self._close()
                start, n = float(t[s]), e - s
            if e == stuck.size:                         # still open
                self.open_start, self.open_samples = start, n
            else:
                self.open_start = None
                self._record(start, float(t[e - 1]), n)
        if not a.size:
            self._close()
        self.last_t = float(t[-1])

    def _close(self) -> None:
        if self.open_start is not None:
            self._record(self.open_start, self.last_t, self.open_samples)
            self.open_start = None

    def _record(self, start: float, end: float, n: int) -> None:
        self.count += 1
        self.samples += int(n)
        if len(self.starts) < STICK_LIST:
            self.starts.append(start)
            self.ends.append(end)

    def finish(self) -> None:
        self._close()


@dataclass
class LogSummary:
    """Sums, maxima and counts over the conditioned rows of a recording (see the module docstring).

    ``moving`` (n,) gated rows per joint; ``fit_rows`` gated rows on the fit's decimation grid; per joint over the
    gated rows — and over every row, which the diagnoses use for a joint no row of which passes the gate —
    ``te_sq``, ``tau_sq``, ``noise_sq`` (sums of the squared model error, filtered torque, and raw − filtered torque;
    ``[gated, all]`` × n); over the gated rows ``err_sum``, ``err_max`` (its row ``err_row`` and time ``err_t``) of
    ``|tcmd − tfb|`` and ``tau_ref`` = max ``|tfb|``; over every row the extents of ``q`` (filtered), ``q_raw``,
    ``|qd|``, ``|qdd|`` and ``tau_raw``; the motion ``cycles`` (half the velocity reversals beyond ± the threshold);
    the sticks and the rows near them; ``excitation_hz`` each joint's motion bandwidth where known.
    """

    n_joints: int
    raw_length: int
    start: int
    decimation: int = 1
    thresholds: np.ndarray | None = None
    data_length: int = 0
    fit_rows: int = 0
    excitation_hz: np.ndarray | None = None
    moving: np.ndarray = field(init=False)
    te_sq: np.ndarray = field(init=False)
    tau_sq: np.ndarray = field(init=False)
    noise_sq: np.ndarray = field(init=False)
    err_sum: np.ndarray = field(init=False)
    err_max: np.ndarray = field(init=False)
    err_row: np.ndarray = field(init=False)
    err_t: np.ndarray = field(init=False)
    tau_ref: np.ndarray = field(init=False)
    q_min: np.ndarray = field(init=False)
    q_max: np.ndarray = field(init=False)
    q_raw_min: np.ndarray = field(init=False)
    q_raw_max: np.ndarray = field(init=False)
    qd_peak: np.ndarray = field(init=False)
    qdd_peak: np.ndarray = field(init=False)
    tau_raw_min: np.ndarray = field(init=False)
    tau_raw_max: np.ndarray = field(init=False)
    reversals: np.ndarray = field(init=False)
    near_stuck: np.ndarray = field(init=False)
    sticks: list = field(init=False)
    _last_sign: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = self.n_joints
        zeros = lambda: np.zeros(n)  # noqa: E731
        self.moving = np.zeros(n, dtype=np.int64)
        self.te_sq, self.tau_sq, self.noise_sq = np.zeros((2, n)), np.zeros((2, n)), np.zeros((2, n))
        self.err_sum, self.err_max, self.tau_ref = zeros(), np.full(n, -np.inf), zeros()
        self.err_row, self.err_t = np.full(n, -1, dtype=np.int64), np.full(n, np.nan)
        self.q_min, self.q_max = np.full(n, np.inf), np.full(n, -np.inf)
        self.q_raw_min, self.q_raw_max = np.full(n, np.inf), np.full(n, -np.inf)
        self.tau_raw_min, self.tau_raw_max = np.full(n, np.inf), np.full(n, -np.inf)
        self.qd_peak, self.qdd_peak = zeros(), zeros()
        self.reversals = np.zeros(n, dtype=np.int64)
        self.near_stuck = np.zeros(n, dtype=np.int64)
        self.sticks = [_Sticks() for _ in range(n)]
        self._last_sign = np.zeros(n)

    # ------------------------------------------------------------------ gathering
    @classmethod
    def of(cls, cond, tcmd: np.ndarray | None, decimation: int = 1) -> "LogSummary":
        """The summary of a whole conditioned recording (and the model torque on it, when known)."""
        s = cls(cond.n_joints, cond.raw_length, cond.start, decimation, np.asarray(cond.velocity_threshold))
        s.add(cond, tcmd, 0)
        return s.finish()

    def add(self, cond, tcmd: np.ndarray | None, first: int) -> None:
        """Add the conditioned rows ``cond`` (a block whose first row is row ``first`` of the conditioned recording)
        and the model torque ``tcmd`` on them (None: the model is not known yet — the torque-error sums stay 0).

        (Per joint on contiguous columns: reductions down the rows of a few-column array run about twice slower.)"""
        rows = cond.t.shape[0]
        self.data_length += rows
        if not rows:
            return
        m = _columns(cond.moving)                        # (n, rows), as every array below
        mf = m.astype(float)
        self.moving += m.sum(axis=1)
        grid = (first + np.arange(rows)) % self.decimation == 0
        self.fit_rows += int(m[:, grid].sum())
        if cond.tau is not None:
            tau, raw = _columns(cond.tau), _columns(cond.tau_raw)
            self.tau_sq += [np.einsum("ji,ji,ji->j", tau, tau, mf), np.einsum("ji,ji->j", tau, tau)]
            noise = raw - tau
            self.noise_sq += [np.einsum("ji,ji,ji->j", noise, noise, mf), np.einsum("ji,ji->j", noise, noise)]
            self.tau_ref = np.maximum(self.tau_ref, (np.abs(tau) * mf).max(axis=1))
            self.tau_raw_min = np.minimum(self.tau_raw_min, raw.min(axis=1))
            self.tau_raw_max = np.maximum(self.tau_raw_max, raw.max(axis=1))
            if tcmd is not None:
                self._add_errors(_columns(tcmd) - tau, m, mf, cond.t, first)
        for name, lo, hi in (("q", "q_min", "q_max"), ("q_raw", "q_raw_min", "q_raw_max")):
            x = _columns(getattr(cond, name))
            setattr(self, lo, np.minimum(getattr(self, lo), x.min(axis=1)))
            setattr(self, hi, np.maximum(getattr(self, hi), x.max(axis=1)))
        qd = _columns(cond.qd)
        self.qd_peak = np.maximum(self.qd_peak, np.abs(qd).max(axis=1))
        self.qdd_peak = np.maximum(self.qdd_peak, np.abs(_columns(cond.qdd)).max(axis=1))
        self._count_reversals(qd)
        if cond.stuck is not None:
            stuck = _columns(cond.stuck)
            for j in range(self.n_joints):               # per joint; the stretches, not the samples
                self.sticks[j].add(stuck[j], cond.t)
        if cond.near_stuck is not None:
            self.near_stuck += cond.near_stuck.sum(axis=0)

    def _add_errors(self, te: np.ndarray, m: np.ndarray, mf: np.ndarray, t: np.ndarray, first: int) -> None:
        """The model error ``te`` ``(n, rows)`` of gated rows ``m``: its sums and its largest (row and time)."""
        self.te_sq += [np.einsum("ji,ji,ji->j", te, te, mf), np.einsum("ji,ji->j", te, te)]
        err = np.abs(te)
        self.err_sum += np.einsum("ji,ji->j", err, mf)
        err[~m] = -np.inf
        k = np.argmax(err, axis=1)
        best = err[np.arange(self.n_joints), k]
        better = best > self.err_max
        self.err_max = np.where(better, best, self.err_max)
        self.err_row = np.where(better, first + k, self.err_row)
        self.err_t = np.where(better, t[k], self.err_t)

    def _count_reversals(self, qd: np.ndarray) -> None:
        """Velocity reversals beyond ± the threshold (a sign change of the velocity's non-zero thresholded sign),
        carried from block to block."""
        thr = (self.thresholds if self.thresholds is not None else np.zeros(self.n_joints))[:, None]
        s = (qd > thr).astype(np.int8) - (qd < -thr).astype(np.int8)      # (n, rows)
        for j in range(self.n_joints):                   # per joint
            nz = s[j][s[j] != 0]
            if not nz.size:
                continue
            self.reversals[j] += np.count_nonzero(np.diff(nz)) + (self._last_sign[j] * nz[0] < 0)
            self._last_sign[j] = nz[-1]

    def finish(self) -> "LogSummary":
        """Close what is still open (a stick running to the last row); returns the summary."""
        for s in self.sticks:
            s.finish()
        return self

    # ------------------------------------------------------------------ reading
    @property
    def cycles(self) -> np.ndarray:
        """Motion cycles per joint: half the velocity reversals beyond ± the threshold."""
        return self.reversals / 2.0

    @property
    def q_raw_span(self) -> np.ndarray:
        return self.q_raw_max - self.q_raw_min

    def _gated_or_all(self, sums: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A sum over the gated rows, or over every row for a joint no row of which passes the gate; its count."""
        gated = self.moving > 0
        return np.where(gated, sums[0], sums[1]), np.where(gated, self.moving, self.data_length)

    def rms(self, which: str, *, gated: bool = False) -> np.ndarray:
        """RMS per joint of ``"te"`` (model error), ``"tau"`` (filtered torque) or ``"noise"`` (raw − filtered)
        over the gated rows — every row for a joint that never passes the gate, or 0 there with ``gated``."""
        sums = getattr(self, f"{which}_sq")
        if gated:
            return np.sqrt(sums[0] / np.maximum(self.moving, 1))
        total, count = self._gated_or_all(sums)
        return np.sqrt(total / np.maximum(count, 1))

    @property
    def residual_rms(self) -> np.ndarray:
        """RMS of the model error over each joint's gated rows (result.json ``metrics.residual_rms``)."""
        return np.sqrt(self.te_sq[0] / np.maximum(self.moving, 1))

    def errors(self, allowed: float) -> RelativeErrors:
        """softMC's max and mean relative torque error per axis (:func:`dynid.metrics.relative_errors`)."""
        ok = (self.moving > 0) & (self.tau_ref > 0)
        ref = np.where(ok, self.tau_ref, 1.0)
        mx = np.where(ok, self.err_max / ref, np.inf)
        mean = np.where(ok, self.err_sum / np.maximum(self.moving, 1) / ref, np.inf)
        return RelativeErrors(mx, mean, allowed, bool(np.all(mx < allowed)))
