"""The torque/kinematics delay of a fit: refits with the torque shifted (the misalignment diagnosis of
:mod:`dynid.identification.diagnostics` and ``--align``, :func:`dynid.identification.select.aligned`)."""

from __future__ import annotations

import numpy as np

__all__ = ["estimate_delay", "friction_sign", "MIN_DELAY_SAMPLES", "DELAY_SEARCH_SAMPLES"]

MIN_DELAY_SAMPLES = 0.5
"""``--align`` shifts the torque from this many samples of estimated delay."""
DELAY_SEARCH_SAMPLES = 8
"""Shifts tried: ``-DELAY_SEARCH_SAMPLES..DELAY_SEARCH_SAMPLES`` samples."""


def friction_sign(cond) -> np.ndarray:
    """``sign(qd)`` for the Coulomb columns as the measured torque carries it, ``(N, n_joints + n_directions)``.

    The sign of the velocity of the *recorded* positions (central differences), low-passed with the
    torque's filter when the conditioning smooths the sign (parallel filtering), then the
    ``sign_directions`` of coupled motors likewise. The conditioning's :attr:`Conditioned.sign` is the
    sign of the velocity of the *filtered* positions instead: at a reversal of a friction-dominated joint
    the Coulomb step kinks the velocity (the acceleration jumps by ``2·Fc/M``), and the low-passed
    velocity crosses zero later than the true one — on dynid's simulated linear2 run by 0.4 samples at
    15 Hz — so its friction step lags the measured torque's. That lag is not in the recording, and the
    delay estimate must not read it as one. Recordings whose time base was repaired (rows that are not
    one controller cycle apart) keep the conditioning's sign.
    """
    from ..signal.conditioning import lowpass

    if cond.time_base.get("repaired"):
        return cond.sign
    dt = cond.sample_period_s
    v = np.gradient(np.asarray(cond.q_raw, dtype=float), dt, axis=0)
    sign = np.sign(v)
    if cond.options.sign_directions:
        U = np.array(cond.options.sign_directions, dtype=float).reshape(-1, v.shape[1])
        sign = np.concatenate([sign, np.sign(v @ U.T)], axis=1)
    if cond.options.smooth_sign:
        sign = lowpass(sign, cond.cutoff_hz, dt, cond.options.filter_order)
    return sign


def estimate_delay(ident, max_shift: int = DELAY_SEARCH_SAMPLES, max_rows: int = 6000, *, curve: bool = False,
                   sign: np.ndarray | None = None):
    """Time shift of the measured torque against the kinematics that fits the model best.

    Refits the base parameters with the torque shifted by ``-max_shift..max_shift`` samples (on a
    subsample of at most ``max_rows`` rows) and returns ``(delay_s, gain)``: the shift of least
    residual (parabolic interpolation; positive = torque lags) and the relative residual reduction
    against no shift. A fit absorbs much of a misalignment into friction and inertia, which is why the
    residual of the unshifted fit alone cannot reveal it. The Coulomb columns use ``sign`` (default
    :func:`friction_sign`: the recorded velocity's sign, whose step is where the measured torque's is).
    Rows within one filter length of the ends are left out (the filter's edge transient).
    """
    cond, plant = ident.cond, ident.plant
    N, n = cond.q.shape
    sign = friction_sign(cond) if sign is None else sign
    edge = max_shift + min(int(np.ceil(1.0 / (cond.cutoff_hz * cond.sample_period_s))), max(0, N // 4 - max_shift))
    step = max(1, int(np.ceil((N - 2 * edge) * n / max_rows)))
    idx = np.arange(edge, N - edge, step)
    # rows near each joint's torque extremes are left out: a clipped (saturated) feedback there would
    # otherwise pass for a delay
    peak = np.abs(cond.tau).max(axis=0)
    mask = cond.moving[idx] & (np.abs(cond.tau[idx]) < 0.95 * peak)
    Y = plant.regressor(cond.q[idx], cond.qd[idx], cond.qdd[idx], sign=sign[idx])
    known = ident.theta.copy()
    known[ident.base.independent] = 0.0
    base_known = Y @ known + plant.offset(cond.q[idx], cond.qd[idx], cond.qdd[idx])
    W = Y[..., ident.base.independent][mask]
    W = W[:, ident.base_excited] if W.shape[1] == ident.base_excited.size else W
    scale = np.linalg.norm(W, axis=0)
    scale[scale == 0] = 1.0
    Q, _ = np.linalg.qr(W / scale)
    w = ident.lsq.weights[np.nonzero(mask)[1]]
    shifts = np.arange(-max_shift, max_shift + 1)
    # the 2*max_shift+1 refits at once: the shifted torques as columns, projected out together
    rows, cols = np.nonzero(mask)
    Ys = cond.tau[idx[rows][:, None] + shifts[None, :], cols[:, None]] - base_known[rows, cols][:, None]
    r = Ys - Q @ (Q.T @ Ys)
    r *= w[:, None]
    ssr = np.einsum("ij,ij->j", r, r)
    k = int(np.argmin(ssr))
    best = float(shifts[k])
    if 0 < k < shifts.size - 1:
        a, b, c = ssr[k - 1], ssr[k], ssr[k + 1]
        den = a - 2 * b + c
        if den > 0:
            best += 0.5 * (a - c) / den
    s0 = ssr[max_shift]
    gain = 1.0 - float(ssr[k]) / s0 if s0 > 0 else 0.0
    # tau[k + shift] matches the kinematics at k: the torque lags by `shift` samples
    if curve:
        rel = ssr / s0 if s0 > 0 else np.ones_like(ssr)
        return best * cond.sample_period_s, gain, (shifts * cond.sample_period_s, rel)
    return best * cond.sample_period_s, gain
