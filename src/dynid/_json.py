"""Plain JSON data from dynid's values (arrays, numpy scalars, NaN), for every file and ``--json`` output."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

__all__ = ["jsonable"]


def jsonable(x: Any) -> Any:
    """Plain JSON data: arrays to lists, NaN/inf to null, numpy scalars to Python."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x
