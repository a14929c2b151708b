"""MuJoCo references for the SCARA and traverse-arm models (test helper, not library code).

Each robot is written as MJCF from physical link data (masses, centres of mass, full inertia
tensors, joint ``armature`` for reflected rotor inertias); nothing here imports dynid. The mapping
physical data -> catalogue parameters p is written out from spec/models.md §3–4, independently of
the model code. Inverse dynamics come from ``mj_inverse`` (``qfrc_inverse``), gravity on, no
damping, friction or contacts.

The SCARA's ball-screw spline is built as the mechanism is: the shaft has two physical joints,
height z (slide) and rotation phi (hinge). Motor 3 drives a fixed tendon of length z - lead*phi
(it turns the screw nut), motor 4 a tendon of length phi (the spline nut), so the motor
coordinates are the tendon lengths and the motor torques follow from the engine's tendon Jacobian
by power balance: qfrc_inverse = J_motor^T tau_motor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

mujoco = __import__("pytest").importorskip("mujoco")

G = 9.80665


def _inertial(mass, pos, full):
    """``<inertial>`` with a full inertia tensor (ixx iyy izz ixy ixz iyz) about the COM [kg m^2]."""
    return (f'<inertial mass="{mass!r}" pos="{" ".join(map(repr, pos))}" '
            f'fullinertia="{" ".join(map(repr, full))}"/>')


@dataclass(frozen=True)
class ScaraLinks:
    """Physical data of a SCARA (SI). Axes vertical; link 2 points along its local +x.

    Link 1 (turns with q1): ``m1`` at ``c1`` (anywhere), tensor ``in1`` about its COM, motor-1 rotor
    ``arm1`` (armature of q1). Link 2 (turns with q1 + q2) is two rigid bodies: the arm ``m2a`` at
    ``(a2a, 0, z)`` and a motor housing ``m2h`` on the tool axis (x = L2); motor-2 rotor ``arm2``.
    Shaft (moves with z, turns with phi): ``ms`` on the tool axis, ``izz_s``; tool flange below it:
    ``mt``, ``izz_t``; motor-4 rotor ``arm4``. Off-diagonal inertia terms and vertical COM offsets
    are deliberately non-zero: they must not matter for vertical axes.
    """

    L1: float = 0.325
    L2: float = 0.275
    m1: float = 6.0
    c1: tuple = (0.14, 0.02, 0.05)
    in1: tuple = (0.05, 0.09, 0.11, 0.004, -0.006, 0.003)
    arm1: float = 0.12
    m2a: float = 3.2
    a2a: float = 0.11
    in2a: tuple = (0.01, 0.03, 0.028, 0.001, 0.002, -0.0015)
    m2h: float = 1.1
    in2h: tuple = (0.004, 0.004, 0.003, 0.0, 0.0, 0.0)
    arm2: float = 0.06
    ms: float = 1.2
    izz_s: float = 0.0012
    mt: float = 0.4
    izz_t: float = 0.0009
    arm4: float = 0.008
    lead: float = 0.0

    def params(self, g: float = G) -> np.ndarray:
        """p1..p8 from spec/models.md §4 with link 2 = arm + housing (parallel-axis theorem)."""
        I1 = self.in1[2] + self.m1 * (self.c1[0] ** 2 + self.c1[1] ** 2) + self.arm1
        M2 = self.m2a + self.m2h
        A2 = (self.m2a * self.a2a + self.m2h * self.L2) / M2
        I2 = (self.in2a[2] + self.m2a * (self.a2a - A2) ** 2) + (self.in2h[2] + self.m2h * (self.L2 - A2) ** 2)
        M3 = self.ms + self.mt
        I4 = self.izz_s + self.izz_t
        return np.array([self.L1**2 * M2 + I1, A2**2 * M2 + I2, self.arm2, self.L1 * A2 * M2,
                         M3, g * M3, I4, self.arm4])

    def mjcf(self, payload: tuple[float, float] | None = None, n_axes: int = 4) -> str:
        """MJCF text. ``payload = (mass, izz)`` adds a body on the tool axis below the flange.

        ``n_axes = 3``: no phi joint (the flange is fixed to the shaft, which does not rotate).
        """
        pay = ""
        if payload is not None:
            pay = f'<body name="payload" pos="0 0 -0.05">{_inertial(payload[0], (0, 0, -0.02), (0.01, 0.01, payload[1], 0, 0, 0))}</body>'
        phi = '<joint name="phi" type="hinge" axis="0 0 1" armature="{!r}"/>'.format(self.arm4) if n_axes == 4 else ""
        tendon = actuator = ""
        if n_axes == 4:
            tendon = f"""<tendon>
    <fixed name="screw"><joint joint="z" coef="1"/><joint joint="phi" coef="{-self.lead!r}"/></fixed>
    <fixed name="spline"><joint joint="phi" coef="1"/></fixed>
  </tendon>"""
            actuator = """<actuator>
    <motor name="m1" joint="q1"/><motor name="m2" joint="q2"/>
    <motor name="m3" tendon="screw"/><motor name="m4" tendon="spline"/>
  </actuator>"""
        else:
            actuator = """<actuator><motor name="m1" joint="q1"/><motor name="m2" joint="q2"/><motor name="m3" joint="z"/></actuator>"""
        return f"""<mujoco model="scara">
  <option gravity="0 0 {-G!r}" timestep="0.0005"><flag contact="disable"/></option>
  <worldbody>
    <body name="link1" pos="0 0 0.6">
      <joint name="q1" type="hinge" axis="0 0 1" armature="{self.arm1!r}"/>
      {_inertial(self.m1, self.c1, self.in1)}
      <body name="link2" pos="{self.L1!r} 0 0.08">
        <joint name="q2" type="hinge" axis="0 0 1" armature="{self.arm2!r}"/>
        {_inertial(self.m2a, (self.a2a, 0.0, 0.03), self.in2a)}
        <body name="housing" pos="{self.L2!r} 0 0.1">{_inertial(self.m2h, (0, 0, 0.02), self.in2h)}</body>
        <body name="shaft" pos="{self.L2!r} 0 -0.05">
          <joint name="z" type="slide" axis="0 0 1"/>
          {phi}
          {_inertial(self.ms, (0, 0, -0.1), (0.004, 0.004, self.izz_s, 0, 0, 0))}
          <body name="flange" pos="0 0 -0.25">{_inertial(self.mt, (0, 0, -0.01), (0.0006, 0.0006, self.izz_t, 0, 0, 0))}{pay}</body>
        </body>
      </body>
    </body>
  </worldbody>
  {tendon}
  {actuator}
</mujoco>"""


@dataclass(frozen=True)
class TraverseLinks:
    """Physical data of a traverse-arm robot (SI): x along world +x, theta = 0 with the arm along +x.

    Carriage ``mc`` (anywhere) with rotor mass-equivalent ``arm_x`` (armature of x). Arm (turns with
    theta): ``m2a`` at ``(a2a, 0, z)`` plus a housing ``m2h`` at the tool axis; motor-2 rotor
    ``arm_th``. Quill (moves with z, turns with theta only): ``mq`` on the tool axis, ``izz_q``.
    Tool (moves with z, turns with theta + phi): ``mt``, ``izz_t``; motor-4 rotor ``arm4``.
    """

    L2: float = 0.6
    mc: float = 25.0
    cc: tuple = (0.05, -0.1, 0.08)
    inc: tuple = (0.4, 0.5, 0.6, 0.01, 0.02, -0.03)
    arm_x: float = 3.0
    m2a: float = 6.0
    a2a: float = 0.22
    in2a: tuple = (0.02, 0.25, 0.24, 0.003, 0.004, 0.001)
    m2h: float = 2.0
    in2h: tuple = (0.006, 0.006, 0.005, 0.0, 0.0, 0.0)
    arm_th: float = 0.5
    mq: float = 3.0
    izz_q: float = 0.004
    mt: float = 1.0
    izz_t: float = 0.006
    arm4: float = 0.02

    def params(self, g: float = G) -> np.ndarray:
        """p1..p7 from spec/models.md §3 (arm = arm body + housing; quill spin inertia turns with theta)."""
        M2 = self.m2a + self.m2h
        A2 = (self.m2a * self.a2a + self.m2h * self.L2) / M2
        I2 = (self.in2a[2] + self.m2a * (self.a2a - A2) ** 2) + (self.in2h[2] + self.m2h * (self.L2 - A2) ** 2)
        M1 = self.mc + self.arm_x
        M3 = self.mq + self.mt
        return np.array([M1 + M2, A2 * M2, A2**2 * M2 + I2 + self.izz_q + self.arm_th, M3, g * M3,
                         self.izz_t, self.arm4])

    def mjcf(self, payload: tuple[float, float] | None = None) -> str:
        pay = ""
        if payload is not None:
            pay = f'<body name="payload" pos="0 0 -0.05">{_inertial(payload[0], (0, 0, -0.02), (0.01, 0.01, payload[1], 0, 0, 0))}</body>'
        return f"""<mujoco model="traverse">
  <option gravity="0 0 {-G!r}" timestep="0.0005"><flag contact="disable"/></option>
  <worldbody>
    <body name="carriage" pos="0 0 1.0">
      <joint name="x" type="slide" axis="1 0 0" armature="{self.arm_x!r}"/>
      {_inertial(self.mc, self.cc, self.inc)}
      <body name="arm" pos="0 0 -0.15">
        <joint name="theta" type="hinge" axis="0 0 1" armature="{self.arm_th!r}"/>
        {_inertial(self.m2a, (self.a2a, 0.0, 0.02), self.in2a)}
        <body name="housing" pos="{self.L2!r} 0 0.05">{_inertial(self.m2h, (0, 0, 0.01), self.in2h)}</body>
        <body name="quill" pos="{self.L2!r} 0 -0.1">
          <joint name="z" type="slide" axis="0 0 1"/>
          {_inertial(self.mq, (0, 0, -0.15), (0.02, 0.02, self.izz_q, 0, 0, 0))}
          <body name="tool" pos="0 0 -0.35">
            <joint name="phi" type="hinge" axis="0 0 1" armature="{self.arm4!r}"/>
            {_inertial(self.mt, (0, 0, -0.03), (0.003, 0.003, self.izz_t, 0, 0, 0))}{pay}
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


@dataclass
class MujocoInverse:
    """Inverse dynamics of an MJCF robot in motor coordinates.

    The motor coordinates are the actuators' transmission lengths (joint angles, or tendon lengths
    for the SCARA's coupled axes). All transmissions here are linear, so ``q_motor = T q_joint``
    with ``T`` the engine's actuator moment matrix, and the motor torques satisfy
    ``qfrc_inverse = T^T tau_motor``. Robots without actuators use the joints directly (T = I).
    """

    xml: str
    model: object = field(init=False)
    data: object = field(init=False)
    T: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(self.xml)
        self.data = mujoco.MjData(self.model)
        m, d = self.model, self.data
        if m.nu == 0:
            self.T = np.eye(m.nv)
        else:
            mujoco.mj_forward(m, d)
            self.T = np.zeros((m.nu, m.nv))
            mujoco.mju_sparse2dense(self.T, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
        if self.T.shape != (m.nv, m.nv):
            raise ValueError(f"need one actuator per degree of freedom, got {self.T.shape}")
        if m.nq != m.nv:
            raise ValueError("only hinge and slide joints are supported")

    def inverse(self, q, qd, qdd) -> np.ndarray:
        """Motor torques [N m or N] ``(N, nv)`` for motor-coordinate states ``(N, nv)``."""
        m, d = self.model, self.data
        Tinv = np.linalg.inv(self.T)
        out = np.empty_like(np.asarray(q, dtype=float))
        for k in range(out.shape[0]):  # the engine evaluates one state at a time
            d.qpos[:] = Tinv @ q[k]
            d.qvel[:] = Tinv @ qd[k]
            d.qacc[:] = Tinv @ qdd[k]
            mujoco.mj_inverse(m, d)
            out[k] = np.linalg.solve(self.T.T, d.qfrc_inverse)
        return out


# ---------------------------------------------------------------------------- recordings

def sine_wave(start, target, freqs_hz, t):
    """softMC SineWave from rest at ``start``: q = c - a cos(2 pi f t), c, a = mid-point, half range.

    Returns ``q, qd, qdd`` ``(N, n)`` in the units of ``start`` (per second, per second²).
    """
    start, target, f = (np.asarray(x, dtype=float) for x in (start, target, freqs_hz))
    c, a, w = 0.5 * (start + target), 0.5 * (target - start), 2 * np.pi * f
    wt = w * np.asarray(t, dtype=float)[:, None]
    return c - a * np.cos(wt), a * w * np.sin(wt), a * w**2 * np.cos(wt)


def multi_sine(centre, amps, freqs_hz, phases, t):
    """q_j = centre_j + sum_k amps[j][k] sin(2 pi f[j][k] t + phases[j][k]) with exact derivatives."""
    t = np.asarray(t, dtype=float)[:, None, None]
    amps, f, ph = (np.asarray(x, dtype=float) for x in (amps, freqs_hz, phases))
    w = 2 * np.pi * f
    s, c = np.sin(w * t + ph), np.cos(w * t + ph)
    return (np.asarray(centre, dtype=float) + (amps * s).sum(-1), (amps * w * c).sum(-1),
            (-amps * w**2 * s).sum(-1))


@dataclass(frozen=True)
class DriveData:
    """What a controller would log: quantised positions, motor torques with friction and noise."""

    t: np.ndarray         # (N,) [s]
    q: np.ndarray         # (N, n) quantised [rad, m]
    tau: np.ndarray       # (N, n) measured: rigid body + friction + noise [N m, N]
    tau_true: np.ndarray  # (N, n) rigid body + friction, no noise


def drive_record(engine: MujocoInverse, q, qd, qdd, t, *, viscous, coulomb, kinds, noise=0.005,
                 encoder_bits=20, linear_resolution=1e-6, seed=0) -> DriveData:
    """Torques of the exact motion ``q(t)`` from ``mj_inverse`` plus friction ``Fv qd + Fc sign(qd)``
    (positive coefficients oppose motion), torque noise ``noise`` x peak per joint, encoder quantisation."""
    rigid = engine.inverse(q, qd, qdd)
    tau_true = rigid + np.asarray(viscous) * qd + np.asarray(coulomb) * np.sign(qd)
    rng = np.random.default_rng(seed)
    tau = tau_true + rng.normal(size=tau_true.shape) * noise * np.abs(tau_true).max(axis=0)
    res = np.array([2 * np.pi / 2**encoder_bits if k == "rotary" else linear_resolution for k in kinds])
    return DriveData(np.asarray(t, dtype=float), np.round(q / res) * res, tau, tau_true)
