"""dynid — robot inverse dynamic models: model, identify, validate, deploy.

Public API (explicit re-exports, loaded on first use so ``import dynid`` stays cheap)::

    from dynid import read_recording, make_model, Plant, identify, IdentifyOptions
    rec = read_recording("run.csv", n_joints=1)
    plant = Plant(make_model("rotary3"))
    result = identify(rec, plant)
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Recording": "recording",
    "read_recording": "io.readers", "write_recording_csv": "io.readers",
    "ConditioningOptions": "signal.conditioning", "Conditioned": "signal.conditioning", "condition": "signal.conditioning",
    "DynamicModel": "models", "FrictionModel": "models", "Plant": "models", "make_model": "models",
    "model_names": "models",
    "IdentifyOptions": "identification.pipeline", "Identification": "identification.pipeline", "identify": "identification.pipeline",
    "FittedModel": "fitted", "load": "fitted", "Prediction": "fitted", "predict": "fitted",
    "read_prg": "io.prg",
    "identify_payload": "identification.payload",
    "DynidError": "errors", "ShapeError": "errors", "ConfigError": "errors", "FileFormatError": "errors",
    "InputDataError": "errors", "IdentifiabilityError": "errors", "MissingExtraError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'dynid' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
