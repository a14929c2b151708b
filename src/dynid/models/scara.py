"""SCARA, softMC Dynamic Model 1 (spec/models.md §4): ``scara4`` (XYZR) and ``scara3`` (XYZ).

Joints (SI): q1, q2 [rad] rotary about vertical axes; q3 [m] vertical prismatic, z up; q4 [rad]
rotation of the tool relative to link 2 (``scara4`` only). Eight parameters, numbered as softMC's
``DynamicParameter[1..8]``::

    p1 = L1²·M2 + I1    p2 = A2²·M2 + I2    p3 = J2    p4 = L1·A2·M2
    p5 = M3             p6 = g·M3           p7 = I4    p8 = J4

Physical meaning (what the MuJoCo reference tests build):

- I1: inertia of link 1 about axis 1, including every rotor and mass that turns with q1 alone
  (the rotor of motor 1 sits on the base, so its reflected inertia is part of I1).
- M2, A2, I2: mass of link 2 (everything turning with q1 + q2 except the vertical shaft and tool),
  distance from axis 2 to its centre of mass, which lies on the line from axis 2 to the tool axis,
  and its inertia about the vertical through that centre of mass.
- M3: the mass moving vertically (shaft, tool flange), located on the tool axis at distance L2
  from axis 2. I4: inertia about the tool axis of what turns with the tool (q1 + q2 + q4).
- J2, J4: inertias that appear only on their own joint's diagonal of the mass matrix: the reflected
  rotor inertias (gear ratio² · rotor) of motors 2 and 4, neglecting the rotor's gyroscopic cross
  term with the preceding joints (O(1/gear ratio)); exactly a MuJoCo joint ``armature``.

Equations, with c2 = cos q2, s2 = sin q2, h = p4 + L1·L2·p5 and z̈ the vertical acceleration::

    tau1 = M11 q1dd + M12 q2dd + p7 q4dd − h s2 (2 q1d q2d + q2d²)
    tau2 = M12 q1dd + M22 q2dd + p7 q4dd + h s2 q1d²
    F3   = p5 z̈ + p6
    tau4 = p7 (q1dd + q2dd) + (p7 + p8) q4dd + ℓ·F3
    M11  = p1 + p2 + 2 p4 c2 + p5 (L1² + L2² + 2 L1 L2 c2) + p7
    M12  = p2 + p4 c2 + p5 (L2² + L1 L2 c2) + p7
    M22  = p2 + p3 + p5 L2² + p7

Ball-screw spline coupling (``screw_lead`` ℓ [m/rad], signed, default 0 = uncoupled as softMC):
the shaft runs through a ball-screw nut turned by motor 3 and a spline nut turned by motor 4, so
turning the shaft with motor 4 also screws it up or down. q3 is axis 3's position (motor 3 side)
and the shaft height is ``z = q3 + ℓ·q4``; ℓ > 0 when a positive q4 raises the shaft. Then
``z̈ = q3dd + ℓ·q4dd`` and, by virtual work (the shaft's vertical force F3 reaches motor 4 through
∂z/∂q4 = ℓ), motor 4 also carries ``ℓ·F3 = ℓ (p5 z̈ + p6)``. softMC omits this coupling ("coupled
joints may have large errors"): with ℓ = 0 this model is softMC's.

``scara3`` has no q4: p7 multiplies q1dd + q2dd (the flange turns with link 2), which makes it
inseparable from p2 (only p2 + p7 is identifiable), and p8 (J4) has no joint: it keeps its slot and
is a ``constant`` parameter, held at 0 (or the configured value) and written as such.

Payload (``payload: {mass, inertia}``, at the flange on the tool axis): M_p adds to p5 in the
inertial terms and g·M_p to p6, I_p adds to p7; these known terms are the model's offset.

Not representable by the catalogue's eight parameters: a rotor inertia on axis 3 (add the
``armature`` friction term for it) and a link-2 centre of mass off the line from axis 2 to the tool.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import numpy as np

from ..errors import ConfigError
from .base import DynamicModel, Joint, Parameter
from .registry import register_model

__all__ = ["Scara4", "Scara3", "IDENT_START", "IDENT_TARGET", "IDENT_FREQS_HZ", "IDENT_RECORD_S",
           "IDENT_SETTLE_S", "IDENT_FILTER_HZ"]

# The source's SCARA identification program (spec/identification.md §1), in softMC user units:
# deg for axes 1, 2, 4 and mm for axis 3. A 3-axis robot uses the first three values.
IDENT_START: tuple[float, ...] = (-160.0, -160.0, 0.0, -350.0)
"""``Move startPoint`` [deg, deg, mm, deg]."""
IDENT_TARGET: tuple[float, ...] = (160.0, 160.0, 150.0, 350.0)
"""``SineWave sineTarget`` [deg, deg, mm, deg]."""
IDENT_FREQS_HZ: tuple[float, ...] = tuple(0.3 * f for f in (1.0, 1.27, 1.43, 1.13))
"""``SineWaveFreq = 0.3*{1,1.27,1.43,1.13}`` [Hz] (the spec reads SineWaveFreq in Hz)."""
IDENT_RECORD_S: float = 20.0
"""``sleep 20000`` between IdentificationStart and IdentificationFinish [s]."""
IDENT_SETTLE_S: float = 2.0
"""``sleep 2000`` after SineWave starts, before recording [s]."""
IDENT_FILTER_HZ: float = 80.0
"""``IdentificationStart IdentFilterFreq = 80`` [Hz]."""

_EXAMPLE_CONFIG = {"L1": 0.325, "L2": 0.275}


def _length(model: str, key: str, value: Any) -> float:
    if value is None:
        raise ConfigError(f"model {model!r} needs the configuration key {key!r} (link length in m)",
                          hint=f"add e.g. '{key}: 0.3' to the configuration file")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"configuration key {key!r} of model {model!r} must be a positive length in m, got {value!r}")
    return float(value)


class _Scara(DynamicModel):
    """Shared SCARA regressor; ``n_axes`` is 3 or 4."""

    softmc_model = 1
    element = "SCARA"
    n_axes: ClassVar[int]
    example_config: ClassVar[Mapping[str, float]] = _EXAMPLE_CONFIG
    """Configuration of the example robot, used when no configuration at all is given."""

    def __init__(self, config=None) -> None:
        # No configuration at all (``make_model(name)``: ``dynid models``, the conformance suite)
        # describes the example robot; any given configuration must name L1 and L2.
        super().__init__(config)
        self.L1 = _length(self.name, "L1", self.option("L1"))
        self.L2 = _length(self.name, "L2", self.option("L2"))
        lead = self.option("screw_lead", 0.0)
        if isinstance(lead, bool) or not isinstance(lead, (int, float)) or not math.isfinite(lead):
            raise ConfigError(f"configuration key 'screw_lead' of model {self.name!r} must be a finite number "
                              f"in m/rad (signed), got {lead!r}")
        if self.n_axes == 3 and lead != 0:
            raise ConfigError(f"configuration key 'screw_lead' needs axis 4, but model {self.name!r} has 3 axes",
                              hint="use scara4 for a robot with a ball-screw spline, or drop screw_lead")
        self.screw_lead = float(lead)
        self.joints = tuple(Joint(n, k) for n, k in zip(self._joint_names(["A1", "A2", "A3", "A4"][: self.n_axes]),
                                                        ("rotary", "rotary", "linear", "rotary")))
        self.parameters = (
            Parameter("L1^2*M2+I1", "kg m^2", "inertia about axis 1 of link 1 (I1, incl. motor 1) plus L1^2 x "
                      "mass of link 2", 1, positive=True),
            Parameter("A2^2*M2+I2", "kg m^2", "inertia of link 2 about axis 2 (M2 at distance A2, I2 about its COM)", 2, positive=True),
            Parameter("J2", "kg m^2", "inertia seen only by axis 2 (reflected rotor of motor 2)", 3, positive=True),
            Parameter("L1*A2*M2", "kg m^2", "link 1 length x COM distance of link 2 x mass of link 2", 4),
            Parameter("M3", "kg", "mass moving vertically (shaft and flange)", 5, positive=True),
            Parameter("g*M3", "N", "weight of the vertically moving mass", 6),
            Parameter("I4", "kg m^2", "inertia about the tool axis of what turns with the tool", 7, positive=True),
            Parameter("J4", "kg m^2", "inertia seen only by axis 4 (reflected rotor of motor 4)"
                      + ("" if self.n_axes == 4 else "; no axis 4 on a 3-axis SCARA: held at 0"), 8,
                      role="dynamic" if self.n_axes == 4 else "constant", positive=True),
        )

    def _regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Regressor ``(N, n_axes, 8)`` of the equations in the module docstring (SI inputs ``(N, n_axes)``)."""
        n = q.shape[0]
        L1, L2, lead = self.L1, self.L2, self.screw_lead
        c2, s2 = np.cos(q[:, 1]), np.sin(q[:, 1])
        v1, v2 = qd[:, 0], qd[:, 1]
        a1, a2, a3 = qdd[:, 0], qdd[:, 1], qdd[:, 2]
        a4 = qdd[:, 3] if self.n_axes == 4 else np.zeros(n)
        zdd = a3 + lead * a4                      # shaft acceleration [m/s^2]
        cen1 = -s2 * (2.0 * v1 * v2 + v2**2)      # velocity term of tau1 per unit h
        cen2 = s2 * v1**2                         # velocity term of tau2 per unit h
        flange = a1 + a2 + a4                     # absolute angular acceleration of the tool
        Y = np.zeros((n, 4, 8))
        Y[:, 0, 0] = a1
        Y[:, 0, 1] = a1 + a2
        Y[:, 0, 3] = c2 * (2.0 * a1 + a2) + cen1
        Y[:, 0, 4] = (L1**2 + L2**2 + 2.0 * L1 * L2 * c2) * a1 + (L2**2 + L1 * L2 * c2) * a2 + L1 * L2 * cen1
        Y[:, 0, 6] = flange
        Y[:, 1, 1] = a1 + a2
        Y[:, 1, 2] = a2
        Y[:, 1, 3] = c2 * a1 + cen2
        Y[:, 1, 4] = (L2**2 + L1 * L2 * c2) * a1 + L2**2 * a2 + L1 * L2 * cen2
        Y[:, 1, 6] = flange
        Y[:, 2, 4] = zdd
        Y[:, 2, 5] = 1.0
        Y[:, 3, 4] = lead * zdd
        Y[:, 3, 5] = lead
        Y[:, 3, 6] = flange
        Y[:, 3, 7] = a4
        return Y[:, : self.n_axes, :]

    def _offset(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Payload torque ``(N, n_axes)``: M_p on the p5 column, g·M_p on p6, I_p on p7."""
        mp, ip = self.payload.mass, self.payload.inertia
        if mp == 0.0 and ip == 0.0:
            return np.zeros_like(q)
        Y = self._regressor(q, qd, qdd)
        return mp * Y[:, :, 4] + self.gravity * mp * Y[:, :, 5] + ip * Y[:, :, 6]

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Position range for random states: the source program's ranges, ±160° and 0..0.15 m, ±350°."""
        if self.config.position_limits is not None:
            return super().state_bounds()
        deg = math.pi / 180.0
        lo = np.array([-160.0 * deg, -160.0 * deg, 0.0, -350.0 * deg])
        hi = np.array([160.0 * deg, 160.0 * deg, 0.15, 350.0 * deg])
        return lo[: self.n_axes], hi[: self.n_axes]

    def example_parameters(self) -> tuple[float, ...]:
        """A 600 mm class SCARA (example link data, not a specific product) mapped to p1..p8.

        Link 1: 6 kg, I1 = 0.25 kg m² about axis 1 (incl. motor 1). Link 2: M2 = 4 kg, A2 = 0.12 m,
        I2 = 0.035 kg m² about its COM; J2 = 0.06 kg m² (motor 2 rotor x gear ratio²). M3 = 1.5 kg,
        I4 = 0.002 kg m², J4 = 0.008 kg m² (scara3: J4 = 0).
        """
        M2, A2, I1, I2, J2, M3, I4, J4 = 4.0, 0.12, 0.25, 0.035, 0.06, 1.5, 0.002, 0.008
        g = self.gravity
        return (self.L1**2 * M2 + I1, A2**2 * M2 + I2, J2, self.L1 * A2 * M2, M3, g * M3, I4,
                J4 if self.n_axes == 4 else 0.0)

    def derived(self, values: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        """g·M3 / M3 (should be g: a clear deviation points at unmodelled vertical forces)."""
        m3, gm3 = values.get("M3"), values.get("g*M3")
        if m3 is None or gm3 is None or not m3 > 0:
            return {}
        return {"g_check": {"value": gm3 / m3, "unit": "m/s^2",
                            "description": "g*M3 / M3; equals g for a rigid vertical axis (a counterweight, "
                                           "spring or axis-3 rotor inertia makes it differ)"}}


_COMMON_KEYS = {
    "L1": "length of link 1, axis 1 to axis 2 [m] (required)",
    "L2": "length of link 2, axis 2 to the tool axis [m] (required)",
}


@register_model
class Scara4(_Scara):
    name = "scara4"
    title = "SCARA 4-axis (XYZR), Dynamic Model 1"
    n_axes = 4
    config_keys = {
        **_COMMON_KEYS,
        "screw_lead": "ball-screw spline coupling of axes 3-4 [m/rad], signed: shaft height z = q3 + screw_lead*q4 "
                      "(default 0: uncoupled, as softMC)",
    }
    notes = ("q1, q2 about vertical axes; q3 vertical, z up [m]; q4 tool rotation relative to link 2. J2, J4 act "
             "only on their own axis (reflected rotor inertia). With screw_lead l the shaft height is q3 + l*q4 "
             "and axis 4 also carries l x the vertical force (softMC ignores this coupling).")


@register_model
class Scara3(_Scara):
    name = "scara3"
    title = "SCARA 3-axis (XYZ), Dynamic Model 1"
    n_axes = 3
    config_keys = dict(_COMMON_KEYS)
    notes = ("q1, q2 about vertical axes; q3 vertical, z up [m]. The flange turns with link 2, so only "
             "A2^2*M2+I2 + I4 is identifiable (I4 held at its configured value or 0); J4 has no axis and is a "
             "constant held at 0 (slot 8 kept as in the catalogue).")
