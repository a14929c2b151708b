"""Closed-chain reference for the Delta models, written independently of ``dynid.models.delta``.

The robot is built in MuJoCo from physical data as a real parallelogram Delta: three upper arms
on hinges, six rods (two per arm) on ball joints at the elbow crossbar, a free-floating plate, and
for the 4-axis robot a tool flange on a hinge plus a two-part telescopic shaft (upper tube on a
ball joint at the base, sliding tube on a slide joint). Every loop is closed by an equality
``connect`` constraint between a rod (or shaft) end and the plate.

Given actuator angles, rates and accelerations, the reference

1. places the plate by its own inverse kinematics (numerical root finding on |C − B(q)| = L_BC),
   points every rod from its elbow ball to its plate joint, and checks MuJoCo's constraint
   violation ``efc_pos`` is at rounding level;
2. solves the tree velocities and accelerations from MuJoCo's constraint Jacobian ``efc_J`` and
   ``mj_jacDot`` (rod and shaft spins about their own axes set to zero: they carry no inertia);
3. computes ``M(q) qacc + bias`` with MuJoCo and solves ``M qacc + bias = Sᵀ tau + efc_Jᵀ λ`` for the
   actuator torques and the constraint forces (least squares; the residual is returned and must
   vanish for a consistent closed chain).

The φ motor sits on the base and drives the flange through the shaft: its torque is an external
torque about z on the flange (reaction on the base), i.e. the generalised force ``jacr_flangeᵀ e_z τ4``.
Nothing here uses the Jacobians, kinematics or parameter columns of the model under test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

G = 9.80665
PHI = np.radians([0.0, 120.0, 240.0])


@dataclass(frozen=True)
class DeltaRobot:
    """Physical data of a parallelogram Delta (SI). Rods: two per arm, uniform unless ``rod_inertia``."""

    R: float = 0.2                 # base radius [m]
    r: float = 0.05                # plate radius [m]
    L_AB: float = 0.35             # upper arm [m]
    L_BC: float = 0.8              # rod length [m]
    spacing: float = 0.045         # half distance between the two rods of a pair [m]
    arm_mass: float = 1.1          # [kg]
    arm_com: float = 0.14          # motor axis to COM along the arm [m]
    arm_inertia: tuple = (0.002, 0.013, 0.014)   # about COM: along arm, about motor axis, vertical [kg m^2]
    armature: float = 0.035        # reflected rotor inertia at the joint [kg m^2]
    rod_mass: float = 0.16         # each rod [kg]
    rod_inertia: float | None = None   # each rod, about its COM, perpendicular; None = uniform m L²/12
    plate_mass: float = 0.9
    plate_inertia: tuple = (0.004, 0.004, 0.007)
    payload_mass: float = 0.0
    payload_inertia: float = 0.0   # about the phi axis (delta4)
    four_axis: bool = False
    flange_mass: float = 0.15
    flange_inertia: float = 0.0004     # about the phi axis
    phi_armature: float = 0.002        # phi motor rotor, reflected [kg m^2]
    L_TO: float = 0.05
    L_TP: float = 0.08
    tube_inertia: float = 0.006        # upper tube about its base joint, perpendicular [kg m^2]
    slide_mass: float = 0.22           # sliding tube, COM at the plate joint [kg]
    slide_inertia: float = 0.003       # sliding tube about its COM, perpendicular [kg m^2]
    gravity: float = G

    @property
    def rod_I(self) -> float:
        return self.rod_mass * self.L_BC**2 / 12 if self.rod_inertia is None else self.rod_inertia

    def parameters(self) -> np.ndarray:
        """softMC Delta DynamicParameter[1..14] of this robot, from the physical data."""
        p = np.zeros(14)
        p[0] = self.arm_inertia[1] + self.arm_mass * self.arm_com**2 + self.armature
        p[1] = self.gravity * self.arm_mass * self.arm_com
        p[2] = 2 * self.rod_mass
        p[3] = 2 * self.rod_I
        p[4] = self.plate_mass + (self.flange_mass if self.four_axis else 0.0)
        if self.four_axis:
            p[5] = self.slide_mass
            p[6] = self.tube_inertia + self.slide_inertia
            p[7] = self.flange_inertia + self.phi_armature
            p[8], p[9] = self.L_TO, self.L_TP
        return p

    def config(self) -> dict:
        cfg = {"base_radius": self.R, "platform_radius": self.r, "upper_arm": self.L_AB, "forearm": self.L_BC,
               "gravity": self.gravity,
               "payload": {"mass": self.payload_mass, "inertia": self.payload_inertia}}
        if self.four_axis:
            cfg["parameters"] = {"L_TO": self.L_TO, "L_TP": self.L_TP}
        return cfg


def _f(v) -> str:
    return " ".join(f"{float(x):.17g}" for x in np.ravel(v))


def _mjcf(rb: DeltaRobot) -> str:
    eps = 1e-9  # axial inertia of thin rods (no effect: their spin is held at zero)
    arms, eqs = [], []
    for i in range(3):
        u = np.array([np.cos(PHI[i]), np.sin(PHI[i]), 0.0])
        quat = [np.cos(PHI[i] / 2), 0, 0, np.sin(PHI[i] / 2)]
        rods = []
        for k, sgn in enumerate((1.0, -1.0)):
            rods.append(f"""
        <body name="rod{i}{k}" pos="{_f([rb.L_AB, sgn * rb.spacing, 0])}">
          <joint name="ball{i}{k}" type="ball"/>
          <inertial pos="{_f([rb.L_BC / 2, 0, 0])}" mass="{rb.rod_mass!r}"
                    diaginertia="{_f([eps, rb.rod_I, rb.rod_I])}"/>
          <site name="rodend{i}{k}" pos="{_f([rb.L_BC, 0, 0])}"/>
        </body>""")
            eqs.append(f'<connect site1="rodend{i}{k}" site2="plate{i}{k}"/>')
        arms.append(f"""
    <body name="arm{i}" pos="{_f(rb.R * u)}" quat="{_f(quat)}">
      <joint name="q{i}" type="hinge" axis="0 1 0" armature="{rb.armature!r}"/>
      <inertial pos="{_f([rb.arm_com, 0, 0])}" mass="{rb.arm_mass!r}"
                diaginertia="{_f(rb.arm_inertia)}"/>{''.join(rods)}
    </body>""")
    plate_sites = []
    for i in range(3):
        u = np.array([np.cos(PHI[i]), np.sin(PHI[i]), 0.0])
        w = np.array([-np.sin(PHI[i]), np.cos(PHI[i]), 0.0])
        for k, sgn in enumerate((1.0, -1.0)):
            plate_sites.append(f'<site name="plate{i}{k}" pos="{_f(rb.r * u + sgn * rb.spacing * w)}"/>')
    payload = ""
    if rb.payload_mass > 0:
        a = max(0.001, rb.payload_inertia)
        payload = (f'<body name="payload" pos="0 0 -0.03"><inertial pos="0 0 0" mass="{rb.payload_mass!r}" '
                   f'diaginertia="{_f([a, a, max(rb.payload_inertia, 1e-6)])}"/></body>')
    extra_plate, extra_world = "", ""
    if rb.four_axis:
        extra_plate = f"""
      <site name="tp" pos="{_f([0, 0, rb.L_TP])}"/>
      <body name="flange" pos="0 0 -0.01">
        <joint name="phi" type="hinge" axis="0 0 1" armature="{rb.phi_armature!r}"/>
        <inertial pos="0 0 -0.005" mass="{rb.flange_mass!r}" diaginertia="{_f([0.0003, 0.0003, rb.flange_inertia])}"/>
        {payload}
      </body>"""
        payload = ""
        extra_world = f"""
    <body name="tube" pos="{_f([0, 0, -rb.L_TO])}">
      <joint name="tube_ball" type="ball"/>
      <inertial pos="0 0 0" mass="0.4" diaginertia="{_f([eps, rb.tube_inertia, rb.tube_inertia])}"/>
      <body name="slide">
        <joint name="slide" type="slide" axis="1 0 0"/>
        <inertial pos="0 0 0" mass="{rb.slide_mass!r}" diaginertia="{_f([eps, rb.slide_inertia, rb.slide_inertia])}"/>
        <site name="tel_end" pos="0 0 0"/>
      </body>
    </body>"""
        eqs.append('<connect site1="tel_end" site2="tp"/>')
    return f"""
<mujoco model="delta_reference">
  <compiler angle="radian"/>
  <option gravity="0 0 {-rb.gravity!r}" jacobian="dense"/>
  <worldbody>{''.join(arms)}
    <body name="plate" pos="0 0 -0.7">
      <freejoint name="plate"/>
      <inertial pos="0 0 0" mass="{rb.plate_mass!r}" diaginertia="{_f(rb.plate_inertia)}"/>
      {' '.join(plate_sites)}{extra_plate}
      {payload}
    </body>{extra_world}
  </worldbody>
  <equality>
    {' '.join(eqs)}
  </equality>
</mujoco>"""


def _elbow(rb: DeltaRobot, i: int, q: float) -> np.ndarray:
    u = np.array([np.cos(PHI[i]), np.sin(PHI[i]), 0.0])
    return rb.R * u + rb.L_AB * (np.cos(q) * u - np.sin(q) * np.array([0, 0, 1.0]))


def ik_reference(rb: DeltaRobot, p: np.ndarray) -> np.ndarray:
    """Actuator angles for plate centre ``p (3,)``: roots of |p + r u_i − B_i(q)|² − L_BC² on a grid,
    refined by Brent's method; the elbow-out root is the one with the elbow farthest out."""
    q = np.empty(3)
    grid = np.linspace(-np.pi, np.pi, 721)
    for i in range(3):
        u = np.array([np.cos(PHI[i]), np.sin(PHI[i]), 0.0])

        def g(a, i=i, u=u):
            d = p + rb.r * u - _elbow(rb, i, a)
            return d @ d - rb.L_BC**2

        vals = np.array([g(a) for a in grid])
        idx = np.nonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0]
        roots = [brentq(g, grid[j], grid[j + 1], xtol=1e-15, rtol=4 * np.finfo(float).eps) for j in idx]
        if not roots:
            raise ValueError(f"reference IK: {p} out of reach")
        q[i] = max(roots, key=lambda a: np.cos(a))
    return q


class DeltaReference:
    """MuJoCo closed-chain inverse dynamics of :class:`DeltaRobot`."""

    def __init__(self, robot: DeltaRobot) -> None:
        import mujoco

        self.mj = mujoco
        self.rb = robot
        self.m = mujoco.MjModel.from_xml_string(_mjcf(robot))
        self.d = mujoco.MjData(self.m)
        m = self.m
        self.arm_dofs = [m.jnt_dofadr[m.joint(f"q{i}").id] for i in range(3)]
        self.spin_bodies = [m.body(f"rod{i}{k}").id for i in range(3) for k in range(2)]
        if robot.four_axis:
            self.spin_bodies.append(m.body("tube").id)
            self.flange = m.body("flange").id
        self.pairs = [(f"rodend{i}{k}", f"plate{i}{k}") for i in range(3) for k in range(2)]
        if robot.four_axis:
            self.pairs.append(("tel_end", "tp"))

    # ------------------------------------------------------------ configuration
    def _set_positions(self, q: np.ndarray) -> None:
        mj, m, d, rb = self.mj, self.m, self.d, self.rb
        p = self._plate(q[:3])
        d.qpos[:] = 0.0
        for i in range(3):
            d.qpos[m.jnt_qposadr[m.joint(f"q{i}").id]] = q[i]
        j = m.joint("plate")
        d.qpos[m.jnt_qposadr[j.id]:m.jnt_qposadr[j.id] + 7] = [*p, 1, 0, 0, 0]
        if rb.four_axis:
            d.qpos[m.jnt_qposadr[m.joint("phi").id]] = q[3]
        mj.mj_kinematics(m, d)
        for i in range(3):
            Rarm = d.xmat[m.body(f"arm{i}").id].reshape(3, 3)
            for k in range(2):
                b = m.body(f"rod{i}{k}").id
                start = d.xpos[b]
                end = d.site_xpos[m.site(f"plate{i}{k}").id]
                self._aim(m.jnt_qposadr[m.joint(f"ball{i}{k}").id], Rarm.T @ (end - start))
        if rb.four_axis:
            start = np.array([0, 0, -rb.L_TO])
            end = d.site_xpos[m.site("tp").id]
            self._aim(m.jnt_qposadr[m.joint("tube_ball").id], end - start)
            d.qpos[m.jnt_qposadr[m.joint("slide").id]] = np.linalg.norm(end - start)
        mj.mj_fwdPosition(m, d)

    def _aim(self, adr: int, direction: np.ndarray) -> None:
        """Ball quaternion turning the body's x axis onto ``direction`` (parent frame)."""
        a = direction / np.linalg.norm(direction)
        x = np.array([1.0, 0, 0])
        axis = np.cross(x, a)
        s = np.linalg.norm(axis)
        quat = np.zeros(4)
        angle = np.arctan2(s, x @ a)
        self.mj.mju_axisAngle2Quat(quat, axis / s if s > 0 else np.array([0, 0, 1.0]), angle)
        self.d.qpos[adr:adr + 4] = quat

    def _plate(self, q: np.ndarray) -> np.ndarray:
        """Plate centre from the angles: Newton on the three rod-length equations (forward kinematics)."""
        rb = self.rb
        U = np.column_stack([np.cos(PHI), np.sin(PHI), np.zeros(3)])
        S = np.array([_elbow(rb, i, q[i]) for i in range(3)]) - rb.r * U
        p = np.array([0.0, 0.0, -0.9])
        for _ in range(50):
            F = p - S
            res = np.einsum("ij,ij->i", F, F) - rb.L_BC**2
            step = np.linalg.solve(2 * F, res)
            p = p - step
            if np.abs(step).max() < 1e-16:
                break
        return p

    # ------------------------------------------------------------ dynamics
    def _rows(self):
        """Constraint rows (efc_J), actuator selection rows and spin rows ``(nv, nv)``."""
        mj, m, d = self.mj, self.m, self.d
        J = np.array(d.efc_J).reshape(d.nefc, m.nv)
        sel = np.zeros((len(self.arm_dofs) + (1 if self.rb.four_axis else 0), m.nv))
        for r, dof in enumerate(self.arm_dofs):
            sel[r, dof] = 1.0
        if self.rb.four_axis:
            sel[3, m.jnt_dofadr[m.joint("phi").id]] = 1.0
        spin = np.zeros((len(self.spin_bodies), m.nv))
        jacr = np.zeros((3, m.nv))
        for r, b in enumerate(self.spin_bodies):
            mj.mj_jacBody(m, d, None, jacr, b)
            spin[r] = d.xmat[b].reshape(3, 3)[:, 0] @ jacr
        return J, sel, spin

    def _jdot_qvel(self) -> np.ndarray:
        """``J̇ q̇`` of the connect constraints (site1 point − site2 point), and of the spin rows."""
        mj, m, d = self.mj, self.m, self.d
        out = []
        jp = np.zeros((3, m.nv))
        jr = np.zeros((3, m.nv))
        for s1, s2 in self.pairs:
            acc = np.zeros(3)
            for sign, name in ((1.0, s1), (-1.0, s2)):
                sid = m.site(name).id
                mj.mj_jacDot(m, d, jp, None, d.site_xpos[sid], m.site_bodyid[sid])
                acc += sign * (jp @ d.qvel)
            out.append(acc)
        spin = []
        for b in self.spin_bodies:
            mj.mj_jacDot(m, d, None, jr, d.xipos[b], b)
            spin.append(d.xmat[b].reshape(3, 3)[:, 0] @ (jr @ d.qvel))
        return np.concatenate(out), np.array(spin)

    def torque(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray):
        """Actuator torques ``(n_act,)`` and diagnostics for one state (q, qd, qdd ``(n_act,)``).

        Returns
        -------
        tau : ndarray (n_act,)
        info : dict with ``efc_pos`` (max constraint violation [m]), ``residual`` (relative residual of
            the force balance), ``plate_omega`` (max plate angular velocity [rad/s]).
        """
        mj, m, d = self.mj, self.m, self.d
        self._set_positions(q)
        J, sel, spin = self._rows()
        A = np.vstack([J, sel, spin])
        d.qvel[:] = np.linalg.solve(A, np.concatenate([np.zeros(d.nefc), qd, np.zeros(len(spin))]))
        mj.mj_fwdVelocity(m, d)
        jd, sd = self._jdot_qvel()
        qacc = np.linalg.solve(A, np.concatenate([-jd, qdd, -sd]))
        d.qacc[:] = qacc
        Mqacc = np.zeros(m.nv)
        mj.mj_mulM(m, d, Mqacc, qacc)
        rhs = Mqacc + d.qfrc_bias
        act = sel.T.copy()
        if self.rb.four_axis:
            jr = np.zeros((3, m.nv))
            mj.mj_jacBody(m, d, None, jr, self.flange)
            act[:, 3] = jr.T @ np.array([0, 0, 1.0])
        S = np.hstack([act, J.T])
        x, *_ = np.linalg.lstsq(S, rhs, rcond=None)
        res = np.linalg.norm(S @ x - rhs) / max(np.linalg.norm(rhs), 1e-300)
        pid = m.body("plate").id
        info = {"efc_pos": float(np.abs(d.efc_pos).max()), "residual": float(res),
                "plate_omega": float(np.abs(d.cvel[pid][:3]).max()),
                "qpos": d.qpos.copy(), "qvel": d.qvel.copy(), "qacc": qacc}
        return x[:act.shape[1]], info


def random_states(rb: DeltaRobot, rng: np.random.Generator, n: int, *, z=(-0.95, -0.55), radius=0.25):
    """Random plate positions in a cylinder (reference IK for q) and random actuator rates."""
    qs = []
    while len(qs) < n:
        rad = radius * np.sqrt(rng.uniform())
        a = rng.uniform(0, 2 * np.pi)
        p = np.array([rad * np.cos(a), rad * np.sin(a), rng.uniform(*z)])
        try:
            q = ik_reference(rb, p)
        except ValueError:
            continue
        if np.all(np.abs(q) < 1.3):
            qs.append(q)
    q = np.array(qs)
    n_act = 4 if rb.four_axis else 3
    if rb.four_axis:
        q = np.column_stack([q, rng.uniform(-np.pi, np.pi, n)])
    return q, rng.normal(size=(n, n_act)) * 1.5, rng.normal(size=(n, n_act)) * 8.0
