"""Closed kinematic chains: parallel robots as rigid bodies projected onto their actuators.

A closed-chain robot (a hexapod, a Delta) is described by

- its actuated coordinates ``q_a`` ``(N, n_a)``: what the recording holds (leg lengths, arm angles);
- task coordinates ``x`` (the platform pose, stored as the chain likes, ``(N, k)``) whose velocity
  is the rate vector ``u`` ``(N, n_u)`` (a twist, or the plate velocity);
- ``n_u`` closure constraints ``Φ(q_a, x) = 0`` with the Jacobians ``Φ_a = ∂Φ/∂q_a`` ``(N, n_u, n_a)``
  and ``Φ_u`` ``(N, n_u, n_u)`` (the derivative along the rates ``u``), and the velocity-product term
  ``γ`` so that ``Φ_a q̈_a + Φ_u u̇ + γ = 0``;
- its rigid bodies: orientation, angular velocity and acceleration, acceleration of the body-frame
  origin, and the twist Jacobian ``∂[ω; v_O]/∂[q̇_a; u]`` (:class:`BodyMotions`).

Everything else is generic (spec/lagrange-and-parallel.md §5):

1. forward kinematics, ``x`` from ``q_a`` (:func:`solve_task`): Newton iterations on ``Φ = 0``,
   vectorised over the samples and seeded by an earlier sample (the previous one on the last pass);
2. the rates: ``u = T q̇_a`` with the actuated-coordinate projection ``T = −Φ_u⁻¹ Φ_a``, and
   ``u̇ = −Φ_u⁻¹ (Φ_a q̈_a + γ)`` (:func:`task_motion`);
3. the regressor by virtual power: every body's Newton–Euler wrench ``w_b = Y_b φ_b`` (linear in its
   ten standard parameters, :func:`~dynid.models._rnea.body_wrench_regressor`) does work through
   ``J_b = J_b,a + J_b,u T``, so

       τ = Σ_b J_bᵀ Y_b φ_b = Σ_b J_b,aᵀ Y_b φ_b − Φ_aᵀ Φ_u⁻ᵀ Σ_b J_b,uᵀ Y_b φ_b

   (:func:`closed_chain_regressor`). The constraint forces never appear: they do no work.

The same layer reproduces the Delta's closed form (``dynid.models.delta.DeltaChain``) and carries the
6-UPRU hexapod (:mod:`dynid.models.hexapod`).

References
----------
Y. Nakamura, M. Ghodoussi, "Dynamics computation of closed-link robot mechanisms with nonredundant and
redundant actuators", IEEE Trans. Robotics and Automation 5(3), 1989 (the projection by ``T``).
J. Wang, C. M. Gosselin, "A new approach for the dynamic analysis of parallel manipulators",
Multibody System Dynamics 2, 1998 (virtual work for parallel robots).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..errors import InputDataError
from ._rnea import N_BODY_PARAMS, body_wrench_regressor

__all__ = ["BodyMotions", "ClosedChain", "KinematicsError", "solve_task", "task_motion", "closed_chain_regressor",
           "body_frame", "cross"]


class KinematicsError(InputDataError):
    """Positions for which a closed chain does not assemble (no convergence) or is singular.

    ``sample`` is the index of the first offending sample (or None).
    """

    def __init__(self, message: str, *, sample: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.sample = sample


@dataclass(frozen=True)
class BodyMotions:
    """Motion of ``B`` rigid bodies at ``N`` samples, base frame, SI.

    R : (N, B, 3, 3) — body frame axes (columns) in the base frame
    omega, alpha : (N, B, 3) — angular velocity [rad/s] and acceleration [rad/s²]
    acc : (N, B, 3) — classical acceleration of the body-frame origin [m/s²], gravity not included
    jac_a : (N, B, 6, n_a) or None — ``∂[ω; v_O]/∂q̇_a`` (None: the body does not depend on q̇_a directly)
    jac_u : (N, B, 6, n_u) or None — ``∂[ω; v_O]/∂u``
    """

    R: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    acc: np.ndarray
    jac_a: np.ndarray | None
    jac_u: np.ndarray | None

    @property
    def n_bodies(self) -> int:
        return int(self.R.shape[1])

    @staticmethod
    def concatenate(parts: "list[BodyMotions]") -> "BodyMotions":
        """The bodies of several groups side by side (same samples)."""
        N = parts[0].R.shape[0]

        def jac(name: str, n: int | None):
            if all(getattr(p, name) is None for p in parts):
                return None
            return np.concatenate([getattr(p, name) if getattr(p, name) is not None
                                   else np.zeros((N, p.n_bodies, 6, n)) for p in parts], axis=1)

        na = next((p.jac_a.shape[-1] for p in parts if p.jac_a is not None), None)
        nu = next((p.jac_u.shape[-1] for p in parts if p.jac_u is not None), None)
        return BodyMotions(*(np.concatenate([getattr(p, k) for p in parts], axis=1) for k in ("R", "omega", "alpha", "acc")),
                           jac("jac_a", na), jac("jac_u", nu))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a × b`` over the last axis (``np.cross`` costs several times more on the small batches here)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def body_frame(z: np.ndarray, x_hint: np.ndarray) -> np.ndarray:
    """Right-handed frames ``(..., 3, 3)`` (axes as columns) with ``z`` and ``x = unit(x_hint ⟂ z)``.

    ``x_hint`` must not be parallel to ``z``; both ``(..., 3)``, ``z`` a unit vector.
    """
    x = x_hint - z * np.sum(x_hint * z, axis=-1, keepdims=True)
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return np.stack([x, cross(z, x), z], axis=-1)


class ClosedChain(ABC):
    """Kinematic description of a closed-chain robot (module docstring). Subclasses set ``n_actuated``,
    ``n_rates`` and ``n_bodies`` and implement the abstract methods; all arrays are batched over samples."""

    n_actuated: int
    n_rates: int
    n_bodies: int

    @abstractmethod
    def seed(self, qa: np.ndarray) -> np.ndarray:
        """Starting guess ``(1, k)`` of the forward kinematics for the first sample ``qa (1, n_a)``."""

    @abstractmethod
    def residual(self, qa: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Closure constraints ``Φ(q_a, x)`` ``(N, n_u)`` (zero when the chain is assembled)."""

    @abstractmethod
    def jacobians(self, qa: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Φ_a (N, n_u, n_a), Φ_u (N, n_u, n_u))``."""

    @abstractmethod
    def retract(self, x: np.ndarray, du: np.ndarray) -> np.ndarray:
        """The pose reached from ``x`` by the small displacement ``du`` ``(N, n_u)`` (rate coordinates)."""

    @abstractmethod
    def bias(self, qa: np.ndarray, qda: np.ndarray, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``γ`` ``(N, n_u)``: ``Φ_a q̈_a + Φ_u u̇ + γ = 0``."""

    @abstractmethod
    def motions(self, qa: np.ndarray, qda: np.ndarray, qdda: np.ndarray, x: np.ndarray, u: np.ndarray,
                du: np.ndarray) -> BodyMotions:
        """Motion of every body (``n_bodies``) at the given state."""

    def describe_failure(self, qa: np.ndarray, k: int, what: str) -> KinematicsError:
        """The error for sample ``k`` of ``qa`` (chains override it to speak their own terms)."""
        return KinematicsError(f"sample {k}: actuator positions {np.round(qa[k], 9).tolist()} {what}", sample=k)


# ------------------------------------------------------------------------------------ kinematics

_COND_SINGULAR = 1e10
"""Condition number of ``Φ_u`` beyond which a configuration is treated as singular."""


def _newton(chain: ClosedChain, qa: np.ndarray, x: np.ndarray, tol: float, max_iter: int):
    """Damped Newton on ``Φ(qa, x) = 0`` from ``x``; returns ``(x, converged (N,), singular (N,))``."""
    N = qa.shape[0]
    F = chain.residual(qa, x)
    norm = np.abs(F).max(axis=1)
    ok = norm <= tol
    singular = np.zeros(N, bool)
    stalled = np.zeros(N, bool)
    for _ in range(max_iter):
        act = np.flatnonzero(~ok & ~singular & ~stalled)
        if act.size == 0:
            break
        _, Pu = chain.jacobians(qa[act], x[act])
        try:
            du = -np.linalg.solve(Pu, F[act][..., None])[..., 0]
        except np.linalg.LinAlgError:   # an exactly singular one: find it, go on without it
            bad = ~(np.linalg.cond(Pu) < _COND_SINGULAR)
            singular[act[bad]] = True
            act, Pu = act[~bad], Pu[~bad]
            if act.size == 0:
                break
            du = -np.linalg.solve(Pu, F[act][..., None])[..., 0]
        step = np.ones(act.size)
        for _ in range(8):  # halve the step where it does not reduce the residual (far seeds)
            xt = chain.retract(x[act], du * step[:, None])
            Ft = chain.residual(qa[act], xt)
            nt = np.abs(Ft).max(axis=1)
            worse = ~(nt <= norm[act] * (1 - 1e-4 * step))
            done = ~worse | (norm[act] <= 1e3 * tol)   # near the root a full step is always taken
            x[act[done]], F[act[done]], norm[act[done]] = xt[done], Ft[done], nt[done]
            if done.all():
                break
            act, du, step = act[~done], du[~done], step[~done] * 0.5
        else:
            stalled[act] = True      # no descent even with 1/128 of the step: it will not converge from here
        ok = norm <= tol
    return x, ok, singular


def solve_task(chain: ClosedChain, qa: np.ndarray, seed: np.ndarray | None = None, *, tol: float = 1e-13,
               max_iter: int = 40, strict: bool = True, warm: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Forward kinematics: the task coordinates ``x`` ``(N, k)`` that close the chain at ``qa`` ``(N, n_a)``.

    The first sample starts from ``seed`` (default ``chain.seed``); the others are solved in
    ``log2 N`` vectorised passes, each sample seeded by one solved ``s`` samples earlier
    (``s = 2^m, …, 2, 1``: on the last pass every other sample starts from the previous one).
    A sample whose earlier neighbour does not lead to convergence is retried from the chain's seed.

    Parameters
    ----------
    tol : float
        Convergence on ``max |Φ|`` (the chain's residual units, e.g. m² for half squared lengths),
        relative to the residual scale of the seed (at least 1).
    strict : bool
        Raise on a sample that cannot be solved (default); ``False`` returns NaN rows for them.
    warm : (q_ref (M, n_a), x_ref (M, k)), optional
        Solved positions (e.g. the previous iteration of an optimiser): every sample first starts from the
        pose of the nearest ``q_ref`` in one vectorised pass; only those that do not converge go through
        the passes above.

    Raises
    ------
    KinematicsError
        ``strict`` and a sample that does not assemble (no convergence in ``max_iter`` iterations) or
        meets a singularity (``cond Φ_u > 1e10`` at the solution); the message names the first one.
    """
    qa = np.asarray(qa, dtype=float)
    N = qa.shape[0]
    if N > 1 and not np.any(qa[1:] != qa[0]):   # one position repeated (the runtime's mass-matrix probes)
        return np.repeat(solve_task(chain, qa[:1], seed, tol=tol, max_iter=max_iter, strict=strict), N, axis=0)
    x0 = chain.seed(qa[:1]) if seed is None else np.asarray(seed, dtype=float).reshape(1, -1)
    tol = tol * max(1.0, float(np.abs(chain.residual(qa[:1], x0)).max()))
    x = np.full((N, x0.shape[1]), np.nan)
    ok = np.zeros(N, bool)
    sing = np.zeros(N, bool)
    if warm is not None and warm[0].shape[1] == qa.shape[1]:
        from scipy.spatial import cKDTree

        q_ref, x_ref = warm
        near = cKDTree(q_ref).query(qa)[1]
        x, ok, sing = _newton(chain, qa, x_ref[near].copy(), tol, max_iter)
    rest = np.flatnonzero(~ok)
    if rest.size:
        x[rest], ok[rest], sing[rest] = _continuation(chain, qa[rest], x0 if rest[0] == 0 else None, tol, max_iter)
    good = np.flatnonzero(ok)   # a root where the mechanism gains a degree of freedom is no assembly to trust
    if good.size:
        sing[good] = ~(np.linalg.cond(chain.jacobians(qa[good], x[good])[1]) < _COND_SINGULAR)
        ok &= ~sing
    if not ok.all():
        if strict:
            bad = int(np.flatnonzero(~ok)[0])
            what = ("meet a singular configuration (the mechanism gains a degree of freedom)" if sing[bad]
                    else f"do not assemble the mechanism (no convergence in {max_iter} Newton iterations)")
            raise chain.describe_failure(qa, bad, what)
        x[~ok] = np.nan
    return x


def _continuation(chain: ClosedChain, qa: np.ndarray, x0: np.ndarray | None, tol: float, max_iter: int):
    """The passes of :func:`solve_task` (seeded by earlier samples); ``(x, ok, singular)``, NaN where unsolved."""
    N = qa.shape[0]
    if x0 is None:
        x0 = chain.seed(qa[:1])
    x = np.full((N, x0.shape[1]), np.nan)
    ok = np.zeros(N, bool)
    sing = np.zeros(N, bool)
    order = [np.array([0])]
    s = 1 << max(0, (N - 1).bit_length() - 1) if N > 1 else 0
    while s >= 1:
        order.append(np.arange(s, N, 2 * s))
        s //= 2
    for k, idx in enumerate(order):
        start = np.repeat(x0, idx.size, axis=0) if k == 0 else x[idx - (idx & -idx)].copy()
        lost = ~np.all(np.isfinite(start), axis=1)          # seeded by an unsolved sample
        if lost.any():
            start[lost] = chain.seed(qa[idx[lost][:1]])
        xs, oks, ss = _newton(chain, qa[idx], start, tol, max_iter)
        if not oks.all():   # retry from the chain's own seed
            r = np.flatnonzero(~oks)
            xr, okr, sr = _newton(chain, qa[idx[r]], np.repeat(chain.seed(qa[idx[r[:1]]]), r.size, axis=0), tol,
                                  max_iter)
            xs[r], oks[r], ss[r] = xr, okr, sr & ~okr
        xs[~oks] = np.nan
        x[idx], ok[idx], sing[idx] = xs, oks, ss
    return x, ok, sing


def task_motion(chain: ClosedChain, qa, qda, qdda, x: np.ndarray | None = None):
    """Pose, rates and their derivative, and the constraint Jacobians of an actuator motion.

    Returns ``(x, u, du, Φ_a, Φ_u)``: ``u = −Φ_u⁻¹ Φ_a q̇_a``, ``u̇ = −Φ_u⁻¹ (Φ_a q̈_a + γ)``.
    """
    if x is None:
        x = solve_task(chain, qa)
    Pa, Pu = chain.jacobians(qa, x)
    u = -np.linalg.solve(Pu, np.einsum("nij,nj->ni", Pa, qda)[..., None])[..., 0]
    gamma = chain.bias(qa, qda, x, u)
    du = -np.linalg.solve(Pu, (np.einsum("nij,nj->ni", Pa, qdda) + gamma)[..., None])[..., 0]
    return x, u, du, Pa, Pu


def closed_chain_regressor(chain: ClosedChain, qa, qda, qdda, gravity: np.ndarray, selection: np.ndarray,
                           x: np.ndarray | None = None) -> np.ndarray:
    """Actuator-force columns ``(N, n_a, S)`` of linear combinations of the bodies' standard parameters.

    Parameters
    ----------
    chain : ClosedChain
    qa, qda, qdda : ndarray, shape (N, n_a)
        Actuator positions, velocities, accelerations (SI).
    gravity : ndarray, shape (3,)
        Gravity vector in the base frame [m/s²] (e.g. ``[0, 0, -9.81]``).
    selection : ndarray, shape (n_bodies * 10, S)
        Column ``s`` is a set of standard parameters of all bodies (body-major, ten each in the order
        ``Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m``): the model's parameters (legs sharing one set
        add up) or the known payload.
    x : ndarray, optional
        Task coordinates when already solved.

    Returns
    -------
    ndarray, shape (N, n_a, S)
        ``τ = Σ_b J_bᵀ Y_b φ_b`` per column.
    """
    x, u, du, Pa, Pu = task_motion(chain, qa, qda, qdda, x)
    m = chain.motions(qa, qda, qdda, x, u, du)
    Rt = np.swapaxes(m.R, -1, -2)
    w = (Rt @ m.omega[..., None])[..., 0]                   # body coordinates
    dw = (Rt @ m.alpha[..., None])[..., 0]
    a = (Rt @ (m.acc - gravity)[..., None])[..., 0]
    Y = body_wrench_regressor(w, dw, a)                     # (N, B, 6, 10): [moment; force], body frame
    N, B = Y.shape[:2]

    def generalised(J):                                     # Σ_b J_bᵀ Y_b φ_b per selected column
        Jb = np.concatenate([Rt @ J[:, :, :3], Rt @ J[:, :, 3:]], axis=2)      # twist Jacobian, body frame
        G = np.swapaxes(Jb, -1, -2) @ Y                     # (N, B, n, 10)
        return np.swapaxes(G, 1, 2).reshape(N, J.shape[-1], B * N_BODY_PARAMS) @ selection

    tau = generalised(m.jac_a) if m.jac_a is not None else np.zeros((N, chain.n_actuated, selection.shape[1]))
    if m.jac_u is not None:
        Z = np.linalg.solve(np.swapaxes(Pu, -1, -2), generalised(m.jac_u))    # Φ_u⁻ᵀ G_u
        tau -= np.swapaxes(Pa, -1, -2) @ Z
    return tau
