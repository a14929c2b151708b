"""The optional compiled kernels (built by setup.py where a C compiler is available), called through ctypes."""

from __future__ import annotations

import ctypes
import importlib
import os
from typing import Any, Sequence

__all__ = ["c_function"]


def c_function(module: str, name: str, argtypes: Sequence[Any], restype: Any):
    """The C function ``name`` of the extension module ``module`` (e.g. ``dynid.io._csv_kernel``) with its
    ctypes signature, or ``None`` when the module is not built or ``DYNID_NO_KERNEL=1`` (numpy is used then;
    ctypes releases the GIL during the call)."""
    if os.environ.get("DYNID_NO_KERNEL", "") not in ("", "0"):
        return None
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return None
    fn = getattr(ctypes.CDLL(mod.__file__), name)
    fn.argtypes = list(argtypes)
    fn.restype = restype
    return fn
