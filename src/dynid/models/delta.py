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

References
----------
R. Clavel, "Conception d'un robot parallèle rapide à 4 degrés de liberté", EPFL thesis 925, 1991.
A. Codourey, "Dynamic modeling of parallel robots for computed-torque control implementation",
Int. J. Robotics Research 17(12):1325–1336, 1998.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, InputDataError, ShapeError
from .base import DynamicModel, Joint, Parameter, TaskSpace
from .closed_chain import BodyMotions, ClosedChain, body_frame, cross
from .registry import register_model

__all__ = [
    "DeltaGeometry", "Delta3", "Delta4", "DeltaChain", "inverse_kinematics", "forward_kinematics",
    "cartesian_to_joint", "joint_to_cartesian", "EXAMPLE_GEOMETRY",
]

_EZ = np.array([0.0, 0.0, 1.0])
_PHI = np.radians([0.0, 120.0, 240.0])
_U = np.column_stack([np.cos(_PHI), np.sin(_PHI), np.zeros(3)])   # u_i, rows
_W = np.column_stack([-np.sin(_PHI), np.cos(_PHI), np.zeros(3)])  # w_i = e_z × u_i, rows
_GEOMETRY_KEYS = ("base_radius", "platform_radius", "upper_arm", "forearm")

EXAMPLE_GEOMETRY = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}
"""Geometry of the example robot [m] (a mid-size pick-and-place Delta), used when a Delta model is
built without any configuration (``make_model("delta3")``)."""


# ----------------------------------------------------------------------------------- kinematics

@dataclass(frozen=True)
class DeltaGeometry:
    """Delta dimensions (spec/interfaces.md §4), all in m.

    base_radius : float
        R, radius of the circle of motor axes (O to A_i).
    platform_radius : float
        r, plate centre to the forearm joint C_i (midpoint of the rod pair's lower joints).
    upper_arm : float
        L_AB, motor axis to elbow.
    forearm : float
        L_BC, elbow to plate joint (rod length).
    """

    base_radius: float
    platform_radius: float
    upper_arm: float
    forearm: float

    def __post_init__(self) -> None:
        for key in _GEOMETRY_KEYS:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ConfigError(f"Delta geometry: {key} must be a finite number in m, got {v!r}")
            object.__setattr__(self, key, float(v))
        for key in ("upper_arm", "forearm"):
            if getattr(self, key) <= 0:
                raise ConfigError(f"Delta geometry: {key} must be positive, got {getattr(self, key)!r} m")
        for key in ("base_radius", "platform_radius"):
            if getattr(self, key) < 0:
                raise ConfigError(f"Delta geometry: {key} must be >= 0, got {getattr(self, key)!r} m")

    @property
    def radial(self) -> np.ndarray:
        """u_i, radial unit vectors of the arms ``(3, 3)`` (row i = arm i + 1)."""
        return _U.copy()

    @property
    def motor_axes(self) -> np.ndarray:
        """w_i = e_z × u_i, motor axis directions ``(3, 3)``; positive q_i is a rotation about w_i."""
        return _W.copy()


def _as_points(name: str, x) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ShapeError(f"{name} must have shape (n_samples, 3), got an array with shape {a.shape}",
                         hint="pass one row per sample: x, y, z in m (or m/s, m/s^2)")
    return a


def _arm_points(geo: DeltaGeometry, q: np.ndarray):
    """Elbows B ``(N, 3, 3)`` and their first/second derivatives b = ∂B/∂q, b2 = ∂²B/∂q² per arm."""
    U = _U[None]                               # (1, arm, xyz)
    c = np.cos(q)[..., None]
    s = np.sin(q)[..., None]
    L = geo.upper_arm
    B = geo.base_radius * U + L * (c * U - s * _EZ)
    b = L * (-s * U - c * _EZ)
    b2 = L * (-c * U + s * _EZ)
    return B, b, b2


def _ik(geo: DeltaGeometry, p: np.ndarray) -> np.ndarray:
    """Elbow-out inverse kinematics, NaN where the position is out of reach. ``p (N, 3) -> q (N, 3)``."""
    U, W = _U, _W
    L, Lf = geo.upper_arm, geo.forearm
    X = p @ U.T - (geo.base_radius - geo.platform_radius)   # (N, 3): C_i − A_i along u_i
    Y = p @ W.T
    Z = p[:, 2:3]
    # |C − B|² = Lf² reads a·cos q + b·sin q = K
    a = -2.0 * L * X
    b = 2.0 * L * Z
    K = Lf**2 - X**2 - Y**2 - Z**2 - L**2
    rho = np.hypot(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = K / rho
    ratio = np.where(np.abs(ratio) <= 1.0, ratio, np.nan)
    q = np.arctan2(b, a) + np.arccos(ratio)    # the elbow-out branch (f_i·b_i > 0)
    return np.mod(q + np.pi, 2 * np.pi) - np.pi


def _fk(geo: DeltaGeometry, q: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """Plate centre from the three sphere intersection (lower solution), NaN where the arms cannot
    close the chain. ``q (N, 3) -> p (N, 3)``."""
    if B is None:
        B, _, _ = _arm_points(geo, q)
    ru = geo.platform_radius * _U[None]
    S = B - ru                                  # sphere centres, radius L_BC
    Lf = geo.forearm
    d2 = S[:, 1] - S[:, 0]
    d3 = S[:, 2] - S[:, 0]
    # x = p − S_1: |x|² = Lf², 2 d_j·x = |d_j|² (j = 2, 3); x = α d2 + β d3 + t n̂
    g22 = (d2 * d2).sum(axis=1)
    g23 = (d2 * d3).sum(axis=1)
    g33 = (d3 * d3).sum(axis=1)
    n = cross(d2, d3)
    nn = (n * n).sum(axis=1)                    # = g22 g33 − g23²
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 0.5 * g33 * (g22 - g23) / nn
        beta = 0.5 * g22 * (g33 - g23) / nn
        x0 = alpha[:, None] * d2 + beta[:, None] * d3
        n = n / np.sqrt(nn)[:, None]
        disc = Lf**2 - (x0 * x0).sum(axis=1)
        t = -np.where(n[:, 2] >= 0, 1.0, -1.0) * np.sqrt(np.where(disc >= 0, disc, np.nan))
        p = S[:, 0] + x0 + t[:, None] * n
        # one Newton step on ½(|p + r u_i − B_i|² − Lf²) = 0 polishes the closed form to rounding level
        f = p[:, None, :] - S
        res = 0.5 * ((f * f).sum(axis=2) - Lf**2)
        p = p - _inv_apply(_cofactors(f), res)
    return p


def _cofactors(A: np.ndarray) -> np.ndarray:
    """Columns of ``A⁻¹`` as rows, for ``A (N, 3, 3)`` with rows a_i: ``C[:, i] = (a_j × a_k)/det``."""
    C = cross(A[:, [1, 2, 0]], A[:, [2, 0, 1]])   # rows a2×a3, a3×a1, a1×a2
    a1 = A[:, 0]
    det = (a1 * C[:, 0]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return C / det[:, None, None]


def _inv_apply(C: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A⁻¹ v`` from :func:`_cofactors` ``C``; ``v (N, 3) -> (N, 3)``."""
    return (C * v[:, :, None]).sum(axis=1)


def _inv_t_apply(C: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A⁻ᵀ v``; ``v (N, 3)`` or ``(N, 3, k)`` -> same shape."""
    if v.ndim == 2:
        return (C * v[:, None, :]).sum(axis=2)
    return np.einsum("nij,njk->nik", C, v)


def inverse_kinematics(geometry: DeltaGeometry, p: npt.ArrayLike) -> np.ndarray:
    """Actuator angles of the plate positions ``p`` (elbow-out branch).

    Parameters
    ----------
    geometry : DeltaGeometry
    p : array-like, shape (N, 3)
        Plate centre [m] in the base frame (below the base: z < 0).

    Returns
    -------
    q : ndarray, shape (N, 3)
        [rad], in (−π, π].

    Raises
    ------
    InputDataError
        A position the forearms cannot reach.

    Examples
    --------
    >>> geo = DeltaGeometry(0.2, 0.05, 0.35, 0.8)
    >>> q = inverse_kinematics(geo, [[0.0, 0.0, -0.7]])
    >>> bool(np.allclose(q, q[0, 0]))
    True
    >>> bool(np.allclose(forward_kinematics(geo, q), [[0.0, 0.0, -0.7]]))
    True
    """
    p = _as_points("p", p)
    q = _ik(geometry, p)
    bad = ~np.isfinite(q).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputDataError(f"p[{k}] = {p[k].tolist()} m is out of reach of the Delta (forearm {geometry.forearm} m)",
                             hint="command positions inside the workspace, below the base")
    return q


def forward_kinematics(geometry: DeltaGeometry, q: npt.ArrayLike) -> np.ndarray:
    """Plate centre for actuator angles ``q`` (closed-form sphere intersection, lower solution).

    Parameters
    ----------
    geometry : DeltaGeometry
    q : array-like, shape (N, 3)
        Actuator angles [rad] (spec/interfaces.md §4 convention).

    Returns
    -------
    p : ndarray, shape (N, 3)
        [m].

    Raises
    ------
    InputDataError
        Angles for which the forearms cannot reach a common plate position.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != 3:
        raise ShapeError(f"q must have shape (n_samples, 3), got an array with shape {q.shape}")
    p = _fk(geometry, q)
    _check_assembled(geometry, q, p)
    return p


def _check_assembled(geometry: DeltaGeometry, q: np.ndarray, p: np.ndarray) -> None:
    bad = ~np.isfinite(p).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputDataError(
            f"sample {k}: actuator angles {np.round(q[k, :3], 6).tolist()} rad do not assemble the Delta "
            f"(the forearms of length {geometry.forearm} m cannot meet the plate)",
            hint="check the geometry keys, ModelOffset and the angle convention (q = 0 arm horizontal, "
                 "positive q lowers the elbow)")


@dataclass(frozen=True)
class _Kinematics:
    """Closed-form kinematics at N samples (all SI). Arrays are (N, 3) or (N, arm, xyz)."""

    p: np.ndarray      # plate centre
    pd: np.ndarray
    pdd: np.ndarray
    b: np.ndarray      # ∂B_i/∂q_i
    b2: np.ndarray     # ∂²B_i/∂q_i²
    f: np.ndarray      # C_i − B_i (rows of J_x)
    D: np.ndarray      # f_i·b_i  (N, 3), > 0 on the elbow-out branch
    C: np.ndarray      # cofactors of J_x (see _cofactors)

    def jt(self, v: np.ndarray) -> np.ndarray:
        """Jᵀ v with J = J_x⁻¹ D: ``v (N, 3)`` or ``(N, 3, k)`` -> same shape (generalised forces)."""
        y = _inv_t_apply(self.C, v)
        return self.D * y if v.ndim == 2 else self.D[..., None] * y


def _kinematics(geo: DeltaGeometry, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> _Kinematics:
    B, b, b2 = _arm_points(geo, q)
    p = _fk(geo, q, B)
    _check_assembled(geo, q, p)
    f = p[:, None, :] + geo.platform_radius * _U[None] - B
    D = (f * b).sum(axis=2)
    C = _cofactors(f)
    pd = _inv_apply(C, D * qd)                                   # f_i·ṗ = D_i q̇_i
    fd = pd[:, None, :] - b * qd[..., None]
    kappa = (f * b2).sum(axis=2) * qd**2 - (fd * fd).sum(axis=2)
    pdd = _inv_apply(C, D * qdd + kappa)                         # f_i·p̈ = D_i q̈_i + κ_i
    return _Kinematics(p, pd, pdd, b, b2, f, D, C)


def joint_to_cartesian(geometry: DeltaGeometry, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike):
    """Plate position, velocity and acceleration of an actuator motion.

    Parameters
    ----------
    geometry : DeltaGeometry
    q, qd, qdd : array-like, shape (N, 3)
        [rad], [rad/s], [rad/s²].

    Returns
    -------
    p, pd, pdd : ndarray, shape (N, 3)
        [m], [m/s], [m/s²].
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd)):
        if x.ndim != 2 or x.shape[1] != 3 or x.shape[0] != q.shape[0]:
            raise ShapeError(f"{name} must have shape ({q.shape[0]}, 3), got {x.shape}")
    k = _kinematics(geometry, q, qd, qdd)
    return k.p, k.pd, k.pdd


def cartesian_to_joint(geometry: DeltaGeometry, p: npt.ArrayLike, pd: npt.ArrayLike, pdd: npt.ArrayLike):
    """Actuator position, velocity and acceleration of a plate motion (e.g. a Cartesian move).

    Parameters
    ----------
    geometry : DeltaGeometry
    p, pd, pdd : array-like, shape (N, 3)
        Plate centre [m], velocity [m/s], acceleration [m/s²].

    Returns
    -------
    q, qd, qdd : ndarray, shape (N, 3)
        [rad], [rad/s], [rad/s²]:
        q̇_i = f_i·ṗ / (f_i·b_i),  q̈_i = (f_i·p̈ − (f_i·b2_i) q̇_i² + |ṗ − b_i q̇_i|²) / (f_i·b_i).

    Raises
    ------
    InputDataError
        A position out of reach.
    """
    p = _as_points("p", p)
    pd = _as_points("pd", pd)
    pdd = _as_points("pdd", pdd)
    if not p.shape == pd.shape == pdd.shape:
        raise ShapeError(f"p, pd and pdd must have the same shape, got {p.shape}, {pd.shape}, {pdd.shape}")
    q = inverse_kinematics(geometry, p)
    B, b, b2 = _arm_points(geometry, q)
    f = p[:, None, :] + geometry.platform_radius * geometry.radial[None] - B
    D = np.einsum("nij,nij->ni", f, b)
    qd = np.einsum("nij,nj->ni", f, pd) / D
    fd = pd[:, None, :] - b * qd[..., None]
    qdd = (np.einsum("nij,nj->ni", f, pdd) - np.einsum("nij,nij->ni", f, b2) * qd**2
           + np.einsum("nij,nij->ni", fd, fd)) / D
    return q, qd, qdd


# ----------------------------------------------------------------------------------- closed chain

class DeltaChain(ClosedChain):
    """The Delta's three arms as a :class:`~dynid.models.closed_chain.ClosedChain` (a second derivation
    of the closed form above, through the generic layer).

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

_UNDOCUMENTED = ("undocumented by the softMC catalogue (name only); a fixed user constant, never identified, "
                 "held at the configured value (default 0); it does not enter the torque dynid computes")


def _parameters(four_axis: bool) -> tuple[Parameter, ...]:
    unused = "" if four_axis else " — 4-axis only: unused by delta3 (constant, no effect)"
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
    "Geometry per spec/interfaces.md §4: arm i at azimuth (i-1)*120 deg, q_i = 0 upper arm horizontal outward, "
    "positive q_i lowers the elbow, elbow-out assembly, plate below the base keeping its orientation, gravity -z. "
    "Closed-form kinematics and Jacobians (dynid.models.delta.inverse_kinematics / forward_kinematics). "
    "forearm_model 'rigid' (default): each forearm is a rigid rod pair with its centre of mass at mid-rod, exact; "
    "p1..p5 then have structural rank 4 (the combination -L_AB^2/2*p1 - g*L_AB/2*p2 + p3 + L_BC^2/4*p4 - 3/2*p5 "
    "changes no torque), so identification reports base parameters (M_P held at 0, the other four absorbing "
    "it; they may then look unphysical, e.g. a negative g*L_AB*M_AB, while every joint torque stays exact): hold "
    "one of them (e.g. M_P from a scale) under 'parameters' to get physical values for the others. "
    "'lumped': Codourey's split (elbow_mass_fraction of M_BC at the elbow, the rest on the plate, plus the Theta_BC term); it spans the same torques after "
    "identification but is a few % off a rigid-forearm robot with the same physical values. "
    "p11..p14 (D, C_r, Fr_max, R_ext) are undocumented by softMC: user constants, never identified, no effect "
    "on the torque. L_TO/L_TP (p9, p10) are geometry constants read from 'parameters'. "
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
                                   "(spec/interfaces.md §4 Delta geometry)")
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
        self._check_home()

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
        B, b, _ = _arm_points(geo, qs)
        f = p[:, None, :] + geo.platform_radius * geo.radial[None] - B
        cos_t = np.einsum("nij,nij->ni", f, b) / (geo.upper_arm * geo.forearm)
        ok &= (cos_t > 0.25).all(axis=1)
        ok &= np.abs(np.linalg.det(f / geo.forearm)) > 0.1
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
