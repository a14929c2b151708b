"""Identification: build the regression, solve it, choose among models, and produce the fitted model.

Public names (the modules hold the rest)::

    from dynid.identification import Identifier, identify, IdentifyOptions, Identification, ParameterStatus, ESTIMATORS
"""

from __future__ import annotations

from .identifier import Identifier
from .pipeline import ESTIMATORS, Identification, IdentifyOptions, ParameterStatus, identify

__all__ = ["Identifier", "identify", "IdentifyOptions", "Identification", "ParameterStatus", "ESTIMATORS"]
