"""Identification: build the regression, solve it, choose among models, and produce the fitted model.

Public names (the modules hold the rest)::

    from dynid.identification import identify, IdentifyOptions, Identification, ParameterStatus, ESTIMATORS
"""

from __future__ import annotations

from .pipeline import ESTIMATORS, Identification, IdentifyOptions, ParameterStatus, identify

__all__ = ["identify", "IdentifyOptions", "Identification", "ParameterStatus", "ESTIMATORS"]
