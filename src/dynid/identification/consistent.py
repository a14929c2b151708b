"""Physically consistent identification (``estimator="consistent"``).

A rigid body's ten standard parameters ``pi = [Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]``
(inertia about the link-frame origin, first moments ``h = m·c``, mass) describe a real mass
distribution if and only if its pseudo-inertia (Wensing, Kim & Slotine 2017)

    J = [[Σ, h], [hᵀ, m]],   Σ = ½ tr(I)·1 − I = ∫ r rᵀ dm

is positive semidefinite. That single condition contains ``m ≥ 0`` and the triangle inequalities
of the principal moments at the centre of mass (``Σ − h hᵀ/m`` holds the principal second moments).

**Cost.** On the same decimated, gated, per-joint-weighted rows as the linear WLS fit::

    F(pi, φ) = ‖ w ⊙ (Y_links pi + Y_rest φ − y) ‖² / s²  +  2 λ Σ_links D(J_i ‖ J_ref,i)

``φ`` are the parameters that are not link inertias (friction, armature, offsets), kept linear and
fitted jointly (viscous and Coulomb friction and armature ``≥ 0`` when ``friction_nonnegative``,
by an active set: fix the negative ones at 0, release those whose gradient points inside).
The rows enter only through the R factor of the QR of ``[W | y]`` (the problem is linear in
``pi`` and ``φ``), so an iteration costs ``O(n_params³)`` whatever the number of samples. That factor
comes from the linear fit's (its weighted rows in the base columns, ``LeastSquares.weighted_factor``):
every column is a combination of the base columns (``W_θ = W_base B``), so ``R_base B`` is a factor of
the same rows — no second pass over the tall matrix.
``s² = σ²·τ`` is the weighted residual variance of the linear fit times its residual
autocorrelation time, so the data term is a χ² over the effective number of independent rows.
``D(J‖J_ref) = tr(J_ref⁻¹ J) − log det(J_ref⁻¹ J) − 4 ≥ 0`` is the log-det (Bregman) divergence
that Lee, Wensing & Park (2020) use as a regulariser toward a reference body: coordinate free,
``≈ ½‖J_ref^-½ ΔJ J_ref^-½‖²_F`` near the reference (so ``λ = 1/ϵ²`` reads as a prior with
relative standard deviation ``ϵ`` on each whitened pseudo-inertia entry), convex, and infinite on
the boundary of the cone, so the estimate is *strictly* consistent.

The reference bodies are the model's prior (URDF/CAD values), moved into the cone when the prior
itself is degenerate (a point mass, a planar link, a massless link carrying only an axial inertia);
without a prior they are the linear solution moved into the cone. The structural null space
(combinations no motion can reveal) is then decided by the prior, and the identifiable directions
by the data wherever they are informative (``λ`` is tiny against the information of a well-excited
base parameter).

**Parametrisation and solver.** ``F`` is convex in ``(pi, φ)`` on the cone, so its minimum is
unique; the difficulty is only to stay inside the cone while moving fast. Each link is carried in
the log-Cholesky coordinates of Rucker & Wensing (2022), ten unconstrained numbers
``θ = (α, d1, d2, d3, s12, s23, s13, t1, t2, t3)``::

    U = e^α [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],   J = U Uᵀ,

positive definite for every ``θ`` (a diffeomorphism onto the open cone; ``pi(θ)`` and its first and
second derivatives are analytic, :func:`log_cholesky_to_standard`). Default solver: the Newton
direction of ``F`` in ``(pi, φ)`` (exact gradient and Hessian; computed from the square-root form by
SVD least squares), mapped to ``θ`` by ``G⁻¹ = (∂pi/∂θ)⁻¹`` and searched along ``θ`` (Armijo
backtracking): every trial point is consistent by construction, a step may scale a body by any
factor, and near the solution the step is Newton's to first order, so convergence is quadratic.
The prior weight is followed down from ``max(λ, data term at the start / 8L)`` (where the prior and
the data misfit weigh alike) to ``λ`` by factors of 10, each stage started at the previous optimum.
Start: the cheaper of (a) the reference bodies and (b) the linear solution moved into the cone
(eigenvalues of ``R⁻¹ J R⁻ᵀ`` raised to ``START_FLOOR``, ``J_ref = R Rᵀ``); ``φ`` from the linear
solution. Alternative ``solver="trust-region"``: scipy's ``trust-exact`` on ``F(pi(θ), φ)`` (exact
Hessian by the chain rule), an independent cross-check.

Measured while choosing (Panda recording, 7 links, 91 unknowns, λ = 0.01): Gauss–Newton /
Levenberg–Marquardt on log-Cholesky residuals (``scipy.optimize.least_squares`` with an analytic
Jacobian, the obvious formulation) had not converged after 5000 evaluations — the data make a long
curved valley in ``θ`` and the residual is large, so the Gauss–Newton Hessian is poor; ``trust-exact``
in ``θ`` needed about 300 iterations; a plain barrier Newton in ``pi`` (straight steps, capped at the
boundary) about 50–100, but it stalled on a 3-link robot whose prior masses were 80 times off; the
default needs about 80 and solved that case in 176 (and 2-link noise-free cases where
the log-Cholesky path alone crawled, in about 10).

**Standard deviations.** Laplace approximation in ``(pi, φ)``: the inverse of ``½∇²F`` with the
data information ``Aᵀ A / s_c²`` at the consistent fit's own noise level (``s_c²`` from its residual,
inflated by its autocorrelation time as in :mod:`dynid.identification.solve`), propagated linearly to the base
parameters. A friction parameter held at its bound 0 has no standard deviation (NaN).

References
----------
P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear matrix inequalities for physically consistent
inertial parameter identification: a statistical perspective on the mass distribution",
IEEE RA-L 3(1):60–67, 2018 (arXiv 1701.04395, 2017).
C. Rucker, P. M. Wensing, "Smooth parameterization of rigid-body inertia", IEEE RA-L 7(2):2771–2778, 2022.
T. Lee, P. M. Wensing, F. C. Park, "Geometric robot dynamic identification: a convex programming
approach", IEEE T-RO 36(2):348–365, 2020.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import ConfigError
from .rows import FactoredRows, TallRows
from .solve import LeastSquares
from ..models.inertia import (_E, _P, PhysicalConsistency, _factor_derivatives, _homogenise, _length_scale,
                      _log_cholesky_factor, _upper_cholesky, log_cholesky_to_standard, physical_consistency,
                      pseudo_inertia, standard_from_pseudo, standard_to_log_cholesky)

__all__ = [
    "ConsistentOptions", "ConsistentFit", "PhysicalConsistency", "DEFAULT_PRIOR_WEIGHT",
    "pseudo_inertia", "standard_from_pseudo", "log_cholesky_to_standard", "standard_to_log_cholesky",
    "physical_consistency", "fit_consistent", "link_groups",
]

DEFAULT_PRIOR_WEIGHT = 0.01
"""Default ``prior_weight`` λ: a prior relative standard deviation of 10 (``1/sqrt(λ)``, i.e. 1000 %) on each
whitened pseudo-inertia entry — negligible against the data for any base parameter they identify to better
than about 100 %, decisive in the structural null space and for combinations the motion does not excite."""
REFERENCE_FLOOR = 1e-3
"""A reference body's pseudo-inertia eigenvalues (after scaling lengths by the robot's radius of gyration)
are raised to at least this fraction of the largest, so a degenerate prior (point mass, planar link) still
defines a strictly positive definite reference."""
START_FLOOR = 1e-2
"""The linear solution is projected into the cone by raising the eigenvalues of ``R⁻¹ J R⁻ᵀ`` (``J_ref = R Rᵀ``)
to at least this value."""
SOLVERS = ("newton", "trust-region")
NOISE_FLOOR = 1e-6
"""The data term's noise level is at least this fraction of the RMS weighted torque: noise-free
(simulated) data would otherwise weigh 1e20 times the prior, beyond double precision."""
CONTINUATION_FACTOR = 10.0
"""Newton follows the prior weight down to ``λ`` by this factor per stage (see ``_newton``)."""
_NONNEGATIVE_TERMS = ("viscous", "coulomb", "coulomb_pos", "coulomb_neg", "armature")

# ---------------------------------------------------------------------------- options and result


@dataclass(frozen=True)
class ConsistentOptions:
    """Options of the physically consistent estimator.

    prior_weight : float
        λ > 0, weight of the pull toward the reference bodies (the model's prior, e.g. the URDF):
        ``2λ Σ D(J‖J_ref)`` against the noise-normalised data term, i.e. a prior with relative standard
        deviation ``1/sqrt(λ)`` on each whitened pseudo-inertia entry. Default 0.01 (a ten-fold
        uncertainty): the data decide every combination they inform; the prior decides what no motion
        can reveal. It cannot be 0: without it the consistent least-squares problem has in general no
        minimiser (on the Panda recording, masses of links in the structural null space grow without
        bound as λ → 0 while the residual falls by parts per thousand), and its ``log det`` term is the
        barrier that keeps the estimate strictly consistent. Below about 1e-3 the solver slows down
        (more continuation stages, each longer).
    friction_nonnegative : bool
        Keep viscous and Coulomb friction (``coulomb``, ``coulomb_pos``, ``coulomb_neg``) and rotor inertia
        (``armature``) >= 0.
    solver : {"newton", "trust-region"}
        ``newton`` (default): Newton directions of the convex problem in the standard parameters, stepped
        along the log-Cholesky coordinates, with continuation on λ. ``trust-region``: scipy's trust-region
        Newton (``trust-exact``) on the cost as a function of the log-Cholesky coordinates (exact Hessian
        by the chain rule); slower, kept as an independent cross-check. Both reach the same minimum (the
        problem is convex in the standard parameters).
    max_iterations : int
        Cap on the solver's iterations (per active-set round of the friction bounds).
    """

    prior_weight: float = DEFAULT_PRIOR_WEIGHT
    friction_nonnegative: bool = True
    solver: str = "newton"
    max_iterations: int = 500

    def __post_init__(self) -> None:
        if not (math.isfinite(self.prior_weight) and self.prior_weight > 0):
            raise ConfigError(f"prior_weight must be a finite number > 0, got {self.prior_weight!r}",
                              hint="a small value such as 1e-3 lets the data decide wherever they are informative")
        if self.solver not in SOLVERS:
            raise ConfigError(f"solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")
        if self.max_iterations < 1:
            raise ConfigError(f"max_iterations must be >= 1, got {self.max_iterations}")


@dataclass(frozen=True)
class ConsistentFit:
    """Result of :func:`fit_consistent` (SI units).

    theta : (n_params,) full parameters: link inertias physically consistent, friction, known values
    std : (n_params,) standard deviation; for an identified parameter that of its base combination
        (as the linear estimators report it), NaN for parameters the data cannot identify
    base_values, base_std : (n_base,) base parameters computed from ``theta`` and their standard deviation
    lsq : LeastSquares  the linear fit's record with the consistent fit's base values, std and noise level
    consistency : PhysicalConsistency of ``theta``'s links
    linear_consistency : PhysicalConsistency of the linear (WLS) solution's links
    residual_ratio : float  weighted residual norm of the consistent fit / that of the linear fit (>= 1 up to
        the prior's pull)
    prior_source : str  ``"model prior"`` or ``"linear solution"`` (what the reference bodies are)
    prior_weight : float
    start : str  ``"reference"`` or ``"projected linear"``
    solver : str  ``"newton"`` or ``"trust-region"``
    iterations : int  solver iterations (all active-set rounds)
    converged : bool
    active_bounds : tuple of str  friction parameters held at their bound 0
    notes : tuple of str
    """

    theta: np.ndarray
    std: np.ndarray
    base_values: np.ndarray
    base_std: np.ndarray
    lsq: LeastSquares
    consistency: PhysicalConsistency
    linear_consistency: PhysicalConsistency
    residual_ratio: float
    prior_source: str
    prior_weight: float
    start: str
    solver: str
    iterations: int
    converged: bool
    active_bounds: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"prior_source": self.prior_source, "prior_weight": self.prior_weight, "start": self.start,
                "solver": self.solver, "iterations": self.iterations, "converged": self.converged,
                "residual_ratio_to_linear": self.residual_ratio, "active_bounds": list(self.active_bounds),
                "consistency": self.consistency.to_dict(), "linear_consistency": self.linear_consistency.to_dict()}


# ---------------------------------------------------------------------------- the fit


def link_groups(plant) -> np.ndarray:
    """Parameter indices ``(L, 10)`` of the plant's rigid links (``model.link_parameter_groups()``).

    Raises
    ------
    ConfigError
        The model does not expose link-wise standard parameters, or the groups are malformed.
    """
    model = plant.model
    groups = list(model.link_parameter_groups())
    if not groups:
        raise ConfigError(f"estimator 'consistent' needs link-wise standard inertial parameters, which model "
                          f"{model.name!r} does not have",
                          hint="use another estimator (auto, wls, ols or irls), or model 'serial' with the robot's URDF")
    G = np.array([np.asarray(g, dtype=int) for g in groups])
    if G.ndim != 2 or G.shape[1] != 10 or len(set(G.ravel().tolist())) != G.size or G.min() < 0 \
            or G.max() >= model.n_params:
        raise ConfigError(f"model {model.name!r}: link_parameter_groups() must give disjoint groups of 10 parameter "
                          f"indices below {model.n_params}, got shape {G.shape}")
    return G


def _reference_bodies(Jsrc: np.ndarray, length: float) -> np.ndarray:
    """Strictly positive definite versions ``(L, 4, 4)`` of ``Jsrc`` (eigenvalues floored in scaled units)."""
    S = _homogenise(length)
    Si = np.linalg.inv(S)
    Jh = S @ Jsrc @ S
    lam, vec = np.linalg.eigh(Jh)
    top = lam[:, -1]
    fallback = np.max(top) if np.any(top > 0) else 1.0
    top = np.where(top > 0, top, fallback)
    lam = np.maximum(lam, REFERENCE_FLOOR * top[:, None])
    return Si @ (vec * lam[:, None, :]) @ np.swapaxes(vec, -1, -2) @ Si


def _project(J: np.ndarray, Rref: np.ndarray, floor: float) -> np.ndarray:
    """``J`` ``(L, 4, 4)`` moved into the cone: eigenvalues of ``R⁻¹ J R⁻ᵀ`` raised to ``floor``."""
    Ri = np.linalg.inv(Rref)
    A = Ri @ J @ np.swapaxes(Ri, -1, -2)
    A = 0.5 * (A + np.swapaxes(A, -1, -2))
    lam, vec = np.linalg.eigh(A)
    A = (vec * np.maximum(lam, floor)[:, None, :]) @ np.swapaxes(vec, -1, -2)
    return Rref @ A @ np.swapaxes(Rref, -1, -2)


def _log_cholesky_hessian(th: np.ndarray) -> np.ndarray:
    """Second derivatives ``∂²pi_p/∂θ_k∂θ_m`` ``(L, 10, 10, 10)`` of log-Cholesky coordinates ``(L, 10)``."""
    L = th.shape[0]
    U = _log_cholesky_factor(th)
    dU = _factor_derivatives(th, U)
    d2U = np.zeros((L, 10, 10, 4, 4))
    d2U[:, 0, :] = dU                   # U ∝ e^α: ∂/∂α of any first derivative is itself
    d2U[:, 1:, 0] = dU[:, 1:]
    for i in range(3):                  # ∂²(e^{α+d_i})/∂d_i² = e^{α+d_i}
        d2U[:, 1 + i, 1 + i] += dU[:, 1 + i]
    Ut = np.swapaxes(U, -1, -2)[:, None, None]
    A = d2U @ Ut + dU[:, :, None] @ np.swapaxes(dU, -1, -2)[:, None, :]
    return np.einsum("pab,lkmab->lpkm", _P, A + np.swapaxes(A, -1, -2))


class _Cost:
    """``F(x) = ‖R x − q‖²/s² + 2λ Σ_l D(J_l‖J_ref,l)`` in ``x = [pi (L·10), φ]``: value, gradient, Hessian.

    ``F = +inf`` outside the cone (a pseudo-inertia that is not positive definite).
    """

    def __init__(self, R: np.ndarray, qb: np.ndarray, s: float, L: int, J_ref: np.ndarray, weight: float) -> None:
        self.R, self.qb, self.s2, self.L, self.weight = R, qb, s * s, L, weight
        C = np.linalg.cholesky(J_ref)
        self.ref_inv = np.linalg.inv(J_ref)
        self.ref_logdet = 2.0 * np.log(np.einsum("lii->li", C)).sum(axis=1)
        self.ref_grad = np.einsum("pab,lba->lp", _E, self.ref_inv)          # ∂tr(J_ref⁻¹J)/∂pi_p

    def _chol(self, x: np.ndarray) -> np.ndarray | None:
        J = pseudo_inertia(x[: 10 * self.L].reshape(self.L, 10))
        if not np.all(np.isfinite(J)):
            return None
        try:
            C = np.linalg.cholesky(J)
        except np.linalg.LinAlgError:
            return None
        return C if np.all(np.einsum("lii->li", C) > 0) else None

    def __call__(self, x: np.ndarray, order: int = 2):
        outside = (np.inf, None, None) if order else np.inf
        if not np.all(np.isfinite(x)):
            return outside
        with np.errstate(over="ignore", invalid="ignore"):   # a huge trial point overflows: F = inf
            r = self.R @ x - self.qb
            rr = float(r @ r)
        C = self._chol(x) if np.isfinite(rr) else None
        if C is None:
            return outside
        pi = x[: 10 * self.L].reshape(self.L, 10)
        logdet = 2.0 * np.log(np.einsum("lii->li", C)).sum(axis=1)
        D = np.einsum("lp,lp->l", self.ref_grad, pi) - logdet + self.ref_logdet - 4.0
        f = rr / self.s2 + 2.0 * self.weight * float(D.sum())
        if not order:
            return f
        g = 2.0 * (self.R.T @ r) / self.s2
        H = 2.0 * (self.R.T @ self.R) / self.s2
        Ci = np.linalg.inv(C)
        Ji = np.swapaxes(Ci, -1, -2) @ Ci
        g[: 10 * self.L] += 2.0 * self.weight * (self.ref_grad - np.einsum("pab,lba->lp", _E, Ji)).ravel()
        M = np.einsum("lab,pbc->lpac", Ji, _E)
        Hp = 2.0 * self.weight * np.einsum("lpab,lqba->lpq", M, M)          # ∇²(−log det J) = tr(J⁻¹E_p J⁻¹E_q)
        for i in range(self.L):
            H[10 * i:10 * i + 10, 10 * i:10 * i + 10] += Hp[i]
        return f, g, H

    def newton_step(self, x: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, float]:
        """Newton direction on the ``free`` entries and the squared Newton decrement, from the square-root
        form of Newton's equations: ``min ‖(R d + r)/s‖² + w Σ_l ‖K_l(d) − (I − Cᵀ J_ref⁻¹ C)‖²_F`` with
        ``J = C Cᵀ`` and ``K_l(d) = C⁻¹ ΔJ(d) C⁻ᵀ`` (``w tr(J⁻¹ΔJ J⁻¹ΔJ) = w‖K‖²_F`` is ½ the prior term's
        Hessian). Solved by SVD least squares: the Hessian's condition number is the square of this
        system's, so the data term's dominance (noise-free data) costs no accuracy."""
        L, nz, k = self.L, 10 * self.L, self.R.shape[0]
        r = self.R @ x - self.qb
        C = self._chol(x)
        Ci = np.linalg.inv(C)
        K = (Ci[:, None] @ _E[None] @ np.swapaxes(Ci, -1, -2)[:, None]).reshape(L, 10, 16)   # K_p = C⁻¹E_pC⁻ᵀ
        target = (np.eye(4) - np.swapaxes(C, -1, -2) @ self.ref_inv @ C).reshape(L, 16)
        sw = math.sqrt(self.weight)
        s = math.sqrt(self.s2)
        fidx = np.nonzero(free)[0]
        A = np.zeros((k + 16 * L, x.size))
        A[:k] = self.R / s
        rhs = np.concatenate([-r / s, sw * target.ravel()])
        for i in range(L):
            A[k + 16 * i:k + 16 * i + 16, 10 * i:10 * i + 10] = sw * K[i].T
        d = np.zeros_like(x)
        d[fidx] = np.linalg.lstsq(A[:, fidx], rhs, rcond=None)[0]
        grad = 2.0 * (self.R.T @ r) / self.s2
        grad[:nz] -= 2.0 * self.weight * np.einsum("lpk,lk->lp", K, target).ravel()    # ∇Φ = 2w⟨K_p, CᵀJ_ref⁻¹C − I⟩
        return d, float(-grad @ d)

    def data_term(self, x: np.ndarray) -> float:
        r = self.R @ x - self.qb
        return float(r @ r) / self.s2


def _newton(cost: _Cost, x: np.ndarray, free: np.ndarray, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Damped Newton on the free entries of ``x`` with a backtracking line search inside the cone.

    The prior's ``−log det J`` is the barrier (``ν = 4`` per link). A barrier weak against the data term
    makes the iterates hug the boundary and crawl, so the weight is followed down (barrier-method
    continuation) from ``w0 = max(λ, data term at the start / (2·4L))`` — the usual start of the central
    path, where the barrier's share equals the data misfit — by factors of 10 to ``λ``, each stage started
    at the previous optimum; only the last stage is the problem asked.
    """
    target = cost.weight
    w0 = max(target, cost.data_term(x) / (8.0 * cost.L))
    stages = [target]
    while stages[-1] * CONTINUATION_FACTOR <= w0:
        stages.append(stages[-1] * CONTINUATION_FACTOR)
    total, ok = 0, True
    try:
        for w in reversed(stages):
            cost.weight = w
            x, it, ok = _newton_stage(cost, x, free, max_iter)
            total += it
    finally:
        cost.weight = target
    return x, total, ok


def _newton_stage(cost: _Cost, x: np.ndarray, free: np.ndarray, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Newton on ``F`` at the current prior weight, with two search paths for the same direction.

    The direction ``d`` is Newton's in ``(pi, φ)``, where ``F`` is convex. Paths: the straight line
    ``x + t d`` (exact for the quadratic data term, but it may leave the cone), and the log-Cholesky
    path ``pi(θ + t G⁻¹ d_pi)`` (``G = ∂pi/∂θ``; same tangent, every point consistent, and a step may
    scale a body by any factor). At each trial ``t`` (1, ½, ¼, …) the better consistent point wins if it
    passes the Armijo test. Near the solution full straight steps are taken: quadratic convergence.
    """
    L, nz = cost.L, 10 * cost.L
    f = cost(x, order=0)
    for it in range(1, max_iter + 1):
        d, dec = cost.newton_step(x, free)             # dec: squared Newton decrement, F − F* ≈ dec / 2
        if not dec > 1e-10 * max(1.0, abs(f)):
            return x, it - 1, True
        th = standard_to_log_cholesky(x[:nz].reshape(L, 10))
        _, G = log_cholesky_to_standard(th, jacobian=True)
        dth = np.linalg.solve(G, d[:nz].reshape(L, 10, 1))[..., 0]
        t = 1.0
        while True:
            straight = x + t * d
            with np.errstate(over="ignore", invalid="ignore"):   # a huge trial overflows: F = inf, rejected
                curved = np.concatenate([log_cholesky_to_standard(th + t * dth).ravel(), straight[nz:]])
            fs, fc = cost(straight, order=0), cost(curved, order=0)   # +inf outside the cone
            xn, fn = (straight, fs) if fs <= fc else (curved, fc)
            if fn <= f - 0.25 * t * dec:
                break
            t *= 0.5
            if t < 1e-16:                              # no decrease left at rounding level
                return x, it, True
        x, f = xn, fn
    return x, max_iter, False


def _trust_region(cost: _Cost, x: np.ndarray, free: np.ndarray, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Trust-region Newton (exact Hessian) in log-Cholesky coordinates; free ``φ`` entries only."""
    L = cost.L
    nz = 10 * L
    fphi = np.nonzero(free[nz:])[0]
    base = x.copy()

    def expand(z):
        pi, G = log_cholesky_to_standard(z[:nz].reshape(L, 10), jacobian=True)
        xx = base.copy()
        xx[:nz] = pi.ravel()
        xx[nz + fphi] = z[nz:]
        return xx, G

    memo: dict[str, Any] = {}

    def evaluate(z):
        if memo.get("z") is None or not np.array_equal(memo["z"], z):
            xx, G = expand(z)
            f, g, H = cost(xx)
            memo.update(z=z.copy(), f=f, g=g, H=H, G=G)
        return memo

    def fun(z):
        return evaluate(z)["f"]

    def jac(z):
        m = evaluate(z)
        if m["g"] is None:
            return np.full(z.size, np.nan)
        gl = np.einsum("lp,lpk->lk", m["g"][:nz].reshape(L, 10), m["G"]).ravel()
        return np.concatenate([gl, m["g"][nz + fphi]])

    def hess(z):
        m = evaluate(z)
        G, g, H = m["G"], m["g"], m["H"]
        idx = np.concatenate([np.arange(nz), nz + fphi])
        T = np.zeros((idx.size, z.size))
        for i in range(L):
            T[10 * i:10 * i + 10, 10 * i:10 * i + 10] = G[i]
        T[nz:, nz:] = np.eye(fphi.size)
        Hz = T.T @ H[np.ix_(idx, idx)] @ T
        D2 = _log_cholesky_hessian(z[:nz].reshape(L, 10))
        curv = np.einsum("lp,lpkm->lkm", g[:nz].reshape(L, 10), D2)
        for i in range(L):
            Hz[10 * i:10 * i + 10, 10 * i:10 * i + 10] += curv[i]
        return Hz

    from scipy import optimize  # lazily: scipy is slow to import

    z0 = np.concatenate([standard_to_log_cholesky(x[:nz].reshape(L, 10)).ravel(), x[nz + fphi]])
    sol = optimize.minimize(fun, z0, jac=jac, hess=hess, method="trust-exact",
                            options={"maxiter": max_iter, "gtol": 1e-8})
    xx, _ = expand(sol.x)
    # status 2: no further decrease the quadratic model can predict — the minimum to rounding
    return xx, int(sol.nit), bool(sol.success or sol.status == 2)


def _active_set(cost: _Cost, x: np.ndarray, lower: np.ndarray, inner, max_iter: int):
    """Minimise with ``x[lower] >= 0``: the free problem, then fix negative entries at 0 and release those
    whose gradient points inside, until the KKT conditions hold (few rounds: the problem is convex)."""
    fixed = np.zeros(x.size, dtype=bool)
    total, ok = 0, True
    for _ in range(2 * int(lower.sum()) + 2):
        x, it, ok = inner(cost, x, ~fixed, max_iter)
        total += it
        neg = lower & ~fixed & (x < 0)
        if np.any(neg):
            x = x.copy()
            x[neg] = 0.0
            fixed |= neg
            continue
        g = cost(x)[1]
        pull = fixed & (g < 0)                       # raising it from 0 would lower the cost
        if np.any(pull):
            fixed[np.argmin(np.where(pull, g, np.inf))] = False
            continue
        break
    return x, total, ok, fixed


def _compress(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``R`` ``(k, k)``, ``Qᵀb`` ``(k,)`` and the unreachable residual ``‖b − QQᵀb‖²`` of ``A`` ``(n, k)``."""
    n, k = A.shape
    Ab = np.empty((n, k + 1))
    Ab[:, :k] = A
    Ab[:, k] = b
    R_aug = np.linalg.qr(Ab, mode="r")
    if R_aug.shape[0] < k + 1:
        R_aug = np.vstack([R_aug, np.zeros((k + 1 - R_aug.shape[0], k + 1))])
    return R_aug[:k, :k], R_aug[:k, k], float(R_aug[k, k] ** 2)


def fit_consistent(plant, rows: TallRows | FactoredRows, *, lsq: LeastSquares, base,
                   theta_linear: np.ndarray, theta_hold: np.ndarray, known: Sequence[int],
                   options: ConsistentOptions = ConsistentOptions()) -> ConsistentFit:
    """Physically consistent least squares on the linear fit's rows (see the module docstring).

    Parameters
    ----------
    plant : Plant
        Its model must implement ``link_parameter_groups()``.
    rows : TallRows or FactoredRows
        The linear fit's rows (:mod:`dynid.identification.rows`): regressor rows of the gated, decimated samples
        (all columns) and the torque minus the payload offset and the known parameters' contribution.
    lsq : LeastSquares
        The linear fit of the base parameters on the same rows: its per-joint weights, noise level and
        excitation are reused.
    base : BaseParameters
        Structural base parameters (``beta = theta[independent] + K theta[dependent]``).
    theta_linear : ndarray, shape (n_params,)
        The linear solution as a full vector (dependent parameters at ``theta_hold``).
    theta_hold : ndarray, shape (n_params,)
        Known parameters' values and the values at which unidentifiable parameters are held (prior, else 0).
    known : sequence of int
        Indices of parameters given in the configuration (fixed).
    options : ConsistentOptions

    Returns
    -------
    ConsistentFit

    Raises
    ------
    ConfigError
        The model has no link-wise standard parameters, or a link parameter is fixed in the configuration.
    """
    groups = link_groups(plant)
    L = groups.shape[0]
    names = plant.param_names
    known = set(int(i) for i in known)
    fixed_in_links = sorted(known & set(groups.ravel().tolist()))
    if fixed_in_links:
        raise ConfigError(f"estimator 'consistent' fits each link's ten inertial parameters together, but the "
                          f"configuration fixes {', '.join(names[i] for i in fixed_in_links)}",
                          hint="remove them from 'parameters' or use estimator 'wls'")
    gcols = groups.ravel()
    in_links = np.zeros(plant.n_params, dtype=bool)
    in_links[gcols] = True
    excited_indep = set(base.independent[lsq.excited].tolist())
    free = np.array([i for i in range(plant.n_params)
                     if not in_links[i] and i not in known and i in excited_indep], dtype=int)
    held = np.array([i for i in range(plant.n_params) if not in_links[i] and i not in known and i not in set(free.tolist())],
                    dtype=int)
    w = lsq.weights
    cols = np.concatenate([gcols, free])
    theta_h = np.zeros(plant.n_params)                     # the held parameters at their values, the others 0
    theta_h[held] = theta_hold[held]

    def at(v: np.ndarray) -> np.ndarray:
        """The full parameter vector of ``v`` on ``cols`` (the held parameters at their values)."""
        full = theta_h.copy()
        full[cols] = v
        return full

    # the base map: beta = B theta, so every column of the rows is W_indep B[:, c] (structural identities)
    B = np.zeros((base.n_base, plant.n_params))
    B[np.arange(base.n_base), base.independent] = 1.0
    if base.dependent.size:
        B[:, base.dependent] = base.K
    F = lsq.weighted_factor
    if F is not None and lsq.scale is not None and F.shape == (base.n_base + 1, base.n_base + 1):
        # the linear fit's R factor of the same weighted rows (diag(w) W_indep = Q F0 diag(scale)) gives the data
        # term on any columns without another pass over the tall matrix: ‖A x − b‖² = ‖R x − qb‖² + const
        F0 = F[:-1, :-1] * lsq.scale[None, :]
        R = F0 @ B[:, cols]
        qb = F[:-1, -1] - (F0 @ (B[:, held] @ theta_hold[held]) if held.size else 0.0)
    elif isinstance(rows, TallRows):
        wr = w[rows.joint]
        R, qb, _ = _compress(rows.W[:, cols] * wr[:, None], rows.residual(theta_h) * wr)
    else:
        raise ValueError("compressed rows need the linear fit's weighted factor")
    n_rows = rows.n_rows

    # noise level of one weighted row, inflated by the residual's correlation time (linear fit)
    s2 = lsq.sigma2 * lsq.correlation_time
    floor = NOISE_FLOOR * float(np.sqrt(rows.residual_stats(theta_h, w, correlation=False)[0] / n_rows)) \
        if n_rows else 1.0
    s = max(math.sqrt(max(s2, 0.0)), floor, np.finfo(float).tiny)

    prior = plant.model.prior_parameters()
    J_lin = pseudo_inertia(theta_linear[groups])
    if prior is not None:
        J_src = pseudo_inertia(np.asarray(prior, dtype=float)[groups])
        prior_source = "model prior"
    else:
        J_src = J_lin
        prior_source = "linear solution"
    length = _length_scale(J_src)
    J_ref = _reference_bodies(J_src, length)
    Rref = _upper_cholesky(J_ref)

    cost = _Cost(R, qb, s, L, J_ref, options.prior_weight)
    lower = np.zeros(cols.size, dtype=bool)
    if options.friction_nonnegative:
        lower[10 * L:] = [i >= plant.n_model and names[i].rsplit(".", 1)[-1] in _NONNEGATIVE_TERMS for i in free]
    phi0 = np.where(lower[10 * L:], np.maximum(theta_linear[free], 0.0), theta_linear[free])
    starts = {"reference": standard_from_pseudo(J_ref),
              "projected linear": standard_from_pseudo(_project(J_lin, Rref, START_FLOOR))}
    costs = {k: cost(np.concatenate([p.ravel(), phi0]), order=0) for k, p in starts.items()}
    start = min(costs, key=costs.get)
    x0 = np.concatenate([starts[start].ravel(), phi0])
    method = options.solver
    inner = _newton if method == "newton" else _trust_region
    x, iterations, converged, fixed = _active_set(cost, x0, lower, inner, options.max_iterations)
    pi = x[: 10 * L].reshape(L, 10)
    phi = x[10 * L:]

    theta = np.array(theta_hold, dtype=float)
    theta[gcols] = pi.ravel()
    theta[free] = phi
    x = theta[cols]

    # residual statistics on the weighted rows (as dynid.identification.solve computes them for the linear fit)
    sumsq, corr_time = rows.residual_stats(at(x), w)
    sumsq_lin = rows.residual_stats(at(theta_linear[cols]), w, correlation=False)[0]
    dof = max(n_rows - lsq.rank, 1)
    sigma2 = float(sumsq / dof)
    ratio = float(np.sqrt(sumsq) / max(np.sqrt(sumsq_lin), np.finfo(float).tiny))

    # Laplace approximation in (pi, φ): ½∇²F with the data term rescaled to this fit's own noise level
    sc2 = max(sigma2 * corr_time, s**2)
    RtR = R.T @ R
    H = 0.5 * cost(x)[2] + RtR * (1.0 / sc2 - 1.0 / s**2)
    keep = ~fixed
    cov_x = np.zeros((cols.size, cols.size))
    cov_x[np.ix_(keep, keep)] = np.linalg.pinv(H[np.ix_(keep, keep)], hermitian=True)
    Bc = B[:, cols]
    base_values = base.base_values(theta)
    base_cov = Bc @ cov_x @ Bc.T
    base_std = np.sqrt(np.maximum(np.diag(base_cov), 0.0))
    base_std = np.where(lsq.excited, base_std, np.nan)
    at_bound = np.isin(base.independent, cols[fixed])
    base_std[at_bound] = np.nan
    unknown = np.isnan(base_std)
    base_cov[unknown, :] = np.nan
    base_cov[:, unknown] = np.nan
    std = np.full(plant.n_params, np.nan)
    std[base.independent] = base_std

    active = tuple(names[c] for c in cols[fixed])
    link_names = tuple(names[g[0]].rsplit(".", 1)[0] for g in groups)
    consistency = physical_consistency(pi, link_names)
    linear = physical_consistency(theta_linear[groups], link_names)
    record = LeastSquares(x=base_values, std=base_std, excited=lsq.excited, rank=lsq.rank,
                          condition_number=lsq.condition_number, condition_number_scaled=lsq.condition_number_scaled,
                          weights=lsq.weights, sigma2=sigma2, correlation_time=corr_time, cov=base_cov,
                          scale=lsq.scale, r_factor=lsq.r_factor)
    notes = [_note(consistency, linear, ratio, prior_source, options.prior_weight, method, iterations)]
    if not converged:
        msg = (f"the physically consistent fit stopped after {iterations} iterations before converging: the estimate "
               "is physically consistent but may not fit best (ConsistentOptions.max_iterations allows more)")
        warnings.warn(msg, stacklevel=3)
        notes.append(msg)
    if active:
        notes.append("friction held at its bound 0 (the unconstrained fit wanted it negative): " + ", ".join(active))
    return ConsistentFit(theta=theta, std=std, base_values=base_values, base_std=base_std, lsq=record,
                         consistency=consistency, linear_consistency=linear, residual_ratio=ratio,
                         prior_source=prior_source, prior_weight=options.prior_weight, start=start,
                         solver=method, iterations=int(iterations), converged=bool(converged),
                         active_bounds=active, notes=tuple(notes))


def _note(cons: PhysicalConsistency, lin: PhysicalConsistency, ratio: float, source: str, weight: float, solver: str,
          iterations: int) -> str:
    bad = lin.violations
    lin_txt = (f"the linear solution violates it for {len(bad)} of {len(lin.links)} links ({', '.join(bad)})" if bad
               else "the linear solution already satisfies it")
    cons_txt = ("every link of the estimate is physically consistent" if cons.consistent
                else f"links {', '.join(cons.violations)} are NOT consistent")
    return (f"physically consistent fit ({solver}, {iterations} iterations; prior: {source}, prior_weight {weight:g}): "
            f"{cons_txt}; {lin_txt}; weighted residual {100 * (ratio - 1):+.2f} % against the linear fit; "
            "parameters the data cannot identify follow the prior within physical consistency")
