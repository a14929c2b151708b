"""Robot models behind one interface, and the registry that names them (spec/interfaces.md §4)."""

from __future__ import annotations

import importlib
import importlib.util

from .base import FRICTION_TERMS, DynamicModel, FrictionModel, Joint, Parameter, Plant
from .registry import make_model, model_class, model_names, register_model

__all__ = [
    "DynamicModel", "FrictionModel", "Joint", "Parameter", "Plant", "FRICTION_TERMS",
    "register_model", "make_model", "model_names", "model_class", "BUILTIN_MODULES",
]

# Model modules of the package, in the order ``dynid models`` lists them. Each registers its classes
# with ``@register_model``; a module that is not part of this build is simply absent.
BUILTIN_MODULES = ("single_axis", "traverse", "scara", "delta", "puma", "galileo", "serial", "parallel")

for _name in BUILTIN_MODULES:
    if importlib.util.find_spec(f"{__name__}.{_name}") is not None:
        importlib.import_module(f"{__name__}.{_name}")


