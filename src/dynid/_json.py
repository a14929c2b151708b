"""Plain JSON data from dynid's values (arrays, numpy scalars, NaN), for every file and ``--json`` output, and
the layout of the JSON files people read as well as programs (:func:`dumps`)."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np

__all__ = ["jsonable", "dumps"]


def jsonable(x: Any) -> Any:
    """Plain JSON data: arrays to lists, NaN/inf to null, numpy scalars to Python."""
    t = type(x)
    if t is float:                          # (the common leaves first: result.json has thousands)
        return x if math.isfinite(x) else None
    if t is str or t is int or t is bool or x is None:
        return x
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


def dumps(data: Any, indent: int = 2) -> str:
    """JSON text of plain JSON ``data`` (:func:`jsonable`'s): objects, and lists holding objects or lists, one item
    per line, indented by ``indent``; a list of numbers or strings on one line (a matrix: a row per line) — where
    ``json.dumps(data, indent=2)`` gives every number a line of its own. The same data when parsed. The lines of
    scalars are encoded by ``json``'s compiled encoder (the indented one is pure Python: ~10 x slower on a
    result.json with a correlation matrix)."""

    def encode(x: Any, level: int) -> str:
        if isinstance(x, dict) and x:
            pad = "\n" + " " * (indent * (level + 1))
            items = ",".join(f"{pad}{json.dumps(str(k))}: {encode(v, level + 1)}" for k, v in x.items())
            return "{" + items + "\n" + " " * (indent * level) + "}"
        if isinstance(x, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in x):
            pad = "\n" + " " * (indent * (level + 1))
            return "[" + ",".join(pad + encode(v, level + 1) for v in x) + "\n" + " " * (indent * level) + "]"
        return json.dumps(x)

    return encode(data, 0)
