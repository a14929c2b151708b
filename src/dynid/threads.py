"""How many threads dynid's numerics use, set for a scope rather than for the process.

The compiled regressor kernel splits the samples over threads (``dynid.models._rnea``); BLAS
(OpenBLAS, MKL) has its own pool. Both follow :func:`limit_threads`, a context manager whose
setting holds for the current thread / asyncio task only (a :class:`contextvars.ContextVar`), so
two identifications in one process — a Dask worker's threads, a test and a benchmark — do not
change each other's settings. Outside any ``limit_threads`` block the environment variable
``DYNID_NUM_THREADS`` is the default, else the cores this process may run on.

>>> with limit_threads(1):
...     num_threads()
1
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterator, TypeVar

__all__ = ["num_threads", "limit_threads", "blas_single_threaded", "in_background"]

F = TypeVar("F", bound=Callable)

_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("dynid_threads", default=None)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def num_threads() -> int:
    """Threads dynid may use here: the innermost :func:`limit_threads`, else ``DYNID_NUM_THREADS``, else the
    cores available to the process."""
    limit = _LIMIT.get()
    if limit is not None:
        return limit
    env = os.environ.get("DYNID_NUM_THREADS")
    return max(1, int(env)) if env else _cores()


@contextlib.contextmanager
def limit_threads(n: int | None) -> Iterator[None]:
    """Use at most ``n`` threads (kernel and BLAS) inside the block; ``None`` changes nothing."""
    if n is None:
        yield
        return
    n = int(n)
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    from threadpoolctl import threadpool_limits

    token = _LIMIT.set(n)
    try:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
    finally:
        _LIMIT.reset(token)


def blas_single_threaded(fn: F) -> F:
    """Decorator: run ``fn`` with BLAS limited to one thread.

    The excitation optimiser works on small matrices (a 40 x 40 Gram matrix, a few hundred rows)
    hundreds of times. Multi-threaded OpenBLAS gains nothing there and, on a loaded machine, loses a
    lot: every call waits for its worker threads to be scheduled (measured on a busy 2-core machine:
    ``eigh`` of a 40 x 40 matrix 0.2 ms with one thread, 16 ms with two).
    """
    from threadpoolctl import threadpool_limits

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


def in_background(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run ``fn(*args, **kwargs)`` on a new thread, in the caller's :func:`limit_threads` setting; its
    :class:`~concurrent.futures.Future` (the thread ends with the job; the interpreter's exit waits for it)."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(contextvars.copy_context().run, fn, *args, **kwargs)
    finally:
        pool.shutdown(wait=False)
