"""Simulate an identification run: forward dynamics of any :class:`~dynid.models.Plant` under a
cascaded position/velocity servo, with friction, torque noise, torque saturation and encoder
quantisation, sampled at the controller cycle into a :class:`~dynid.recording.Recording`.

The run is the closed loop of :mod:`dynid.sim.closed_loop` (the one integrator of dynid) with an
ideal drive: its loops follow the motion at once (no fieldbus delay), the servo is tuned on the
mass-matrix diagonal at the start pose, and the recorded torque is centred on the recorded
position (see :attr:`~dynid.sim.closed_loop.DriveOptions.feedback_window`). Every model that can be
identified can be simulated: the rigid-body terms come from the model's compiled single-sample
path, or from its batch regressor for models that do not compile. Coulomb friction in the plant is
``Fc·tanh(qd/ε_j)`` with ε_j a small fraction (``coulomb_smoothing``) of each joint's peak commanded
speed, so it is a step for every velocity identification uses (coupled motors: ``tanh(u_m·qd/ε_m)``,
``ε_m = |u_m|·ε``); its stiffness is integrated linearly-implicitly
(``(M + h·∂f/∂qd)·Δqd = h·(u − bias)``), which keeps the step stable however sharp the friction is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ConfigError
from ..models.base import Plant
from ..recording import Recording
from .closed_loop import Command, DriveOptions, ServoGains, joint_inertia, run_closed_loop
from .motion import Motion

__all__ = ["SimOptions", "simulate"]

_VELOCITY_FILTER_S = 5e-4
"""Time constant of the drive's velocity estimate (first-order filter of the encoder difference) [s]."""
_LOOP_RATIO = 5.0
"""Velocity-loop crossover over the position-loop gain, and over the PI zero (:meth:`ServoGains.tune`)."""


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


def simulate(plant: Plant, theta, motion: Motion, options: SimOptions = SimOptions(), *, seed: int | None = 0,
             external_torque: Callable[[float], np.ndarray] | None = None) -> Recording:
    """Simulate the robot following ``motion`` and record ``t, q, tau`` at the controller cycle.

    The servo: a P position loop with velocity feed-forward (gain ``ωv/5``) feeding a PI velocity
    loop (``kv = J·ωv``, ``ki = kv·ωv/5``, ``ωv = 2π·bandwidth_hz``, ``J`` the mass-matrix diagonal at
    the start pose) on the quantised position and its filtered difference, run at every substep;
    its torque is saturated at ``torque_limit`` (integrator held while saturated). The recorded
    torque is the drive's torque averaged over one cycle centred on the sample (a trapezoid over
    ``substeps + 1`` drive steps; odd ``substeps``: a plain mean over ``substeps``): with the
    semi-implicit Euler step this is what the central second difference of the recorded positions
    sees, without delay.

    Parameters
    ----------
    plant : Plant
        The true robot (model + friction).
    theta : array-like, (n_params,)
        True parameters, model then friction (physical sign convention).
    motion : Motion
        Commanded motion; the robot starts at rest at ``motion.command(0)``, the servo holding it.
    options : SimOptions
    seed : int, optional
        Seed of the torque noise.
    external_torque : callable(t) -> (n_joints,), optional
        Disturbance torque acting on the joints (collisions) at time ``t`` [s] of the recording's
        clock, not measured by the drive.

    Returns
    -------
    Recording
        ``t`` starts at 0 when recording starts (after ``motion.settle_s``); ``q`` quantised; ``tau``
        the drive torque with noise (``noise`` × each joint's peak), clipped to ``feedback_limit``;
        metadata says it is simulated.
    """
    theta = np.asarray(theta, dtype=float)
    n = plant.n_joints
    if motion.n_joints != n:
        raise ConfigError(f"motion has {motion.n_joints} joints, model {plant.model.name!r} has {n}")
    Ts = options.sample_period
    settle = getattr(motion, "settle_s", 0.0)
    n_cycles = int(round(motion.duration / Ts))
    t = np.arange(n_cycles + 1) * Ts                    # + the end point: the drive interpolates towards it
    q_ref, qd_ref, qdd_ref = motion.command(t)
    res = np.array([2 * np.pi / 2**options.encoder_bits if j.kind == "rotary" else options.linear_resolution
                    for j in plant.model.joints])
    inertia = np.maximum(np.abs(joint_inertia(plant, theta, q_ref[0])), 1e-6)
    gains = ServoGains.tune(inertia, options.bandwidth_hz, position_ratio=_LOOP_RATIO, integral_ratio=_LOOP_RATIO)
    drive = DriveOptions(sample_period=Ts, substeps=options.substeps, command_delay_cycles=0,
                         torque_limit=options.torque_limit, encoder_resolution=res,
                         velocity_filter_s=_VELOCITY_FILTER_S,
                         coulomb_smoothing=np.maximum(options.coulomb_smoothing * np.abs(qd_ref).max(axis=0), 1e-9),
                         feedback_window="centred")

    def disturbance(t_run: float, out: np.ndarray) -> None:          # the run's clock starts settle_s earlier
        out[:] = external_torque(t_run - settle)

    run = run_closed_loop(plant, theta, Command(t, q_ref, qd_ref, qdd_ref), gains, drive,
                          external_torque=None if external_torque is None else disturbance, seed=seed)
    k0 = int(round(settle / Ts))
    tau = run.tfb[k0:n_cycles]
    if options.noise > 0:
        peak = np.abs(tau).max(axis=0)
        tau = tau + np.random.default_rng(seed).normal(size=tau.shape) * options.noise * peak
    if options.feedback_limit is not None:
        fl = np.asarray(options.feedback_limit, dtype=float)
        tau = np.clip(tau, -fl, fl)
    meta = {"source": "dynid simulator", "model": plant.model.name, "noise": f"{options.noise}",
            "sample_period_s": f"{Ts}"}
    return Recording(t[k0:n_cycles] - settle, run.pfb[k0:n_cycles], tau, meta=meta,
                     source=f"<simulated {plant.model.name}>")
