"""Rigid-body inertia: pseudo-inertia matrices, the log-Cholesky parametrisation and the physical
consistency check of standard link parameters.

Standard parameters per link, in the ``serial`` order: ``Ixx, Ixy, Ixz, Iyy, Iyz, Izz`` (inertia tensor at
the link frame origin), ``mx, my, mz`` (first moments), ``m``. A link is physically consistent when its
pseudo-inertia ``J = [[Σ, h], [hᵀ, m]]`` (``Σ = ½ tr(I)·1 − I``, ``h = m·c``) is positive (semi)definite:
positive mass and the triangle inequalities of the principal moments at the centre of mass.

References
----------
P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear matrix inequalities for physically consistent inertial
parameter identification", IEEE RA-L 3(1), 2018. C. Rucker, P. M. Wensing, "Smooth parameterization of
rigid-body inertia", IEEE RA-L 7(2), 2022.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import ConfigError

__all__ = ["PhysicalConsistency", "pseudo_inertia", "standard_from_pseudo", "log_cholesky_to_standard",
           "standard_to_log_cholesky", "physical_consistency"]


# ---------------------------------------------------------------------------- pseudo-inertia algebra


def _pseudo_basis() -> np.ndarray:
    """``E`` ``(10, 4, 4)``: ``J = Σ_p pi_p E_p`` (linear map from standard parameters to pseudo-inertia)."""
    E = np.zeros((10, 4, 4))
    # Σ = ½ tr(I) 1 − I: Σxx = (−Ixx + Iyy + Izz)/2, Σxy = −Ixy, ...
    for p, diag in {0: (-0.5, 0.5, 0.5), 3: (0.5, -0.5, 0.5), 5: (0.5, 0.5, -0.5)}.items():
        E[p, 0, 0], E[p, 1, 1], E[p, 2, 2] = diag
    for p, (a, b) in {1: (0, 1), 2: (0, 2), 4: (1, 2)}.items():
        E[p, a, b] = E[p, b, a] = -1.0
    for p, a in {6: 0, 7: 1, 8: 2}.items():
        E[p, a, 3] = E[p, 3, a] = 1.0
    E[9, 3, 3] = 1.0
    return E


def _standard_basis() -> np.ndarray:
    """``P`` ``(10, 4, 4)``: ``pi_p = Σ_ab P_pab J_ab`` (inverse of :func:`_pseudo_basis` on symmetric J)."""
    P = np.zeros((10, 4, 4))
    P[0, 1, 1] = P[0, 2, 2] = 1.0          # Ixx = Σyy + Σzz
    P[1, 0, 1] = -1.0                      # Ixy = −Σxy
    P[2, 0, 2] = -1.0
    P[3, 0, 0] = P[3, 2, 2] = 1.0
    P[4, 1, 2] = -1.0
    P[5, 0, 0] = P[5, 1, 1] = 1.0
    P[6, 0, 3] = P[7, 1, 3] = P[8, 2, 3] = 1.0
    P[9, 3, 3] = 1.0
    return P


_E = _pseudo_basis()
_P = _standard_basis()
_OFFDIAG = (np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3]))   # strict upper triangle of a 4x4
# θ = (α, d1, d2, d3, s12, s23, s13, t1, t2, t3): which entry of Ũ each off-diagonal coordinate fills
_S_ENTRIES = ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def pseudo_inertia(pi) -> np.ndarray:
    """Pseudo-inertia matrices of standard parameter vectors.

    Parameters
    ----------
    pi : array-like, shape (..., 10)
        ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]``: inertia tensor about the link-frame origin
        [kg m²] (off-diagonal entries are tensor entries, ``Ixy = −∫xy dm``), first moments [kg m], mass [kg].

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``[[Σ, h], [hᵀ, m]]`` with ``Σ = ∫ r rᵀ dm = ½ tr(I)·1 − I`` [kg m²].

    Examples
    --------
    >>> J = pseudo_inertia([0.2, 0, 0, 0.2, 0, 0.2, 0, 0, 0, 1.0])  # 1 kg, I = 0.2 about the origin
    >>> np.diag(J).round(3).tolist()
    [0.1, 0.1, 0.1, 1.0]
    """
    pi = np.asarray(pi, dtype=float)
    return np.einsum("...p,pab->...ab", pi, _E)


def standard_from_pseudo(J) -> np.ndarray:
    """Standard parameters ``(..., 10)`` of pseudo-inertia matrices ``J`` ``(..., 4, 4)`` (inverse of :func:`pseudo_inertia`)."""
    J = np.asarray(J, dtype=float)
    return np.einsum("pab,...ab->...p", _P, J)


def _log_cholesky_factor(theta: np.ndarray) -> np.ndarray:
    """``U`` ``(L, 4, 4)`` of log-Cholesky coordinates ``theta`` ``(L, 10)``."""
    L = theta.shape[0]
    U = np.zeros((L, 4, 4))
    U[:, 0, 0], U[:, 1, 1], U[:, 2, 2], U[:, 3, 3] = np.exp(theta[:, 1]), np.exp(theta[:, 2]), np.exp(theta[:, 3]), 1.0
    for k, (a, b) in enumerate(_S_ENTRIES):
        U[:, a, b] = theta[:, 4 + k]
    return U * np.exp(theta[:, 0])[:, None, None]


def _factor_derivatives(theta: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``∂U/∂θ_k`` ``(L, 10, 4, 4)``."""
    L = theta.shape[0]
    dU = np.zeros((L, 10, 4, 4))
    ea = np.exp(theta[:, 0])
    dU[:, 0] = U
    for i in range(3):
        dU[:, 1 + i, i, i] = U[:, i, i]
    for k, (a, b) in enumerate(_S_ENTRIES):
        dU[:, 4 + k, a, b] = ea
    return dU


def log_cholesky_to_standard(theta, *, jacobian: bool = False):
    """Standard parameters of log-Cholesky coordinates (Rucker & Wensing 2022).

    Parameters
    ----------
    theta : array-like, shape (L, 10) or (10,)
        ``(α, d1, d2, d3, s12, s23, s13, t1, t2, t3)`` per link (dimensionless logs; ``s``, ``t`` in m
        relative to the mass scale, see the module docstring). Any real values.
    jacobian : bool
        Also return ``∂pi/∂θ``.

    Returns
    -------
    pi : ndarray, shape (L, 10) or (10,)
        Standard parameters; their pseudo-inertia is positive definite.
    G : ndarray, shape (L, 10, 10) or (10, 10)
        ``G[l, p, k] = ∂pi_p/∂θ_k`` (only with ``jacobian=True``).

    Examples
    --------
    >>> pi = log_cholesky_to_standard(np.zeros(10))  # J = identity: 1 kg, Σ = 1
    >>> pi.round(6).tolist()
    [2.0, 0.0, 0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0]
    """
    theta = np.asarray(theta, dtype=float)
    single = theta.ndim == 1
    th = theta.reshape(-1, 10)
    U = _log_cholesky_factor(th)
    pi = standard_from_pseudo(U @ np.swapaxes(U, -1, -2))
    if not jacobian:
        return pi[0] if single else pi
    dU = _factor_derivatives(th, U)
    dJ = dU @ np.swapaxes(U, -1, -2)[:, None]
    dJ = dJ + np.swapaxes(dJ, -1, -2)
    G = np.einsum("pab,lkab->lpk", _P, dJ)
    return (pi[0], G[0]) if single else (pi, G)


def _upper_cholesky(J: np.ndarray) -> np.ndarray:
    """Upper-triangular ``U`` with ``J = U Uᵀ`` for positive definite ``J`` ``(L, 4, 4)``."""
    flip = J[:, ::-1, ::-1]
    Lo = np.linalg.cholesky(flip)
    return Lo[:, ::-1, ::-1]


def standard_to_log_cholesky(pi) -> np.ndarray:
    """Log-Cholesky coordinates ``(L, 10)`` (or ``(10,)``) of standard parameters whose pseudo-inertia is
    positive definite (inverse of :func:`log_cholesky_to_standard`).

    Raises
    ------
    ConfigError
        A pseudo-inertia is not positive definite.
    """
    pi = np.asarray(pi, dtype=float)
    single = pi.ndim == 1
    J = pseudo_inertia(pi.reshape(-1, 10))
    try:
        U = _upper_cholesky(J)
    except np.linalg.LinAlgError:
        raise ConfigError("a pseudo-inertia is not positive definite: the parameters describe no rigid body",
                          hint="project them first (physical_consistency shows which link)") from None
    ea = U[:, 3, 3]
    th = np.empty((U.shape[0], 10))
    th[:, 0] = np.log(ea)
    for i in range(3):
        th[:, 1 + i] = np.log(U[:, i, i] / ea)
    for k, (a, b) in enumerate(_S_ENTRIES):
        th[:, 4 + k] = U[:, a, b] / ea
    return th[0] if single else th


# ---------------------------------------------------------------------------- consistency check


@dataclass(frozen=True)
class PhysicalConsistency:
    """Physical consistency of link-wise standard parameters (SI units).

    links : tuple of str, (L,)
    mass : ndarray, (L,) [kg]
    com : ndarray, (L, 3) [m] centre of mass in the link frame (NaN where ``m <= 0``)
    principal_moments : ndarray, (L, 3) [kg m²] principal moments of inertia at the COM, ascending
        (NaN where ``m <= 0``)
    triangle_margin : ndarray, (L,) [kg m²] ``min_k (I_i + I_j − I_k)`` over the principal moments
        (twice the smallest principal second moment; ``>= 0`` is the triangle inequality)
    min_eigenvalue : ndarray, (L,) smallest eigenvalue of the pseudo-inertia with lengths scaled by the
        robot's radius of gyration, relative to the largest (dimensionless; ``>= 0`` iff consistent)
    rtol : float
        Relative tolerance of the verdicts (rounding).
    """

    links: tuple[str, ...]
    mass: np.ndarray
    com: np.ndarray
    principal_moments: np.ndarray
    triangle_margin: np.ndarray
    min_eigenvalue: np.ndarray
    rtol: float = 1e-9

    @property
    def link_ok(self) -> np.ndarray:
        """``(L,)`` bool: positive mass, triangle inequalities and a positive semidefinite pseudo-inertia."""
        scale = np.nan_to_num(np.sum(self.principal_moments, axis=1), nan=0.0)
        return ((self.mass > 0) & np.isfinite(self.triangle_margin)
                & (self.triangle_margin >= -self.rtol * np.maximum(scale, 0.0))
                & (self.min_eigenvalue >= -self.rtol))

    @property
    def consistent(self) -> bool:
        return bool(np.all(self.link_ok))

    @property
    def violations(self) -> tuple[str, ...]:
        """Names of the links that are not physically consistent."""
        return tuple(n for n, ok in zip(self.links, self.link_ok) if not ok)

    def to_dict(self) -> dict[str, Any]:
        return {"consistent": self.consistent, "violations": list(self.violations), "links": list(self.links),
                "mass_kg": self.mass, "com_m": self.com, "principal_moments_kg_m2": self.principal_moments,
                "triangle_margin_kg_m2": self.triangle_margin, "pseudo_inertia_min_eigenvalue_relative": self.min_eigenvalue}


def _length_scale(J: np.ndarray) -> float:
    """Radius of gyration of the whole robot about the link origins [m] (0.1 m when undefined)."""
    tr = np.clip(np.trace(J[:, :3, :3], axis1=1, axis2=2), 0.0, None).sum()
    m = np.clip(J[:, 3, 3], 0.0, None).sum()
    return float(np.sqrt(tr / m)) if m > 0 and tr > 0 else 0.1


def _homogenise(length: float) -> np.ndarray:
    return np.diag([1.0 / length] * 3 + [1.0])


def physical_consistency(pi, links: Sequence[str] | None = None, *, length: float | None = None,
                         rtol: float = 1e-9) -> PhysicalConsistency:
    """Check link-wise standard parameters for physical consistency.

    Parameters
    ----------
    pi : array-like, shape (L, 10)
        Standard parameters per link, ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]`` (SI).
    links : sequence of str, optional
        Link names (default ``link1..linkL``).
    length : float, optional
        Length scale [m] that makes the pseudo-inertia's entries commensurable for ``min_eigenvalue``
        (default: the robot's radius of gyration from ``pi``).
    rtol : float
        Relative tolerance of the verdicts.

    Returns
    -------
    PhysicalConsistency

    Examples
    --------
    >>> rod = [0.0, 0, 0, 1/3, 0, 1/3, 0.5, 0, 0, 1.0]   # 1 kg, 1 m thin rod along x from the origin
    >>> physical_consistency([rod]).consistent
    True
    >>> physical_consistency([[0.1, 0, 0, 0.1, 0, 0.5, 0, 0, 0, 1.0]]).violations  # Izz > Ixx + Iyy
    ('link1',)
    """
    pi = np.asarray(pi, dtype=float).reshape(-1, 10)
    L = pi.shape[0]
    names = tuple(links) if links is not None else tuple(f"link{i + 1}" for i in range(L))
    J = pseudo_inertia(pi)
    m = pi[:, 9]
    com = np.full((L, 3), np.nan)
    moments = np.full((L, 3), np.nan)
    margin = np.full(L, np.nan)
    pos = m > 0
    if np.any(pos):
        c = pi[pos, 6:9] / m[pos, None]
        Sig = J[pos, :3, :3]
        I_o = np.trace(Sig, axis1=1, axis2=2)[:, None, None] * np.eye(3) - Sig
        I_c = I_o - m[pos, None, None] * (np.einsum("li,li->l", c, c)[:, None, None] * np.eye(3) - np.einsum("li,lj->lij", c, c))
        lam = np.linalg.eigvalsh(I_c)
        com[pos] = c
        moments[pos] = lam
        margin[pos] = np.min(lam.sum(axis=1)[:, None] - 2 * lam, axis=1)
    S = _homogenise(length if length is not None else _length_scale(J))
    eig = np.linalg.eigvalsh(S @ J @ S)
    top = np.max(np.abs(eig), axis=1)
    rel = np.where(top > 0, eig[:, 0] / np.where(top > 0, top, 1.0), 0.0)
    return PhysicalConsistency(names, m.copy(), com, moments, margin, rel, rtol)


