"""Robot models behind one interface, and the registry that names them (spec/interfaces.md §4)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..errors import ConfigError
from .base import FRICTION_TERMS, DynamicModel, FrictionModel, Joint, Parameter, Plant
from .single_axis import Linear1, Linear2, Linear3, Rotary1, Rotary2, Rotary3

__all__ = [
    "DynamicModel", "FrictionModel", "Joint", "Parameter", "Plant", "FRICTION_TERMS",
    "register_model", "make_model", "model_names", "model_class",
]

_REGISTRY: dict[str, type[DynamicModel]] = {}


def register_model(cls: type[DynamicModel]) -> type[DynamicModel]:
    """Add a model class to the registry under ``cls.name`` (usable as a decorator)."""
    _REGISTRY[cls.name] = cls
    return cls


for _cls in (Rotary1, Rotary2, Rotary3, Linear1, Linear2, Linear3):
    register_model(_cls)


def model_names() -> list[str]:
    return list(_REGISTRY)


def model_class(name: str) -> type[DynamicModel]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}", hint=f"choose one of: {', '.join(_REGISTRY)} (see 'dynid models')") from None


def make_model(name: str, config: Mapping[str, Any] | None = None, **kwargs: Any) -> DynamicModel:
    """Build a registered model from its name and a configuration mapping."""
    cls = model_class(name)
    return cls(config, **kwargs) if kwargs else cls(config)
