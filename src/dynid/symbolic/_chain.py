"""A serial chain in SymPy: the transforms of dynid's chain elements, and the two derivations.

Every body ``i`` hangs from body ``i − 1`` through one joint (``models._rnea.Element``):
``T_{i−1,i}(q) = pre · J(q) · post`` with ``J`` a rotation about the unit ``axis`` (rotary) or a
translation along it (linear). Geometry is numeric (the configuration's, cleaned of rounding noise:
``|x| < 1e-12`` becomes 0, near-integers integers); joint coordinates, gravity ``g`` and the inertial
parameters are SymPy expressions (symbols, numbers, or combinations such as a catalogue model's).

- :meth:`SymbolicChain.newton_euler` — the recursive Newton–Euler algorithm (forward: angular velocity,
  angular acceleration and origin acceleration of each body with the base accelerating at ``−g``;
  backward: each body's wrench ``F = m a + α × h + ω × (ω × h)``, ``n = I α + ω × (I ω) + h × a``
  plus its children's, projected on the joint axis). O(n) expression growth.
- :meth:`SymbolicChain.lagrange` — the Lagrange–Euler trace form (spec/lagrange-and-parallel.md §3,
  Fu–Gonzalez–Lee): with ``U_pj = ∂T_p/∂q_j = W_j T_p`` (``W_j = T_{j−1} pre_j Δ_j pre_j⁻¹ T_{j−1}⁻¹``,
  ``Δ_j`` the joint's derivative operator) and ``U_pjk = W_min(j,k) W_max(j,k) T_p``,
  ``D_ij = Σ_{p ≥ max(i,j)} Tr(U_pj J_p U_piᵀ)``, ``D_ijk = Σ_{p ≥ max(i,j,k)} Tr(U_pjk J_p U_piᵀ)``,
  ``D_i = −Σ_{p ≥ i} g̃ᵀ U_pi J_p e₄``, ``τ_i = Σ_j D_ij q̈_j + Σ_jk D_ijk q̇_j q̇_k + D_i``; ``J_p`` the
  pseudo-inertia of body ``p`` (:mod:`dynid.models.inertia`). O(n⁴): a reference, slow beyond 4 joints.

Both return unexpanded expression trees; printing and code generation go through ``sympy.cse``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import sympy as sp

__all__ = ["SymbolicChain", "Terms", "clean_number", "joint_symbols"]


def clean_number(x: float, scale: float = 1.0) -> sp.Expr:
    """A geometry entry as SymPy: 0 below ``1e-12·scale``; the exact rational of a short decimal (0.325 ->
    13/40, so derivations cancel exactly); else a Float of the value."""
    x = float(x)
    if abs(x) < 1e-12 * max(scale, 1.0):
        return sp.Integer(0)
    r = round(x)
    if abs(x - r) < 1e-12:
        return sp.Integer(int(r))
    text = f"{x:.10g}"
    if float(text) == x or abs(float(text) - x) < 1e-15 * abs(x):
        return sp.Rational(text)
    return sp.Float(x)


def _matrix(a: np.ndarray) -> sp.Matrix:
    a = np.asarray(a, dtype=float)
    scale = float(np.abs(a).max()) if a.size else 1.0
    return sp.Matrix(a.shape[0], a.shape[1] if a.ndim == 2 else 1, [clean_number(x, scale) for x in a.ravel()])


def joint_symbols(n: int) -> tuple[list[sp.Symbol], list[sp.Symbol], list[sp.Symbol]]:
    """``q1..qn``, ``dq1..dqn``, ``ddq1..ddqn`` (real symbols; the names ``dynid derive`` prints)."""
    mk = lambda prefix: [sp.Symbol(f"{prefix}{i + 1}", real=True) for i in range(n)]  # noqa: E731
    return mk("q"), mk("dq"), mk("ddq")


def _skew(u: sp.Matrix) -> sp.Matrix:
    return sp.Matrix([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])


def _rotation(u: sp.Matrix, q: sp.Expr) -> sp.Matrix:
    """Rodrigues' rotation about the unit axis ``u`` by ``q`` (exact: for a coordinate axis, no rounding)."""
    K = _skew(u)
    return sp.eye(3) + sp.sin(q) * K + (1 - sp.cos(q)) * (K * K)


def _inertia(phi: Sequence[sp.Expr]) -> sp.Matrix:
    xx, xy, xz, yy, yz, zz = phi[:6]
    return sp.Matrix([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _pseudo(phi: Sequence[sp.Expr]) -> sp.Matrix:
    """Pseudo-inertia ``[[Σ, h], [hᵀ, m]]`` with ``Σ = ½ tr(I) E − I`` (dynid's standard parameters)."""
    I = _inertia(phi)
    S = sp.Rational(1, 2) * I.trace() * sp.eye(3) - I
    h = sp.Matrix(phi[6:9])
    J = sp.zeros(4, 4)
    J[:3, :3] = S
    J[:3, 3] = h
    J[3, :3] = h.T
    J[3, 3] = phi[9]
    return J


@dataclass(frozen=True)
class Terms:
    """Lagrange–Euler terms: ``D`` (n × n mass matrix), ``C[i][j][k]`` = ``D_ijk`` (velocity products),
    ``G`` (n gravity terms), and ``tau`` (n torques)."""

    D: list
    C: list
    G: list
    tau: list


class SymbolicChain:
    """A serial chain with symbolic joint coordinates, gravity and inertial parameters.

    Parameters
    ----------
    kinds : sequence of {"rotary", "linear"}, (n_bodies,)
    pre, post : sequence of ndarray (4, 4), (n_bodies,)
    axes : sequence of ndarray (3,), (n_bodies,)
    params : sequence of sequence of SymPy expressions, (n_bodies, 10)
        Each body's ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]`` (inertia about its origin).
    gravity : sequence of SymPy expressions, (3,)
        Gravity vector in the base frame (e.g. ``[0, 0, -g]``).
    coupling : ndarray (n_bodies, n_joints), optional ; offset : ndarray (n_bodies,), optional
        Body coordinates ``q_b = C q + offset`` (mimic joints); identity by default.
    armature : sequence of SymPy expressions, (n_joints,), optional
        Inertia seen by a joint alone (``τ_j += Ia_j q̈_j``: a motor rotor as softMC's J2, J4).
    potential : SymPy expression in the joint symbols, optional
        Extra potential energy (a spring): ``τ_j += ∂V/∂q_j``.
    """

    def __init__(self, kinds, pre, post, axes, params, gravity, coupling=None, offset=None, armature=None,
                 potential=None) -> None:
        self.kinds = tuple(kinds)
        nb = len(self.kinds)
        self.pre = [_matrix(np.asarray(a, dtype=float)) for a in pre]
        self.post = [_matrix(np.asarray(a, dtype=float)) for a in post]
        self.axes = []
        for u in axes:
            u = np.asarray(u, dtype=float)
            self.axes.append(_matrix((u / np.linalg.norm(u)).reshape(3, 1)))
        self.params = [list(map(sp.sympify, p)) for p in params]
        if len(self.params) != nb or any(len(p) != 10 for p in self.params):
            raise ValueError(f"params must be {nb} lists of 10 expressions")
        self.gravity = sp.Matrix(list(map(sp.sympify, gravity)))
        C = np.eye(nb) if coupling is None else np.asarray(coupling, dtype=float)
        self.C = C
        self.n = C.shape[1]
        self.offset = np.zeros(nb) if offset is None else np.asarray(offset, dtype=float)
        self.q, self.dq, self.ddq = joint_symbols(self.n)
        Cm = _matrix(C)
        off = _matrix(self.offset.reshape(-1, 1)) if np.any(self.offset) else sp.zeros(nb, 1)
        self.qb = list(Cm * sp.Matrix(self.q) + off)
        self.dqb = list(Cm * sp.Matrix(self.dq))
        self.ddqb = list(Cm * sp.Matrix(self.ddq))
        self._Cm = Cm
        self.armature = [sp.Integer(0)] * self.n if armature is None else list(map(sp.sympify, armature))
        self.potential = sp.Integer(0) if potential is None else sp.sympify(potential)

    def _extra(self) -> list[sp.Expr]:
        """Armature and spring terms per joint."""
        return [self.armature[j] * self.ddq[j] + sp.diff(self.potential, self.q[j]) for j in range(self.n)]

    @property
    def n_bodies(self) -> int:
        return len(self.kinds)

    # ------------------------------------------------------------------ transforms
    def joint_transform(self, i: int) -> sp.Matrix:
        """``T_{i−1,i}(q)`` (4 × 4)."""
        J = sp.eye(4)
        if self.kinds[i] == "rotary":
            J[:3, :3] = _rotation(self.axes[i], self.qb[i])
        else:
            J[:3, 3] = self.axes[i] * self.qb[i]
        return self.pre[i] * J * self.post[i]

    # ------------------------------------------------------------------ Newton–Euler
    def _forward(self, ex) -> list:
        """Per body ``(R, origin, ω, α, a)``: rotation from the parent, origin in the parent's coordinates,
        angular velocity, angular acceleration and origin acceleration (base at ``−g``), own coordinates."""
        zero = sp.zeros(3, 1)
        w, al, a = zero, zero, -self.gravity
        frames = []
        for i in range(self.n_bodies):
            Rp, pp = self.pre[i][:3, :3], self.pre[i][:3, 3]
            Rq, pq = self.post[i][:3, :3], self.post[i][:3, 3]
            u = self.axes[i]
            e = Rp * u
            qd, qdd = self.dqb[i], self.ddqb[i]
            if self.kinds[i] == "rotary":
                Rj = _rotation(u, self.qb[i])
                w_par = w + e * qd
                al_par = al + e * qdd + w.cross(e * qd)
                aJ = a + al.cross(pp) + w.cross(w.cross(pp))
                r = Rp * Rj * pq
                acc = aJ + al_par.cross(r) + w_par.cross(w_par.cross(r))
                origin = pp + r
            else:
                Rj = sp.eye(3)
                w_par, al_par = w, al
                origin = pp + Rp * (u * self.qb[i] + pq)
                acc = a + al.cross(origin) + w.cross(w.cross(origin)) + 2 * w.cross(e * qd) + e * qdd
            R = Rp * Rj * Rq
            w, al, a = ex(R.T * w_par), ex(R.T * al_par), ex(R.T * acc)
            frames.append((R, origin, w, al, a))
        return frames

    def _project(self, i: int, f: sp.Matrix, nm: sp.Matrix) -> sp.Expr:
        """Joint ``i``'s torque of a wrench (force, moment about the body origin) in body ``i`` coordinates."""
        Rq, pq = self.post[i][:3, :3], self.post[i][:3, 3]
        s = Rq.T * self.axes[i]
        if self.kinds[i] == "rotary":
            return (s.T * (nm + (Rq.T * pq).cross(f)))[0]
        return (s.T * f)[0]

    def newton_euler(self, expand: bool = False) -> list[sp.Expr]:
        """Joint torques ``τ`` (n expressions), recursive Newton–Euler.

        ``expand``: expand every body's velocities, accelerations and wrench as they are computed (a sum
        of products of sines, cosines and rates instead of a tree with shared branches): larger to hold,
        but printable as one explicit expression without the repetition a shared tree prints.
        """
        ex = (lambda v: v.applyfunc(sp.expand)) if expand else (lambda v: v)
        frames = self._forward(ex)
        nb = self.n_bodies
        tau_b = [sp.Integer(0)] * nb
        f_next = n_next = None
        for i in reversed(range(nb)):
            _, _, w, al, a = frames[i]
            phi = self.params[i]
            I, h, m = _inertia(phi), sp.Matrix(phi[6:9]), phi[9]
            f = m * a + al.cross(h) + w.cross(w.cross(h))
            nm = I * al + w.cross(I * w) + h.cross(a)
            if f_next is not None:
                Rc, pc = frames[i + 1][0], frames[i + 1][1]   # the child's rotation and origin, this body's coordinates
                fc = Rc * f_next
                f = f + fc
                nm = nm + Rc * n_next + pc.cross(fc)
            tau_b[i] = self._project(i, f, nm)
            f, nm = ex(f), ex(nm)
            f_next, n_next = f, nm
        return [t + e for t, e in zip(self._Cm.T * sp.Matrix(tau_b), self._extra())]

    def regressor(self) -> list[list[sp.Expr]]:
        """``Y`` (n × 10·n_bodies): ``τ = Y φ`` (body-major standard parameters; armature and springs not
        included). Each column is one body's unit-parameter wrench carried down to the joints it loads."""
        frames = self._forward(lambda v: v)
        nb = self.n_bodies
        E = [sp.Matrix([1, 0, 0]), sp.Matrix([0, 1, 0]), sp.Matrix([0, 0, 1])]
        pairs = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
        Yb = [[sp.Integer(0)] * (10 * nb) for _ in range(nb)]
        for b in range(nb):
            _, _, w, al, a = frames[b]
            cols = []
            for r, c in pairs:                                   # inertia about the origin: moment only
                Eab = sp.zeros(3, 3)
                Eab[r, c] = Eab[c, r] = 1
                cols.append((sp.zeros(3, 1), Eab * al + w.cross(Eab * w)))
            for e in E:                                          # first moments
                cols.append((al.cross(e) + w.cross(w.cross(e)), e.cross(a)))
            cols.append((a, sp.zeros(3, 1)))                     # mass
            for k, (f, nm) in enumerate(cols):
                for i in range(b, -1, -1):                       # carried down to every joint below body b
                    Yb[i][10 * b + k] = self._project(i, f, nm)
                    if i:
                        R, pc = frames[i][0], frames[i][1]
                        f, nm = R * f, R * nm + pc.cross(R * f)
        return [list(row) for row in (self._Cm.T * sp.Matrix(Yb)).tolist()]

    # ------------------------------------------------------------------ Lagrange–Euler
    def lagrange(self) -> Terms:
        """``D_ij``, ``D_ijk``, ``D_i`` and ``τ`` by the trace formulation (module docstring)."""
        if np.any(self.offset) or not np.array_equal(self.C, np.eye(self.n_bodies)):
            raise ValueError("the trace form is written for independent joints; use newton_euler for mimic joints")
        n = self.n_bodies
        T = [sp.eye(4)]
        for i in range(n):
            T.append(T[-1] * self.joint_transform(i))          # T[p + 1] = base -> body p
        W = []
        for j in range(n):
            Tj = T[j]
            inv = sp.eye(4)
            inv[:3, :3] = Tj[:3, :3].T
            inv[:3, 3] = -Tj[:3, :3].T * Tj[:3, 3]
            D = sp.zeros(4, 4)
            if self.kinds[j] == "rotary":
                D[:3, :3] = _skew(self.axes[j])
            else:
                D[:3, 3] = self.axes[j]
            pre_inv = _matrix(np.linalg.inv(np.array(self.pre[j].tolist(), dtype=float)))
            W.append(Tj * self.pre[j] * D * pre_inv * inv)
        J = [_pseudo(p) for p in self.params]
        U = {(p, j): W[j] * T[p + 1] for p in range(n) for j in range(p + 1)}
        UJ = {key: val * J[key[0]] for key, val in U.items()}

        def tr(A: sp.Matrix, B: sp.Matrix) -> sp.Expr:   # Tr(A Bᵀ) as the elementwise product
            return sp.Add(*[A[r, c] * B[r, c] for r in range(4) for c in range(4) if A[r, c] != 0 and B[r, c] != 0])

        Dm = [[sp.Add(*[tr(UJ[(p, j)], U[(p, i)]) for p in range(max(i, j), n)]) for j in range(n)] for i in range(n)]
        U2 = {}
        for p in range(n):
            for j in range(p + 1):
                for k in range(j, p + 1):
                    U2[(p, j, k)] = W[j] * W[k] * T[p + 1] * J[p]
        Cm = [[[sp.Add(*[tr(U2[(p, min(j, k), max(j, k))], U[(p, i)]) for p in range(max(i, j, k), n)])
                for k in range(n)] for j in range(n)] for i in range(n)]
        gt = sp.Matrix([*self.gravity, 0])
        G = [sp.Add(*[-(gt.T * UJ[(p, i)][:, 3])[0] for p in range(i, n)]) for i in range(n)]
        for i in range(n):   # the armature belongs to the mass matrix, a spring to the position terms
            Dm[i][i] = Dm[i][i] + self.armature[i]
            G[i] = G[i] + sp.diff(self.potential, self.q[i])
        tau = [sp.Add(*[Dm[i][j] * self.ddq[j] for j in range(n)])
               + sp.Add(*[Cm[i][j][k] * self.dq[j] * self.dq[k] for j in range(n) for k in range(n)]) + G[i]
               for i in range(n)]
        return Terms(Dm, Cm, G, tau)
