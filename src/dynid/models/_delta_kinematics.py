"""Delta kinematics in closed form (spec/interfaces.md §4): geometry, inverse and forward kinematics,
rates and accelerations, and the conditioning of a configuration (transmission angles, distance from the
parallel singularity). The models (:mod:`dynid.models.delta`) build on it and re-export the public names.

Arm i = 1, 2, 3 at azimuth (i − 1)·120°, radial unit vector u_i, motor axis w_i = e_z × u_i through
A_i = R·u_i; elbow B_i = A_i + L_AB·(cos q_i·u_i − sin q_i·e_z); the plate (centre p, below the base)
keeps its orientation and forearm i joins B_i to C_i = p + r·u_i with length L_BC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, InputDataError, ShapeError
from .closed_chain import KinematicsError, cross

__all__ = ["DeltaGeometry", "inverse_kinematics", "forward_kinematics", "joint_to_cartesian", "cartesian_to_joint",
           "TRANSMISSION_COS_MIN", "SINGULARITY_DET_MIN"]

_EZ = np.array([0.0, 0.0, 1.0])
_PHI = np.radians([0.0, 120.0, 240.0])
_U = np.column_stack([np.cos(_PHI), np.sin(_PHI), np.zeros(3)])   # u_i, rows
_W = np.column_stack([-np.sin(_PHI), np.cos(_PHI), np.zeros(3)])  # w_i = e_z × u_i, rows
_GEOMETRY_KEYS = ("base_radius", "platform_radius", "upper_arm", "forearm")

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
        raise KinematicsError(
            f"sample {k}: actuator angles {np.round(q[k, :3], 6).tolist()} rad do not assemble the Delta "
            f"(the forearms of length {geometry.forearm} m cannot meet the plate)", sample=k,
            hint="check the geometry keys, ModelOffset and the angle convention (q = 0 arm horizontal, "
                 "positive q lowers the elbow)")


TRANSMISSION_COS_MIN = 0.25
"""Smallest cosine of the transmission angle (forearm against its elbow's path, ``f_i·b_i / (L_AB L_BC)``)
of a well-conditioned Delta configuration: 0 is the serial singularity (the arm cannot push the forearm)."""
SINGULARITY_DET_MIN = 0.1
"""Smallest ``|det(n_1, n_2, n_3)|`` (forearm unit vectors) of a well-conditioned configuration: 0 is the
parallel singularity (the plate gains a degree of freedom)."""


def _conditioning(geometry: DeltaGeometry, q: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Transmission cosines ``f_i·b_i / (L_AB L_BC)`` ``(N, 3)`` and ``det(f_1, f_2, f_3) / L_BC³`` ``(N,)`` at
    assembled angles ``q`` ``(N, 3)`` with plate positions ``p`` ``(N, 3)``."""
    B, b, _ = _arm_points(geometry, q)
    f = p[:, None, :] + geometry.platform_radius * _U[None] - B
    cos_t = np.einsum("nij,nij->ni", f, b) / (geometry.upper_arm * geometry.forearm)
    return cos_t, np.linalg.det(f / geometry.forearm)


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
