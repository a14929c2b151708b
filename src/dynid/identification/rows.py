"""The rows of a least-squares problem ``W x ≈ y`` with per-joint weights, as the solvers read them.

The solvers (:mod:`.solve`, :mod:`.consistent`) never touch the rows themselves: they ask for what they need —
the column norms, each joint's R factor of ``[W_j | y_j]``, residual statistics at a parameter vector. Two
containers answer:

- :class:`TallRows`: the stacked rows in memory (a recording that fits in memory: every answer is computed from
  the rows, exactly as the solvers always did);
- :class:`FactoredRows`: the rows of a recording of any length compressed block by block as they are built — per
  joint the R factor of ``[W_j | y_j]`` (TSQR: each block's rows stacked under the factor so far and factored
  again), the row count and the column sums — in memory that depends on the number of parameters, not on the
  recording. ``‖W_j x − y_j‖² = ‖R_j [x; −1]‖²`` gives every residual norm; the residual's correlation time (the
  inflation of the parameters' variance, a property of consecutive rows) comes from a few stretches of consecutive
  rows kept aside (:meth:`FactoredRows.keep_stretch`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..signal.conditioning import fft_length

__all__ = ["TallRows", "FactoredRows", "tall_r_factor", "joint_rows", "autocorrelation_time",
           "residual_correlation_time", "QR_BLOCK"]

QR_BLOCK = 1024
"""Rows per block of :func:`tall_r_factor` (blocks this size stay in cache: measured about 2 x faster than
one LAPACK QR of a 6 000 x 60 matrix)."""


def tall_r_factor(A: np.ndarray) -> np.ndarray:
    """The R factor ``(min(n, k), k)`` of a tall matrix ``A`` ``(n, k)`` (``A = Q R``), by blocks (TSQR): the R
    factors of blocks of ``QR_BLOCK`` rows (one batched LAPACK call), stacked with the remaining rows, factored
    once more. The same R as one QR of ``A`` up to the signs of its rows and round-off (``RᵀR = AᵀA``)."""
    n, k = A.shape
    nb = n // QR_BLOCK
    if nb < 2 or QR_BLOCK <= k:
        return np.linalg.qr(A, mode="r")
    head = np.linalg.qr(A[: nb * QR_BLOCK].reshape(nb, QR_BLOCK, k), mode="r")     # (nb, k, k)
    return np.linalg.qr(np.concatenate([head.reshape(-1, k), A[nb * QR_BLOCK:]]), mode="r")


def autocorrelation_time(x: np.ndarray, c: float = 5.0) -> float:
    """Integrated autocorrelation time ``1 + 2 Σ ρ_k`` of a series [samples], Sokal's automatic window.

    The sum stops at the first lag ``k >= c·τ(k)``; returns 1 for white noise.
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 8:
        return 1.0
    x = x - x.mean()
    m = fft_length(2 * n)                   # zero padding beyond 2n - 1: no wrap-around, at a length FFTs do fast
    f = np.fft.rfft(x, m)
    acf = np.fft.irfft(f * np.conj(f), m)[:n]
    if acf[0] <= 0:
        return 1.0
    rho = acf / acf[0]
    tau = 2.0 * np.cumsum(rho) - 1.0
    k = np.arange(n)
    stop = np.nonzero(k >= c * tau)[0]
    t = float(tau[stop[0]]) if stop.size else float(tau[-1])
    return max(1.0, t)


def residual_correlation_time(res: np.ndarray, joint: np.ndarray, n_joints: int,
                              rows_of: list | None = None) -> float:
    """The integrated autocorrelation time of a stacked residual [rows]: each joint's (its rows in order), averaged
    weighted by the joints' row counts — the inflation of the parameters' variance (``rows_of``: :func:`joint_rows`
    where known)."""
    rows_of = joint_rows(joint, n_joints) if rows_of is None else rows_of
    counts = np.bincount(joint, minlength=n_joints)
    taus = np.array([autocorrelation_time(res[rows]) if counts[j] else 1.0 for j, rows in enumerate(rows_of)])
    return float(np.sum(taus * counts) / max(counts.sum(), 1))


def joint_rows(joint: np.ndarray, n_joints: int) -> list[slice | np.ndarray]:
    """Each joint's rows of a stacked regression: slices where the rows are joint-major (each joint's rows
    together, as :func:`~dynid.identification.regression.build_regression` stacks them: no copies), else masks."""
    if joint.size < 2 or np.all(joint[1:] >= joint[:-1]):
        edges = np.searchsorted(joint, np.arange(n_joints + 1))
        return [slice(int(edges[j]), int(edges[j + 1])) for j in range(n_joints)]
    return [joint == j for j in range(n_joints)]


def _joint_factors(W: np.ndarray, y: np.ndarray, rows_of: list, columns: np.ndarray,
                   col_scale: np.ndarray) -> np.ndarray:
    """Per joint, the R factor ``(k+1, k+1)`` of its rows ``[W_j[:, columns] diag(1/col_scale) | y_j]`` (zero rows
    where a joint has fewer rows than that, and where its rows have a zero column): every per-joint weighting of
    the least squares is then a QR of the stacked, weighted factors — one pass over the tall matrix for all the
    solves, one joint's rows at a time."""
    k = columns.size
    F = np.zeros((len(rows_of), k + 1, k + 1))
    for j, rows in enumerate(rows_of):  # per joint (a handful), not per sample
        Wj = W[rows]
        if Wj.shape[0] == 0:
            continue
        # only the columns this joint's rows touch (a serial arm's joint j: the links from j on, its own friction):
        # the factor of those, with zero rows and columns where the others are, is a factor of all of them
        cols = np.append(np.flatnonzero(np.any(Wj != 0, axis=0)[columns]), k)
        Ab = np.empty((Wj.shape[0], cols.size))
        np.divide(Wj[:, columns[cols[:-1]]], col_scale[None, cols[:-1]], out=Ab[:, :-1])
        Ab[:, -1] = y[rows]
        R = tall_r_factor(Ab)
        F[j][np.ix_(cols[: R.shape[0]], cols)] = R
    return F


class TallRows:
    """The stacked rows in memory: ``W`` ``(n_rows, P)``, ``y`` ``(n_rows,)``, ``joint`` ``(n_rows,)`` (0-based,
    joint-major rows are read without copies)."""

    def __init__(self, W: np.ndarray, y: np.ndarray, joint: np.ndarray, n_joints: int) -> None:
        self.W, self.y, self.joint, self.n_joints = W, y, joint, n_joints
        self.rows_of = joint_rows(joint, n_joints)

    @property
    def n_rows(self) -> int:
        return int(self.W.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.W.shape[1])

    def column_norms(self) -> np.ndarray:
        """``(P,)`` the 2-norm of every column."""
        return np.sqrt(np.einsum("ij,ij->j", self.W, self.W))

    def joint_factors(self, columns: np.ndarray, col_scale: np.ndarray) -> np.ndarray:
        """``(n_joints, k+1, k+1)``: per joint the R factor of ``[W_j[:, columns] / col_scale | y_j]``."""
        return _joint_factors(self.W, self.y, self.rows_of, columns, col_scale)

    def residual(self, x: np.ndarray) -> np.ndarray:
        """``y − W x`` ``(n_rows,)`` for a full parameter vector ``x`` ``(P,)``."""
        return self.y - self.W @ x

    def joint_std(self, x: np.ndarray | None = None) -> np.ndarray:
        """``(n_joints,)`` per joint the standard deviation (mean removed) of ``y − W x`` (of ``y`` when ``x`` is
        None)."""
        v = self.y if x is None else self.residual(x)
        joint, n = self.joint, self.n_joints
        cnt = np.bincount(joint, minlength=n).astype(float)
        mean = np.bincount(joint, v, minlength=n) / np.maximum(cnt, 1)
        var = np.bincount(joint, (v - mean[joint]) ** 2, minlength=n) / np.maximum(cnt - 1, 1)
        return np.sqrt(var)

    def residual_stats(self, x: np.ndarray, weights: np.ndarray, *, correlation: bool = True) -> tuple[float, float]:
        """``(sum of squares, correlation time)`` of the weighted residual ``(y − W x)·w_joint`` (the correlation
        time NaN unless ``correlation``)."""
        res = self.residual(x) * weights[self.joint]
        if not correlation:
            return float(res @ res), float("nan")
        return float(res @ res), residual_correlation_time(res, self.joint, self.n_joints, self.rows_of)


@dataclass
class _Stretch:
    """Consecutive rows of one joint kept aside for the residual's correlation time."""

    joint: int
    W: np.ndarray
    y: np.ndarray


class FactoredRows:
    """The rows of a recording of any length, compressed as they come (see the module docstring).

    Per joint: the R factor of ``[W_j[:, cols_j] | y_j]`` on the columns its rows touch so far (a serial arm's
    joint j: the links from j on and its own friction; the others are zero in its rows), the torque last; the row
    count; the column sums of ``[W_j | y_j]``. The residual's correlation time comes from stretches of consecutive
    rows kept aside (:meth:`keep_stretch`), or from :attr:`residual_series` where set.
    """

    def __init__(self, n_joints: int, n_columns: int) -> None:
        self.n_joints, self.n_columns = n_joints, n_columns
        self.cols: list[np.ndarray] = [np.zeros(0, dtype=int) for _ in range(n_joints)]
        self.factor: list[np.ndarray] = [np.zeros((1, 1)) for _ in range(n_joints)]   # (m, len(cols)+1)
        self.count = np.zeros(n_joints, dtype=np.int64)
        self.col_sum = np.zeros((n_joints, n_columns + 1))
        self.stretches: list[_Stretch] = []
        self.residual_series = None
        """Where set: ``residual_series(x)`` gives ``(joint, y_j − W_j x)`` series of consecutive rows (instead of the
        kept stretches), e.g. rebuilt from the conditioned recording."""

    @property
    def n_rows(self) -> int:
        return int(self.count.sum())

    def add(self, W: np.ndarray, y: np.ndarray, joint: np.ndarray) -> None:
        """Add rows ``W`` ``(m, P)``, ``y`` ``(m,)`` of joints ``joint`` ``(m,)``: each joint's factor is that of its
        rows so far and these."""
        for j, rows in enumerate(joint_rows(joint, self.n_joints)):     # per joint (a handful), not per sample
            Wj = W[rows]
            if Wj.shape[0] == 0:
                continue
            touched = np.flatnonzero(np.any(Wj != 0, axis=0))
            cols = np.union1d(self.cols[j], touched)
            old = self.factor[j]
            if cols.size != self.cols[j].size:           # new columns: the factor so far is zero in them
                grown = np.zeros((old.shape[0], cols.size + 1))
                grown[:, np.searchsorted(cols, self.cols[j])] = old[:, :-1]
                grown[:, -1] = old[:, -1]
                self.cols[j], old = cols, grown
            A = np.concatenate([old, np.column_stack([Wj[:, cols], y[rows]])])
            self.factor[j] = tall_r_factor(A)
            self.count[j] += Wj.shape[0]
            self.col_sum[j, :-1] += Wj.sum(axis=0)
            self.col_sum[j, -1] += y[rows].sum()

    def keep_stretch(self, W: np.ndarray, y: np.ndarray, joint: np.ndarray) -> None:
        """Keep consecutive rows (in time order, any joints) for the residual's correlation time."""
        for j, rows in enumerate(joint_rows(joint, self.n_joints)):
            if np.size(y[rows]):
                self.stretches.append(_Stretch(j, np.array(W[rows]), np.array(y[rows])))

    def column_norms(self) -> np.ndarray:
        out = np.zeros(self.n_columns)
        for j in range(self.n_joints):
            F = self.factor[j]
            out[self.cols[j]] += np.einsum("ik,ik->k", F[:, :-1], F[:, :-1])
        return np.sqrt(out)

    def joint_factors(self, columns: np.ndarray, col_scale: np.ndarray) -> np.ndarray:
        k = columns.size
        F = np.zeros((self.n_joints, k + 1, k + 1))
        for j in range(self.n_joints):
            if not self.count[j]:
                continue
            inside = np.isin(columns, self.cols[j])
            at = np.searchsorted(self.cols[j], columns[inside])
            A = np.zeros((self.factor[j].shape[0], k + 1))
            A[:, np.flatnonzero(inside)] = self.factor[j][:, at] / col_scale[inside]
            A[:, -1] = self.factor[j][:, -1]
            R = np.linalg.qr(A, mode="r")
            F[j][: R.shape[0]] = R
        return F

    def _norms2(self, x: np.ndarray) -> np.ndarray:
        """``(n_joints,)`` per joint ``‖W_j x − y_j‖²``."""
        out = np.zeros(self.n_joints)
        for j in range(self.n_joints):
            r = self.factor[j] @ np.append(x[self.cols[j]], -1.0)
            out[j] = r @ r
        return out

    def joint_std(self, x: np.ndarray | None = None) -> np.ndarray:
        cnt = self.count.astype(float)
        if x is None:
            ss = np.array([F[:, -1] @ F[:, -1] for F in self.factor])
            total = self.col_sum[:, -1]
        else:
            ss = self._norms2(x)
            total = self.col_sum[:, -1] - self.col_sum[:, :-1] @ x
        mean = total / np.maximum(cnt, 1)
        var = np.maximum(ss - cnt * mean**2, 0.0) / np.maximum(cnt - 1, 1)
        return np.sqrt(var)

    def residual_stats(self, x: np.ndarray, weights: np.ndarray, *, correlation: bool = True) -> tuple[float, float]:
        ss = float(np.sum(weights**2 * self._norms2(x)))
        if not correlation:
            return ss, float("nan")
        taus, counts = [], []
        series = (self.residual_series(x) if self.residual_series is not None else
                  ((st.joint, st.y - st.W @ x) for st in self.stretches))
        for joint, res in series:
            taus.append(autocorrelation_time(res * weights[joint]))
            counts.append(res.size)
        corr = float(np.dot(taus, counts) / max(sum(counts), 1)) if taus else 1.0
        return ss, corr
