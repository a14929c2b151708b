"""dynid — robot inverse dynamic models: model, identify, validate, deploy.

Public API (spec/interfaces.md §6; explicit re-exports, loaded on first use so ``import dynid`` stays cheap)::

    import dynid
    rec = dynid.read_recording("run.csv")                   # joints from the columns
    est = dynid.Identifier("rotary3", friction="viscous+coulomb+offset").fit(rec)
    est.metrics_["success"]                                  # result.json's metrics
    model = est.model_                                       # dynid.FittedModel
    tau = model.torque(q, dq, ddq)                           # (N, n) in, (N, n) out
    model.save("out/"); same = dynid.load("out/")

Lower level: ``Plant``, ``make_model``, ``identify(rec, plant, IdentifyOptions(...))`` (an
``Identification`` record whose ``.model`` is the FittedModel).
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
    "Identifier": "identification.identifier", "FittedModel": "fitted", "load": "fitted", "Prediction": "fitted", "predict": "fitted",
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
