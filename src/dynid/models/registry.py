"""The model registry: name -> class (spec/interfaces.md §4 names).

Each model module registers its classes with :func:`register_model`. Modules are imported on first
use of one of their models (``make_model("serial")`` loads only the serial model), so a command that
needs one model does not pay for all; :func:`model_names` loads every module.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, Mapping

from ..errors import ConfigError

__all__ = ["register_model", "model_class", "model_names", "make_model", "BUILTIN_MODELS"]

BUILTIN_MODELS: dict[str, str] = {
    "rotary1": "single_axis", "rotary2": "single_axis", "rotary3": "single_axis",
    "linear1": "single_axis", "linear2": "single_axis", "linear3": "single_axis",
    "traverse": "traverse", "scara3": "scara", "scara4": "scara", "delta3": "delta", "delta4": "delta",
    "puma": "puma", "puma-gravity": "puma", "galileo": "galileo", "serial": "serial", "6upru": "hexapod",
}
"""Model name -> module of ``dynid.models`` that defines it, in the order ``dynid models`` lists them."""

_REGISTRY: dict = {}


def register_model(cls):
    """Class decorator: add a :class:`~dynid.models.base.DynamicModel` subclass under ``cls.name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"model name {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load(module: str) -> None:
    full = f"{__package__}.{module}"
    if importlib.util.find_spec(full) is not None:
        importlib.import_module(full)


def model_names() -> list[str]:
    for module in dict.fromkeys(BUILTIN_MODELS.values()):
        _load(module)
    order = {name: i for i, name in enumerate(BUILTIN_MODELS)}
    return sorted(_REGISTRY, key=lambda n: (order.get(n, len(order)), n))


def model_class(name: str):
    if name not in _REGISTRY and name in BUILTIN_MODELS:
        _load(BUILTIN_MODELS[name])
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown model {name!r}",
                          hint=f"choose one of: {', '.join(model_names())} (see 'dynid models')") from None


def make_model(name: str, config: Mapping[str, Any] | None = None, **kwargs: Any):
    """Build a registered model from its name and a configuration mapping (``kwargs``: e.g. ``urdf=``)."""
    cls = model_class(name)
    return cls(config, **kwargs) if kwargs else cls(config)
