"""The six softMC single-axis models (spec/models.md §1–2).

Rotary (q [rad], torque [N m]); p numbered as softMC ``DynamicParameter[1..]``:

- rotary1  T = (I + I_p)·qdd
- rotary2  T = (I + I_p + L²·M_p)·qdd
- rotary3  T = (I + I_p + L²·M_p)·qdd − (M·g·A + M_p·g·L)·sin q     (q = 0: crank pointing up)

Linear (x [m], force [N]):

- linear1  F = (M + M_p)·xdd
- linear2  F = (M + M_p)·xdd + M·g·cos α + M_p·g·cos α              (α from the vertical; up positive)
- linear3  F = (M + M_p)·(xdd + g) + K·(x − X0)                      (vertical axis with a spring)

Payload mass M_p and inertia I_p come from the ``payload`` configuration key. Columns that are zero
without a payload (L², g·L, g·cos α) cannot be identified from an unloaded run: the pipeline detects
that by rank and holds them at the configured value (``parameters``) or 0.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from .base import DynamicModel, Joint, Parameter
from .registry import register_model

__all__ = ["Rotary1", "Rotary2", "Rotary3", "Linear1", "Linear2", "Linear3"]


class _SingleAxis(DynamicModel):
    element = "A1"
    kind: str

    def __init__(self, config=None) -> None:
        super().__init__(config)
        (name,) = self._joint_names(["A1"])
        self.joints = (Joint(name, self.kind),)
        self.parameters = self._parameters()

    example_values: tuple[float, ...] = ()

    def _parameters(self) -> tuple[Parameter, ...]:
        raise NotImplementedError

    def example_parameters(self):
        return self.example_values


# ---------------------------------------------------------------------------- rotary

_I = Parameter("I", "kg m^2", "total inertia of the moved part about the axis", 1, positive=True)
_L2 = Parameter("L^2", "m^2", "squared crank length, axis to payload", 2, role="payload")


@register_model
class Rotary1(_SingleAxis):
    name = "rotary1"
    title = "Rotary axis, model 1: simple rotary axis"
    softmc_model = 1
    kind = "rotary"
    example_values = (0.5,)

    def _parameters(self):
        return (_I,)

    def _regressor(self, q, qd, qdd):
        return qdd[:, :, None].copy()

    def _offset(self, q, qd, qdd):
        return self.payload.inertia * qdd


@register_model
class Rotary2(_SingleAxis):
    name = "rotary2"
    title = "Rotary axis, model 2: horizontal crank arm"
    softmc_model = 2
    kind = "rotary"
    example_values = (0.5, 0.36)

    def _parameters(self):
        return (_I, _L2)

    def _regressor(self, q, qd, qdd):
        return np.stack([qdd, self.payload.mass * qdd], axis=-1)

    def _offset(self, q, qd, qdd):
        return self.payload.inertia * qdd


@register_model
class Rotary3(_SingleAxis):
    name = "rotary3"
    title = "Rotary axis, model 3: vertical crank arm"
    softmc_model = 3
    kind = "rotary"
    notes = "q = 0 with the crank pointing vertically up (set ModelOffset accordingly); positive q in the positive axis direction."
    example_values = (0.5, 0.36, 19.6133, 5.88399)

    def _parameters(self):
        return (_I, _L2,
                Parameter("M*g*A", "N m", "mass (no payload) x g x distance axis to COM", 3),
                Parameter("g*L", "m^2/s^2", "g x distance axis to payload", 4, role="payload"))

    def _regressor(self, q, qd, qdd):
        mp = self.payload.mass
        s = np.sin(q)
        return np.stack([qdd, mp * qdd, -s, -mp * s], axis=-1)

    def _offset(self, q, qd, qdd):
        return self.payload.inertia * qdd


# ---------------------------------------------------------------------------- linear

_M = Parameter("M", "kg", "total moved mass", 1, positive=True)


@register_model
class Linear1(_SingleAxis):
    name = "linear1"
    title = "Linear axis, model 1: horizontal axis"
    softmc_model = 1
    kind = "linear"
    example_values = (12.0,)

    def _parameters(self):
        return (_M,)

    def _regressor(self, q, qd, qdd):
        return qdd[:, :, None].copy()

    def _offset(self, q, qd, qdd):
        return self.payload.mass * qdd


@register_model
class Linear2(_SingleAxis):
    name = "linear2"
    title = "Linear axis, model 2: vertical or tilted axis"
    softmc_model = 2
    kind = "linear"
    notes = ("Positive direction upward. alpha (angle from the vertical) is reported from the fit; without a "
             "payload, g*cos(alpha) is derived as p2/p1.")
    example_values = (12.0, 101.9137, 8.49281)

    def _parameters(self):
        return (_M,
                Parameter("M*g*cos(alpha)", "N", "constant gravity force of the moved mass", 2),
                Parameter("g*cos(alpha)", "m/s^2", "gravity coefficient for the payload", 3, role="payload"))

    def _regressor(self, q, qd, qdd):
        one = np.ones_like(q)
        return np.stack([qdd, one, self.payload.mass * one], axis=-1)

    def _offset(self, q, qd, qdd):
        return self.payload.mass * qdd

    def complete(self, values: dict[str, float], identified: Mapping[str, bool]):
        notes = []
        key = "g*cos(alpha)"
        if not identified.get(key, False) and key not in self.config.parameters and values["M"] > 0:
            values = dict(values)
            values[key] = values["M*g*cos(alpha)"] / values["M"]
            notes.append("g*cos(alpha) derived as M*g*cos(alpha) / M (not identifiable without a payload)")
        return values, notes

    def derived(self, values: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        g = self.gravity
        gc = values.get("g*cos(alpha)")
        if gc is None or not math.isfinite(gc):
            return {}
        ratio = max(-1.0, min(1.0, gc / g))
        return {"alpha": {"value": math.degrees(math.acos(ratio)), "unit": "deg",
                          "description": "axis angle from the vertical (0 = vertical, 90 = horizontal)"}}


@register_model
class Linear3(_SingleAxis):
    name = "linear3"
    title = "Linear axis, model 3: vertical axis with a spring"
    softmc_model = 3
    kind = "linear"
    notes = "Vertical axis (full g), positive direction upward; x in m."
    example_values = (8.0, 2000.0, 100.0)

    def _parameters(self):
        return (_M,
                Parameter("K", "N/m", "spring stiffness", 2),
                Parameter("K*X0", "N", "stiffness x relaxed position", 3))

    def _regressor(self, q, qd, qdd):
        return np.stack([qdd + self.gravity, q, -np.ones_like(q)], axis=-1)

    def _offset(self, q, qd, qdd):
        return self.payload.mass * (qdd + self.gravity)

    def derived(self, values: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        k = values.get("K", 0.0)
        if not k:
            return {}
        return {"X0": {"value": values["K*X0"] / k, "unit": "m", "description": "relaxed spring position"}}
