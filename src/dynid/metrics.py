"""Error metrics and the softMC success rule (spec/identification.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RelativeErrors", "relative_errors", "nrmse", "relative_error_norm"]


@dataclass(frozen=True)
class RelativeErrors:
    """softMC's per-axis errors over the gated samples.

    max_relative : (n_joints,) max_k |tcmd - tfb| / max_k |tfb|   (fractions, not %)
    mean_relative : (n_joints,) mean_k |tcmd - tfb| / max_k |tfb|
    allowed : float  (0.5 = softMC's 50 %)
    success : bool   every axis below ``allowed``
    """

    max_relative: np.ndarray
    mean_relative: np.ndarray
    allowed: float
    success: bool


def relative_errors(tcmd: np.ndarray, tfb: np.ndarray, mask: np.ndarray, allowed: float = 0.5) -> RelativeErrors:
    """softMC's max and mean relative torque error per axis.

    Parameters
    ----------
    tcmd : ndarray, shape (N, n_joints)
        Model torque [N m or N].
    tfb : ndarray, shape (N, n_joints)
        Measured (filtered) torque.
    mask : ndarray of bool, shape (N, n_joints)
        Gated samples per joint.
    allowed : float
        Success threshold on the max relative error (fraction).

    Examples
    --------
    The seed's example: Tfb = 80, Taddcmd = 100, max Tfb = 160 gives 20 / 160 = 12.5 %.

    >>> e = relative_errors(np.array([[100.], [160.]]), np.array([[80.], [160.]]), np.ones((2, 1), bool))
    >>> float(e.max_relative[0])
    0.125
    """
    err = np.abs(tcmd - tfb)
    n = tcmd.shape[1]
    mx = np.zeros(n)
    mean = np.zeros(n)
    for j in range(n):  # per joint, vectorised over samples
        m = mask[:, j]
        ref = np.abs(tfb[m, j]).max() if m.any() else 0.0
        if ref <= 0:
            mx[j] = mean[j] = np.inf
            continue
        mx[j] = err[m, j].max() / ref
        mean[j] = err[m, j].mean() / ref
    return RelativeErrors(mx, mean, allowed, bool(np.all(mx < allowed)))


def nrmse(pred: np.ndarray, meas: np.ndarray, *, norm: str = "rms") -> np.ndarray:
    """Normalised RMS error per joint: RMSE / RMS(meas) (``norm="rms"``), / std, or / range."""
    pred = np.asarray(pred, dtype=float)
    meas = np.asarray(meas, dtype=float)
    rmse = np.sqrt(np.mean((pred - meas) ** 2, axis=0))
    if norm == "rms":
        d = np.sqrt(np.mean(meas**2, axis=0))
    elif norm == "std":
        d = meas.std(axis=0)
    elif norm == "range":
        d = np.ptp(meas, axis=0)
    else:
        raise ValueError(f"norm must be 'rms', 'std' or 'range', got {norm!r}")
    return rmse / np.where(d > 0, d, np.nan)


def relative_error_norm(pred: np.ndarray, meas: np.ndarray) -> float:
    """``||meas - pred|| / ||meas||`` over all joints and samples (Gaz et al.'s relative error)."""
    return float(np.linalg.norm(np.asarray(meas) - np.asarray(pred)) / np.linalg.norm(meas))
