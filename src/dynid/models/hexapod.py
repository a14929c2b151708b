"""``6upru``: the 6-UPRU hexapod of Ni et al. (2025), a Stewart–Gough platform with six prismatic legs.

Geometry (spec/interfaces.md §4 "Hexapod geometry"): base frame z up, gravity −g·e_z. Leg i joins the
base U joint at ``B_i`` (base frame) to the platform U joint at ``P_i`` (platform frame). Platform
pose: origin ``p`` and ``R = Rz(yaw)·Ry(pitch)·Rx(roll)``; ``P_i`` in the base frame is ``p + R·P_i``.
The leg vector ``L_i = p + r_i − B_i`` (``r_i = R·P_i``) has the length ``ρ_i = |L_i|`` (the recorded
``q_i``) and the direction ``n_i = L_i/ρ_i``.

Moving bodies, each with any mass, centre of mass and inertia in its own frame:

- the cylinder of leg i: origin ``B_i``, ``z = n_i``, ``x = unit(a_i × n_i)`` (the base U's second axis;
  ``a_i`` its axis fixed in the base). The U joint lets it turn about ``a_i`` and ``x`` only, which
  fixes its spin about the leg: ``ω_c = n × ṅ + s_c n`` with ``s_c = (a·n)(a·(n × ṅ))/(1 − (a·n)²)``;
- the rod of leg i: origin ``P_i``, ``z = n_i``, ``x = unit(n_i × R·v_i)`` (the platform U's axis ``v_i``
  fixed in the platform). It slides along the cylinder (the actuated P joint) and spins about ``n_i``
  through the R joint as the platform U dictates: ``ω_r = n × ṅ + s_r n`` with ``(ω_r − ω_p)`` in the
  plane of ``R·v_i`` and ``x``;
- the platform: origin ``p``, the platform frame.

U crosses are massless. The six legs share one set of cylinder and rod parameters unless the
configuration says ``identical_legs: false``. The actuator force ``τ_i`` acts along ``n_i`` on the rod
(positive extends the leg); friction is per actuator, in ``ρ̇_i`` (the shared friction block).

Dynamics: :mod:`dynid.models.closed_chain` (Newton–Euler wrench of every body, projected onto the legs
by virtual power, ``τ = Σ_b J_bᵀ Y_b φ_b``). Forward kinematics: Newton iterations seeded by an earlier
sample, from ``home_pose`` (or the centred pose whose leg lengths are closest to the first sample's).

References
----------
Ni, Zhao, Zhao, Yang, "Dynamic parameter identification of a 6-UPRU parallel manipulator", China
Mechanical Engineering 36(12):2911–2919, 2025 (spec/lagrange-and-parallel.md §4).
B. Dasgupta, T. S. Mruthyunjaya, "A Newton–Euler formulation for the inverse dynamics of the Stewart
platform manipulator", Mechanism and Machine Theory 33(8), 1998.
"""

from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, ShapeError
from ._rnea import BODY_PARAM_NAMES, N_BODY_PARAMS
from ._urdf import body_parameters
from .base import ConfigurationCheck, DynamicModel, Joint, Parameter, TaskSpace
from .closed_chain import (BodyMotions, ClosedChain, KinematicsError, body_frame, closed_chain_regressor, cross, solve_task,
                           task_motion)
from .registry import register_model

__all__ = ["HexapodGeometry", "Hexapod", "HexapodChain", "pose_to_frame", "frame_to_pose", "inverse_kinematics",
           "forward_kinematics", "kinematic_jacobian", "platform_motion", "EXAMPLE_GEOMETRY", "EXAMPLE_BODIES"]

_EZ = np.array([0.0, 0.0, 1.0])
_I3 = np.eye(3)


def _ring(radius: float, angles_deg, z: float = 0.0) -> list[list[float]]:
    a = np.radians(angles_deg)
    return np.column_stack([radius * np.cos(a), radius * np.sin(a), np.full(a.size, z)]).round(12).tolist()


EXAMPLE_GEOMETRY: dict[str, Any] = {
    "base_points": _ring(0.6, [15, 105, 135, 225, 255, 345]),
    "platform_points": _ring(0.35, [45, 75, 165, 195, 285, 315]),
    "home_pose": [0.0, 0.0, 0.8, 0.0, 0.0, 0.0],
}
"""A mid-size motion-base hexapod [m]: base joints on a 600 mm circle in pairs 30° apart, platform joints on
a 350 mm circle, home 800 mm above the base (legs about 0.86 m). Used without any configuration."""

EXAMPLE_BODIES: dict[str, Any] = {
    "cylinder": {"mass": 4.0, "com": [0.004, 0.0, 0.22], "inertia": [0.07, 0.0, 0.0, 0.068, 0.0, 0.005]},
    "rod": {"mass": 1.6, "com": [0.0, 0.003, -0.2], "inertia": [0.025, 0.0, 0.0, 0.026, 0.0, 0.0012]},
    "platform": {"mass": 22.0, "com": [0.01, -0.008, 0.06], "inertia": [0.9, 0.01, 0.0, 0.95, 0.02, 1.6]},
}
"""Inertial values of the example robot's bodies (mass [kg], centre of mass [m] and inertia about it
[kg m²] as ``[ixx, ixy, ixz, iyy, iyz, izz]``, each in the body's own frame)."""

_BODY_KEYS = ("cylinder", "rod", "platform")


# ----------------------------------------------------------------------------------- geometry

def _points(name: str, value: Any, unit_vectors: bool = False) -> np.ndarray:
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be 6 rows of 3 numbers [m], got {value!r}") from None
    if a.shape != (6, 3) or not np.all(np.isfinite(a)):
        raise ConfigError(f"{name} must be 6 rows of 3 finite numbers (one per leg), got an array of shape {a.shape}",
                          hint="write it as [[x1, y1, z1], ..., [x6, y6, z6]]")
    if unit_vectors:
        norm = np.linalg.norm(a, axis=1)
        if np.any(norm < 1e-9):
            raise ConfigError(f"{name}: row {int(np.argmin(norm)) + 1} is a zero vector; U-joint axes must be non-zero")
        a = a / norm[:, None]
    return a


def _tangential(points: np.ndarray, name: str) -> np.ndarray:
    t = cross(_EZ, points)
    norm = np.linalg.norm(t, axis=1)
    if np.any(norm < 1e-9):
        raise ConfigError(f"{name}: joint {int(np.argmin(norm)) + 1} lies on the z axis, so its default U axis "
                          "unit(e_z × point) is undefined", hint=f"give {name.replace('points', 'u_axes')} explicitly")
    return t / norm[:, None]


@dataclass(frozen=True)
class HexapodGeometry:
    """Joint positions and U-joint axes (spec/interfaces.md §4), SI.

    base_points : (6, 3) — ``B_i`` in the base frame [m]
    platform_points : (6, 3) — ``P_i`` in the platform frame [m]
    base_u_axes : (6, 3) — unit ``a_i`` fixed in the base (default ``unit(e_z × B_i)``)
    platform_u_axes : (6, 3) — unit ``v_i`` fixed in the platform (default ``unit(e_z × P_i)``)
    """

    base_points: np.ndarray
    platform_points: np.ndarray
    base_u_axes: np.ndarray
    platform_u_axes: np.ndarray

    @classmethod
    def from_config(cls, options: Mapping[str, Any]) -> "HexapodGeometry":
        B = _points("base_points", options["base_points"])
        P = _points("platform_points", options["platform_points"])
        a = (_points("base_u_axes", options["base_u_axes"], True) if options.get("base_u_axes") is not None
             else _tangential(B, "base_points"))
        v = (_points("platform_u_axes", options["platform_u_axes"], True) if options.get("platform_u_axes") is not None
             else _tangential(P, "platform_points"))
        return cls(B, P, a, v)

    @property
    def platform_radius(self) -> float:
        """Mean distance of the platform joints from the platform origin [m] (the length that makes the
        Jacobian's rotation columns comparable with its translation columns)."""
        return float(np.mean(np.linalg.norm(self.platform_points, axis=1)))


def pose_to_frame(pose: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(p (N, 3), R (N, 3, 3))`` of poses ``(N, 6)`` = x, y, z [m], roll, pitch, yaw [rad] (R = Rz Ry Rx)."""
    pose = np.atleast_2d(np.asarray(pose, dtype=float))
    if pose.shape[-1] != 6:
        raise ShapeError(f"poses must have shape (N, 6) (x, y, z, roll, pitch, yaw), got {pose.shape}")
    cr, sr = np.cos(pose[:, 3]), np.sin(pose[:, 3])
    cp, sp = np.cos(pose[:, 4]), np.sin(pose[:, 4])
    cy, sy = np.cos(pose[:, 5]), np.sin(pose[:, 5])
    R = np.empty((pose.shape[0], 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 0, 2] = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
    R[:, 1, 0], R[:, 1, 1], R[:, 1, 2] = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
    R[:, 2, 0], R[:, 2, 1], R[:, 2, 2] = -sp, cp * sr, cp * cr
    return pose[:, :3].copy(), R


def frame_to_pose(p: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pose_to_frame`: ``(N, 6)`` with pitch in [−π/2, π/2]."""
    roll = np.arctan2(R[:, 2, 1], R[:, 2, 2])
    pitch = -np.arcsin(np.clip(R[:, 2, 0], -1.0, 1.0))
    yaw = np.arctan2(R[:, 1, 0], R[:, 0, 0])
    return np.column_stack([p, roll, pitch, yaw])


def _legs(geo: HexapodGeometry, p: np.ndarray, R: np.ndarray):
    """``r_i = R P_i`` ``(N, 6, 3)``, leg vectors ``L_i`` and lengths ``ρ_i`` ``(N, 6)``."""
    r = np.einsum("nij,kj->nki", R, geo.platform_points)
    L = p[:, None, :] + r - geo.base_points
    return r, L, np.sqrt(np.einsum("nki,nki->nk", L, L))


def inverse_kinematics(geometry: HexapodGeometry, pose: npt.ArrayLike) -> np.ndarray:
    """Leg lengths ``ρ`` ``(N, 6)`` [m] of platform poses ``(N, 6)`` (x, y, z [m], roll, pitch, yaw [rad]).

    Examples
    --------
    >>> geo = Hexapod.example().geometry
    >>> rho = inverse_kinematics(geo, [[0.0, 0.0, 0.8, 0.0, 0.0, 0.0]])
    >>> bool(np.allclose(rho, rho[0, 0]))
    True
    """
    p, R = pose_to_frame(pose)
    return _legs(geometry, p, R)[2]


def kinematic_jacobian(geometry: HexapodGeometry, pose: npt.ArrayLike) -> np.ndarray:
    """``J`` ``(N, 6, 6)`` with ``ρ̇ = J [v; ω]`` (platform origin velocity, angular velocity; base frame).

    Row i is ``[n_iᵀ, (r_i × n_i)ᵀ]``; the platform is singular where ``J`` is.
    """
    p, R = pose_to_frame(pose)
    r, L, rho = _legs(geometry, p, R)
    n = L / rho[..., None]
    return np.concatenate([n, cross(r, n)], axis=-1)


def _so3_exp(w: np.ndarray) -> np.ndarray:
    """Rotation matrices ``(N, 3, 3)`` of rotation vectors ``w`` ``(N, 3)`` (Rodrigues)."""
    th = np.linalg.norm(w, axis=1)
    small = th < 1e-8
    ths = np.where(small, 1.0, th)
    A = np.where(small, 1.0 - th**2 / 6.0, np.sin(ths) / ths)
    Bc = np.where(small, 0.5 - th**2 / 24.0, (1.0 - np.cos(ths)) / ths**2)
    K = np.zeros((w.shape[0], 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    return _I3 + A[:, None, None] * K + Bc[:, None, None] * (K @ K)


def _skew(u: np.ndarray) -> np.ndarray:
    """``[u]×`` ``(..., 3, 3)`` of ``u`` ``(..., 3)``."""
    S = np.zeros(u.shape + (3,))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -u[..., 2], u[..., 1], -u[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = u[..., 2], -u[..., 1], u[..., 0]
    return S


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


# ----------------------------------------------------------------------------------- closed chain

class HexapodChain(ClosedChain):
    """The 6-UPRU as a :class:`~dynid.models.closed_chain.ClosedChain`.

    Task coordinates ``x`` ``(N, 12)``: ``p`` then ``R`` row by row; rates ``u = [v; ω]`` (platform
    origin velocity and angular velocity, base frame); constraints ``Φ_i = ½(|L_i|² − ρ_i²)``.
    Bodies: the six cylinders, the six rods, the platform.
    """

    n_actuated = 6
    n_rates = 6
    n_bodies = 13

    def __init__(self, geometry: HexapodGeometry, home_pose: np.ndarray | None = None) -> None:
        self.geometry = geometry
        self.home_pose = None if home_pose is None else np.asarray(home_pose, dtype=float).reshape(6)
        self._recent = threading.local()   # last solved pose of this thread: the per-cycle runtime's seed

    # ---- poses
    @staticmethod
    def pack(p: np.ndarray, R: np.ndarray) -> np.ndarray:
        return np.concatenate([p, R.reshape(-1, 9)], axis=1)

    @staticmethod
    def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[:, :3], x[:, 3:].reshape(-1, 3, 3)

    def centred_pose(self, rho: np.ndarray) -> np.ndarray:
        """The pose ``(6,)`` at x = y = 0, no rotation, whose leg lengths are closest to ``rho`` ``(6,)``
        (least squares in the height z, a few Newton steps from above the base)."""
        geo = self.geometry
        d = geo.platform_points[:, :2] - geo.base_points[:, :2]
        h2 = np.sum(d * d, axis=1)                             # squared horizontal leg components
        dz = geo.platform_points[:, 2] - geo.base_points[:, 2]
        z = float(np.mean(np.sqrt(np.maximum(rho**2 - h2, 0.0)) - dz)) if np.all(rho**2 > h2) else float(np.mean(rho))
        for _ in range(30):   # Gauss–Newton on sum (|L_i(z)| − ρ_i)²
            lz = z + dz
            L = np.sqrt(h2 + lz**2)
            g = lz / L
            step = float(np.sum(g * (L - rho)) / max(np.sum(g * g), 1e-12))
            z -= step
            if abs(step) < 1e-14:
                break
        return np.array([0.0, 0.0, z, 0.0, 0.0, 0.0])

    def seed(self, qa: np.ndarray) -> np.ndarray:
        home = self.home_pose if self.home_pose is not None else self.centred_pose(qa[0])
        p, R = pose_to_frame(home[None])
        x = self.pack(p, R)
        last = getattr(self._recent, "x", None)
        if last is not None and (np.abs(self.residual(qa[:1], last)).max() < np.abs(self.residual(qa[:1], x)).max()):
            return last.copy()
        return x

    def remember(self, x: np.ndarray) -> None:
        """Keep the last solved pose as the next seed (it changes the speed, never the solution)."""
        self._recent.x = x[-1:].copy()

    def residual(self, qa, x):
        p, R = self.unpack(x)
        _, L, _ = _legs(self.geometry, p, R)
        return 0.5 * (np.einsum("nki,nki->nk", L, L) - qa**2)

    def jacobians(self, qa, x):
        p, R = self.unpack(x)
        r, L, _ = _legs(self.geometry, p, R)
        N = qa.shape[0]
        Pa = np.zeros((N, 6, 6))
        Pa[:, np.arange(6), np.arange(6)] = -qa
        return Pa, np.concatenate([L, cross(r, L)], axis=-1)

    def retract(self, x, du):
        p, R = self.unpack(x)
        return self.pack(p + du[:, :3], _so3_exp(du[:, 3:]) @ R)

    def bias(self, qa, qda, x, u):
        p, R = self.unpack(x)
        r, L, _ = _legs(self.geometry, p, R)
        v, w = u[:, None, :3], u[:, None, 3:]
        Ld = v + cross(w, r)
        return _dot(Ld, Ld) + _dot(L, cross(w, cross(w, r))) - qda**2

    def describe_failure(self, qa, k, what):
        return KinematicsError(f"sample {k}: leg lengths {np.round(qa[k], 6).tolist()} m {what}", sample=k,
                               hint="check the geometry (base_points, platform_points), home_pose and the units of "
                                    "the recording (leg lengths in m, or mm with units softmc)")

    # ---- the legs' kinematics, shared by the bodies and the configuration checks
    def leg_state(self, x, u, du):
        """Per leg ``(N, 6, 3)`` vectors and ``(N, 6)`` scalars of the current motion (dict)."""
        p, R = self.unpack(x)
        r, L, rho = _legs(self.geometry, p, R)
        v, w = u[:, None, :3], u[:, None, 3:]
        a, e = du[:, None, :3], du[:, None, 3:]
        n = L / rho[..., None]
        Ld = v + cross(w, r)
        Ldd = a + cross(e, r) + cross(w, cross(w, r))
        rhod = _dot(n, Ld)
        nd = (Ld - rhod[..., None] * n) / rho[..., None]
        rhodd = _dot(n, Ldd) + rho * _dot(nd, nd)
        ndd = (Ldd - rhodd[..., None] * n - 2.0 * rhod[..., None] * nd) / rho[..., None]
        return {"p": p, "R": R, "r": r, "rho": rho, "n": n, "nd": nd, "ndd": ndd, "Ldd": Ldd, "w": w[:, 0], "e": e[:, 0]}

    def motions(self, qa, qda, qdda, x, u, du) -> BodyMotions:
        geo = self.geometry
        s = self.leg_state(x, u, du)
        n, nd, ndd, rho, r, R = s["n"], s["nd"], s["ndd"], s["rho"], s["r"], s["R"]
        w, e = s["w"][:, None, :], s["e"][:, None, :]
        N = x.shape[0]
        nxnd, nxndd = cross(n, nd), cross(n, ndd)
        # ∂ṅ/∂u (N, 6, 3, 6): ṅ = (I − n nᵀ)/ρ · [I, −[r]×] u
        Pn = (_I3 - n[..., :, None] * n[..., None, :]) / rho[..., None, None]
        dL = np.concatenate([np.broadcast_to(_I3, r.shape + (3,)), -_skew(r)], axis=-1)     # ∂L̇/∂u
        Dn = Pn @ dL
        # cylinders: U joint with axis a fixed in the base
        ax = geo.base_u_axes[None]
        c = _dot(ax, n)
        k2 = 1.0 - c**2
        wv = _dot(ax, nxnd)
        sc = c * wv / k2
        cd, wd = _dot(ax, nd), _dot(ax, nxndd)
        scd = ((cd * wv + c * wd) * k2 + 2.0 * c**2 * cd * wv) / k2**2
        om_c = nxnd + sc[..., None] * n
        al_c = nxndd + scd[..., None] * n + sc[..., None] * nd
        Gc = _skew(n) + (c / k2)[..., None, None] * (n[..., :, None] * cross(ax, n)[..., None, :])
        Jc = np.zeros((N, 6, 6, 6))
        Jc[:, :, :3] = Gc @ Dn
        cyl = BodyMotions(body_frame(n, cross(ax, n)), om_c, al_c, np.zeros_like(n), None, Jc)
        # rods: R joint about n, U joint with axis v fixed in the platform
        vp = np.einsum("nij,kj->nki", R, geo.platform_u_axes)
        vpd = cross(w, vp)
        cr = _dot(vp, n)
        kr2 = 1.0 - cr**2
        g1 = _dot(w, vp) - _dot(vp, nxnd)
        er = _dot(w, n) - cr * g1
        sr = er / kr2
        crd = _dot(vpd, n) + _dot(vp, nd)
        erd = (_dot(e, n) + _dot(w, nd) - crd * g1
               - cr * (_dot(e, vp) - _dot(vpd, nxnd) - _dot(vp, nxndd)))
        srd = (erd * kr2 + 2.0 * er * cr * crd) / kr2**2
        om_r = nxnd + sr[..., None] * n
        al_r = nxndd + srd[..., None] * n + sr[..., None] * nd
        Gr = _skew(n) + (cr / kr2)[..., None, None] * (n[..., :, None] * cross(vp, n)[..., None, :])
        Jr = np.zeros((N, 6, 6, 6))
        Jr[:, :, :3] = Gr @ Dn
        Jr[:, :, :3, 3:] += (n[..., :, None] * (n - cr[..., None] * vp)[..., None, :]) / kr2[..., None, None]
        Jr[:, :, 3:] = dL
        rod = BodyMotions(body_frame(n, cross(n, vp)), om_r, al_r, s["Ldd"], None, Jr)
        # platform
        Jp = np.zeros((N, 1, 6, 6))
        Jp[:, 0, :3, 3:] = _I3
        Jp[:, 0, 3:, :3] = _I3
        plat = BodyMotions(R[:, None], w, e, du[:, None, :3], None, Jp)
        return BodyMotions.concatenate([cyl, rod, plat])


# ----------------------------------------------------------------------------------- public kinematics

def forward_kinematics(geometry: HexapodGeometry, rho: npt.ArrayLike, home_pose: npt.ArrayLike | None = None) -> np.ndarray:
    """Platform poses ``(N, 6)`` of leg lengths ``rho`` ``(N, 6)`` [m] (Newton, seeded by the previous sample).

    ``home_pose`` (x, y, z, roll, pitch, yaw) starts the first sample (default: the centred pose whose leg
    lengths are closest to it).

    Raises
    ------
    KinematicsError
        Leg lengths that do not assemble the platform, or a singular configuration (names the sample).

    Examples
    --------
    >>> geo = Hexapod.example().geometry
    >>> pose = np.array([[0.01, -0.02, 0.82, 0.03, -0.02, 0.05]])
    >>> bool(np.allclose(forward_kinematics(geo, inverse_kinematics(geo, pose)), pose, atol=1e-12))
    True
    """
    rho = np.atleast_2d(np.asarray(rho, dtype=float))
    if rho.ndim != 2 or rho.shape[1] != 6:
        raise ShapeError(f"leg lengths must have shape (N, 6), got {rho.shape}")
    chain = HexapodChain(geometry, home_pose)
    x = solve_task(chain, rho)
    return frame_to_pose(*chain.unpack(x))


def platform_motion(geometry: HexapodGeometry, rho, rhod, rhodd, home_pose=None):
    """Platform pose ``(N, 6)``, twist ``[v; ω]`` ``(N, 6)`` and its derivative ``[a; ε]`` ``(N, 6)`` (base
    frame, SI) of a leg motion ``(N, 6)`` [m, m/s, m/s²]."""
    chain = HexapodChain(geometry, home_pose)
    rho, rhod, rhodd = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (rho, rhod, rhodd))
    x, u, du, _, _ = task_motion(chain, rho, rhod, rhodd)
    return frame_to_pose(*chain.unpack(x)), u, du


# ----------------------------------------------------------------------------------- the model

def _body_prior(name: str, entry: Any) -> np.ndarray:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"bodies.{name} must be a mapping {{mass, com, inertia}}, got {entry!r}")
    extra = sorted(set(entry) - {"mass", "com", "inertia"})
    if extra:
        raise ConfigError(f"bodies.{name}: unknown key {extra[0]!r}", hint="keys are mass [kg], com [m], inertia "
                          "[kg m^2] about the centre of mass as [ixx, ixy, ixz, iyy, iyz, izz]")
    try:
        m = float(entry.get("mass", 0.0))
        c = np.array(entry.get("com", [0.0, 0.0, 0.0]), dtype=float).reshape(3)
        i6 = np.array(entry.get("inertia", [0.0] * 6), dtype=float).reshape(6)
    except (TypeError, ValueError):
        raise ConfigError(f"bodies.{name}: mass must be a number, com 3 numbers and inertia 6 numbers") from None
    I = np.array([[i6[0], i6[1], i6[2]], [i6[1], i6[3], i6[4]], [i6[2], i6[4], i6[5]]])
    return body_parameters(m, c, I)


_NOTES = (
    "The 6-UPRU hexapod of Ni et al. 2025 (geometry: the README's section 'Parallel robots: the 6-UPRU "
    "hexapod', help(dynid.models.hexapod)): q_i = leg length rho_i [m], "
    "tau_i = actuator force along the leg [N]. Parameters: the ten standard parameters (inertia about the body "
    "origin, first moments m*c, mass) of the cylinder (origin B_i, z along the leg, x = unit(a_i x n_i)), the rod "
    "(origin P_i, z along the leg, x = unit(n_i x R v_i)) - shared by the six legs unless identical_legs is "
    "false - and the platform (platform frame). The cylinder's mass is not identifiable (it turns about B_i), and "
    "the rods' mass groups with the platform's (rod.m + 1/6 platform.m): identification reports base parameters. "
    "Forward kinematics: Newton iterations from home_pose (default: the centred pose closest to the first "
    "sample), each sample seeded by an earlier one. Excitation limits: position_limits (leg strokes), "
    "u_joint_limit, jacobian_condition_limit."
)


@register_model
class Hexapod(DynamicModel):
    """The 6-UPRU hexapod (module docstring): 6 prismatic legs, cylinder, rod and platform bodies.

    Examples
    --------
    >>> from dynid.models import make_model
    >>> hexa = make_model("6upru")
    >>> hexa.n_joints, hexa.n_params, hexa.param_names[20]
    (6, 30, 'platform.Ixx')
    """

    name = "6upru"
    title = "Hexapod 6-UPRU (Stewart-Gough platform, 6 prismatic legs), standard parameters per body"
    softmc_model = 1
    element = "HEXAPOD"
    status = "verified"
    notes = _NOTES
    example_config = dict(EXAMPLE_GEOMETRY)
    # The weakest base directions of a hexapod over a short stroke are the legs' viscous friction (the RMS leg
    # speed): a D-optimal term buys acceleration with them, so the Fourier design minimises the condition
    # number itself (measured: 2830 with the term, 2360 without, the sine program 2640; home ± 5 cm).
    fourier_dopt_weight = 0.0
    config_keys = {
        "base_points": "6 x 3: centres B_i of the base U joints, base frame [m] (required)",
        "platform_points": "6 x 3: centres P_i of the platform U joints, platform frame [m] (required)",
        "base_u_axes": "6 x 3 unit vectors: U axis a_i fixed in the base (default unit(e_z x B_i))",
        "platform_u_axes": "6 x 3 unit vectors: U axis v_i fixed in the platform (default unit(e_z x P_i))",
        "home_pose": "x, y, z [m], roll, pitch, yaw [rad]: start of the forward kinematics (default: the centred "
                     "pose whose leg lengths are closest to the first sample's)",
        "identical_legs": "true (default): the six legs share one set of cylinder and rod parameters",
        "bodies": "inertial priors {cylinder|rod|platform: {mass [kg], com [m], inertia [kg m^2] about the COM as "
                  "[ixx, ixy, ixz, iyy, iyz, izz]}}, in each body's frame",
        "payload_com": "payload centre of mass in the platform frame [m], default [0, 0, 0]",
        "u_joint_limit": "largest angle [rad] between a leg and its home direction at either U joint (excitation "
                         "limit, default 0.6)",
        "jacobian_condition_limit": "largest condition number of the kinematic Jacobian, rotation columns scaled "
                                    "by the platform radius (excitation limit, default 40)",
    }

    def __init__(self, config=None) -> None:
        super().__init__(config)
        opts = self.config.options
        missing = [k for k in ("base_points", "platform_points") if opts.get(k) is None]
        if missing:
            raise ConfigError(f"model {self.name!r} needs the geometry key(s) {', '.join(missing)} [m]",
                              hint="set base_points and platform_points (6 rows of x, y, z) in the configuration "
                                   "(the geometry: help(dynid.models.hexapod))")
        self.geometry = HexapodGeometry.from_config(opts)
        home = opts.get("home_pose")
        if home is not None:
            try:
                home = np.array(home, dtype=float).reshape(6)
            except (TypeError, ValueError):
                raise ConfigError(f"home_pose must be 6 numbers (x, y, z [m], roll, pitch, yaw [rad]), got {home!r}") from None
        self.chain = HexapodChain(self.geometry, home)
        legs = opts.get("identical_legs", True)
        if not isinstance(legs, bool):
            raise ConfigError(f"identical_legs must be true or false, got {legs!r}")
        self.identical_legs = legs
        self.u_joint_limit = self._positive("u_joint_limit", 0.6)
        self.jacobian_condition_limit = self._positive("jacobian_condition_limit", 40.0)
        self.joints = tuple(Joint(n, "linear") for n in self._joint_names([f"A{i + 1}" for i in range(6)]))
        groups = (["cylinder", "rod"] if legs else [f"cylinder{i + 1}" for i in range(6)] + [f"rod{i + 1}" for i in range(6)])
        groups.append("platform")
        units = {"m": "kg", "mx": "kg m", "my": "kg m", "mz": "kg m"}
        self.body_names = tuple(groups)
        self.parameters = tuple(
            Parameter(f"{g}.{pn}", units.get(pn, "kg m^2"), f"{g}: {_DESCRIPTION[pn]}", N_BODY_PARAMS * b + k + 1)
            for b, g in enumerate(groups) for k, pn in enumerate(BODY_PARAM_NAMES))
        self._selection = self._build_selection()
        self._gravity = np.array([0.0, 0.0, -self.gravity])
        self._fk_cache = threading.local()

    def _positive(self, key: str, default: float) -> float:
        v = self.option(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ConfigError(f"{key} must be a positive number, got {v!r}")
        return float(v)

    def _build_selection(self) -> np.ndarray:
        """``(13 · 10, n_params + 1)``: body standard parameters of each model parameter; last column the payload."""
        S = np.zeros((13, N_BODY_PARAMS, self.n_params + 1))
        k = np.arange(N_BODY_PARAMS)
        for leg in range(6):
            cyl, rod = (0, 1) if self.identical_legs else (leg, 6 + leg)
            S[leg, k, N_BODY_PARAMS * cyl + k] = 1.0
            S[6 + leg, k, N_BODY_PARAMS * rod + k] = 1.0
        S[12, k, self.n_params - N_BODY_PARAMS + k] = 1.0
        if not self.payload.is_zero:
            c = np.array(self.option("payload_com", [0.0, 0.0, 0.0]), dtype=float).reshape(3)
            S[12, :, -1] = body_parameters(self.payload.mass, c, self.payload.inertia * np.outer(_EZ, _EZ))
        return S.reshape(13 * N_BODY_PARAMS, -1)

    # ------------------------------------------------------------------ kinematics
    def solve_poses(self, q: np.ndarray, strict: bool = True) -> np.ndarray:
        """Task coordinates ``(N, 12)`` of leg lengths ``q`` (forward kinematics; NaN rows where the legs do
        not assemble the platform when not ``strict``).

        Per thread, the last array solved is remembered: the same array again is not re-solved, and up to
        4096 of its samples warm-start the next (an optimiser's next iterate, a per-cycle runtime's next
        cycle), which changes the speed, never the solution.
        """
        key = hashlib.blake2b(np.ascontiguousarray(q).view(np.uint8), digest_size=16).digest() + bytes(str(q.shape), "ascii")
        last = getattr(self._fk_cache, "entry", None)
        if last is not None and last[0] == key:
            x = last[3]
        else:
            x = solve_task(self.chain, q, strict=False, warm=None if last is None else last[1:3])
            ok = np.flatnonzero(np.all(np.isfinite(x), axis=1))
            if ok.size:
                self.chain.remember(x[ok])
                keep = ok[:: max(1, ok.size // 4096)]
                self._fk_cache.entry = (key, q[keep].copy(), x[keep], x)
        if strict and not np.all(np.isfinite(x)):
            solve_task(self.chain, q)   # raises, naming the first sample that does not assemble
        return x

    def poses(self, q: npt.ArrayLike) -> np.ndarray:
        """Platform poses ``(N, 6)`` (x, y, z [m], roll, pitch, yaw [rad]) of leg lengths ``q`` ``(N, 6)``."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        return frame_to_pose(*self.chain.unpack(self.solve_poses(q)))

    def home_positions(self) -> np.ndarray:
        """Leg lengths ``(6,)`` [m] at :attr:`home`."""
        return inverse_kinematics(self.geometry, self.home[None])[0]

    def task_space(self, q) -> TaskSpace:
        return TaskSpace("platform pose", ("x", "y", "z", "roll", "pitch", "yaw"), ("m", "m", "m", "rad", "rad", "rad"),
                         self.poses(q))

    @cached_property
    def home(self) -> np.ndarray:
        """Home pose ``(6,)``: ``home_pose`` or the centred pose with the legs at 45° on average."""
        if self.chain.home_pose is not None:
            return self.chain.home_pose.copy()
        geo = self.geometry
        h = np.linalg.norm(geo.platform_points[:, :2] - geo.base_points[:, :2], axis=1).mean()
        return np.array([0.0, 0.0, h + float(np.mean(geo.base_points[:, 2] - geo.platform_points[:, 2])), 0, 0, 0])

    def _check_values(self, x: np.ndarray) -> np.ndarray:
        """``(N, 13)``: U-joint angles at the base and the platform [rad], Jacobian condition number."""
        p, R = self.chain.unpack(x)
        r, L, rho = _legs(self.geometry, p, R)
        n = L / rho[..., None]
        hp, hR = pose_to_frame(self.home[None])
        _, L0, rho0 = _legs(self.geometry, hp, hR)
        n0 = L0 / rho0[..., None]                                     # home directions (1, 6, 3)
        n_plat = np.einsum("nji,nkj->nki", R, n)                      # leg directions in the platform frame
        n0_plat = np.einsum("nji,nkj->nki", hR, n0)
        out = np.empty((x.shape[0], 13))
        out[:, :6] = np.arccos(np.clip(_dot(n, n0), -1.0, 1.0))
        out[:, 6:12] = np.arccos(np.clip(_dot(n_plat, n0_plat), -1.0, 1.0))
        J = np.concatenate([n, cross(r, n) / self.geometry.platform_radius], axis=-1)
        out[:, 12] = np.linalg.cond(J)
        return out

    @property
    def _limits_vector(self) -> np.ndarray:
        return np.array([self.u_joint_limit] * 12 + [self.jacobian_condition_limit])

    def configuration_check(self, q) -> ConfigurationCheck:
        """U-joint angles (between each leg and its home direction, at the base and in the platform frame)
        and the condition number of the Jacobian (rotation columns × platform radius) at leg lengths ``q``
        ``(N, 6)``; ``inf`` where the legs do not assemble the platform."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        x = self.solve_poses(q, strict=False)
        ok = np.all(np.isfinite(x), axis=1)
        values = np.full((q.shape[0], 13), np.inf)
        if ok.any():
            values[ok] = self._check_values(x[ok])
        names = tuple([f"base U-joint angle, leg {i + 1}" for i in range(6)]
                      + [f"platform U-joint angle, leg {i + 1}" for i in range(6)] + ["Jacobian condition number"])
        return ConfigurationCheck(names, values, self._limits_vector, ("rad",) * 12 + ("",))

    # ------------------------------------------------------------------ dynamics
    _CHUNK = 2048

    def _columns(self, q, qd, qdd) -> np.ndarray:
        x = self.solve_poses(q)
        out = np.empty(q.shape + (self._selection.shape[1],))
        for a in range(0, q.shape[0], self._CHUNK):   # blocks of samples, each vectorised
            b = slice(a, a + self._CHUNK)
            out[b] = closed_chain_regressor(self.chain, q[b], qd[b], qdd[b], self._gravity, self._selection, x[b])
        return out

    def _regressor(self, q, qd, qdd):
        return self._columns(q, qd, qdd)[..., :-1]

    def _offset(self, q, qd, qdd):
        if self.payload.is_zero:
            return np.zeros_like(q)
        return self._columns(q, qd, qdd)[..., -1]

    # ------------------------------------------------------------------ states, priors
    def _random_poses(self, rng: np.random.Generator, n_samples: int) -> np.ndarray:
        """Poses around home (±25 % of the platform radius in x, y, ±15 % in z, ±0.15 rad) inside
        ``position_limits`` and ``jacobian_condition_limit`` (the U-joint limit is an excitation limit: the
        structure of the model does not depend on it)."""
        rp = self.geometry.platform_radius
        span = np.array([0.25 * rp, 0.25 * rp, 0.15 * rp, 0.15, 0.15, 0.15])
        out, have = [], 0
        lims = self.config.position_limits
        for _ in range(100):   # rejection sampling in vectorised batches
            m = max(64, 2 * (n_samples - have))
            pose = self.home + rng.uniform(-1.0, 1.0, size=(m, 6)) * span
            p, R = pose_to_frame(pose)
            rho = _legs(self.geometry, p, R)[2]
            keep = self._check_values(self.chain.pack(p, R))[:, 12] <= self.jacobian_condition_limit
            if lims is not None and len(lims) == 6:
                lo, hi = np.array(lims, dtype=float).T
                keep &= np.all((rho >= lo) & (rho <= hi), axis=1)
            out.append(rho[keep])
            have += int(keep.sum())
            if have >= n_samples:
                return np.concatenate(out)[:n_samples]
        raise ConfigError(f"model {self.name!r}: could not find {n_samples} poses around home_pose inside the limits",
                          hint="check the geometry, home_pose, position_limits, u_joint_limit and jacobian_condition_limit")

    def sample_states(self, rng: np.random.Generator, n_samples: int):
        """Leg lengths of random poses around home; ``ρ̇ ~ N(0, 0.2²)`` m/s, ``ρ̈ ~ N(0, 1)`` m/s²."""
        q = self._random_poses(rng, n_samples)
        return q, 0.2 * rng.normal(size=q.shape), rng.normal(size=q.shape)

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Leg length range ``(lo, hi)`` ``(6,)`` [m]: ``position_limits``, else that of the random poses (seed 0)."""
        lims = self.config.position_limits
        if lims is not None and len(lims) == 6:
            a = np.array(lims, dtype=float)
            return a[:, 0], a[:, 1]
        q = self._random_poses(np.random.default_rng(0), 1000)
        return q.min(axis=0), q.max(axis=0)

    def _priors(self) -> dict[str, np.ndarray] | None:
        bodies = self.option("bodies")
        if bodies is None:
            return None
        if not isinstance(bodies, Mapping) or set(bodies) - set(_BODY_KEYS):
            raise ConfigError(f"bodies must be a mapping with the keys {', '.join(_BODY_KEYS)}, got {bodies!r}")
        return {k: _body_prior(k, bodies[k]) for k in bodies}

    def prior_parameters(self):
        pri = self._priors()
        if pri is None or set(pri) != set(_BODY_KEYS):
            return None
        reps = 1 if self.identical_legs else 6
        return np.concatenate([pri["cylinder"]] * reps + [pri["rod"]] * reps + [pri["platform"]])

    def example_parameters(self):
        pri = self.prior_parameters()
        if pri is not None:
            return pri
        reps = 1 if self.identical_legs else 6
        b = {k: _body_prior(k, v) for k, v in EXAMPLE_BODIES.items()}
        return np.concatenate([b["cylinder"]] * reps + [b["rod"]] * reps + [b["platform"]])

    def link_parameter_groups(self) -> list[np.ndarray]:
        return [np.arange(N_BODY_PARAMS * b, N_BODY_PARAMS * (b + 1)) for b in range(len(self.body_names))]


_DESCRIPTION = {
    "m": "mass", "mx": "first moment m*c_x", "my": "first moment m*c_y", "mz": "first moment m*c_z",
    "Ixx": "inertia xx about the body origin", "Ixy": "inertia xy about the body origin",
    "Ixz": "inertia xz about the body origin", "Iyy": "inertia yy about the body origin",
    "Iyz": "inertia yz about the body origin", "Izz": "inertia zz about the body origin",
}
