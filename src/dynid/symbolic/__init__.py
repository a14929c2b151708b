"""Symbolic derivation (Lagrange and Newton–Euler) and code generation for controllers.

Needs SymPy (the optional extra ``symbolic``: ``pip install 'dynid[symbolic]'``); importing this package
without it raises :class:`~dynid.errors.MissingExtraError` saying so.

>>> from dynid.models import make_model
>>> from dynid.symbolic import derive
>>> arm = make_model("serial", {"dh": [{"a": 1.0}, {"a": 1.0}], "links": [{"mass": 2.0, "com": [0, 0, 0]},
...                                                                       {"mass": 4.0, "com": [0, 0, 0]}]})
>>> derive(arm, numeric=True).mass_matrix[1]
[4*cos(q2) + 4, 4]
"""

from __future__ import annotations

import importlib.util

from ..errors import MissingExtraError

if importlib.util.find_spec("sympy") is None:  # pragma: no cover - exercised with the package hidden
    raise MissingExtraError("symbolic derivation and code generation", "symbolic", "sympy")

from .codegen import LANGUAGES, GeneratedCode, GeneratedDynamics, generate_code  # noqa: E402
from .derive import METHODS, Derivation, derive  # noqa: E402

__all__ = ["derive", "Derivation", "METHODS", "generate_code", "GeneratedCode", "GeneratedDynamics", "LANGUAGES"]
