"""softMC Galileo Spherical Robot (GSR), Dynamic Model 1 — an experimental interpretation
(spec/models.md §8).

The catalogue's parameter list is cut off after item 5 (mP, mB, TP [mm], TB [mm], IR) and no
public description of the Galileo kinematics exists. This module implements a documented
interpretation, linear in its parameters, and marks everything beyond item 5 as invented:

Kinematics [INTERPRETATION]: a spherical (polar) arm whose axes meet at the shoulder centre
(0,0):

- q1 [rad]  yaw, about the vertical axis z;
- q2 [rad]  pitch (elevation) about the horizontal axis a = (sin q1, −cos q1, 0); q2 = 0 arm
  horizontal, positive q2 raises the arm; radial unit vector x2 = (cos q1 cos q2, sin q1 cos q2, sin q2);
- q3 [m]    radial (telescopic) axis: distance from the shoulder centre to the flange along x2;
- q4 [rad]  roll of the flange about x2.

Bodies [INTERPRETATION]: a yaw column; a shoulder housing, a body of revolution about the pitch
axis with its centre of mass on it (its inertia perpendicular to that axis only adds to J_Y); a
balance mass mB at distance TB behind the centre (−TB·x2, fixed to the housing); the radial arm
(mass M_A, centre of mass on the radial axis D_A behind the flange, axisymmetric about the radial
axis); the roll flange (its mass and perpendicular inertia counted in the arm's values); the
payload mP at TP in front of the flange on the roll axis with roll inertia IR (its inertia
perpendicular to the roll axis is not a catalogue parameter: add it to J_AF if it matters).

Kinetic and potential energy (W = q̇2² + cos²q2·q̇1², Ω = sin q2·q̇1 + q̇4):

    T = ½ J_Y q̇1² + ½ J_S q̇2² + ½ (M_A + mP) q̇3² + ½ [M_A ρ² − 2 M_A·D_A ρ + J_AF + mP (ρ + TP)² + mB TB²] W
        + ½ J_AX sin²q2 q̇1² + ½ (J_R + IR) Ω²,                                      ρ = q3
    V = g sin q2 · [M_A ρ − M_A·D_A + mP (ρ + TP) − mB TB]

The torques follow by Euler–Lagrange, term by term (closed form, no numerical derivatives).

What a run determines [DERIVED from the columns above]: the balance mass enters only through
mB·TB (gravity) and mB·TB² (which merges with J_AF), so TB is geometry no motion determines — for any
TB' the torques stay the same with mB' = mB·TB/TB' and J_AF' = J_AF + mB·TB² − mB'·TB'². The
configuration must therefore give TB (and TP, which plays the same part for the payload); with them
mB is identified. mP and IR merge with the arm (M_A, M_A*D_A, J_AF) and the roll flange (J_R) in a run
without payload; a second run carrying the payload determines them (``identify --payload-of``).

PRG [softMC units]: ``DynamicParameter[1..5]`` = mP [kg], mB [kg], TP [mm], TB [mm], IR [kg m²], as the
catalogue numbers and prints them; parameters 6..12 are dynid's and go to comment lines
(``'dynid parameter <name> = <value> <unit>``), which :func:`dynid.load` reads back.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .base import DynamicModel, Joint, Parameter
from .registry import register_model

__all__ = ["Galileo"]

_GAP = ("[INTERPRETATION: the catalogue's list stops after parameter 5; this parameter and its meaning are "
        "dynid's assumption, not softMC's]")

_EXAMPLE_CONSTANTS = {"TP": 0.08, "TB": 0.25}

_PAYLOAD_RUN = "a second run carrying the payload (dynid identify --payload-of <this run's result.json>)"
_DETERMINATION = {
    "mP": "payload mass: a run without payload cannot separate it from the arm (it merges with M_A, M_A*D_A "
          "and J_AF; written as the configured payload, 0 = none); determined by " + _PAYLOAD_RUN + " that moves "
          "axis 2 (pitch) through gravity and accelerates axis 3 (radial)",
    "IR": "payload inertia about the roll axis: a run without payload cannot separate it from J_R (written "
          "as the configured payload inertia, 0 = none); determined by " + _PAYLOAD_RUN + " that accelerates "
          "axis 4 (roll)",
    "mB": "balance mass: with TB = 0 it has no effect on any torque; give TB (the balance mass's distance "
          "from the centre) in the configuration and identify again (a run moving axis 2 through gravity and "
          "accelerating axis 1 and 2 determines it)",
    "TP": "payload centre of mass distance from the flange: geometry from the configuration; no run "
          "determines it (it trades off against mP); measure it",
    "TB": "balance-mass centre of mass distance from the centre: geometry from the configuration; no run "
          "determines it (it trades off exactly against mB and J_AF); measure it",
    "J_AX": "dynid's radial-arm axial inertia: merges with J_Y, J_S and J_AF (cos^2 + sin^2 = 1); no "
            "motion separates it",
}


def _params() -> tuple[Parameter, ...]:
    return (
        Parameter("mP", "kg", "payload mass [catalogue]; a point mass on the roll axis TP in front of the flange "
                  "(location per dynid's interpretation); a payload coefficient: identifiable only from runs with "
                  "different known payloads", 1, role="payload"),
        Parameter("mB", "kg", "balance (counter) mass [catalogue]; at TB behind the shoulder centre on the radial "
                  "axis, fixed to the shoulder housing (location per dynid's interpretation)", 2),
        Parameter("TP", "m", "payload centre of mass distance from the flange along the roll axis [catalogue, "
                  "printed in mm; dynid works in m]; geometry: a constant read from 'parameters', its own column "
                  "is zero", 3, role="constant"),
        Parameter("TB", "m", "balance-mass centre of mass distance from (0,0) = the shoulder centre [catalogue, "
                  "printed in mm; dynid works in m]; geometry: a constant read from 'parameters', its own column "
                  "is zero", 4, role="constant"),
        Parameter("IR", "kg m^2", "payload inertia about the roll axis [catalogue]; a payload coefficient", 5,
                  role="payload"),
        Parameter("J_Y", "kg m^2", "inertia about the vertical (yaw) axis of the parts turning with axis 1 only, "
                  "incl. the reflected motor, plus the shoulder housing's inertia perpendicular to the pitch axis "
                  + _GAP, 6, positive=True),
        Parameter("J_S", "kg m^2", "shoulder housing (body of revolution about the pitch axis) inertia about the "
                  "pitch axis, incl. the reflected motor of axis 2 " + _GAP, 7, positive=True),
        Parameter("M_A", "kg", "radial arm mass (everything moving with axis 3 except the payload, incl. the roll "
                  "flange) " + _GAP, 8, positive=True),
        Parameter("M_A*D_A", "kg m", "radial arm first moment: M_A x distance from the flange back to the arm's "
                  "centre of mass " + _GAP, 9),
        Parameter("J_AF", "kg m^2", "radial arm inertia perpendicular to the radial axis about the flange point "
                  "(= about its centre of mass + M_A*D_A^2) " + _GAP, 10, positive=True),
        Parameter("J_AX", "kg m^2", "radial arm inertia about the radial axis (not turning with the roll) " + _GAP,
                  11, positive=True),
        Parameter("J_R", "kg m^2", "roll flange inertia about the roll axis (same column as IR) " + _GAP, 12, positive=True),
    )


_NOTES = (
    "EXPERIMENTAL interpretation: softMC's Galileo parameter list is cut off after item 5 (mP, mB, TP, TB, IR) "
    "and no description of its kinematics was found. dynid assumes a spherical arm: q1 yaw about z, q2 pitch "
    "(elevation, 0 = horizontal, positive up) about a horizontal axis through the shoulder centre (0,0), q3 "
    "radial telescopic axis [m] = shoulder centre to flange, q4 roll about the radial axis; a balance mass mB at "
    "TB behind the centre; the payload mP at TP in front of the flange with roll inertia IR. Parameters 6..12 "
    "(J_Y, J_S, M_A, M_A*D_A, J_AF, J_AX, J_R) are dynid's inventions, marked as such. TP and TB are geometry "
    "constants given under 'parameters' (softMC prints them in mm; dynid uses m). mP and IR are payload "
    "coefficients: from an ordinary run they merge with the arm's values (base parameters). The common "
    "'payload' key adds a known load at the same place (mass at TP, inertia about the roll axis): use it or "
    "mP/IR, not both. The configuration must give TP and TB under 'parameters' (in m): TB is geometry no run "
    "determines (the run determines only the balance mass's first moment mB*TB), so without it mB could not be "
    "identified. The PRG holds softMC's five slots in softMC's units (TP, TB in mm) and dynid's parameters 6..12 "
    "as comment lines."
)


@register_model
class Galileo(DynamicModel):
    name = "galileo"
    title = "Galileo Spherical Robot (GSR), Dynamic Model 1 — dynid interpretation"
    softmc_model = 1
    element = "GALILEO"
    status = "experimental"
    config_keys: dict[str, str] = {}
    notes = _NOTES

    example_config = {"parameters": dict(_EXAMPLE_CONSTANTS)}

    prg_slots = 5
    """``DynamicParameter`` slots softMC's catalogue defines (mP, mB, TP, TB, IR); dynid's parameters 6..12
    are written to the PRG as comment lines, never into softMC's slots (whose meaning is unpublished)."""
    prg_units = {"TP": ("mm", 1000.0), "TB": ("mm", 1000.0)}
    """softMC's PRG unit of a parameter and the factor from SI (PRG value = SI value × factor)."""
    prg_payload = {"mP": "mass", "IR": "inertia"}
    """Slots that carry the payload in softMC's model: the PRG writes parameter + configured payload."""
    prg_determination = _DETERMINATION
    """Per parameter: what it is and what determines it, for the PRG's statement of undetermined values."""

    def __init__(self, config=None) -> None:
        super().__init__(config)
        known = self.config.parameters
        missing = [k for k in ("TP", "TB") if k not in known]
        if missing:
            raise ConfigError(
                f"model 'galileo' needs the geometry constant{'s' if len(missing) > 1 else ''} "
                f"{' and '.join(missing)} [m] under the configuration's 'parameters' (softMC's DynamicParameter[3] "
                "and [4], printed in mm): no run determines them (TB trades off exactly against the balance mass mB, "
                "TP against the payload mass mP)",
                hint="add e.g. 'parameters: {TP: 0.08, TB: 0.25}' (measured on the robot) to the configuration file",
                options=("config",))
        self.tp = float(known["TP"])
        self.tb = float(known["TB"])
        names = self._joint_names(["A1", "A2", "A3", "A4"])
        self.joints = (Joint(names[0], "rotary"), Joint(names[1], "rotary"), Joint(names[2], "linear"),
                       Joint(names[3], "rotary"))
        self.parameters = _params()

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint range for random states: yaw ±π, pitch ±1.2 rad, radial 0.3..0.9 m, roll ±π (or
        ``position_limits``)."""
        lims = self.config.position_limits
        if lims is not None and len(lims) == self.n_joints:
            a = np.array(lims, dtype=float)
            return a[:, 0], a[:, 1]
        return np.array([-np.pi, -1.2, 0.3, -np.pi]), np.array([np.pi, 1.2, 0.9, np.pi])

    # --------------------------------------------------------------- Euler–Lagrange building blocks
    @staticmethod
    def _w_term(f, fp, c, s, qd, qdd):
        """Torques of T = ½ f(ρ) (q̇2² + cos²q2 q̇1²) with f' = df/dρ; ``(N, 4)``."""
        out = np.zeros_like(qd)
        out[:, 0] = f * c**2 * qdd[:, 0] + fp * c**2 * qd[:, 0] * qd[:, 2] - 2 * f * c * s * qd[:, 0] * qd[:, 1]
        out[:, 1] = f * qdd[:, 1] + fp * qd[:, 1] * qd[:, 2] + f * c * s * qd[:, 0] ** 2
        out[:, 2] = -0.5 * fp * (qd[:, 1] ** 2 + c**2 * qd[:, 0] ** 2)
        return out

    def _gravity_term(self, k, kp, c, s):
        """Torques of V = g k(ρ) sin q2 with k' = dk/dρ; ``(N, 4)``."""
        out = np.zeros((c.shape[0], 4))
        out[:, 1] = self.gravity * k * c
        out[:, 2] = self.gravity * kp * s
        return out

    @staticmethod
    def _roll_term(c, s, qd, qdd):
        """Torques of T = ½ (sin q2 q̇1 + q̇4)²; ``(N, 4)``."""
        om = s * qd[:, 0] + qd[:, 3]
        om_d = c * qd[:, 1] * qd[:, 0] + s * qdd[:, 0] + qdd[:, 3]
        out = np.zeros_like(qd)
        out[:, 0] = c * qd[:, 1] * om + s * om_d
        out[:, 1] = -c * qd[:, 0] * om
        out[:, 3] = om_d
        return out

    def _point_mass(self, rho, d, c, s, qd, qdd):
        """Torques of a unit mass on the radial axis at ρ + d (d constant):
        T = ½ (q̇3² + (ρ + d)² W), V = g (ρ + d) sin q2; ``(N, 4)``."""
        out = self._w_term((rho + d) ** 2, 2 * (rho + d), c, s, qd, qdd) + self._gravity_term(rho + d, 1.0, c, s)
        out[:, 2] += qdd[:, 2]
        return out

    def _regressor(self, q, qd, qdd):
        N = q.shape[0]
        c, s = np.cos(q[:, 1]), np.sin(q[:, 1])
        rho = q[:, 2]
        zero, one = np.zeros(N), np.ones(N)
        Y = np.zeros((N, 4, self.n_params))
        roll = self._roll_term(c, s, qd, qdd)
        Y[:, :, 0] = self._point_mass(rho, self.tp, c, s, qd, qdd)                              # mP
        Y[:, :, 1] = (self._w_term(self.tb**2 * one, zero, c, s, qd, qdd)
                      + self._gravity_term(-self.tb * one, 0.0, c, s))                          # mB
        Y[:, :, 4] = roll                                                                       # IR
        Y[:, 0, 5] = qdd[:, 0]                                                                  # J_Y
        Y[:, 1, 6] = qdd[:, 1]                                                                  # J_S
        Y[:, :, 7] = self._point_mass(rho, 0.0, c, s, qd, qdd)                                  # M_A
        Y[:, :, 8] = self._w_term(-2 * rho, -2 * one, c, s, qd, qdd) + self._gravity_term(-one, 0.0, c, s)
        Y[:, :, 9] = self._w_term(one, zero, c, s, qd, qdd)                                     # J_AF
        Y[:, 0, 10] = s**2 * qdd[:, 0] + 2 * s * c * qd[:, 0] * qd[:, 1]                        # J_AX
        Y[:, 1, 10] = -s * c * qd[:, 0] ** 2
        Y[:, :, 11] = roll                                                                      # J_R
        return Y

    def _offset(self, q, qd, qdd):
        pl = self.payload
        if pl.is_zero:
            return np.zeros_like(q)
        c, s = np.cos(q[:, 1]), np.sin(q[:, 1])
        return pl.mass * self._point_mass(q[:, 2], self.tp, c, s, qd, qdd) + pl.inertia * self._roll_term(c, s, qd, qdd)

    def example_parameters(self):
        return (0.0, 12.0, self.tp, self.tb, 0.0, 0.6, 0.35, 6.0, 6.0 * 0.25, 0.55, 0.01, 0.004)
