"""softMC Delta robots, Dynamic Model 1: ``delta3`` and ``delta4`` (spec/models.md §5).

Geometry (spec/interfaces.md §4): base frame z up, origin O at the centre of the circle of motor
axes. Arm i = 1, 2, 3 sits at azimuth (i − 1)·120°, radial unit vector u_i, motor axis
w_i = e_z × u_i through A_i = R·u_i. The elbow is B_i = A_i + L_AB·(cos q_i·u_i − sin q_i·e_z)
(q_i = 0: upper arm horizontal and outward; positive q_i lowers the elbow). The travelling plate
keeps its orientation; its centre p lies below the base, and the forearm of arm i (a parallelogram
rod pair) joins B_i to C_i = p + r·u_i with length L_BC. Gravity is −g·e_z.

Dynamics by virtual work / Lagrange in the actuated coordinates q (Codourey 1998), with the closed
form Jacobians of the Delta (no numerical differentiation). With f_i = C_i − B_i,
b_i = ∂B_i/∂q_i, J_x = [f_i^T] and D = diag(f_i·b_i), the platform velocity is ṗ = J q̇ with
J = J_x⁻¹ D, and every body contributes ``Jᵀ_body (m a_body + m g e_z)`` (translation) or
``Θ Nᵀ n̈`` (a thin rod of direction n(q) with perpendicular inertia Θ, kinetic energy ½Θ|ṅ|²):

- p1 Theta_AB   upper arm about its motor axis:           Θ_AB q̈_i
- p2 g*L_AB*M_AB upper arm gravity moment:                −p2 cos q_i
- p3 M_BC, p4 Theta_BC  forearm (rod pair) of mass M_BC, centre of mass at mid-rod, inertia
  Θ_BC about that centre perpendicular to the rods (``forearm_model: rigid``, exact); or Codourey's
  split (``lumped``): a fraction r of M_BC at the elbow, 1 − r on the plate, plus the same Θ_BC term
- p5 M_P        travelling plate:                         Jᵀ (p̈ + g e_z)
- delta4: p6 M_T (telescope mass riding with the plate), p7 Theta_T (telescope tilting inertia),
  p8 Theta_Tphi (inertia about the φ axis), p9 L_TO, p10 L_TP (telescope joint positions)

The payload (``payload.mass``) rides on the plate; ``payload.inertia`` is about the φ axis (delta4).
The closed-form kinematics live in :mod:`dynid.models._delta_kinematics` (re-exported here).

Examples
--------
>>> geo = DeltaGeometry(0.2, 0.05, 0.35, 0.8)
>>> q = inverse_kinematics(geo, [[0.0, 0.0, -0.7]])
>>> bool(np.allclose(q, q[0, 0])), bool(np.allclose(forward_kinematics(geo, q), [[0.0, 0.0, -0.7]]))
(True, True)

References
----------
R. Clavel, "Conception d'un robot parallèle rapide à 4 degrés de liberté", EPFL thesis 925, 1991.
A. Codourey, "Dynamic modeling of parallel robots for computed-torque control implementation",
Int. J. Robotics Research 17(12):1325–1336, 1998.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import ClassVar, Mapping

import numpy as np

from ..errors import ConfigError, InputDataError, ShapeError
from ._delta_kinematics import (_EZ, _GEOMETRY_KEYS, _U, _W, SINGULARITY_DET_MIN, TRANSMISSION_COS_MIN, DeltaGeometry,
                                _arm_points, _conditioning, _fk, _ik, _Kinematics, _kinematics, cartesian_to_joint,
                                forward_kinematics, inverse_kinematics, joint_to_cartesian)
from .base import ConfigurationCheck, DynamicModel, Joint, Parameter, TaskSpace
from .closed_chain import BodyMotions, ClosedChain, body_frame, cross
from .registry import register_model

__all__ = [
    "DeltaGeometry", "Delta3", "Delta4", "DeltaChain", "inverse_kinematics", "forward_kinematics",
    "cartesian_to_joint", "joint_to_cartesian", "EXAMPLE_GEOMETRY",
]

EXAMPLE_GEOMETRY = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}
"""Geometry of the example robot [m] (a mid-size pick-and-place Delta), used when a Delta model is
built without any configuration (``make_model("delta3")``)."""


# ----------------------------------------------------------------------------------- closed chain

class DeltaChain(ClosedChain):
    """The Delta's three arms as a :class:`~dynid.models.closed_chain.ClosedChain` (a second derivation
    of the closed form in :mod:`~dynid.models._delta_kinematics`, through the generic layer).

    Task coordinates: the plate centre ``p`` ``(N, 3)`` (rates ``ṗ``); constraints
    ``Φ_i = ½(|p + r u_i − B_i(q_i)|² − L_BC²)``. Bodies: the three upper arms (origin A_i, x along the
    arm, z = w_i the motor axis), the three forearms as rigid rods (origin B_i, z along C_i − B_i, no spin)
    and the plate (translation only).
    """

    n_actuated = 3
    n_rates = 3
    n_bodies = 7

    def __init__(self, geometry: DeltaGeometry) -> None:
        self.geometry = geometry

    def _f(self, qa, x):
        B, b, b2 = _arm_points(self.geometry, qa)
        return x[:, None, :] + self.geometry.platform_radius * _U[None] - B, b, b2

    def seed(self, qa):
        """The plate below the centre with every arm at the first sample's mean angle (closed form)."""
        return _fk(self.geometry, np.full((1, 3), float(np.mean(qa[0]))))

    def residual(self, qa, x):
        f, _, _ = self._f(qa, x)
        return 0.5 * ((f * f).sum(axis=2) - self.geometry.forearm**2)

    def jacobians(self, qa, x):
        f, b, _ = self._f(qa, x)
        Pa = np.zeros((qa.shape[0], 3, 3))
        Pa[:, np.arange(3), np.arange(3)] = -(f * b).sum(axis=2)
        return Pa, f

    def retract(self, x, du):
        return x + du

    def bias(self, qa, qda, x, u):
        f, b, b2 = self._f(qa, x)
        fd = u[:, None, :] - b * qda[..., None]
        return (fd * fd).sum(axis=2) - (f * b2).sum(axis=2) * qda**2

    def motions(self, qa, qda, qdda, x, u, du) -> BodyMotions:
        N, L = qa.shape[0], self.geometry.forearm
        f, b, b2 = self._f(qa, x)
        W = np.broadcast_to(_W, (N, 3, 3))
        # upper arms: rotation about w_i through A_i
        d = np.cos(qa)[..., None] * _U - np.sin(qa)[..., None] * _EZ
        Ja = np.zeros((N, 3, 6, 3))
        Jfa = np.zeros((N, 3, 6, 3))
        arms = BodyMotions(np.stack([d, cross(W, d), W], axis=-1), W * qda[..., None], W * qdda[..., None],
                           np.zeros((N, 3, 3)), Ja, None)
        # forearms: n = f/L (|f| = L), ω = n × ṅ; origin at the elbow
        n = f / L
        fd = u[:, None, :] - b * qda[..., None]
        fdd = du[:, None, :] - b * qdda[..., None] - b2 * (qda**2)[..., None]
        nx = np.zeros((N, 3, 3, 3))
        nx[..., 0, 1], nx[..., 0, 2], nx[..., 1, 2] = -n[..., 2], n[..., 1], -n[..., 0]
        nx[..., 1, 0], nx[..., 2, 0], nx[..., 2, 1] = n[..., 2], -n[..., 1], n[..., 0]
        nxb = np.einsum("nkij,nkj->nki", nx, b)
        for i in range(3):   # arm i moves only with its own actuator
            Ja[:, i, :3, i] = _W[i]
            Jfa[:, i, :3, i] = -nxb[:, i] / L
            Jfa[:, i, 3:, i] = b[:, i]
        Jfu = np.zeros((N, 3, 6, 3))
        Jfu[:, :, :3] = nx / L
        fore = BodyMotions(body_frame(n, W), cross(n, fd) / L, cross(n, fdd) / L,
                           b * qdda[..., None] + b2 * (qda**2)[..., None], Jfa, Jfu)
        # plate: translation
        Jp = np.zeros((N, 1, 6, 3))
        Jp[:, 0, 3:] = np.eye(3)
        plate = BodyMotions(np.broadcast_to(np.eye(3), (N, 1, 3, 3)), np.zeros((N, 1, 3)), np.zeros((N, 1, 3)),
                            du[:, None], None, Jp)
        return BodyMotions.concatenate([arms, fore, plate])


# ----------------------------------------------------------------------------------- parameters

_UNDOCUMENTED = ("undocumented by the softMC catalogue (name only, no equation): dynid gives it no meaning; "
                 "never identified, must be 0 (a non-zero value, which would change nothing, is rejected)")
_NO_MEANING = ("D", "C_r", "Fr_max", "R_ext")
_FOUR_AXIS_ONLY = ("M_T", "Theta_T", "Theta_Tphi", "L_TO", "L_TP")
_GEOMETRY_RTOL = 1e-3
"""L_TO/L_TP given as parameter values must match the configured geometry to this relative tolerance (a softMC
PRG prints 4 significant digits: at most 5e-4 relative rounding)."""


def _parameters(four_axis: bool) -> tuple[Parameter, ...]:
    unused = "" if four_axis else " — 4-axis only: a 3-axis Delta has no telescope (constant, must be 0)"
    role4 = "dynamic" if four_axis else "constant"
    return (
        Parameter("Theta_AB", "kg m^2", "upper arm AB inertia about its motor axis, incl. reflected motor/gear", 1, positive=True),
        Parameter("g*L_AB*M_AB", "N m", "upper arm gravity moment: g x mass x distance motor axis to its centre of "
                  "mass (holding torque -p2*cos q)", 2),
        Parameter("M_BC", "kg", "mass of one forearm (parallelogram rod pair BC)", 3, positive=True),
        Parameter("Theta_BC", "kg m^2", "forearm (rod pair) inertia about its centre of mass, perpendicular to the "
                  "rods", 4, positive=True),
        Parameter("M_P", "kg", "travelling plate mass (everything translating with the plate)", 5, positive=True),
        Parameter("M_T", "kg", "telescopic shaft: mass riding with its lower joint on the plate (interpretation: "
                  "structurally the same column as M_P)" + unused, 6, role=role4, positive=True),
        Parameter("Theta_T", "kg m^2", "telescopic shaft tilting inertia (interpretation: of the part turning about "
                  "the upper joint, about that joint, plus the sliding part about its centre of mass; perpendicular "
                  "to the shaft)" + unused, 7, role=role4, positive=True),
        Parameter("Theta_Tphi", "kg m^2", "inertia about the 4th (rotation) axis phi: motor, shaft spin, tool flange"
                  + unused, 8, role=role4, positive=True),
        Parameter("L_TO", "m", "telescope upper joint distance below the base origin O (geometry: a constant, "
                  "enters the Theta_T column through the configuration, its own column is zero)" + unused, 9,
                  role="constant"),
        Parameter("L_TP", "m", "telescope lower joint distance above the plate centre P (geometry: a constant, "
                  "enters the Theta_T column through the configuration, its own column is zero)" + unused, 10,
                  role="constant"),
        Parameter("D", "-", "D: " + _UNDOCUMENTED, 11, role="constant"),
        Parameter("C_r", "-", "C_r: " + _UNDOCUMENTED, 12, role="constant"),
        Parameter("Fr_max", "-", "Fr_max (perhaps a friction limit): " + _UNDOCUMENTED, 13, role="constant"),
        Parameter("R_ext", "-", "R_ext: " + _UNDOCUMENTED, 14, role="constant"),
    )


_NOTES = (
    "Geometry (help(dynid.models.delta)): arm i at azimuth (i-1)*120 deg, q_i = 0 upper arm horizontal outward, "
    "positive q_i lowers the elbow, elbow-out assembly, plate below the base keeping its orientation, gravity -z. "
    "Closed-form kinematics and Jacobians (dynid.models.delta.inverse_kinematics / forward_kinematics). "
    "forearm_model 'rigid' (default): each forearm is a rigid rod pair with its centre of mass at mid-rod, exact; "
    "p1..p5 then have structural rank 4 (the combination -L_AB^2/2*p1 - g*L_AB/2*p2 + p3 + L_BC^2/4*p4 - 3/2*p5 "
    "changes no torque), so identification reports base parameters (M_P held at 0, the other four absorbing "
    "it; they may then look unphysical, e.g. a negative g*L_AB*M_AB, while every joint torque stays exact): hold "
    "one of them (e.g. M_P from a scale) under 'parameters' to get physical values for the others. "
    "'lumped': Codourey's split (elbow_mass_fraction of M_BC at the elbow, the rest on the plate, plus the Theta_BC term); it spans the same torques after "
    "identification but is a few % off a rigid-forearm robot with the same physical values. "
    "p11..p14 (D, C_r, Fr_max, R_ext) are undocumented by softMC (no equation): dynid gives them no meaning, "
    "never identifies them and rejects a non-zero value (it would be silently ignored). L_TO/L_TP (p9, p10) are "
    "geometry constants read from 'parameters'; delta3 rejects non-zero 4-axis parameters p6..p10. "
    "Without any configuration the model is the example robot (" +
    ", ".join(f"{k} {v} m" for k, v in EXAMPLE_GEOMETRY.items()) + ")."
)

_NOTES4 = _NOTES + (
    " delta4 interpretation of the 4th axis: a telescopic shaft from a universal joint at T_O = O - L_TO*e_z "
    "(base) to one at T_P = P + L_TP*e_z (plate), homokinetic (parallel end axes), driving the tool flange from a "
    "base motor: tau_phi = (Theta_Tphi + payload inertia)*phidd, no coupling with the arms. Kinetic energy of "
    "the shaft: 1/2*Theta_T*|d(n)/dt|^2 (n = shaft direction) + 1/2*M_T*|v_P|^2; the upper part is taken as "
    "balanced about its joint (no gravity moment: softMC has no slot for one) and the shaft's spin inertia is "
    "lumped into Theta_Tphi (exact when it is negligible)."
)


# ----------------------------------------------------------------------------------- models

class _Delta(DynamicModel):
    # With rigid forearms one combination of p1..p5 is invisible in the torques: the forearm inertia
    # Theta_BC is the parameter held (absorbed), which leaves the others positive and close to a
    # lumped (Codourey) split, instead of holding the plate mass.
    prefer_dependent = ("Theta_BC",)
    softmc_model = 1
    element = "DELTA"
    status = "verified"
    four_axis: ClassVar[bool] = False
    config_keys = {
        "base_radius": "R [m]: base centre O to the motor axes (required)",
        "platform_radius": "r [m]: plate centre to the forearm joints (required)",
        "upper_arm": "L_AB [m]: motor axis to elbow (required)",
        "forearm": "L_BC [m]: forearm (rod) length, elbow to plate joint (required)",
        "forearm_model": "'rigid' (default: forearm = rigid rod pair, centre of mass at mid-rod, exact) or "
                         "'lumped' (Codourey's split, softMC-style)",
        "elbow_mass_fraction": "with forearm_model 'lumped': share of M_BC lumped at the elbow (default 2/3)",
    }

    def __init__(self, config=None) -> None:
        super().__init__(config)
        missing = [k for k in _GEOMETRY_KEYS if self.option(k) is None]
        if missing:
            raise ConfigError(f"model {self.name!r} needs the geometry key(s) {', '.join(missing)} [m]",
                              hint="set base_radius, platform_radius, upper_arm and forearm in the configuration "
                                   "(the geometry: help(dynid.models.delta))")
        self.geometry = DeltaGeometry(*(self.option(k) for k in _GEOMETRY_KEYS))
        fm = self.option("forearm_model", "rigid")
        if fm not in ("rigid", "lumped"):
            raise ConfigError(f"forearm_model of model {self.name!r} must be 'rigid' or 'lumped', got {fm!r}")
        self.forearm_model = fm
        r = self.option("elbow_mass_fraction")
        if r is not None and fm != "lumped":
            raise ConfigError("elbow_mass_fraction only applies to forearm_model 'lumped'",
                              hint="set forearm_model: lumped, or remove elbow_mass_fraction")
        r = 2.0 / 3.0 if r is None else r
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0.0 <= r <= 1.0:
            raise ConfigError(f"elbow_mass_fraction must be a number in [0, 1], got {r!r}")
        self.elbow_mass_fraction = float(r)
        known = self.config.parameters
        self.telescope_offset = float(known.get("L_TO", 0.0)) + float(known.get("L_TP", 0.0))
        names = ["A1", "A2", "A3", "A4"][: 4 if self.four_axis else 3]
        self.joints = tuple(Joint(n, "rotary") for n in self._joint_names(names))
        self.parameters = _parameters(self.four_axis)
        self.check_parameters(known)
        self._check_home()

    # --------------------------------------------------------------- parameter values
    def check_parameters(self, values) -> None:
        """Reject parameter values this model's torque would silently ignore.

        The torque uses p1..p8 (delta3: p1..p5); L_TO and L_TP (p9, p10) are geometry taken from the
        configuration's ``parameters``; D, C_r, Fr_max and R_ext (p11..p14) have no published meaning
        (spec/models.md §5: undocumented by softMC), so dynid gives them none. A value that would therefore
        change nothing is an error, not a silent no-op: p11..p14 must be 0; on ``delta3`` the 4-axis
        parameters p6..p10 must be 0; on ``delta4`` p9, p10 must equal the configured telescope geometry.

        Parameters
        ----------
        values : mapping {name: value} or array-like, shape (n_params,)
            Model parameters by name (e.g. the configuration's ``parameters``; missing names are not
            checked) or all of them in catalogue order (e.g. read from a softMC PRG).

        Raises
        ------
        ConfigError
            Naming the parameter, its ``DynamicParameter`` slot, the value and what to do.
        """
        if isinstance(values, Mapping):
            given = {str(k): float(v) for k, v in values.items()}
        else:
            arr = np.asarray(values, dtype=float).ravel()
            if arr.size != self.n_params:
                raise ShapeError(f"model {self.name!r} has {self.n_params} parameters, got {arr.size} values")
            given = dict(zip(self.param_names, arr.tolist()))
        slots = {p.name: p.slot for p in self.parameters}
        for name in _NO_MEANING:
            v = given.get(name, 0.0)
            if v != 0.0:
                raise ConfigError(
                    f"model {self.name!r}: parameter {name} (DynamicParameter[{slots[name]}]) = {v:g}, but it has no "
                    "published meaning (softMC does not document it) and dynid's Delta torque does "
                    "not use it: the value would be silently ignored",
                    hint=f"set {name} to 0 (the torque then is what dynid computes); if the controller's model "
                         "uses it, its torques differ from dynid's by that term", options=("parameters",))
        if not self.four_axis:
            for name in _FOUR_AXIS_ONLY:
                v = given.get(name, 0.0)
                if v != 0.0:
                    raise ConfigError(
                        f"model 'delta3': parameter {name} (DynamicParameter[{slots[name]}]) = {v:g} belongs to the "
                        "4th axis (telescopic shaft), which a 3-axis Delta does not have: the value would be "
                        "silently ignored", hint=f"use model delta4 for a 4-axis Delta, or set {name} to 0",
                        options=("parameters",))
            return
        known = self.config.parameters
        for name in ("L_TO", "L_TP"):
            if name not in given:
                continue
            v, conf = given[name], float(known.get(name, 0.0))
            if not math.isclose(v, conf, rel_tol=_GEOMETRY_RTOL, abs_tol=1e-9):
                raise ConfigError(
                    f"model 'delta4': {name} (DynamicParameter[{slots[name]}]) = {v:g} m, but the model is configured "
                    f"with {name} = {conf:g} m: the torque uses the configured telescope geometry, so the value "
                    "would be silently ignored",
                    hint=f"put parameters: {{{name}: {v:g}}} in the configuration (the telescope joint positions are "
                         "geometry)",
                    options=("parameters",))

    # --------------------------------------------------------------- workspace
    def _check_home(self) -> None:
        if not np.isfinite(self._centre_line).any():
            g = self.geometry
            raise ConfigError(f"model {self.name!r}: the geometry {g} cannot assemble (no plate position below the "
                              "base is reachable)", hint="check base_radius, platform_radius, upper_arm and forearm")

    @cached_property
    def _centre_line(self) -> np.ndarray:
        """Plate height on the vertical axis when all arms are at θ, for θ in [−0.6, 1.2] rad ``(200,)``."""
        theta = np.linspace(-0.6, 1.2, 200)
        q = np.repeat(theta[:, None], 3, axis=1)
        p = _fk(self.geometry, q)
        return p[:, 2]

    def workspace(self) -> tuple[float, float, float]:
        """Cylinder used for random states: ``(radius, z_top, z_bottom)`` [m].

        Heights from the plate on the vertical axis with all arms at −0.3 rad and 0.9 rad (or the
        reachable part of that range); radius 0.35·L_BC. Positions in it are further required to be well
        conditioned (see :meth:`sample_states`).
        """
        theta = np.linspace(-0.6, 1.2, 200)
        z = self._centre_line
        ok = np.isfinite(z) & (theta >= -0.3) & (theta <= 0.9)
        if not ok.any():
            ok = np.isfinite(z)
        return 0.35 * self.geometry.forearm, float(np.max(z[ok])), float(np.min(z[ok]))

    def _valid(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Well-conditioned configurations: elbow-out with transmission angle margin, away from the
        parallel singularity, arms within ±π/2, inside ``position_limits`` if configured."""
        geo = self.geometry
        ok = np.isfinite(q).all(axis=1) & (np.abs(q) < 0.5 * np.pi).all(axis=1)
        qs = np.where(np.isfinite(q), q, 0.0)
        cos_t, det = _conditioning(geo, qs, p)
        ok &= (cos_t > TRANSMISSION_COS_MIN).all(axis=1)
        ok &= np.abs(det) > SINGULARITY_DET_MIN
        lims = self.config.position_limits
        if lims is not None and len(lims) == self.n_joints:
            lo, hi = np.array(lims, dtype=float)[:3].T
            ok &= ((q >= lo) & (q <= hi)).all(axis=1)
        return ok

    def sample_positions(self, rng: np.random.Generator, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
        """Random plate positions ``(n_samples, 3)`` [m] in :meth:`workspace` and their angles ``(n_samples, 3)``
        [rad], well conditioned and inside :meth:`state_bounds`."""
        lo, hi = self.state_bounds()
        return self._sample_positions(rng, n_samples, lo[:3], hi[:3])

    def _sample_positions(self, rng, n_samples, lo=None, hi=None):
        radius, z_top, z_bot = self.workspace()
        out_p, out_q, have = [], [], 0
        for _ in range(200):  # rejection sampling in batches (vectorised inside)
            m = max(64, 2 * (n_samples - have))
            rad = radius * np.sqrt(rng.uniform(size=m))
            ang = rng.uniform(0, 2 * np.pi, size=m)
            p = np.column_stack([rad * np.cos(ang), rad * np.sin(ang), rng.uniform(z_bot, z_top, size=m)])
            q = _ik(self.geometry, p)
            ok = self._valid(p, q)
            if lo is not None:
                ok &= ((q >= lo) & (q <= hi)).all(axis=1)
            out_p.append(p[ok])
            out_q.append(q[ok])
            have += int(ok.sum())
            if have >= n_samples:
                break
        else:
            raise ConfigError(f"model {self.name!r}: could not find {n_samples} well-conditioned plate positions",
                              hint="check the geometry and position_limits")
        return np.concatenate(out_p)[:n_samples], np.concatenate(out_q)[:n_samples]

    def sample_states(self, rng: np.random.Generator, n_samples: int):
        """Random states: plate positions in the workspace (IK for q), random rates.

        Returns ``q, qd, qdd`` ``(n_samples, n_joints)``: qd ~ N(0, 1) rad/s, qdd ~ N(0, 3²) rad/s².
        """
        _, q = self.sample_positions(rng, n_samples)
        if self.four_axis:
            q = np.column_stack([q, rng.uniform(-np.pi, np.pi, n_samples)])
        qd = rng.normal(size=(n_samples, self.n_joints))
        qdd = rng.normal(size=(n_samples, self.n_joints)) * 3.0
        return q, qd, qdd

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Actuator angle range ``(lo, hi)`` ``(n_joints,)`` [rad] of the workspace (or ``position_limits``)."""
        lims = self.config.position_limits
        if lims is not None and len(lims) == self.n_joints:
            a = np.array(lims, dtype=float)
            return a[:, 0], a[:, 1]
        lo, hi = self._workspace_range
        return lo.copy(), hi.copy()

    @cached_property
    def _workspace_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Angle range of 2000 workspace samples (seed 0), widened by 0.05 rad."""
        _, q = self._sample_positions(np.random.default_rng(0), 2000)
        lo, hi = q.min(axis=0) - 0.05, q.max(axis=0) + 0.05
        if self.four_axis:
            lo, hi = np.append(lo, -np.pi), np.append(hi, np.pi)
        return lo, hi

    def task_space(self, q) -> TaskSpace:
        """Plate centre ``(N, 3)`` [m] of actuator angles ``q`` (closed-form forward kinematics)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        return TaskSpace("plate position", ("x", "y", "z"), ("m", "m", "m"), forward_kinematics(self.geometry, q[:, :3]))

    def configuration_check(self, q) -> ConfigurationCheck:
        """Assembly and conditioning of the mechanism at actuator angles ``q`` ``(N, n_joints)`` [rad].

        Values per sample: the transmission angle of each arm (between the forearm and its elbow's path,
        ``arccos(f_i·b_i / (L_AB L_BC))`` [rad], limit ``arccos(TRANSMISSION_COS_MIN)``, 75.5°; 90° is the serial
        singularity, beyond it the elbow has folded in) and the parallel-singularity index
        ``1/|det(n_1, n_2, n_3)|`` of the forearm unit vectors (1 for orthogonal forearms, ``inf`` at the
        singularity; limit ``1/SINGULARITY_DET_MIN`` = 10). Where the forearms cannot meet the plate every
        value is ``inf`` (does not assemble). These are the configurations :meth:`sample_states` calls well
        conditioned; excitation design keeps every sample inside them (``dynid excite --fourier``).
        """
        q = np.atleast_2d(np.asarray(q, dtype=float))
        if q.ndim != 2 or q.shape[1] != self.n_joints:
            raise ShapeError(f"q must have shape (n_samples, {self.n_joints}), got an array with shape {q.shape}")
        qa = q[:, :3]
        values = np.full((qa.shape[0], 4), np.inf)
        with np.errstate(invalid="ignore"):
            p = _fk(self.geometry, qa)
        ok = np.isfinite(p).all(axis=1) & np.isfinite(qa).all(axis=1)
        if ok.any():
            cos_t, det = _conditioning(self.geometry, qa[ok], p[ok])
            values[ok, :3] = np.arccos(np.clip(cos_t, -1.0, 1.0))
            with np.errstate(divide="ignore"):
                values[ok, 3] = 1.0 / np.abs(det)
        names = tuple(f"transmission angle, arm {i + 1}" for i in range(3)) + ("parallel-singularity index",)
        limits = np.array([math.acos(TRANSMISSION_COS_MIN)] * 3 + [1.0 / SINGULARITY_DET_MIN])
        return ConfigurationCheck(names, values, limits, ("rad",) * 3 + ("",))

    # --------------------------------------------------------------- dynamics
    def _columns(self, q, qd, qdd):
        """Generalised-force columns on the three arm joints, each ``(N, 3)`` [N m per unit parameter]."""
        geo, g = self.geometry, self.gravity
        qa, qda, qdda = q[:, :3], qd[:, :3], qdd[:, :3]
        k = _kinematics(geo, qa, qda, qdda)
        gz = g * _EZ
        # centre of each forearm: a_mid = (p̈ + b q̈ + b2 q̇²)/2 (+ g e_z for the weight)
        a_arm = k.b * qdda[..., None] + k.b2 * (qda**2)[..., None]             # elbow accelerations
        a_mid = 0.5 * (k.pdd[:, None, :] + a_arm) + gz
        f_dd = k.pdd[:, None, :] - a_arm                                       # f̈_i
        rhs = [k.pdd + gz, a_mid.sum(axis=1), f_dd.sum(axis=1)]
        if self.four_axis:
            rhs.append(self._telescope_rhs(k))
        jt = k.jt(np.stack(rhs, axis=-1))                                      # (N, 3, n_rhs)
        plate = jt[..., 0]
        rigid = 0.5 * jt[..., 1] + 0.5 * np.einsum("nij,nij->ni", k.b, a_mid)
        rot = (jt[..., 2] - np.einsum("nij,nij->ni", k.b, f_dd)) / geo.forearm**2
        L = geo.upper_arm
        elbow = L**2 * qdda - g * L * np.cos(qa)                               # point mass at the elbow
        r = self.elbow_mass_fraction
        forearm = rigid if self.forearm_model == "rigid" else r * elbow + 3.0 * (1.0 - r) * plate
        cols = {"inertia": qdda, "gravity": -np.cos(qa), "forearm": forearm, "rot": rot, "plate": plate}
        if self.four_axis:
            cols["telescope"] = jt[..., 3]
        return cols

    def _telescope_rhs(self, k: _Kinematics) -> np.ndarray:
        """n̈ projected ⟂ n, over the shaft length: Jᵀ of it is the Theta_T column (``(N, 3)``)."""
        s = k.p + self.telescope_offset * _EZ                  # T_P − T_O
        ell = np.linalg.norm(s, axis=1, keepdims=True)
        if np.any(ell < 1e-6):
            raise InputDataError(f"model {self.name!r}: the telescope joints coincide (zero shaft length)",
                                 hint="check L_TO and L_TP")
        n = s / ell
        ell_d = np.einsum("ni,ni->n", n, k.pd)[:, None]
        n_d = (k.pd - n * ell_d) / ell
        ell_dd = (np.einsum("ni,ni->n", n_d, k.pd) + np.einsum("ni,ni->n", n, k.pdd))[:, None]
        n_dd = (k.pdd - n * ell_dd - 2.0 * n_d * ell_d) / ell
        return (n_dd - n * np.einsum("ni,ni->n", n, n_dd)[:, None]) / ell

    def _regressor(self, q, qd, qdd):
        N = q.shape[0]
        c = self._columns(q, qd, qdd)
        Y = np.zeros((N, self.n_joints, self.n_params))
        arms = slice(0, 3)
        Y[:, arms, 0] = c["inertia"]
        Y[:, arms, 1] = c["gravity"]
        Y[:, arms, 2] = c["forearm"]
        Y[:, arms, 3] = c["rot"]
        Y[:, arms, 4] = c["plate"]
        if self.four_axis:
            Y[:, arms, 5] = c["plate"]
            Y[:, arms, 6] = c["telescope"]
            Y[:, 3, 7] = qdd[:, 3]
        return Y

    def _offset(self, q, qd, qdd):
        out = np.zeros_like(q)
        m = self.payload.mass
        if m:
            out[:, :3] = m * self._columns(q, qd, qdd)["plate"]
        if self.four_axis:
            out[:, 3] = self.payload.inertia * qdd[:, 3]
        return out

    def example_parameters(self):
        p = [0.08, 9.80665 * 1.0 * 0.15, 0.3, 0.3 * 0.8**2 / 12, 1.2]
        if self.four_axis:
            known = self.config.parameters
            p += [0.25, 0.01, 0.003, float(known.get("L_TO", 0.0)), float(known.get("L_TP", 0.0))]
        else:
            p += [0.0] * 5
        return tuple(p + [0.0] * 4)


@register_model
class Delta3(_Delta):
    name = "delta3"
    title = "Delta robot, 3 axes (parallel kinematics), Dynamic Model 1"
    notes = _NOTES
    example_config = dict(EXAMPLE_GEOMETRY)


@register_model
class Delta4(_Delta):
    name = "delta4"
    title = "Delta robot, 4 axes (3 parallel + rotary phi via telescopic shaft), Dynamic Model 1"
    four_axis = True
    notes = _NOTES4
    example_config = {**EXAMPLE_GEOMETRY, "parameters": {"L_TO": 0.05, "L_TP": 0.08}}
