"""Input checks shared by the public functions (style.md §3: one helper converts, checks, returns)."""

from __future__ import annotations

import numpy as np

from .errors import ShapeError

__all__ = ["as_joint_array", "as_vector"]


def as_joint_array(name: str, x, n_joints: int | None = None, *, n_samples: int | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array of shape ``(N, n_joints)``.

    A 1-D array is accepted for a single joint (``n_joints == 1``) and becomes ``(N, 1)``.

    Raises
    ------
    ShapeError
        If the array is not 2-D (or 1-D for one joint), has the wrong number of joints or samples.
    """
    a = np.asarray(x, dtype=float)
    if a.ndim == 1 and (n_joints in (None, 1)):
        a = a[:, None]
    if a.ndim != 2:
        raise ShapeError(f"{name} must have shape (n_samples, n_joints), got an array with shape {a.shape}")
    if n_joints is not None and a.shape[1] != n_joints:
        raise ShapeError(
            f"{name} has shape {a.shape} but the model has {n_joints} joint(s)",
            hint="pass one column per joint, in joint order",
        )
    if n_samples is not None and a.shape[0] != n_samples:
        raise ShapeError(f"{name} has {a.shape[0]} samples but {n_samples} were expected")
    return a


def as_vector(name: str, x, length: int) -> np.ndarray:
    """Return ``x`` as a float64 vector of ``length``; a scalar is broadcast."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return np.full(length, float(a))
    a = a.ravel()
    if a.size != length:
        raise ShapeError(f"{name} must have {length} value(s) (one per joint), got {a.size}")
    return a
