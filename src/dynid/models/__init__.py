"""Robot models behind one interface, and the registry that names them (spec/interfaces.md §4)."""

from __future__ import annotations

from .base import DynamicModel, Joint, Parameter, Plant
from .friction import FRICTION_TERMS, FrictionCoefficients, FrictionModel
from .registry import BUILTIN_MODELS, make_model, model_class, model_names, register_model

__all__ = [
    "DynamicModel", "FrictionModel", "FrictionCoefficients", "Joint", "Parameter", "Plant", "FRICTION_TERMS",
    "register_model", "make_model", "model_names", "model_class", "BUILTIN_MODELS",
]
