"""The model registry: name -> class (spec/interfaces.md §4 names)."""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import ConfigError

__all__ = ["register_model", "model_class", "model_names", "make_model"]

_REGISTRY: dict = {}


def register_model(cls):
    """Class decorator: add a :class:`~dynid.models.base.DynamicModel` subclass under ``cls.name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"model name {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def model_names() -> list[str]:
    return list(_REGISTRY)


def model_class(name: str):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}",
                          hint=f"choose one of: {', '.join(_REGISTRY)} (see 'dynid models')") from None


def make_model(name: str, config: Mapping[str, Any] | None = None, **kwargs: Any):
    """Build a registered model from its name and a configuration mapping (``kwargs``: e.g. ``urdf=``)."""
    cls = model_class(name)
    return cls(config, **kwargs) if kwargs else cls(config)
