"""Run BLAS single-threaded inside the excitation design.

The optimiser works on small matrices (a 40 x 40 Gram matrix, a few hundred rows) hundreds of times.
Multi-threaded OpenBLAS gains nothing there and, on a loaded machine, loses a lot: every call waits
for its worker threads to be scheduled (measured on a busy 2-core machine: ``eigh`` of a 40 x 40
matrix 0.2 ms with one thread, 16 ms with two). threadpoolctl limits BLAS to one thread for the
duration of a call and restores the previous setting.
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

from threadpoolctl import threadpool_limits

__all__ = ["blas_single_threaded"]

F = TypeVar("F", bound=Callable)


def blas_single_threaded(fn: F) -> F:
    """Decorator: run ``fn`` with BLAS limited to one thread."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
