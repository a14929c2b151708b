"""Small numeric helpers shared by the identification path."""

from __future__ import annotations

import numpy as np

__all__ = ["median"]


def median(a, axis: int | None = None):
    """``np.median(a, axis)`` for finite data, by the same partition and mean (the same values bit for bit).

    numpy's own median checks for masked arrays, which imports ``numpy.ma`` on the first call (16 ms of
    every short command line run); the recordings reaching here are validated finite.
    """
    a = np.asarray(a, dtype=float)
    if axis is None:
        a, axis = a.ravel(), 0
    n = a.shape[axis]
    if n == 0:
        return np.median(a, axis=axis)
    k = n // 2
    if n % 2:
        return np.take(np.partition(a, k, axis=axis), k, axis=axis)
    part = np.partition(a, (k - 1, k), axis=axis)
    return np.mean(np.take(part, [k - 1, k], axis=axis), axis=axis)
