"""Reference PUMA 560 for the PUMA model tests: Armstrong–Khatib–Burdick (AKB) link data, the
same robot built in Pinocchio (an engine dynid did not write), and the maps from physical link data
to the AKB constants I1..I23 and g1..g5 written from spec/models.md §6–7, independently of
``dynid.models.puma``.

Link data as Corke gives them for the AKB PUMA (``robot/puma560akb.py`` of
petercorke/robotics-toolbox-python): masses [kg], centres of mass in the link frame [m], diagonal
inertias about the centre of mass [kg m^2], modified DH (Craig) frames, q = 0 the L-shaped pose,
gravity along -z0.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

G = 9.80665  # [m/s^2]

# modified DH per link i: (alpha_{i-1} [rad], a_{i-1} [m], d_i [m]); theta_i = q_i
D2, D3, A2, A3, D4 = 0.2435, -0.0934, 0.4318, -0.0203, 0.4331
MDH = ((0.0, 0.0, 0.0), (-np.pi / 2, 0.0, D2), (0.0, A2, D3), (np.pi / 2, A3, D4), (-np.pi / 2, 0.0, 0.0),
       (np.pi / 2, 0.0, 0.0))

# rotor inertia at the joint, Jm * G^2 (Corke's AKB Jm [kg m^2] and gear ratios)
JM = np.array([291e-6, 409e-6, 299e-6, 35e-6, 35e-6, 35e-6])
GEAR = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
ROTOR = JM * GEAR**2  # [kg m^2]


@dataclass(frozen=True)
class Links:
    """Physical link data of a 6R PUMA in AKB frames (index 0 = link 1).

    m : (6,) [kg] ; r : (6, 3) centre of mass in the link frame [m] ; I : (6, 3) diagonal inertia
    about the centre of mass (xx, yy, zz) [kg m^2].
    """

    m: np.ndarray = field(default_factory=lambda: np.array([0.0, 17.4, 4.8, 0.82, 0.34, 0.09]))
    r: np.ndarray = field(default_factory=lambda: np.array(
        [[0, 0, 0], [0.068, 0.006, -0.016], [0, -0.070, 0.014], [0, 0, -0.019], [0, 0, 0], [0, 0, 0.032]], float))
    I: np.ndarray = field(default_factory=lambda: np.array(
        [[0, 0, 0.35], [0.13, 0.524, 0.539], [0.066, 0.0125, 0.066], [1.8e-3, 1.8e-3, 1.3e-3],
         [0.3e-3, 0.3e-3, 0.4e-3], [0.15e-3, 0.15e-3, 0.04e-3]], float))


AKB = Links()


def random_links(rng: np.random.Generator) -> Links:
    """A random physically plausible PUMA with the AKB structure (COM offsets where AKB has them,
    diagonal COM inertias, I6xx = I6yy), for tests that must not depend on particular values."""
    m = AKB.m * rng.uniform(0.6, 1.5, 6)
    m[0] = 0.0
    r = AKB.r + rng.uniform(-0.03, 0.03, (6, 3)) * (AKB.r != 0)
    I = AKB.I * rng.uniform(0.5, 1.5, (6, 3))
    I[5, 1] = I[5, 0]
    return Links(m, r, I)


def akb_constants(L: Links = AKB) -> np.ndarray:
    """I1..I23 [kg m^2] from link data, spec/models.md §6 (corrected definitions)."""
    m1, m2, m3, m4, m5, m6 = L.m
    l1y = L.r[0, 1]
    l2x, l2y, l2z = L.r[1]
    l3y, l3z = L.r[2, 1], L.r[2, 2]
    l4z, l6z = L.r[3, 2], L.r[5, 2]
    (_, _, I1zz), (I2xx, I2yy, I2zz), (I3xx, I3yy, I3zz), (I4xx, I4yy, I4zz), (I5xx, I5yy, I5zz), (I6xx, _, I6zz) = L.I
    d2, d3, a2, a3, d4 = D2, D3, A2, A3, D4
    d23 = d2 + d3
    m456, m3456 = m4 + m5 + m6, m3 + m4 + m5 + m6
    I = np.zeros(24)  # I[k] = Ik, I[0] unused
    I[1] = (I1zz + m1 * l1y**2 + m2 * d2**2 + m456 * a3**2 + m2 * l2z**2 + m3456 * d23**2 + I2xx + I3yy
            + 2 * m2 * d2 * l2z + m2 * l2y**2 + m3 * l3z**2 + 2 * m3 * d23 * l3z + I4zz + I5yy + I6zz)
    I[2] = I2zz + m2 * (l2x**2 + l2y**2) + m3456 * a2**2
    I[3] = -I2xx + I2yy + m3456 * a2**2 + m2 * l2x**2 - m2 * l2y**2
    I[4] = m2 * l2x * (d2 + l2z) + m3 * a2 * l3z + m3456 * a2 * d23
    I[5] = -m3 * a2 * l3y + m456 * a2 * d4 + m4 * a2 * l4z
    I[6] = (I3zz + m3 * l3y**2 + m4 * a3**2 + m4 * (d4 + l4z)**2 + I4yy + m5 * a3**2 + m5 * d4**2 + I5zz
            + m6 * a3**2 + m6 * d4**2 + m6 * l6z**2 + I6xx)
    I[7] = (m3 * l3y**2 + I3xx - I3yy + m4 * l4z**2 + 2 * m4 * d4 * l4z + m456 * (d4**2 - a3**2) + I4yy - I4zz
            + I5zz - I5yy + m6 * l6z**2 - I6zz + I6xx)
    I[8] = -m4 * d23 * (d4 + l4z) - (m5 + m6) * d23 * d4 + m3 * l3y * l3z + m3 * d23 * l3y
    I[9] = m2 * l2y * (d2 + l2z)
    I[10] = 2 * m4 * a3 * l4z + 2 * m456 * a3 * d4
    I[11] = -2 * m2 * l2x * l2y
    I[12] = m456 * a2 * a3
    I[13] = m456 * a3 * d23
    I[14] = I4zz + I5yy + I6zz
    I[15] = m6 * d4 * l6z
    I[16] = m6 * a2 * l6z
    I[17] = I5zz + I6xx + m6 * l6z**2
    I[18] = m6 * d23 * l6z
    I[19] = I4yy - I4xx + I5zz - I5yy + m6 * l6z**2 + I6xx - I6zz
    I[20] = I5yy - I5xx - m6 * l6z**2 + I6zz - I6xx
    I[21] = I4xx - I4yy + I5xx - I5zz
    I[22] = m6 * a3 * l6z
    I[23] = I6zz
    return I[1:]


def gravity_constants(L: Links = AKB, g: float = G) -> np.ndarray:
    """g1..g5 [N m] from link data, spec/models.md §7."""
    m2, m3, m4, m5, m6 = L.m[1:]
    l2x, l2y = L.r[1, 0], L.r[1, 1]
    l3y, l4z, l6z = L.r[2, 1], L.r[3, 2], L.r[5, 2]
    m456 = m4 + m5 + m6
    return np.array([-g * (m2 * l2x + (m3 + m456) * A2), g * (m3 * l3y - m4 * l4z - m456 * D4), g * m2 * l2y,
                     -g * m456 * A3, -g * m6 * l6z])


def puma_parameters(L: Links = AKB, g: float = G) -> np.ndarray:
    """The 28 parameters of model ``puma``: I1..I23 then g1..g5."""
    return np.concatenate([akb_constants(L), gravity_constants(L, g)])


def gravity_model_parameters(L: Links = AKB, g: float = G) -> np.ndarray:
    """P1..P5 of model ``puma-gravity`` (spec §7 resolution: P1 = -g1, P2 = -g4, P3 = -g2, P4 = -g5,
    optional P5 = -g3)."""
    g1, g2, g3, g4, g5 = gravity_constants(L, g)
    return np.array([-g1, -g4, -g2, -g5, -g3])


def with_payload(L: Links, mass: float, inertia: float, lz: float = 0.0) -> Links:
    """Links with a payload rigidly fixed to link 6: a body of ``mass`` [kg] at (0, 0, lz) [m] in frame 6
    with ``inertia`` [kg m^2] about its own z axis (zero transverse inertia), merged into link 6."""
    m6, r6, I6 = L.m[5], L.r[5], L.I[5]
    mt = m6 + mass
    c = (m6 * r6 + mass * np.array([0, 0, lz])) / mt
    # parallel-axis theorem for both bodies about the joint COM (diagonal: COMs on the z6 axis)
    Ixx = I6[0] + m6 * (r6[2] - c[2])**2 + mass * (lz - c[2])**2
    Izz = I6[2] + inertia
    m = L.m.copy(); m[5] = mt
    r = L.r.copy(); r[5] = c
    I = L.I.copy(); I[5] = [Ixx, Ixx, Izz]
    return replace(L, m=m, r=r, I=I)


def pinocchio_puma(L: Links = AKB, g: float = G, armature=None):
    """The PUMA as a Pinocchio model: revolute z joints placed by modified DH, link inertias at the COM.

    Returns ``(model, data)``; ``armature`` (6,) [kg m^2] sets Pinocchio's rotor inertia.
    """
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = np.array([0.0, 0.0, -g])
    parent = 0
    for i, (alpha, a, d) in enumerate(MDH):
        c, s = np.cos(alpha), np.sin(alpha)
        rot_x = pin.SE3(np.array([[1, 0, 0], [0, c, -s], [0, s, c]]), np.zeros(3))
        placement = rot_x * pin.SE3(np.eye(3), np.array([a, 0.0, 0.0])) * pin.SE3(np.eye(3), np.array([0.0, 0.0, d]))
        jid = model.addJoint(parent, pin.JointModelRZ(), placement, f"joint{i + 1}")
        model.appendBodyToJoint(jid, pin.Inertia(float(L.m[i]), L.r[i].copy(), np.diag(L.I[i])), pin.SE3.Identity())
        parent = jid
    if armature is not None:
        model.armature = np.asarray(armature, dtype=float)
    return model, model.createData()


def pinocchio_rnea(model, data, q, qd, qdd) -> np.ndarray:
    """``pinocchio.rnea`` row by row: ``(N, 6)`` [N m] for states ``(N, 6)``."""
    import pinocchio as pin

    return np.array([pin.rnea(model, data, a, b, c).copy() for a, b, c in zip(q, qd, qdd)])


def pinocchio_gravity(model, data, q) -> np.ndarray:
    """``pinocchio.computeGeneralizedGravity`` row by row: ``(N, 6)`` [N m]."""
    import pinocchio as pin

    return np.array([pin.computeGeneralizedGravity(model, data, a).copy() for a in q])
