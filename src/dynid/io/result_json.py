"""``result.json`` (spec/interfaces.md §3) and loading an identified model back from it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..signal.conditioning import ConditioningOptions
from ..errors import FileFormatError
from ..models.base import Plant

__all__ = ["IdentifiedModel", "load_result", "jsonable"]


def jsonable(x: Any) -> Any:
    """Plain JSON data: arrays to lists, NaN/inf to null, numpy scalars to Python."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


@dataclass(frozen=True)
class IdentifiedModel:
    """A plant with its identified parameters, as stored in result.json (what predict/runtime use).

    plant : Plant ; theta : (n_params,) model then friction, physical sign convention
    cutoff_hz : float ; filter_order : int ; element : str ; data : the whole JSON dict
    """

    plant: Plant
    theta: np.ndarray
    cutoff_hz: float
    filter_order: int
    element: str
    data: dict

    def torque(self, q, qd, qdd) -> np.ndarray:
        """Model torque including friction ``(N, n_joints)`` [N m or N]."""
        return self.plant.torque(self.theta, q, qd, qdd)

    def conditioning_options(self) -> ConditioningOptions:
        return ConditioningOptions(cutoff_hz=self.cutoff_hz, filter_order=self.filter_order)


def load_result(path: str | Path) -> IdentifiedModel:
    """Rebuild the identified model from a ``result.json`` written by ``dynid identify``."""
    from ..models import make_model

    path = Path(path)
    if path.is_dir():
        path = path / "result.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file", hint="pass the result.json written by 'dynid identify'") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise FileFormatError(f"{path}: not a readable result.json ({err})") from err
    try:
        name = data["model"]
        config = data.get("config", {})
        model = make_model(name, config, **data.get("model_args", {}))
        plant = Plant(model)
        values = dict(zip(data["parameters"]["names"], data["parameters"]["values"]))
        fr = data["friction"]
        fvalues = dict(zip(fr["names"], fr["values"]))
        theta = np.array([_num(values.get(n)) for n in model.param_names]
                         + [_num(fvalues.get(n)) for n in plant.friction.param_names])
        cutoff = float(data["conditioning"]["cutoff_hz"])
        order = int(data["conditioning"].get("filter_order", 4))
        element = data.get("element", model.element)
    except (KeyError, TypeError, ValueError) as err:
        raise FileFormatError(f"{path}: incomplete result.json ({type(err).__name__}: {err})",
                              hint="use a result.json written by 'dynid identify'") from err
    return IdentifiedModel(plant, theta, cutoff, order, element, data)


def _num(v) -> float:
    return 0.0 if v is None else float(v)
