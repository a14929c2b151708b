"""Small numeric helpers shared by the identification path."""

from __future__ import annotations

import numpy as np

__all__ = ["median"]


def median(a, axis: int | None = None):
    """``np.median(a, axis)`` for finite data, the same values bit for bit (the same middle values and mean).

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
    part = np.partition(a, k, axis=axis)
    upper = np.take(part, k, axis=axis)
    if n % 2:
        return upper
    # the lower middle value is the largest of the k before the k-th (one partition instead of one for each:
    # half the time)
    head = [slice(None)] * a.ndim
    head[axis] = slice(0, k)
    lower = part[tuple(head)].max(axis=axis)
    return np.mean(np.stack([lower, upper]), axis=0)
