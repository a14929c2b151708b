"""Single-sample torque evaluation for the controller cycle: compiled and fallback paths.

The batch regressor ``Y(q, qd, qdd) @ theta`` is built for thousands of samples at once; for one
sample its fixed Python/numpy overhead dominates (about 1.3 ms for the PUMA). The runtime therefore
evaluates the *identified* rigid-body torque in the form every rigid-body model has::

    tau(q, qd, qdd) = A(q) qdd + C(q) (qd ⊗ qd) + g(q)              (plus friction, separately)

``A`` ``(n, n)`` is the mass matrix, ``C`` ``(n, n(n+1)/2)`` holds the velocity-product
coefficients on the upper triangle of ``qd qdᵀ``, ``g`` ``(n,)`` gravity and payload. For every
model whose torque is a trigonometric polynomial in its rotary joints and does not depend on the
position of its linear joints (PUMA, SCARA, traverse, single axes), ``A``, ``C`` and ``g`` are
compiled *exactly* into one Fourier series::

    [A, C, g](q) = K @ [cos(Ω q), sin(Ω q)]                       Ω: (F, n) integer frequencies

whose coefficients come from the model itself: the batch torque on a tensor grid of
``2·d_j + 1`` angles per joint (``d_j`` the joint's trigonometric degree, found by an FFT probe)
and a multi-dimensional FFT. One cycle is then ``phase = Ω q``, two ufuncs, one matrix-vector
product and three small products, all into preallocated buffers. The compiled series is checked
against the batch path on random states (relative error below ``1e-9``); a model that does not pass
(a Delta: its kinematics are not trigonometric polynomials) uses :class:`RegressorDynamics`, the
batch regressor on one sample (correct, not allocation-free, slower).

Path to generated code: ``Ω`` and ``K`` are plain arrays, so a C (or IEC 61131 ST) routine for the
controller is a loop ``for f: s, c = sincos(Ω[f]·q); coef += K[:, f]·c + K[:, F+f]·s`` followed by the
three small products: no symbolic algebra, identical for every compilable model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..models.base import DynamicModel, Plant

__all__ = ["RigidBodyDynamics", "TrigPolyDynamics", "RegressorDynamics", "compile_dynamics", "MAX_DEGREE"]

MAX_DEGREE = 4
"""Highest trigonometric degree per joint the compiler accepts (PUMA needs 2, SCARA 1)."""
_PROBE_POINTS = 16           # angles per joint of the degree probe (resolves degrees up to 7)
_VERIFY_RTOL = 1e-9


class RigidBodyDynamics(Protocol):
    """Rigid-body part of an identified plant, evaluated one sample at a time.

    ``torque_into(q, qd, qdd, out)`` writes ``A qdd + C (qd⊗qd) + g`` ``(n,)`` into ``out``;
    ``mass_bias_into(q, qd, M, h)`` writes the mass matrix ``(n, n)`` and the bias ``C (qd⊗qd) + g``.
    """

    n_joints: int
    kind: str

    def new_workspace(self) -> object: ...

    def torque_into(self, ws, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, out: np.ndarray) -> None: ...

    def mass_bias_into(self, ws, q: np.ndarray, qd: np.ndarray, M: np.ndarray, h: np.ndarray) -> None: ...


# --------------------------------------------------------------------------- compiled Fourier series

@dataclass(frozen=True)
class TrigPolyDynamics:
    """``[A, C, g](q) = K @ [cos(Ω q), sin(Ω q)]`` (see the module docstring).

    n_joints : int
    omega : ndarray, shape (F, n_joints)
        Integer frequency vectors (as float64), one per retained Fourier term.
    K : ndarray, shape (n·n + n·n_pairs + n, 2F)
        Coefficients: rows are ``A`` (row-major), ``C`` (row-major) and ``g``.
    degrees : tuple of int, (n_joints,)
        Trigonometric degree of each joint (0: the torque does not depend on its position).
    """

    n_joints: int
    omega: np.ndarray
    K: np.ndarray
    degrees: tuple[int, ...]
    kind: str = "compiled trigonometric series"

    def __post_init__(self) -> None:
        for name in ("omega", "K"):
            a = np.ascontiguousarray(getattr(self, name), dtype=float)
            a.flags.writeable = False
            object.__setattr__(self, name, a)

    @property
    def n_terms(self) -> int:
        return int(self.omega.shape[0])

    def new_workspace(self) -> "_TrigWorkspace":
        return _TrigWorkspace(self)

    def torque_into(self, ws: "_TrigWorkspace", q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    out: np.ndarray) -> None:
        """``out[:] = A(q) qdd + C(q) (qd⊗qd) + g(q)`` [N m or N]; allocates nothing."""
        ws.evaluate(q, qd)
        np.dot(ws.A, qdd, out=out)
        np.add(out, ws.h, out=out)

    def mass_bias_into(self, ws: "_TrigWorkspace", q: np.ndarray, qd: np.ndarray, M: np.ndarray,
                       h: np.ndarray) -> None:
        """Mass matrix ``M`` ``(n, n)`` and bias ``h = C (qd⊗qd) + g`` ``(n,)``; allocates nothing."""
        ws.evaluate(q, qd)
        np.copyto(M, ws.A)
        np.copyto(h, ws.h)


class _TrigWorkspace:
    """Preallocated buffers of :class:`TrigPolyDynamics` (one per user: feed-forward, simulator...)."""

    def __init__(self, dyn: TrigPolyDynamics) -> None:
        n, F = dyn.n_joints, dyn.n_terms
        self.dyn = dyn
        nq = n * (n + 1) // 2
        iu, ju = np.triu_indices(n)
        # row selections as matrices: np.dot(..., out=) allocates nothing (np.take with out= buffers)
        self.sel_i = np.zeros((nq, n))
        self.sel_i[np.arange(nq), iu] = 1.0
        self.sel_j = np.zeros((nq, n))
        self.sel_j[np.arange(nq), ju] = 1.0
        self.phase = np.empty(F)
        self.u = np.empty(2 * F)
        self.cos = self.u[:F]
        self.sin = self.u[F:]
        self.coef = np.empty(dyn.K.shape[0])
        self.A = self.coef[: n * n].reshape(n, n)
        self.C = self.coef[n * n: n * n + n * nq].reshape(n, nq)
        self.g = self.coef[n * n + n * nq:]
        self.a = np.empty(nq)
        self.b = np.empty(nq)
        self.qq = np.empty(nq)
        self.h = np.empty(n)

    def evaluate(self, q: np.ndarray, qd: np.ndarray) -> None:
        dyn = self.dyn
        np.dot(dyn.omega, q, out=self.phase)
        np.cos(self.phase, out=self.cos)
        np.sin(self.phase, out=self.sin)
        np.dot(dyn.K, self.u, out=self.coef)
        np.dot(self.sel_i, qd, out=self.a)
        np.dot(self.sel_j, qd, out=self.b)
        np.multiply(self.a, self.b, out=self.qq)
        np.dot(self.C, self.qq, out=self.h)
        np.add(self.h, self.g, out=self.h)


# --------------------------------------------------------------------------- fallback

@dataclass(frozen=True)
class RegressorDynamics:
    """The batch regressor on one sample (any model; allocates, about 0.1–2 ms per call)."""

    model: DynamicModel
    p: np.ndarray
    kind: str = "batch regressor (per-sample)"

    @property
    def n_joints(self) -> int:
        return self.model.n_joints

    def new_workspace(self) -> "_RegressorWorkspace":
        return _RegressorWorkspace(self.model.n_joints)

    def torque_into(self, ws: "_RegressorWorkspace", q, qd, qdd, out) -> None:
        ws.Q[0], ws.QD[0], ws.QDD[0] = q, qd, qdd
        out[:] = self.model.torque(self.p, ws.Q[:1], ws.QD[:1], ws.QDD[:1])[0]

    def mass_bias_into(self, ws: "_RegressorWorkspace", q, qd, M, h) -> None:
        n = self.model.n_joints
        ws.Q[:] = q
        ws.QD[:] = 0.0
        ws.QD[0] = qd
        ws.QDD[:] = 0.0
        ws.QDD[2:] = np.eye(n)
        tau = self.model.torque(self.p, ws.Q, ws.QD, ws.QDD)
        M[:] = (tau[2:] - tau[1]).T
        h[:] = tau[0]


class _RegressorWorkspace:
    def __init__(self, n: int) -> None:
        self.Q = np.zeros((n + 2, n))
        self.QD = np.zeros((n + 2, n))
        self.QDD = np.zeros((n + 2, n))


# --------------------------------------------------------------------------- compiler

def compile_dynamics(plant: Plant, theta: np.ndarray, *, seed: int = 0) -> RigidBodyDynamics:
    """Fast single-sample evaluator of the rigid-body part of ``plant`` with parameters ``theta``.

    Parameters
    ----------
    plant : Plant
    theta : array-like, shape (n_params,)
        Model then friction parameters; only the model part is used here.
    seed : int
        Seed of the random states of the degree probe and the verification.

    Returns
    -------
    TrigPolyDynamics or RegressorDynamics
        The compiled series when the model passes the verification, else the batch fallback.
    """
    model = plant.model
    p = np.asarray(theta, dtype=float)[: plant.n_model].copy()
    try:
        dyn = _compile(model, p, np.random.default_rng(seed))
    except (ValueError, FloatingPointError, ArithmeticError):  # incl. DynidError subclasses of ValueError
        dyn = None
    return dyn if dyn is not None else RegressorDynamics(model, p)


def _torque(model: DynamicModel, p: np.ndarray, q, qd, qdd) -> np.ndarray:
    with np.errstate(all="ignore"):
        tau = model.torque(p, q, qd, qdd)
    if not np.all(np.isfinite(tau)):
        raise FloatingPointError("non-finite torque")
    return tau


def _compile(model: DynamicModel, p: np.ndarray, rng: np.random.Generator) -> TrigPolyDynamics | None:
    n = model.n_joints
    q0, qd0, qdd0 = model.sample_states(rng, 3)
    # 1. degree of each joint: FFT of the torque along one joint (random rates make every term show)
    degrees = []
    for j, joint in enumerate(model.joints):
        if joint.kind == "linear":
            Q = np.repeat(q0, 3, axis=0)
            Q[:, j] += np.tile([-0.3, 0.0, 0.3], 3)
            tau = _torque(model, p, Q, np.repeat(qd0, 3, axis=0), np.repeat(qdd0, 3, axis=0)).reshape(3, 3, n)
            scale = np.abs(tau).max() + 1e-300
            if np.abs(tau - tau[:, 1:2]).max() > 1e-12 * scale:
                return None        # depends on a linear joint's position: not compiled
            degrees.append(0)
            continue
        k = _PROBE_POINTS
        Q = np.repeat(q0, k, axis=0)
        Q[:, j] += np.tile(2 * np.pi * np.arange(k) / k, 3)
        tau = _torque(model, p, Q, np.repeat(qd0, k, axis=0), np.repeat(qdd0, k, axis=0)).reshape(3, k, n)
        c = np.abs(np.fft.rfft(tau, axis=1))                       # (3, k/2 + 1, n)
        mag = c.max(axis=(0, 2))
        present = np.nonzero(mag > 1e-11 * (mag.max() + 1e-300))[0]
        d = int(present.max()) if present.size else 0
        if d > MAX_DEGREE:
            return None
        degrees.append(d)
    # 2. the probes on the tensor grid: g, A columns, velocity products
    sizes = [2 * d + 1 for d in degrees]
    axes = [2 * np.pi * np.arange(s) / s for s in sizes]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, n)   # (G, n)
    G = grid.shape[0]
    iu, ju = np.triu_indices(n)
    nq = iu.size
    P = 1 + n + nq
    QD = np.zeros((P, n))
    QDD = np.zeros((P, n))
    QDD[1:1 + n] = np.eye(n)
    QD[1 + n + np.arange(nq), iu] = 1.0
    QD[1 + n + np.arange(nq), ju] = 1.0
    tau = _torque(model, p, np.repeat(grid, P, axis=0), np.tile(QD, (G, 1)), np.tile(QDD, (G, 1))).reshape(G, P, n)
    g = tau[:, 0]                                                   # (G, n)
    A = np.transpose(tau[:, 1:1 + n] - g[:, None, :], (0, 2, 1))    # (G, n_i, n_j)
    quad = tau[:, 1 + n:] - g[:, None, :]                           # (G, nq, n): C_jj + C_kk + D_jk
    diag = quad[:, iu == ju]                                        # (G, n, n): C_ijj for qd = e_j
    C = quad.copy()
    off = iu != ju
    C[:, off] -= diag[:, iu[off]] + diag[:, ju[off]]
    C = np.transpose(C, (0, 2, 1))                                  # (G, n_i, nq)
    V = np.concatenate([A.reshape(G, -1), C.reshape(G, -1), g], axis=1)   # (G, R)
    # 3. multi-dimensional FFT -> real cos/sin series on the half space of frequencies
    R = V.shape[1]
    spec = np.fft.fftn(V.reshape(*sizes, R), axes=tuple(range(n))) / G
    freqs = np.stack(np.meshgrid(*[np.rint(np.fft.fftfreq(s) * s) for s in sizes], indexing="ij"), axis=-1).reshape(-1, n)
    spec = spec.reshape(-1, R)
    first = np.array([next((x for x in w if x != 0), 0.0) for w in freqs])   # sign of the leading non-zero entry
    zero = ~freqs.any(axis=1)
    keep = first > 0
    scale = np.abs(V).max() + 1e-300
    cos_c = np.concatenate([spec[zero].real, 2 * spec[keep].real])          # (F, R)
    sin_c = np.concatenate([np.zeros((1, R)), -2 * spec[keep].imag])
    omega = np.concatenate([freqs[zero], freqs[keep]])
    big = np.maximum(np.abs(cos_c).max(axis=1), np.abs(sin_c).max(axis=1)) > 1e-13 * scale
    big[0] = True
    omega, cos_c, sin_c = omega[big], cos_c[big], sin_c[big]
    K = np.concatenate([cos_c.T, sin_c.T], axis=1)
    dyn = TrigPolyDynamics(n, omega, K, tuple(degrees))
    # 4. verification against the batch path on fresh random states
    qv, qdv, qddv = model.sample_states(rng, 20)
    ref = _torque(model, p, qv, qdv, qddv)
    ws = dyn.new_workspace()
    out = np.empty(n)
    err = 0.0
    for k in range(qv.shape[0]):  # one sample at a time: this is the path being verified
        dyn.torque_into(ws, qv[k], qdv[k], qddv[k], out)
        err = max(err, float(np.abs(out - ref[k]).max()))
    if not err <= _VERIFY_RTOL * (np.abs(ref).max() + 1e-300):
        return None
    return dyn
