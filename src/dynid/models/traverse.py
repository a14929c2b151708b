"""Traverse-arm robot, softMC Dynamic Model 1 (spec/models.md §3): model ``traverse``.

softMC publishes only the seven parameters; the geometry and equations are derived here (and
checked against MuJoCo in ``tests/models/test_traverse.py``). Joints (SI):

- x [m]: horizontal linear traverse carrying everything (carriage mass M1).
- θ [rad]: arm rotating about a vertical axis on the carriage; θ = 0 when the arm points along
  +x (the traverse direction). Arm mass M2, centre of mass at distance A2 from the θ axis on the
  line towards the tool axis, inertia I2 about the vertical through that centre of mass.
- z [m]: vertical linear axis at the arm tip, at distance L2 (configuration) from the θ axis,
  z up; M3 is the mass moving vertically, on the tool axis.
- φ [rad]: tool rotation relative to the arm; I4 is the inertia about the tool axis of what turns
  with the tool (θ + φ), J4 an inertia seen only by φ (reflected rotor of motor 4).

Parameters (softMC ``DynamicParameter[1..7]``)::

    p1 = M1 + M2   p2 = A2·M2   p3 = A2²·M2 + I2   p4 = M3   p5 = g·M3   p6 = I4   p7 = J4

Equations (Lagrange; s = sin θ, c = cos θ)::

    F1   = (p1 + p4) xdd − (p2 + L2 p4)(s θdd + c θd²)
    tau2 = −(p2 + L2 p4) s xdd + (p3 + L2² p4 + p6) θdd + p6 φdd
    F3   = p4 zdd + p5
    tau4 = p6 (θdd + φdd) + p7 φdd

A rotor inertia on x (motor on the base) is part of p1, one on θ (motor on the carriage) part of p3
(both exactly: those parameters act only on their own diagonal); one on z is not representable.
Payload (``payload: {mass, inertia}`` at the tool, on the tool axis): M_p adds to p4 in the
inertial terms and g·M_p to p5, I_p adds to p6; these known terms are the model's offset.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import numpy as np

from ..errors import ConfigError
from .base import DynamicModel, Joint, Parameter
from .registry import register_model

__all__ = ["Traverse"]


@register_model
class Traverse(DynamicModel):
    name = "traverse"
    title = "Traverse-arm robot (x, theta, z, phi), Dynamic Model 1"
    softmc_model = 1
    element = "TRAVERSE"
    """softMC publishes no element name for this robot type; ``TRAVERSE`` follows the upper-case robot
    type rule of interfaces.md (``--element`` overrides it)."""
    config_keys = {"L2": "arm length, theta axis to the z/tool axis [m] (required)"}
    notes = ("x horizontal traverse; theta about a vertical axis, 0 along +x; z vertical, up [m]; phi tool "
             "rotation relative to the arm. Geometry and equations derived (softMC publishes only the parameter "
             "list) and verified against MuJoCo.")
    example_config: ClassVar[Mapping[str, float]] = {"L2": 0.6}
    """Configuration of the example robot, used when no configuration at all is given."""

    def __init__(self, config=None) -> None:
        # No configuration at all describes the example robot; a given configuration must name L2.
        super().__init__(config)
        L2 = self.option("L2")
        if L2 is None:
            raise ConfigError("model 'traverse' needs the configuration key 'L2' (arm length in m)",
                              hint="add e.g. 'L2: 0.6' to the configuration file")
        if isinstance(L2, bool) or not isinstance(L2, (int, float)) or not math.isfinite(L2) or L2 <= 0:
            raise ConfigError(f"configuration key 'L2' of model 'traverse' must be a positive length in m, got {L2!r}")
        self.L2 = float(L2)
        names = self._joint_names(["A1", "A2", "A3", "A4"])
        self.joints = tuple(Joint(n, k) for n, k in zip(names, ("linear", "rotary", "linear", "rotary")))
        self.parameters = (
            Parameter("M1+M2", "kg", "mass of carriage and arm", 1, positive=True),
            Parameter("A2*M2", "kg m", "arm mass x distance from the theta axis to its COM", 2),
            Parameter("A2^2*M2+I2", "kg m^2", "arm inertia about the theta axis", 3, positive=True),
            Parameter("M3", "kg", "mass moving vertically (z axis and tool)", 4, positive=True),
            Parameter("g*M3", "N", "weight of the vertically moving mass", 5),
            Parameter("I4", "kg m^2", "inertia about the tool axis of what turns with the tool", 6, positive=True),
            Parameter("J4", "kg m^2", "inertia seen only by phi (reflected rotor of motor 4)", 7, positive=True),
        )

    def _regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Regressor ``(N, 4, 7)`` of the equations in the module docstring (SI inputs ``(N, 4)``)."""
        n = q.shape[0]
        L2 = self.L2
        s, c = np.sin(q[:, 1]), np.cos(q[:, 1])
        thd = qd[:, 1]
        xdd, thdd, zdd, phdd = qdd[:, 0], qdd[:, 1], qdd[:, 2], qdd[:, 3]
        arm = s * thdd + c * thd**2            # tangential + centripetal term of the arm on x
        tool = thdd + phdd                     # absolute angular acceleration of the tool
        Y = np.zeros((n, 4, 7))
        Y[:, 0, 0] = xdd
        Y[:, 0, 1] = -arm
        Y[:, 0, 3] = xdd - L2 * arm
        Y[:, 1, 1] = -s * xdd
        Y[:, 1, 2] = thdd
        Y[:, 1, 3] = -L2 * s * xdd + L2**2 * thdd
        Y[:, 1, 5] = tool
        Y[:, 2, 3] = zdd
        Y[:, 2, 4] = 1.0
        Y[:, 3, 5] = tool
        Y[:, 3, 6] = phdd
        return Y

    def _offset(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Payload torque ``(N, 4)``: M_p on the p4 column, g·M_p on p5, I_p on p6."""
        mp, ip = self.payload.mass, self.payload.inertia
        if mp == 0.0 and ip == 0.0:
            return np.zeros_like(q)
        Y = self._regressor(q, qd, qdd)
        return mp * Y[:, :, 3] + self.gravity * mp * Y[:, :, 4] + ip * Y[:, :, 5]

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Position range for random states: x ±1 m, θ ±π, z 0..0.3 m, φ ±2π."""
        if self.config.position_limits is not None:
            return super().state_bounds()
        return np.array([-1.0, -math.pi, 0.0, -2 * math.pi]), np.array([1.0, math.pi, 0.3, 2 * math.pi])

    def example_parameters(self) -> tuple[float, ...]:
        """An example gantry-mounted arm (not a specific product) mapped to p1..p7.

        Carriage M1 = 25 kg; arm M2 = 8 kg, A2 = 0.25 m, I2 = 0.3 kg m²; M3 = 4 kg; I4 = 0.01 kg m²,
        J4 = 0.02 kg m².
        """
        M1, M2, A2, I2, M3, I4, J4 = 25.0, 8.0, 0.25, 0.3, 4.0, 0.01, 0.02
        return (M1 + M2, A2 * M2, A2**2 * M2 + I2, M3, self.gravity * M3, I4, J4)

    def derived(self, values: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        """g·M3 / M3, which equals g for a rigid vertical axis."""
        m3, gm3 = values.get("M3"), values.get("g*M3")
        if m3 is None or gm3 is None or not m3 > 0:
            return {}
        return {"g_check": {"value": gm3 / m3, "unit": "m/s^2",
                            "description": "g*M3 / M3; equals g for a rigid vertical axis"}}
