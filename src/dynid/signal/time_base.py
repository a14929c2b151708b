"""Repair of a jittery time base: repeated rows and skipped controller cycles (step 0 of the conditioning).

A controller runs on a fixed cycle ``T``; a logger that reads its state asynchronously writes some
cycles twice (a row that repeats the previous one) and misses others (a skipped cycle), and its own
time stamps jitter. Filtering and differentiating such rows as if they were equally spaced turns every
repeat into a velocity dip and every skip into a spike. This module finds the controller cycle of every
row, so the samples can be put back on the uniform cycle grid:

* **Repeated rows.** A row is a repeat of the previous one when *all* joints hold exactly the same
  position while the motion runs through it: on both sides of the run of equal rows, at least one joint
  moves in the same direction by at least ``REPEAT_FACTOR`` (10) times its typical change of step from
  one row to the next (the median non-zero ``|Δ²q|`` over the rows that are not all equal: acceleration
  times the cycle squared, or the encoder or print resolution where that is coarser; a joint whose
  step never changes — a quantised joint creeping one count at a time — needs ``REPEAT_QUANTA`` (3) times
  its smallest step). Stopping dead from that speed within a cycle would take ten
  times the accelerations of the recording, and a quantised joint moving a few counts per row has natural
  zero steps only below that speed. At either end of the recording the one neighbouring step decides. A
  joint at rest, or a robot that decelerates to rest, is never a repeat: its neighbours do not move.
* **Cycle of each row.** If the time stamps lie on a grid (every step within ``GRID_TOLERANCE`` (0.25)
  of a whole multiple of the median step ``T``), they are the controller's clock: a step of ``k·T`` is
  ``k`` cycles (``k - 1`` skipped). Otherwise the time stamps are the logger's clock and only the
  positions can tell: the position step of row ``k`` divided by the local per-cycle step (running median,
  then running mean over ``WINDOW`` (15) rows, weighting the joints by their noise) is a whole number of
  cycles. It is used where it is well determined (standard deviation below ``RATIO_STD`` (0.1): some joint
  moves well above its noise) and one cycle is assumed elsewhere (slow motion, where a skip does no harm).
  The positions must confirm the model: the well-determined ratios must sit on whole numbers (median
  distance below ``INTEGER_TOLERANCE`` (0.1)); if they spread evenly, the samples were taken at truly
  irregular instants and nothing is repaired.
* **Grid period.** From time stamps on a grid, their median step. From the positions, the logger's time
  per cycle where the positions determine the cycles: the sum of those rows' time steps over the sum of
  their cycles (the jitter averages out; the median step of a logger clock printed to 10 µs can be 1 % off,
  and a logger that runs faster than the controller has a median step shorter than the cycle).

:func:`conditioning.condition <dynid.signal.conditioning.condition>` filters and differentiates on the
grid (the repeats left out, the skipped cycles linearly interpolated) and reads the result back at every
recorded row's cycle, so the conditioned rows stay the recorded rows. A recording whose rows are already
one cycle apart (uniform time stamps, no repeats) is not touched at all.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._numeric import median

__all__ = ["TimeBase", "find_time_base", "regrid", "repeated_steps", "cycle_ratios", "REPEAT_FACTOR", "REPEAT_QUANTA",
           "GRID_TOLERANCE", "WINDOW", "RATIO_STD", "INTEGER_TOLERANCE"]

REPEAT_FACTOR = 10.0
REPEAT_QUANTA = 3.0
GRID_TOLERANCE = 0.25
WINDOW = 15
RATIO_STD = 0.1
INTEGER_TOLERANCE = 0.1
_MIN_RATIOS = 20


@dataclass(frozen=True)
class TimeBase:
    """The controller cycle of every recorded row.

    tick : (N,) int, cycle index of each row (0 for the first row, non-decreasing)
    node : (N,) bool, rows that carry their cycle's sample (False for repeated rows)
    period : float, the cycle [s]
    method : {"time stamps", "positions"}, what the cycles were read from
    """

    tick: np.ndarray
    node: np.ndarray
    period: float
    method: str

    @property
    def n_cycles(self) -> int:
        return int(self.tick[-1]) + 1

    @property
    def repaired(self) -> bool:
        """Anything to repair: a repeated row or a cycle without a row."""
        return bool((~self.node).any() or self.n_cycles > int(self.node.sum()))

    def summary(self, jitter: tuple[float, float] | None = None) -> dict:
        """Counts for reports: ``rows``, ``cycles``, ``repeated_rows``, ``skipped_cycles`` (cycles no row
        landed on), ``interpolated_cycles`` (cycles filled by interpolation: the skipped ones and those
        whose only row was a repeat), ``period_s``, ``method``, ``repaired`` and a one-line ``note``."""
        steps = np.diff(self.tick)
        rows = int(self.tick.size)
        repeated = int((~self.node).sum())
        skipped = int(np.maximum(steps - 1, 0).sum())
        interpolated = self.n_cycles - int(self.node.sum())
        out = {"repaired": self.repaired, "method": self.method, "rows": rows, "cycles": self.n_cycles,
               "repeated_rows": repeated, "skipped_cycles": skipped, "interpolated_cycles": interpolated,
               "period_s": float(self.period)}
        if self.repaired:
            plural = lambda k, word: f"{k} {word}{'s' * (k != 1)}"  # noqa: E731
            what = []
            if repeated:
                what.append(f"{plural(repeated, 'repeated row')} (equal to the previous row in every joint) left out")
            if interpolated == skipped:
                what.append(f"{plural(skipped, 'skipped cycle')} interpolated")
            elif interpolated:
                what.append(f"{plural(interpolated, 'cycle')} interpolated ({skipped} skipped, "
                            f"{interpolated - skipped} logged only by a repeated row)")
            span = (f"; the time stamps jitter ({1e3 * jitter[0]:.3g} to {1e3 * jitter[1]:.3g} ms)"
                    if jitter is not None and self.method == "positions" else "")
            out["note"] = (f"time base repaired from the {self.method}: {', '.join(what)}; {rows} rows on "
                           f"{self.n_cycles} cycles of {1e3 * self.period:.4g} ms{span}")
        return out


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and stop (exclusive) of the runs of True in a 1-D bool array."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]


def _step_change(D: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``(n,)``: a joint's typical change of step from one row to the next — the median of the non-zero
    ``|Δ²q|``: acceleration times the cycle squared, or the encoder / print resolution where that is coarser.
    Changes within floating-point rounding of the positions' magnitude ``scale`` ``(n,)`` count as zero;
    0 for a joint whose step never changes."""
    if D.shape[0] < 2:
        return np.zeros(D.shape[1])
    tiny = 64 * np.finfo(float).eps * np.maximum(scale, np.finfo(float).tiny)
    d2 = np.abs(np.diff(D, axis=0))
    d2 = np.where(d2 > tiny, d2, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # all-NaN column: a joint whose step never changes
        out = np.nanmedian(d2, axis=0)
    return np.nan_to_num(out, nan=0.0)


def repeated_steps(q: np.ndarray) -> np.ndarray:
    """``(N-1,)`` bool: step ``k`` (row ``k`` to ``k+1``) repeats row ``k`` while the motion runs through it
    (module docstring)."""
    D = np.diff(q, axis=0)
    zero = ~np.any(D, axis=1)
    out = np.zeros(D.shape[0], dtype=bool)
    if not zero.any():
        return out
    absD = np.abs(D)
    change = _step_change(D[~zero], np.abs(q).max(axis=0))
    quantum = np.where(absD > 0, absD, np.inf).min(axis=0)          # a joint whose moving step never changes
    threshold = np.where(change > 0, REPEAT_FACTOR * change, REPEAT_QUANTA * quantum)
    clear = (absD > 0) & (absD >= threshold)                         # clearly moving at this step
    a, b = _runs(zero)
    M = D.shape[0]
    # the steps on both sides of each run (a run at an end of the recording has one: it alone decides)
    before, after = np.maximum(a - 1, 0), np.minimum(b, M - 1)
    before = np.where(a > 0, before, after)
    after = np.where(b < M, after, before)
    ok = (clear[before] & clear[after] & (np.sign(D[before]) == np.sign(D[after]))).any(axis=1)
    ok &= (a > 0) | (b < M)                                          # not a recording of one constant row
    run_id = np.cumsum(np.diff(np.concatenate([[0], zero.astype(np.int8)])) == 1) - 1   # run of each step
    out[zero] = ok[run_id[zero]]
    return out


def _running_median(x: np.ndarray, window: int) -> np.ndarray:
    from scipy.ndimage import median_filter

    return median_filter(x, size=(window, 1), mode="nearest")


def _running_sum(x: np.ndarray, window: int) -> np.ndarray:
    """Sum over ``window`` rows centred on each row (fewer at the ends)."""
    n, h = x.shape[0], window // 2
    c = np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)])
    i = np.arange(n)
    return c[np.minimum(i + h + 1, n)] - c[np.maximum(i - h, 0)]


def cycle_ratios(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position steps ``D`` ``(M, n)`` (repeats left out) in cycles: the ratio to the local per-cycle step
    and its standard deviation, both ``(M,)`` (module docstring)."""
    moves = np.any(D != 0, axis=0)
    absD = np.abs(D)
    quantum = np.where(absD > 0, absD, np.inf).min(axis=0)
    floor = np.where(np.isfinite(quantum), quantum / np.sqrt(6.0), 0.0)     # quantisation noise of a step
    u = _running_median(D, WINDOW)
    w = np.where(moves, 1.0, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(3):           # ratio from the current per-cycle step, then that step from the ratios
            den = (u * u * w).sum(axis=1)
            r = np.where(den > 0, (D * u * w).sum(axis=1) / den, 1.0)
            m = np.maximum(np.rint(r), 1.0)
            u = _running_sum(D, WINDOW) / _running_sum(m[:, None], WINDOW)
            e = D - m[:, None] * u
            sigma = np.maximum(1.4826 * median(np.abs(e), axis=0), floor)
            w = np.where(moves & (sigma > 0), 1.0 / np.where(sigma > 0, sigma, 1.0) ** 2, 0.0)
        den = (u * u * w).sum(axis=1)
        r = np.where(den > 0, (D * u * w).sum(axis=1) / den, 1.0)
        std = np.where(den > 0, 1.0 / np.sqrt(den), np.inf)
    return r, std


def find_time_base(t: np.ndarray, q: np.ndarray) -> tuple[TimeBase | None, str]:
    """The controller cycle of every row of ``t`` ``(N,)``, ``q`` ``(N, n)``, or ``None`` with the reason
    when there is nothing to repair or the rows do not sit on a cycle grid (module docstring).

    Returns
    -------
    (TimeBase or None, str)
        The time base (``repaired`` True) or None, and a short reason ("uniform", ...).
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float).reshape(t.size, -1)
    N = t.size
    if N < 3:
        return None, "too short"
    dt = np.diff(t)
    T = float(median(dt))
    rep = repeated_steps(q)
    steps = dt / T
    on_grid = bool(np.all(np.abs(steps - np.rint(steps)) <= GRID_TOLERANCE) and np.all(np.rint(steps) >= 1))
    if on_grid:
        m = np.rint(steps).astype(np.int64)
        method = "time stamps"
        if not rep.any() and np.all(m == 1):
            return None, "uniform"
    else:
        method = "positions"
        idx = np.nonzero(~rep)[0]
        D = np.diff(q, axis=0)[idx]
        r, std = cycle_ratios(D)
        sure = (std < RATIO_STD) & np.any(D != 0, axis=1)     # equal rows that are not repeats: at rest
        if sure.sum() >= _MIN_RATIOS and median(np.abs(r[sure] - np.rint(r[sure]))) >= INTEGER_TOLERANCE:
            return None, "irregular sampling (the positions do not advance by whole cycles)"
        m = np.zeros(N - 1, dtype=np.int64)
        m[idx] = np.where(sure, np.maximum(np.rint(r), 1.0), 1.0).astype(np.int64)
        if not rep.any() and np.all(m == 1):
            return None, "no repeated rows or skipped cycles"
        counted = rep.copy()
        counted[idx[sure]] = True
        if m[counted].sum() > 0:     # the logger's time per cycle where the positions determine the cycles
            T = float(dt[counted].sum() / m[counted].sum())
    tick = np.concatenate([[0], np.cumsum(m)])
    node = np.concatenate([[True], ~rep])
    return TimeBase(tick=tick, node=node, period=T, method=method), ""


def regrid(tb: TimeBase, *columns: np.ndarray | None) -> list[np.ndarray | None]:
    """Each ``(N, k)`` column block on the cycle grid ``(n_cycles, k)``: the node rows at their cycles, the
    other cycles linearly interpolated (``None`` passes through)."""
    grid = np.arange(tb.n_cycles, dtype=float)
    at = tb.tick[tb.node].astype(float)
    out = []
    for x in columns:
        if x is None:
            out.append(None)
            continue
        x = np.asarray(x, dtype=float)
        xs = x[tb.node]
        out.append(np.column_stack([np.interp(grid, at, xs[:, j]) for j in range(x.shape[1])])  # per column
                   if x.shape[1] else np.empty((grid.size, 0)))
    return out
