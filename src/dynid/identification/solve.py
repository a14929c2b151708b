"""Weighted linear least squares on the stacked regressor (spec/identification.md §4).

Solved by QR with column pivoting on unit-scaled columns — never the normal equations (numpy's
LAPACK QR of the tall matrix, then a small pivoted QR of its factor). Per-joint
weights (Gautier): ``residual_std`` (default) fits once unweighted, then weights each joint's rows
by the inverse of its residual standard deviation; ``torque_std`` weights by ``1/std(tau_j)``;
``none`` is ordinary least squares. Columns the data does not excite (numerical rank, relative
tolerance ``max(shape)·eps`` on ``|R_ii|/|R_00|``) are reported and left out, never fitted to noise.

Standard deviations: ``sigma² (W^T W)^-1`` from the QR factor, inflated by the integrated
autocorrelation time of the residual. The signals are low-pass filtered, so neighbouring rows are
far from independent (about ``fs / (2·cutoff)`` samples per independent one); without the
inflation the standard deviations would be several times too small.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, IdentifiabilityError
from .rows import (QR_BLOCK, FactoredRows, TallRows, _joint_factors, autocorrelation_time,  # noqa: F401 (re-exported)
                   joint_rows, residual_correlation_time, tall_r_factor)

__all__ = ["LeastSquares", "weighted_lstsq", "lstsq_rows", "WEIGHTINGS", "autocorrelation_time", "joint_rows",
           "residual_correlation_time", "TallRows", "FactoredRows"]

WEIGHTINGS = ("residual_std", "torque_std", "none")


@dataclass(frozen=True)
class LeastSquares:
    """Result of :func:`weighted_lstsq`.

    x : (k,) estimate (0 for columns not excited) ; std : (k,) standard deviation (NaN if not excited)
    excited : (k,) bool ; rank : int ; condition_number : float (of the unweighted W, 2-norm)
    condition_number_scaled : float (unweighted, unit-norm columns: a property of the motion alone, not of
    the torque data) ; weights : (n_joints,) per-joint row weights
    sigma2 : float, weighted residual variance
    correlation_time : float, integrated autocorrelation time of the residual [samples] (std inflation²)
    cov : (k, k) covariance of ``x`` (the one uncertainty every output shows: ``std = sqrt(diag(cov))``;
    NaN rows/columns where not excited)
    scale : (k,) column norms of the regressor (unit-column coordinates ``x * scale``)
    r_factor : (rank, rank) R of the unweighted QR of the excited columns (``W[:, excited] = Q R``): the
    motion's information on the parameters, for the confounding analysis
    weighted_factor : (k+1, k+1) R factor of the weighted data rows in unit-column coordinates with the
    weighted torque as last column (``[diag(w) W diag(1/scale) | diag(w) y] = Q R``, no ridge rows): every
    least-squares problem on these rows, in any columns they span, reduces to it (the physically consistent
    continuation uses it instead of another pass over the tall matrix)
    """

    x: np.ndarray
    std: np.ndarray
    excited: np.ndarray
    rank: int
    condition_number: float
    condition_number_scaled: float
    weights: np.ndarray
    sigma2: float
    correlation_time: float = 1.0
    cov: np.ndarray | None = None
    scale: np.ndarray | None = None
    r_factor: np.ndarray | None = None
    weighted_factor: np.ndarray | None = field(default=None, repr=False)

    @property
    def correlation(self) -> np.ndarray:
        """Correlation matrix of the estimate ``(k, k)`` (NaN where not excited)."""
        cov = self.cov if self.cov is not None else np.diag(self.std**2)
        d = np.sqrt(np.diag(cov))
        with np.errstate(invalid="ignore", divide="ignore"):
            return cov / np.outer(d, d)


def qr_pivoted(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Householder QR with column pivoting (Businger & Golub) of a small matrix: ``A[:, piv] = Q R``.

    Used on the ``k x k`` factor of the tall regressor (k = number of base parameters), where a
    loop over the columns costs microseconds; ``|R_ii|`` is non-increasing, so it reveals the rank.
    """
    R = np.array(A, dtype=float)
    m, n = R.shape
    Q = np.eye(m)
    piv = np.arange(n)
    for j in range(min(m, n)):  # over columns of a small matrix
        norms = np.einsum("ij,ij->j", R[j:, j:], R[j:, j:])
        p = j + int(np.argmax(norms))
        if p != j:
            R[:, [j, p]] = R[:, [p, j]]
            piv[[j, p]] = piv[[p, j]]
        x = R[j:, j]
        nx = np.linalg.norm(x)
        if nx == 0.0:
            break
        v = x.copy()
        v[0] += np.copysign(nx, x[0]) if x[0] != 0 else nx
        v /= np.linalg.norm(v)
        R[j:, j:] -= 2.0 * np.outer(v, v @ R[j:, j:])
        Q[:, j:] -= 2.0 * np.outer(Q[:, j:] @ v, v)
    return Q, np.triu(R), piv


def _upper_solve(R: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.solve(R, b)


def _solve(F: np.ndarray, weights: np.ndarray, n_rows: int, rtol: float | None, extra: np.ndarray | None = None):
    """Least squares of the rows whose per-joint factors are ``F`` ``(n_joints, k+1, k+1)`` (unit columns,
    last column the torque), each joint's rows weighted by ``weights``, plus the rows ``extra`` ``(m, k+1)``.

    The QR of the stacked factors gives the ``R0`` and ``Q0ᵀ b`` of the tall weighted problem; the
    rank-revealing pivoted QR then runs on the small ``k x k`` factor: ``A P = Q0 Q1 R``, so the pivots and
    ``R`` are those of ``A``. Returns ``(z, R, piv, rank, R_aug)``, ``R_aug`` the ``(k+1, k+1)`` factor of the
    weighted rows and the torque.
    """
    k = F.shape[2] - 1
    stack = (F * weights[:, None, None]).reshape(-1, k + 1)
    if extra is not None:
        stack = np.vstack([stack, extra])
    R_aug = np.linalg.qr(stack, mode="r")
    if R_aug.shape[0] < k + 1:
        R_aug = np.vstack([R_aug, np.zeros((k + 1 - R_aug.shape[0], k + 1))])
    R0, qty = R_aug[:k, :k], R_aug[:k, k]
    Q1, R, piv = qr_pivoted(R0)
    d = np.abs(np.diag(R))
    tol = (max(n_rows, k) * np.finfo(float).eps if rtol is None else rtol) * (d[0] if d.size else 0.0)
    r = int((d > tol).sum())
    z = np.zeros(k)
    if r:
        z[piv[:r]] = _upper_solve(R[:r, :r], (Q1.T @ qty)[:r])
    return z, R[:r, :r], piv, r, R_aug


def weighted_lstsq(W: np.ndarray, y: np.ndarray, joint: np.ndarray, n_joints: int, *,
                   weighting: str = "residual_std", rtol: float | None = None, prior: np.ndarray | None = None,
                   prior_mask: np.ndarray | None = None, ridge: float = 0.0,
                   columns: np.ndarray | None = None) -> LeastSquares:
    """Solve ``W x ≈ y`` with per-joint row weights.

    Parameters
    ----------
    W : ndarray, shape (n_rows, k)
        Stacked regressor rows (only the gated samples); joint-major rows are read without copies
        (:func:`joint_rows`).
    y : ndarray, shape (n_rows,)
        Torques [N m or N] minus known contributions.
    joint : ndarray of int, shape (n_rows,)
        Joint index (0-based) of each row.
    n_joints : int
    weighting : {"residual_std", "torque_std", "none"}
    rtol : float, optional
        Relative rank tolerance (default ``max(shape)·eps``).
    prior, prior_mask, ridge : optional
        Regularisation toward ``prior`` ``(k,)`` on the columns ``prior_mask``: rows
        ``ridge · s_max · (z - z_prior)`` appended in unit-column coordinates (``s_max`` the largest singular
        value of the weighted, unit-column regressor).
    columns : ndarray of int, optional
        Solve on these columns of ``W`` only (``W[:, columns]`` without copying it; ``k`` is then their number).

    Raises
    ------
    IdentifiabilityError
        Fewer rows than columns, or nothing excited.
    """
    return lstsq_rows(TallRows(W, y, joint, n_joints), weighting=weighting, rtol=rtol, prior=prior,
                      prior_mask=prior_mask, ridge=ridge, columns=columns)


def lstsq_rows(rows: TallRows | FactoredRows, *, weighting: str = "residual_std", rtol: float | None = None,
               prior: np.ndarray | None = None, prior_mask: np.ndarray | None = None, ridge: float = 0.0,
               columns: np.ndarray | None = None) -> LeastSquares:
    """:func:`weighted_lstsq` of rows held as a :class:`~dynid.identification.rows.TallRows` (in memory) or a
    :class:`~dynid.identification.rows.FactoredRows` (compressed as a long recording was read)."""
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    P, n_joints = rows.n_columns, rows.n_joints
    columns = np.arange(P) if columns is None else np.asarray(columns, dtype=int)
    n_rows, k = rows.n_rows, columns.size
    if n_rows <= k:
        raise IdentifiabilityError(f"{n_rows} usable torque samples for {k} parameters",
                                   hint="record longer or move faster so more samples pass the velocity threshold")
    scale = rows.column_norms()[columns]
    scale[scale == 0] = 1.0

    def full(x: np.ndarray) -> np.ndarray:              # x on the columns -> a vector of every column
        v = np.zeros(P)
        v[columns] = x
        return v

    F = rows.joint_factors(columns, scale)
    w = np.ones(n_joints)
    z0, _, _, _, R_unweighted = _solve(F, w, n_rows, rtol)
    R_unweighted = R_unweighted[:k, :k]
    if weighting == "torque_std":
        s = rows.joint_std()
        w = 1.0 / np.where(s > 0, s, 1.0)
    elif weighting == "residual_std" and n_joints > 1:
        s = rows.joint_std(full(z0 / scale))
        pos = s[s > 0]
        floor = 1e-6 * (pos.max() if pos.size else 1.0)
        w = 1.0 / np.maximum(s, floor)
    if n_joints > 1:
        w = w / w.max()
    z, R, piv, r, factor = _solve(F, w, n_rows, rtol)
    if ridge > 0 and prior is not None and prior_mask is not None and np.any(prior_mask):
        lam = ridge * float(np.linalg.svd(R, compute_uv=False)[0])
        m = np.nonzero(prior_mask)[0]
        extra = np.zeros((m.size, k + 1))
        extra[np.arange(m.size), m] = lam              # in unit-column coordinates: lam * z_m
        extra[:, k] = lam * prior[m] * scale[m]
        z, R, piv, r, _ = _solve(F, w, n_rows + m.size, rtol, extra)
        # the residual and covariance below are those of the data rows (the prior adds information)
    if r == 0:
        raise IdentifiabilityError("the recording excites none of the model's parameters",
                                   hint="check that the joints move and the torques are not all zero")
    excited = np.zeros(k, dtype=bool)
    excited[piv[:r]] = True
    dof = max(n_rows - r, 1)
    sumsq, corr_time = rows.residual_stats(full(z / scale), w)
    sigma2 = sumsq / dof
    Rinv = _upper_solve(R, np.eye(r))
    sel = piv[:r]
    cov = np.full((k, k), np.nan)
    cov[np.ix_(sel, sel)] = corr_time * sigma2 * (Rinv @ Rinv.T) / np.outer(scale[sel], scale[sel])
    std = np.sqrt(np.diag(cov))
    # raw (unweighted, unscaled) condition number: W = Q0 R0 diag(1/scale)^-1, so the singular values of
    # W[:, S] are those of R0[:, S] * scale[S] — no further QR of the tall matrix when a solve was unweighted
    R_raw = R_unweighted[:, excited] * scale[excited]
    sv = np.linalg.svd(R_raw, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    # unit columns, unweighted: depends on the motion only (torque weights would make it depend on the data)
    sv_unit = np.linalg.svd(R_raw / scale[excited], compute_uv=False)
    cond_scaled = float(sv_unit[0] / sv_unit[-1]) if sv_unit[-1] > 0 else float("inf")
    return LeastSquares(x=z / scale, std=std, excited=excited, rank=r, condition_number=cond,
                        condition_number_scaled=cond_scaled, weights=w, sigma2=sigma2, correlation_time=corr_time,
                        cov=cov, scale=scale, r_factor=R_raw, weighted_factor=factor)
