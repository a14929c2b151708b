"""Simulate an identification run: forward dynamics of any :class:`~dynid.models.Plant` under a
cascaded position/velocity servo, with friction, torque noise, torque saturation and encoder
quantisation, sampled at the controller cycle into a :class:`~dynid.recording.Recording`.

Forward dynamics come from the model interface itself: with ``tau = Y(q, qd, qdd) θ + offset``,
``M(q)[:, i] = tau(q, 0, e_i) − tau(q, 0, 0)`` and ``h(q, qd) = tau(q, qd, 0)``, evaluated in one
batched regressor call per integration step. So every model that can be identified can also be
simulated, with no model-specific code. Coulomb friction in the plant is ``Fc·tanh(qd/ε_j)`` with
ε_j a small fraction (``coulomb_smoothing``) of each joint's peak commanded speed, so it is a step
for every velocity identification uses; its stiffness is integrated linearly-implicitly
(``(M + h·∂f/∂qd)·Δqd = h·(u − bias)``), which keeps the step stable however sharp the friction is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ConfigError
from ..models.base import Plant
from ..recording import Recording
from .motion import Motion

__all__ = ["SimOptions", "simulate", "forward_dynamics_terms"]


@dataclass(frozen=True)
class SimOptions:
    """Simulation settings.

    sample_period : float
        Controller cycle = recording period [s].
    substeps : int
        Integration (and drive velocity loop) steps per controller cycle.
    noise : float
        Torque noise standard deviation as a fraction of each joint's peak torque (0.005 = 0.5 %).
    encoder_bits : int
        Rotary encoder resolution per revolution (2**bits counts); linear axes use ``linear_resolution``.
    linear_resolution : float
        [m] per count.
    torque_limit : sequence of float, optional
        Drive torque saturation per joint [N m or N]: the applied torque is clipped (the motion then
        lags the command, but torque and motion stay consistent).
    feedback_limit : sequence of float, optional
        Range of the torque feedback per joint: the *recorded* torque is clipped while the drive keeps
        delivering what the load needs — the plateau softMC describes for motions that are too fast
        ("tfb flattens while tcmd continues"), e.g. a current feedback scaled to MIPEAK.
    bandwidth_hz : float
        Velocity-loop bandwidth; the position loop is 5 times slower.
    coulomb_smoothing : float
        Width of the Coulomb transition ``tanh(qd/ε_j)`` as a fraction of each joint's peak
        commanded speed (ε_j = coulomb_smoothing × max|qd_cmd_j|).
    """

    sample_period: float = 1e-3
    substeps: int = 2
    noise: float = 0.005
    encoder_bits: int = 20
    linear_resolution: float = 1e-6
    torque_limit: Sequence[float] | None = None
    feedback_limit: Sequence[float] | None = None
    bandwidth_hz: float = 30.0
    coulomb_smoothing: float = 0.001

    def __post_init__(self) -> None:
        if self.sample_period <= 0 or self.substeps < 1:
            raise ConfigError("sample_period must be positive and substeps >= 1")
        if self.noise < 0:
            raise ConfigError("noise must be >= 0")


def forward_dynamics_terms(plant: Plant, theta: np.ndarray, q: np.ndarray, qd: np.ndarray,
                           sign: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mass matrix ``M (n, n)`` and bias torque ``h (n,)`` at one state, from the regressor.

    ``h`` includes gravity, Coriolis/centrifugal terms, payload and friction (with ``sign`` as the
    Coulomb sign if given).
    """
    n = plant.n_joints
    Q = np.repeat(q[None, :], n + 2, axis=0)
    QD = np.zeros((n + 2, n))
    QD[0] = qd
    QDD = np.zeros((n + 2, n))
    QDD[2:] = np.eye(n)
    S = np.zeros((n + 2, n))
    S[0] = np.sign(qd) if sign is None else sign
    tau = plant.torque(theta, Q, QD, QDD, sign=S)
    M = (tau[2:] - tau[1]).T
    return M, tau[0]


def simulate(plant: Plant, theta, motion: Motion, options: SimOptions = SimOptions(), *, seed: int | None = 0,
             external_torque: Callable[[float], np.ndarray] | None = None) -> Recording:
    """Simulate the robot following ``motion`` and record ``t, q, tau`` at the controller cycle.

    Parameters
    ----------
    plant : Plant
        The true robot (model + friction).
    theta : array-like, (n_params,)
        True parameters, model then friction (physical sign convention).
    motion : Motion
        Commanded motion; the robot starts at rest at ``motion.command(0)``.
    options : SimOptions
    seed : int, optional
        Seed of the torque noise.
    external_torque : callable(t) -> (n_joints,), optional
        Disturbance torque acting on the joints (collisions), not measured by the drive.

    Returns
    -------
    Recording
        ``t`` starts at 0 when recording starts (after ``motion.settle_s``); ``q`` quantised; ``tau``
        the drive torque with noise; metadata says it is simulated.
    """
    theta = np.asarray(theta, dtype=float)
    n = plant.n_joints
    if motion.n_joints != n:
        raise ConfigError(f"motion has {motion.n_joints} joints, model {plant.model.name!r} has {n}")
    rng = np.random.default_rng(seed)
    Ts = options.sample_period
    h = Ts / options.substeps
    settle = getattr(motion, "settle_s", 0.0)
    n_cycles = int(round(motion.duration / Ts))
    n_steps = n_cycles * options.substeps
    t_steps = np.arange(n_steps + 1) * h
    q_ref, qd_ref, qdd_ref = motion.command(t_steps)
    res = np.array([2 * np.pi / 2**options.encoder_bits if j.kind == "rotary" else options.linear_resolution
                    for j in plant.model.joints])
    eps = np.maximum(options.coulomb_smoothing * np.abs(qd_ref).max(axis=0), 1e-9)
    theta_f = theta[plant.n_model:]
    fric = plant.friction
    viscous = np.asarray(fric.values_by_term(theta_f).get("viscous", np.zeros(n)), dtype=float)
    lim = None if options.torque_limit is None else np.asarray(options.torque_limit, dtype=float)

    q = q_ref[0].copy()
    qd = np.zeros(n)
    M0, _ = forward_dynamics_terms(plant, theta, q, qd)
    m_diag = np.maximum(np.abs(np.diag(M0)), 1e-6)
    wv = 2 * np.pi * options.bandwidth_hz
    kv = m_diag * wv
    ki = kv * wv / 5.0
    kp = wv / 5.0
    integ = np.zeros(n)
    q_meas_prev = np.round(q / res) * res
    v_est = np.zeros(n)
    alpha = min(1.0, h / 5e-4)  # velocity estimate: first-order filter, 0.5 ms
    rec_every = options.substeps
    n_rec0 = int(round(settle / Ts))
    t_out, q_out = [], []
    u_hist = np.zeros((n_steps, n))
    for k in range(n_steps):  # time stepping of the plant is inherently sequential
        q_meas = np.round(q / res) * res
        v_est += alpha * ((q_meas - q_meas_prev) / h - v_est)
        q_meas_prev = q_meas
        v_cmd = qd_ref[k] + kp * (q_ref[k] - q_meas)
        ev = v_cmd - v_est
        u = kv * ev + ki * integ
        if lim is not None:
            u_sat = np.clip(u, -lim, lim)
            integ += np.where(u_sat == u, ev * h, 0.0)  # anti-windup: freeze the integrator when saturated
            u = u_sat
        else:
            integ += ev * h
        u_hist[k] = u
        if k % rec_every == 0 and k // rec_every >= n_rec0:
            t_out.append(t_steps[k] - settle)
            q_out.append(q_meas)
        M, bias = forward_dynamics_terms(plant, theta, q, qd, np.tanh(qd / eps))
        drive = u if external_torque is None else u + np.asarray(external_torque(t_steps[k] - settle), dtype=float)
        # stiff part of d(friction)/d(qd) (the Coulomb transition; the linear viscous term stays explicit
        # so the discrete dynamics match the central differences of the recorded positions): central
        # difference of the friction block, diagonal since each joint's friction depends on its own velocity
        dv = 1e-3 * eps
        pm = np.stack([qd + dv, qd - dv])
        f = fric.columns(pm, np.zeros_like(pm), sign=np.tanh(pm / eps)) @ theta_f
        stiff = np.maximum((f[0] - f[1]) / (2 * dv) - viscous, 0.0)
        qd = qd + np.linalg.solve(M + h * np.diag(stiff), h * (drive - bias))
        q = q + h * qd
    t = np.array(t_out)
    qs = np.array(q_out)
    # The drive reports the torque averaged over one cycle (current-loop averaging). With the
    # semi-implicit Euler step, u_k is what the central second difference of q at t_k sees, so the
    # window is centred on u_k: a trapezoid over k - s/2 .. k + s/2 (no delay, and it cancels
    # substep-rate jitter that plain sampling would alias into the record).
    s = options.substeps
    m = s // 2
    w = np.ones(2 * m + 1)
    if s % 2 == 0:
        w[0] = w[-1] = 0.5
    w /= w.sum()
    kk = (n_rec0 + np.arange(len(t_out))) * s
    idx = np.clip(kk[:, None] + np.arange(-m, m + 1)[None, :], 0, n_steps - 1)
    tau = np.tensordot(u_hist[idx], w, axes=([1], [0]))
    if options.noise > 0:
        peak = np.abs(tau).max(axis=0)
        tau = tau + rng.normal(size=tau.shape) * options.noise * peak
    if options.feedback_limit is not None:
        fl = np.asarray(options.feedback_limit, dtype=float)
        tau = np.clip(tau, -fl, fl)
    meta = {"source": "dynid simulator", "model": plant.model.name, "noise": f"{options.noise}",
            "sample_period_s": f"{Ts}"}
    return Recording(t, qs, tau, meta=meta, source=f"<simulated {plant.model.name}>")
