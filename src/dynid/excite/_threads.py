"""Run BLAS single-threaded inside the excitation design.

The optimiser works on small matrices (a 40 x 40 Gram matrix, a few hundred rows) hundreds of times.
Multi-threaded OpenBLAS gains nothing there and, on a loaded machine, loses a lot: every call waits for
its worker threads to be scheduled (measured on a busy 2-core machine: ``eigh`` of a 40 x 40 matrix
0.2 ms with one thread, 16 ms with two). :func:`single_threaded_blas` limits BLAS to one thread for
the duration of a call and restores the previous setting: with ``threadpoolctl`` when it is installed,
otherwise through OpenBLAS's own ``set_num_threads`` found among the loaded libraries (Linux); where
neither is available it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import functools
import threading
from typing import Callable, Iterator, TypeVar

__all__ = ["single_threaded_blas", "blas_single_threaded"]

F = TypeVar("F", bound=Callable)

_LOCK = threading.Lock()
_SUFFIXES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
             ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
             ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
             ("openblas_set_num_threads", "openblas_get_num_threads"))
_cache: dict[str, tuple] = {}


def _openblas_handles() -> list:
    """``(set, get)`` function pairs of every OpenBLAS loaded in this process (Linux ``/proc/self/maps``)."""
    found = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = set()
            for line in fh:  # "address perms offset dev inode path"
                parts = line.split()
                if len(parts) >= 6 and "openblas" in parts[-1].lower() and ".so" in parts[-1]:
                    paths.add(parts[-1])
    except OSError:
        paths = set()
    for path in sorted(p for p in paths if p.startswith("/")):
        if path in _cache:
            if _cache[path]:
                found.append(_cache[path])
            continue
        _cache[path] = ()
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
        except OSError:
            continue
        for set_name, get_name in _SUFFIXES:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                setter, getter = getattr(lib, set_name), getattr(lib, get_name)
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                _cache[path] = (setter, getter)
                found.append((setter, getter))
                break
    return found


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Context manager: BLAS uses one thread inside, the previous thread count is restored after."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
        return
    with _LOCK:
        handles = _openblas_handles()
        saved = []
        for setter, getter in handles:
            try:
                saved.append((setter, int(getter())))
                setter(1)
            except Exception:  # a foreign library with another ABI: leave it alone
                continue
    try:
        yield
    finally:
        with _LOCK:
            for setter, n in saved:
                try:
                    setter(n)
                except Exception:
                    pass


def blas_single_threaded(fn: F) -> F:
    """Decorator: run ``fn`` inside :func:`single_threaded_blas`."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_threaded_blas():
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
