"""dynid — robot inverse dynamic models: model, identify, validate, deploy.

Public API (explicit re-exports)::

    from dynid import read_recording, make_model, Plant, identify, IdentifyOptions
    rec = read_recording("run.csv", n_joints=1)
    plant = Plant(make_model("rotary3"))
    result = identify(rec, plant)
"""

__version__ = "0.1.0"

from .conditioning import ConditioningOptions, Conditioned, condition  # noqa: E402
from .errors import (  # noqa: E402
    ConfigError, DynidError, FileFormatError, IdentifiabilityError, InputDataError, MissingExtraError, ShapeError,
)
from .identify import Identification, IdentifyOptions, identify  # noqa: E402
from .io.prg import read_prg  # noqa: E402
from .io.recording import read_recording, write_recording_csv  # noqa: E402
from .io.result_json import IdentifiedModel, load_result  # noqa: E402
from .models import DynamicModel, FrictionModel, Plant, make_model, model_names  # noqa: E402
from .recording import Recording  # noqa: E402

__all__ = [
    "__version__",
    "Recording", "read_recording", "write_recording_csv",
    "ConditioningOptions", "Conditioned", "condition",
    "DynamicModel", "FrictionModel", "Plant", "make_model", "model_names",
    "IdentifyOptions", "Identification", "identify",
    "IdentifiedModel", "load_result", "read_prg",
    "DynidError", "ShapeError", "ConfigError", "FileFormatError", "InputDataError", "IdentifiabilityError",
    "MissingExtraError",
]
