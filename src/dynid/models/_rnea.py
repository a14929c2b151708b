"""Batched recursive Newton–Euler regressor of a serial chain (numpy, no per-sample loop).

A chain is a list of moving bodies. Body ``i`` hangs from body ``i - 1`` (body ``-1`` is the fixed
base) through one joint, with the homogeneous transform

    T_{i-1,i}(q) = A · J(q) · B

``A`` and ``B`` are fixed; ``J`` is a rotation ``Rot(u, q)`` (rotary) or a translation ``u·q`` (linear)
along the unit axis ``u`` of the joint frame. URDF and modified DH have ``B = I`` (the body frame is
the joint frame); standard DH has ``A = I`` and ``B = Rz(θ0)·Tz(d)·Tx(a)·Rx(α)``.

The inertial parameters of body ``i`` are the standard ten, in the body frame, in the order of
Khalil & Dombre (the base-parameter grouping then keeps inertias and regroups masses)::

    pi_i = [Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]

with ``I`` the inertia about the body-frame origin and ``(mx, my, mz) = m·c`` (first moments).

Algorithm (Featherstone's spatial notation, body coordinates). Forward pass for the spatial
velocity ``V_i = (w, v)`` and acceleration ``A_i = (dw, a)`` with the joint screw ``S_i`` (constant
in body coordinates) and the base acceleration ``A_0 = (0, -g)``::

    V_i = X_i V_{i-1} + S_i qd_i
    A_i = X_i A_{i-1} + S_i qdd_i + V_i x S_i qd_i

The force body ``i`` needs is ``f_i = Phi_i pi_i`` with ``Phi_i`` (6 x 10) linear in the twelve
features ``[dw, a_c, w w^T]`` (``a_c = a + w x v`` is the classical acceleration of the origin):
``Phi_i = features_i @ PHI`` for one constant ``(12, 60)`` map. The torque of joint ``j`` is
``tau_j = sum_{i>=j} S_j^(i) . f_i`` with ``S_j^(i)`` joint ``j``'s screw expressed in body ``i``
(``S^(i) = X_i S^(i-1)``), so the ``(j, i)`` block of the regressor is ``S_j^(i)^T Phi_i``.

The motion transform ``X_i(q)`` is the basis ``[1, sin q, 1 - cos q, sin^2 q, ...]`` times a
constant ``(n_basis, 36)`` matrix, so it is assembled by one matrix product per chunk.
Every step is a numpy ufunc or a stacked small ``matmul`` over a chunk of samples; the buffers are
reused from chunk to chunk.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, ch. 5 (RNEA).
C. G. Atkeson, C. H. An, J. M. Hollerbach, "Estimation of inertial parameters of manipulator loads
and links", IJRR 5(3):101–119, 1986 (the regressor form of Newton–Euler).
"""

from __future__ import annotations

import ctypes
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

__all__ = ["Element", "CompiledChain", "compile_chain", "chain_regressor", "chain_torque", "body_wrench_regressor", "N_BODY_PARAMS",
           "BODY_PARAM_NAMES"]

N_BODY_PARAMS = 10
BODY_PARAM_NAMES = ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz", "mx", "my", "mz", "m")
_I, _H, _M = slice(0, 6), slice(6, 9), 9  # column groups of a body block

# samples per chunk: the chunk's buffers (about 3 kB per sample for 6 joints) stay in cache
_CHUNK = 1024


@dataclass(frozen=True)
class Element:
    """One joint and the body it moves.

    kind : {"rotary", "linear"}
    pre : ndarray, shape (4, 4)
        ``A``: parent body frame -> joint frame at q = 0.
    axis : ndarray, shape (3,)
        Unit joint axis ``u`` in the joint frame.
    post : ndarray, shape (4, 4)
        ``B``: moved joint frame -> body frame (identity for URDF and modified DH).
    """

    kind: str
    pre: np.ndarray
    axis: np.ndarray
    post: np.ndarray


@dataclass(frozen=True)
class CompiledChain:
    """Constant matrices of every element: ``R(q) = R0 + s·R1 + (1 - c)·R2``, ``p(q) = t0 + s·t1 + (1 - c)·t2``
    for rotary joints (s = sin q, c = cos q) and ``R = R0``, ``p = t0 + q·t1`` for linear ones;
    ``screw`` (n, 6) = joint screw (angular, linear) in body coordinates."""

    rotary: tuple[bool, ...]
    R0: np.ndarray
    R1: np.ndarray
    R2: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    screw: np.ndarray
    kernel_args: tuple = ()
    """constant arguments of the compiled kernel (see :func:`_kernel_constants`)"""
    XbT: tuple = ()
    """per body: ``X^T`` (flattened, 36) = ``basis[:, basis_cols] @ XbT``"""
    basis_cols: tuple = ()
    crmT: tuple = ()
    """per body: ``crm(S)^T`` (6, 6)"""

    @property
    def n(self) -> int:
        return len(self.rotary)


def _skew(u: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])


def compile_chain(elements: list[Element] | tuple[Element, ...]) -> CompiledChain:
    """Precompute the constant matrices of :class:`CompiledChain` from the elements."""
    rot, R0, R1, R2, t0, t1, t2, screw = [], [], [], [], [], [], [], []
    for e in elements:
        RA, pA = e.pre[:3, :3], e.pre[:3, 3]
        RB, pB = e.post[:3, :3], e.post[:3, 3]
        u = np.asarray(e.axis, dtype=float)
        u = u / np.linalg.norm(u)
        if e.kind == "rotary":
            K = _skew(u)
            K2 = K @ K
            rot.append(True)
            R0.append(RA @ RB), R1.append(RA @ K @ RB), R2.append(RA @ K2 @ RB)
            t0.append(pA + RA @ pB), t1.append(RA @ K @ pB), t2.append(RA @ K2 @ pB)
            screw.append(np.concatenate([RB.T @ u, -RB.T @ np.cross(pB, u)]))
        else:
            rot.append(False)
            R0.append(RA @ RB), R1.append(np.zeros((3, 3))), R2.append(np.zeros((3, 3)))
            t0.append(pA + RA @ pB), t1.append(RA @ u), t2.append(np.zeros(3))
            screw.append(np.concatenate([np.zeros(3), RB.T @ u]))
    arr = lambda xs, shape: np.array(xs, dtype=float).reshape((len(elements),) + shape)  # noqa: E731
    ch = CompiledChain(tuple(rot), arr(R0, (3, 3)), arr(R1, (3, 3)), arr(R2, (3, 3)), arr(t0, (3,)),
                       arr(t1, (3,)), arr(t2, (3,)), arr(screw, (6,)))
    XbT, cols = [], []
    for i in range(ch.n):
        M = _transform_basis(ch, i)
        # keep the basis functions with a non-zero matrix: URDF and modified-DH joints have a constant
        # joint-frame origin, so only 1, sin q, 1 - cos q remain
        used = [r for r in range(M.shape[0]) if r == 0 or np.any(M[r])]
        # stored transposed: the recursion multiplies row vectors, R_i = R_{i-1} @ X_i^T
        XbT.append(np.ascontiguousarray(M[used].reshape(len(used), 6, 6).transpose(0, 2, 1).reshape(len(used), 36)))
        cols.append(used if used != list(range(M.shape[0])) else slice(None))
    ch = replace(ch, XbT=tuple(XbT), basis_cols=tuple(cols), crmT=tuple(_crm(sc).T.copy() for sc in ch.screw))
    return replace(ch, kernel_args=_kernel_constants(ch))


# ---------------------------------------------------------------------------- constant linear maps

def _crm(s: np.ndarray) -> np.ndarray:
    """6 x 6 motion cross-product matrix ``crm(s)``: ``crm(s) @ m = s x m`` for spatial motion vectors."""
    w, v = _skew(s[:3]), _skew(s[3:])
    out = np.zeros((6, 6))
    out[:3, :3] = w
    out[3:, :3] = v
    out[3:, 3:] = w
    return out


def _phi_map() -> np.ndarray:
    """Constant ``(12, 60)`` map from the body features to the spatial force of unit parameters.

    Features ``phi = [dw (3), a_c (3), w_a w_b for ab = xx, xy, xz, yy, yz, zz]``; the result,
    reshaped to ``(6, 10)``, holds per parameter the force ``[moment about the origin; force]``::

        n = I dw + w x (I w) + h x a_c,       F = m a_c + dw x h + w x (w x h)

    Every term is linear in ``dw``, ``a_c`` and ``W = w w^T`` (``w x (E w)``: ``eps_abc E_cd W_bd``;
    ``w x (w x e) = W e - tr(W) e``), so the map is built by evaluating it on unit features.
    """
    eps = np.zeros((3, 3, 3))
    eps[0, 1, 2] = eps[1, 2, 0] = eps[2, 0, 1] = 1.0
    eps[0, 2, 1] = eps[2, 1, 0] = eps[1, 0, 2] = -1.0
    pairs = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    units = []
    for k in range(6):  # unit inertia matrices in parameter order Ixx, Ixy, Ixz, Iyy, Iyz, Izz
        E = np.zeros((3, 3))
        a, b = pairs[k]
        E[a, b] = E[b, a] = 1.0
        units.append(E)
    M = np.zeros((12, 6, 10))
    for f in range(12):
        dw, ac, W = np.zeros(3), np.zeros(3), np.zeros((3, 3))
        if f < 3:
            dw[f] = 1.0
        elif f < 6:
            ac[f - 3] = 1.0
        else:
            a, b = pairs[f - 6]
            W[a, b] = W[b, a] = 1.0
        M[f, 3:, _M] = ac                                          # m
        for k in range(3):                                         # h = m c
            e = np.eye(3)[k]
            M[f, :3, _H.start + k] = np.cross(e, ac)
            M[f, 3:, _H.start + k] = np.cross(dw, e) + W @ e - np.trace(W) * e
        for k, E in enumerate(units):                              # inertia about the origin
            M[f, :3, _I.start + k] = E @ dw + np.einsum("abc,cd,bd->a", eps, E, W)
    return M.reshape(12, 60)


_phi = lru_cache(maxsize=1)(_phi_map)   # (the numpy path's; built when first needed)


def body_wrench_regressor(w: np.ndarray, dw: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Newton–Euler wrench of a rigid body per standard parameter, in the body frame.

    Parameters
    ----------
    w, dw : ndarray, shape (..., 3)
        Angular velocity [rad/s] and acceleration [rad/s²] of the body, body coordinates.
    a : ndarray, shape (..., 3)
        Classical acceleration of the body-frame origin minus gravity [m/s²], body coordinates.

    Returns
    -------
    ndarray, shape (..., 6, 10)
        ``[moment about the origin; force]`` the body needs, per parameter
        ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]``: ``n = I dw + w x (I w) + h x a``,
        ``F = m a + dw x h + w x (w x h)`` (the same map the chain regressor uses).
    """
    shape = np.broadcast_shapes(w.shape, dw.shape, a.shape)[:-1]
    feat = np.empty(shape + (12,))
    feat[..., 0:3] = dw
    feat[..., 3:6] = a
    wx, wy, wz = w[..., 0], w[..., 1], w[..., 2]
    feat[..., 6], feat[..., 7], feat[..., 8] = wx * wx, wx * wy, wx * wz
    feat[..., 9], feat[..., 10], feat[..., 11] = wy * wy, wy * wz, wz * wz
    return (feat @ _phi()).reshape(shape + (6, N_BODY_PARAMS))


def _transform_basis(ch: CompiledChain, i: int) -> np.ndarray:
    """Constant ``(n_basis, 36)`` such that the 6 x 6 motion transform parent -> body ``i`` is
    ``X(q) = basis(q) @ M`` with ``basis = [1, s, c1, s^2, s c1, c1^2]`` (rotary, c1 = 1 - cos q)
    or ``[1, q]`` (linear)."""
    Rs = (ch.R0[i], ch.R1[i], ch.R2[i])
    ts = (ch.t0[i], ch.t1[i], ch.t2[i])

    def block(R, Rp):
        X = np.zeros((6, 6))
        X[:3, :3] = R.T
        X[3:, 3:] = R.T
        X[3:, :3] = -Rp
        return X

    if ch.rotary[i]:
        # X = [[R^T, 0], [-R^T [p]x, R^T]], R and p linear in (1, s, c1): the product is quadratic
        idx = {(0,): 0, (1,): 1, (2,): 2, (1, 1): 3, (1, 2): 4, (2, 2): 5, (0, 0): 0, (0, 1): 1, (0, 2): 2}
        M = np.zeros((6, 6, 6))
        for a in range(3):
            M[a] += block(Rs[a], np.zeros((3, 3)))
            for b in range(3):
                key = tuple(sorted((a, b))) if a and b else ((max(a, b),) if a or b else (0,))
                M[idx[key]] += block(np.zeros((3, 3)), Rs[a].T @ _skew(ts[b]))
        return M.reshape(6, 36)
    M = np.zeros((2, 6, 6))
    M[0] = block(ch.R0[i], ch.R0[i].T @ _skew(ch.t0[i]))
    M[1] = block(np.zeros((3, 3)), ch.R0[i].T @ _skew(ch.t1[i]))
    return M.reshape(2, 36)


# ---------------------------------------------------------------------------- regressor

def chain_regressor(chain: CompiledChain, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, gravity: np.ndarray,
                    out: np.ndarray | None = None) -> np.ndarray:
    """Joint-torque regressor of the chain, ``tau = Y @ pi``.

    Parameters
    ----------
    chain : CompiledChain
    q, qd, qdd : ndarray, shape (N, n)
        Element positions [rad or m], velocities, accelerations (SI).
    gravity : ndarray, shape (3,)
        Gravitational acceleration vector in the base frame [m/s^2], e.g. ``(0, 0, -9.81)``.
    out : ndarray, shape (N, n, 10 n), optional
        C-contiguous output buffer (overwritten).

    Returns
    -------
    Y : ndarray, shape (N, n, 10 n)
        Column block ``10 i .. 10 i + 9`` holds body ``i``'s parameters in :data:`BODY_PARAM_NAMES` order.
    """
    N, n = q.shape
    P = N_BODY_PARAMS * n
    if out is None:
        out = np.empty((N, n, P))
    gravity = np.asarray(gravity, dtype=float)
    if N and _kernel_regressor(chain, q, qd, qdd, gravity, out):
        return out
    ws = _Workspace(min(N, _CHUNK), n)
    for k0 in range(0, N, _CHUNK):
        k1 = min(N, k0 + _CHUNK)
        _chunk(chain, ws, q[k0:k1], qd[k0:k1], qdd[k0:k1], gravity, out[k0:k1])
    return out


# OpenBLAS runs a GEMM on several threads above m*n*k = 65536 * 4; on shared cores that is much
# slower than one thread for these thin products, so they are split into row blocks below it.
_GEMM_MNK = 65536 * 4


def _gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a @ b`` for ``a`` (C, k) and a constant ``b`` (k, m), in single-threaded row blocks."""
    k, m = b.shape
    step = max(1, _GEMM_MNK // (k * m))
    for r in range(0, a.shape[0], step):
        np.matmul(a[r:r + step], b, out=out[r:r + step])


class _Workspace:
    """Buffers reused by every chunk: fresh large temporaries cost page faults on each call.

    Products with constant matrices are 2-D GEMMs (:func:`_gemm`); products of per-sample matrices
    are stacked ``matmul`` on contiguous per-sample blocks. Spatial vectors are kept as rows:
    ``R[:, 0]`` is the body's spatial velocity, ``R[:, 1]`` its acceleration and ``R[:, 2 + j]``
    joint ``j``'s screw, in body coordinates, so one ``R @ X^T`` moves all of them to the next body
    and ``R[:, 2:] @ Phi`` is the regressor block."""

    def __init__(self, C: int, n: int) -> None:
        self.basis = np.empty((C, 6))
        self.basis[:, 0] = 1.0
        self.XT = np.empty((C, 36))
        self.R = [np.empty((C, 2 + n, 6)), np.empty((C, 2 + n, 6))]
        self.t6 = np.empty((C, 6))
        self.t3 = np.empty((C, 3))
        self.feat = np.empty((C, 12))
        self.phi = np.empty((C, 60))
        self.Y = np.zeros((C, n, N_BODY_PARAMS * n))  # blocks below the diagonal stay zero


def _chunk(ch: CompiledChain, ws: _Workspace, q, qd, qdd, gravity, out) -> None:
    C, n = q.shape
    XbT, crmT, cols_b = ch.XbT, ch.crmT, ch.basis_cols
    basis, feat, t6, t3, Y = ws.basis[:C], ws.feat[:C], ws.t6[:C], ws.t3[:C], ws.Y[:C]
    phi = ws.phi[:C].reshape(C, 6, N_BODY_PARAMS)
    XT = ws.XT[:C].reshape(C, 6, 6)
    prev = None
    for i in range(n):
        qi = q[:, i]
        s, c1 = basis[:, 1], basis[:, 2]
        if ch.rotary[i]:
            np.sin(qi, out=s)
            np.cos(qi, out=c1)
            np.subtract(1.0, c1, out=c1)
            np.multiply(s, s, out=basis[:, 3])
            np.multiply(s, c1, out=basis[:, 4])
            np.multiply(c1, c1, out=basis[:, 5])
            _gemm(basis[:, cols_b[i]], XbT[i], ws.XT[:C])
        else:
            s[:] = qi
            _gemm(basis[:, :2], XbT[i], ws.XT[:C])
        si = ch.screw[i]
        R = ws.R[i % 2][:C]
        if prev is None:                  # base at rest, A_0 = (0, -g)
            R[:, 0] = 0.0
            np.matmul(-gravity, XT[:, 3:, :], out=R[:, 1])
        else:                             # V, A and the screws of joints 0..i-1 into body i
            np.matmul(prev[:, : i + 2], XT, out=R[:, : i + 2])
        v0, a0 = R[:, 0], R[:, 1]
        np.multiply(qd[:, i, None], si, out=t6)
        v0 += t6
        np.multiply(qdd[:, i, None], si, out=t6)
        a0 += t6
        if prev is not None:              # + V_i x S_i qd_i = -(S_i x V_i) qd_i
            _gemm(v0, crmT[i], t6)
            t6 *= qd[:, i, None]
            a0 -= t6
        R[:, 2 + i] = si
        prev = R
        w, v = v0[:, :3], v0[:, 3:]
        feat[:, 0:6] = a0
        wx, wy, wz = w[:, 0], w[:, 1], w[:, 2]
        vx, vy, vz = v[:, 0], v[:, 1], v[:, 2]
        t = t3[:, 0]
        for k, (a1, b1, a2, b2) in enumerate(((wy, vz, wz, vy), (wz, vx, wx, vz), (wx, vy, wy, vx))):
            np.multiply(a1, b1, out=t)     # a_c = a + w x v
            feat[:, 3 + k] += t
            np.multiply(a2, b2, out=t)
            feat[:, 3 + k] -= t
        np.multiply(wx, wx, out=feat[:, 6])
        np.multiply(wx, wy, out=feat[:, 7])
        np.multiply(wx, wz, out=feat[:, 8])
        np.multiply(wy, wy, out=feat[:, 9])
        np.multiply(wy, wz, out=feat[:, 10])
        np.multiply(wz, wz, out=feat[:, 11])
        _gemm(feat, _phi(), ws.phi[:C])
        cols = slice(N_BODY_PARAMS * i, N_BODY_PARAMS * (i + 1))
        np.matmul(R[:, 2: 3 + i], phi, out=Y[:, : i + 1, cols])
    out[...] = Y                          # one streaming copy of the cache-resident chunk


# ---------------------------------------------------------------------------- compiled kernel

# Samples per thread below which one thread does all the work (thread start-up is ~50 us).
_MIN_SAMPLES_PER_THREAD = 2000
_MAX_JOINTS_KERNEL = 32


@lru_cache(maxsize=1)
def _load_kernel():
    """The compiled kernel's C function, or None (not built, or ``DYNID_NO_KERNEL=1``)."""
    from .._ckernel import c_function

    P, I = ctypes.c_void_p, ctypes.c_int
    return c_function("dynid.models._rnea_kernel", "dynid_chain_regressor", [I, P, P, P, P, P, P, ctypes.c_long, P, P, P, P], I)


@lru_cache(maxsize=1)
def _load_torque_kernel():
    """The compiled kernel's fused torque ``Y(q, qd, qdd) @ pi`` (no regressor stored), or None."""
    from .._ckernel import c_function

    P, I = ctypes.c_void_p, ctypes.c_int
    return c_function("dynid.models._rnea_kernel", "dynid_chain_torque",
                      [I, P, P, P, P, P, P, ctypes.c_long, P, P, P, P, P], I)


def chain_torque(chain: CompiledChain, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, gravity: np.ndarray,
                 pi: np.ndarray) -> np.ndarray | None:
    """Joint torque ``chain_regressor(...) @ pi`` ``(N, n)`` by the compiled kernel's recursive Newton-Euler pass
    (forward for the bodies' motion, backward for their forces: O(n) per sample, no regressor stored; equal to
    the product to round-off), split over threads; None when the kernel is unavailable (the caller then
    multiplies the regressor)."""
    fn = _load_torque_kernel() if _load_kernel() is not None else None
    if fn is None or not chain.kernel_args or chain.n > _MAX_JOINTS_KERNEL:
        return None
    pi = np.ascontiguousarray(pi, dtype=float)
    tau = np.empty(q.shape)
    n = q.shape[1]
    _split_over_threads(fn, chain, q, qd, qdd, gravity, lambda k0: (pi.ctypes.data, tau.ctypes.data + k0 * n * 8),
                        "torque")
    return tau


def kernel_available() -> bool:
    """True when the compiled regressor kernel is built and enabled."""
    return _load_kernel() is not None


def _kernel_threads(N: int) -> int:
    """Threads for ``N`` samples: :func:`dynid.threads.num_threads`, fewer for small batches."""
    from ..threads import num_threads

    return max(1, min(num_threads(), N // _MIN_SAMPLES_PER_THREAD))


def _kernel_constants(ch: CompiledChain) -> tuple:
    """Arrays the kernel reads: padded basis matrices (X^T per basis function), their masks, screws, crm^T."""
    n = ch.n
    T = np.zeros((n, 6, 18))
    mask = np.zeros((n, 6), dtype=np.intc)
    for i in range(n):
        XT = _transform_basis(ch, i).reshape(-1, 6, 6).transpose(0, 2, 1)   # X^T per basis function
        E, B = XT[:, :3, :3], XT[:, :3, 3:]
        if np.any(XT[:, 3:, :3]) or not np.array_equal(E, XT[:, 3:, 3:]):
            return ()                                     # not a rigid motion transform: numpy path
        T[i, : len(XT)] = np.concatenate([E.reshape(-1, 9), B.reshape(-1, 9)], axis=1)
        mask[i, : len(XT)] = np.any(T[i, : len(XT)] != 0.0, axis=1)
        mask[i, 0] = 1
    return (np.array(ch.rotary, dtype=np.intc), T, mask, np.ascontiguousarray(ch.screw, dtype=float),
            np.ascontiguousarray(np.array(ch.crmT).reshape(n, 36)))


def _split_over_threads(fn, ch: CompiledChain, q, qd, qdd, gravity, outputs, what: str) -> None:
    """Call the kernel function ``fn`` on the samples of ``q, qd, qdd`` split over threads (ctypes releases
    the GIL during the call); ``outputs(k0)``: its trailing pointer arguments for the samples from ``k0``."""
    q, qd, qdd = (np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd))
    g = np.ascontiguousarray(gravity, dtype=float)
    const = (ch.n, *(a.ctypes.data for a in ch.kernel_args), g.ctypes.data)
    N, n = q.shape

    def run(k0: int, k1: int) -> int:
        k0, k1 = int(k0), int(k1)
        off = k0 * n * 8
        return fn(*const, k1 - k0, q.ctypes.data + off, qd.ctypes.data + off, qdd.ctypes.data + off, *outputs(k0))

    nt = _kernel_threads(N)
    if nt == 1:
        status = [run(0, N)]
    else:
        edges = np.linspace(0, N, nt + 1).astype(int)
        with ThreadPoolExecutor(nt - 1) as ex:              # the first part on this thread: one thread fewer to start
            others = ex.map(run, edges[1:-1], edges[2:])   # (submitted now, collected below)
            status = [run(edges[0], edges[1]), *others]
    if any(status):
        raise RuntimeError(f"dynid: the compiled {what} kernel rejected its arguments")


def _kernel_regressor(ch: CompiledChain, q, qd, qdd, gravity, out) -> bool:
    """Fill ``out`` with the compiled kernel, split over threads; False if the kernel is unavailable."""
    fn = _load_kernel()
    if fn is None or not ch.kernel_args or ch.n > _MAX_JOINTS_KERNEL or not out.flags.c_contiguous:
        return False
    row = q.shape[1] * out.shape[2] * out.itemsize
    _split_over_threads(fn, ch, q, qd, qdd, gravity, lambda k0: (out.ctypes.data + k0 * row,), "regressor")
    return True
