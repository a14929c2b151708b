"""Closed-loop servo simulation: what the additive-torque feed-forward and the detector buy.

The controller (softMC) runs at the cycle ``Ts``: its trajectory gives ``pcmd, vcmd, acmd``; the
optional :class:`~dynid.runtime.feedforward.FeedForward` turns them into ``Taddcmd`` (delayed by
``AdditiveTorqueDelay``); the optional :class:`~dynid.runtime.collision.CollisionMonitor` compares
the applied ``Taddcmd`` with the measured torque. The drive (CSP mode) runs ``substeps`` times per
cycle: the position command reaches its loops ``command_delay_cycles`` later (fieldbus + drive
interpolation, linear between cycles), a P position loop with velocity feed-forward feeds a PI
velocity loop; its torque command plus the torque offset is saturated (anti-windup) and applied
to the *true* robot together with torque ripple and an optional external (collision) torque.
Position feedback is quantised by the encoder; the velocity is the filtered difference of it;
the reported torque is the drive's command averaged over the cycle (or over a cycle centred on
its start: ``DriveOptions.feedback_window``) plus measurement noise.

The robot is any :class:`~dynid.models.Plant` with any parameters: forward dynamics
``M(q) qdd = u − C(q)(qd⊗qd) − g(q) − friction(qd)``, ``M`` including the actuators' (joint and
coupled-motor) inertia, with ``M, C, g`` from the compiled single-sample path of the model or, for
models that do not compile (a Delta, a spring axis), from the batch regressor, evaluated at every
substep (or once per controller cycle: ``DriveOptions.plant_update``). Coulomb friction in the
plant is ``Fc·tanh(qd/ε)``, that of coupled motors ``Fcm·tanh(u_m·qd/ε_m)`` with ``ε_m = |u_m|·ε``.
Integration: semi-implicit Euler at ``h = Ts/substeps`` with the stiff Coulomb transition
linearly implicit, ``(M + h·K)·Δqd = h·(u − bias(q, qd))``, ``K ≥ 0`` the slope of the Coulomb-type
terms' ``tanh`` (the viscous term stays explicit): stable however sharp the friction is. Where every
``tanh`` is saturated ``K = 0``, and the second difference of the positions at a drive step is
exactly the acceleration that step's torque produced — what identification differentiates.

:func:`~dynid.sim.simulator.simulate` runs identification motions on this engine with an ideal drive
(``command_delay_cycles=0``, ``feedback_window="centred"``).

Metrics: :func:`settling_time` (softMC ``PESETTLE``/``TIMESETTLE``/``ISSETTLED``) and
:func:`peak_to_peak`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt

from .._validation import as_joint_array, as_vector
from ..errors import ConfigError
from ..models.base import Plant
from ..recording import Recording
from ..runtime._compiled import RegressorDynamics, TrigPolyDynamics, compile_dynamics

__all__ = ["ServoGains", "DriveOptions", "Command", "ExternalStep", "ClosedLoopRun", "run_closed_loop",
           "settling_time", "peak_to_peak", "joint_inertia", "forward_dynamics_terms"]


_SATURATED = 1e-12
"""``1 − tanh²`` below which a Coulomb transition adds nothing to the step's matrix (``|qd| > 14.5 ε``)."""


def _dgesv(M, b):
    """LAPACK ``dgesv`` (numpy's solve costs 5x more in the per-step loop); scipy imported on first use."""
    global _dgesv
    from scipy.linalg.lapack import dgesv

    _dgesv = dgesv
    return dgesv(M, b)


@dataclass(frozen=True)
class ServoGains:
    """Cascaded servo gains per joint (identical with and without feed-forward).

    kp : (n,) position loop gain [1/s] (velocity command per position error)
    kv : (n,) velocity loop proportional gain [N m s/rad or N s/m]
    ki : (n,) velocity loop integral gain [N m/rad or N/m] (torque per integrated velocity error)
    """

    kp: np.ndarray
    kv: np.ndarray
    ki: np.ndarray

    def __post_init__(self) -> None:
        n = np.atleast_1d(np.asarray(self.kp)).size
        for name in ("kp", "kv", "ki"):
            a = as_vector(name, getattr(self, name), n).copy()
            if np.any(~np.isfinite(a)) or np.any(a < 0):
                raise ConfigError(f"servo gain {name} must be finite and >= 0, got {a.tolist()}")
            a.flags.writeable = False
            object.__setattr__(self, name, a)

    @classmethod
    def tune(cls, inertia: npt.ArrayLike, bandwidth_hz: float | npt.ArrayLike, *, position_ratio: float = 4.0,
             integral_ratio: float = 4.0) -> "ServoGains":
        """Textbook cascade tuning on the joint inertia ``J`` ``(n,)`` [kg m² or kg].

        Velocity loop crossover ``ωv = 2π·bandwidth``: ``kv = J·ωv``, PI zero at ``ωv/integral_ratio``
        (``ki = kv·ωv/integral_ratio``); position loop ``kp = ωv/position_ratio``.
        """
        J = np.atleast_1d(np.asarray(inertia, dtype=float))
        w = 2 * np.pi * as_vector("bandwidth_hz", bandwidth_hz, J.size)
        kv = J * w
        return cls(w / position_ratio, kv, kv * w / integral_ratio)

    def to_dict(self) -> dict[str, Any]:
        return {"kp_per_s": self.kp.tolist(), "kv": self.kv.tolist(), "ki": self.ki.tolist()}


@dataclass(frozen=True)
class DriveOptions:
    """Controller cycle, drive and sensor settings of the closed loop.

    sample_period : float
        Controller cycle ``Ts`` [s].
    substeps : int
        Drive loop (and integration) steps per controller cycle.
    command_delay_cycles : int
        Cycles from ``pcmd`` leaving the controller to the drive's loops using it (fieldbus + drive
        interpolation, linear between cycles); ``AdditiveTorqueDelay`` should match it. 0: an ideal
        drive whose loops follow the command at once (interpolated towards the next cycle's).
    torque_limit : float or sequence, optional
        Drive torque saturation per joint [N m or N] (applied to command + offset).
    feedback_noise : float or sequence
        Standard deviation of the measured torque noise per joint [N m or N].
    torque_ripple : float or sequence
        Standard deviation of the torque disturbance applied to the robot per substep [N m or N].
    encoder_resolution : float or sequence, optional
        Joint-side position quantum per joint [rad or m] (motor encoder counts / gear ratio).
    velocity_filter_s : float
        Time constant of the drive's velocity estimate [s].
    coulomb_smoothing : float or sequence
        ε of the plant's ``tanh(qd/ε)`` Coulomb friction, per joint [rad/s or m/s] (coupled motors:
        ``|u_m|·ε``).
    feedback_window : {"cycle", "centred"}
        The reported torque: ``"cycle"`` the mean of the drive's torque command over the cycle's
        drive steps (known at the cycle's end, half a cycle late; what the collision monitor reads);
        ``"centred"`` the trapezoid mean over one cycle centred on the cycle start, where ``pfb`` is
        sampled — no delay, and what the central differences of ``pfb`` see (an identification
        record; not available within the cycle, so not with a monitor).
    plant_update : {"step", "cycle"}
        How often ``M, C, g`` of a plant whose model does not compile (the batch-regressor fallback,
        e.g. a Delta, about 0.5 ms per evaluation) are evaluated: at every integration step, or once
        per controller cycle (faster; the configuration terms are then frozen over the cycle's
        substeps, an error of the order of their change in one cycle). Compiled models are
        evaluated at every step either way.
    """

    sample_period: float = 1e-3
    substeps: int = 4
    command_delay_cycles: int = 3
    torque_limit: float | Sequence[float] | None = None
    feedback_noise: float | Sequence[float] = 0.0
    torque_ripple: float | Sequence[float] = 0.0
    encoder_resolution: float | Sequence[float] | None = None
    velocity_filter_s: float = 2.5e-4
    coulomb_smoothing: float | Sequence[float] = 0.01
    feedback_window: str = "cycle"
    plant_update: str = "step"

    def __post_init__(self) -> None:
        if not self.sample_period > 0 or self.substeps < 1:
            raise ConfigError("sample_period must be positive and substeps >= 1")
        if self.command_delay_cycles < 0:
            raise ConfigError("command_delay_cycles must be >= 0")
        eps = np.asarray(self.coulomb_smoothing, dtype=float)
        if self.velocity_filter_s < 0 or not np.all(eps > 0):
            raise ConfigError("velocity_filter_s must be >= 0 and coulomb_smoothing > 0")
        if self.feedback_window not in ("cycle", "centred"):
            raise ConfigError(f"feedback_window must be 'cycle' or 'centred', got {self.feedback_window!r}")
        if self.plant_update not in ("step", "cycle"):
            raise ConfigError(f"plant_update must be 'step' or 'cycle', got {self.plant_update!r}")

    def to_dict(self) -> dict[str, Any]:
        def lst(x):
            return None if x is None else np.atleast_1d(np.asarray(x, dtype=float)).tolist()
        return {"sample_period_s": self.sample_period, "substeps": self.substeps,
                "command_delay_cycles": self.command_delay_cycles, "torque_limit": lst(self.torque_limit),
                "feedback_noise_std": lst(self.feedback_noise), "torque_ripple_std": lst(self.torque_ripple),
                "encoder_resolution": lst(self.encoder_resolution), "velocity_filter_s": self.velocity_filter_s,
                "coulomb_smoothing": self.coulomb_smoothing if np.ndim(self.coulomb_smoothing) == 0
                else lst(self.coulomb_smoothing), "feedback_window": self.feedback_window,
                "plant_update": self.plant_update}


@dataclass(frozen=True)
class Command:
    """The controller's trajectory, one row per cycle (SI).

    t : (N,) [s], uniform at the controller cycle ; q, qd, qdd : (N, n) ; t_end : time the profiler
    completes [s] (settling is measured from there)
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    t_end: float | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float).ravel()
        q = as_joint_array("q", self.q)
        n = q.shape[1]
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "qd", as_joint_array("qd", self.qd, n, n_samples=q.shape[0]))
        object.__setattr__(self, "qdd", as_joint_array("qdd", self.qdd, n, n_samples=q.shape[0]))
        if t.size != q.shape[0]:
            raise ConfigError(f"command t has {t.size} samples but q has {q.shape[0]}")

    @property
    def n_joints(self) -> int:
        return int(self.q.shape[1])


@dataclass(frozen=True)
class ExternalStep:
    """An external torque step (collision): ``value`` [N m or N] on ``joint`` (0-based) from ``t_on`` [s]."""

    t_on: float
    joint: int
    value: float
    t_off: float = np.inf

    def __call__(self, t: float, out: np.ndarray) -> None:
        out.fill(0.0)
        if self.t_on <= t < self.t_off:
            out[self.joint] = self.value


@dataclass(frozen=True)
class ClosedLoopRun:
    """Result of :func:`run_closed_loop`, one row per controller cycle (SI).

    t : (N,) ; pcmd, vcmd, acmd : (N, n) command ; pfb : (N, n) quantised position at the cycle
    start ; vfb : (N, n) drive velocity estimate there ; q : (N, n) true position ; tfb : (N, n)
    reported torque (cycle mean + noise) ; taddcmd : (N, n) torque offset applied during the cycle ;
    external : (N, n) external torque at the cycle start ; te : (N, n) monitor's filtered error
    (NaN without monitor) ; limit : (N, n) its active threshold ; alarm : (N, n) bool ;
    ff_status, monitor_status : (N,) int ; t_end : profile end [s]
    """

    t: np.ndarray
    pcmd: np.ndarray
    vcmd: np.ndarray
    acmd: np.ndarray
    pfb: np.ndarray
    vfb: np.ndarray
    q: np.ndarray
    tfb: np.ndarray
    taddcmd: np.ndarray
    external: np.ndarray
    te: np.ndarray
    limit: np.ndarray
    alarm: np.ndarray
    ff_status: np.ndarray
    monitor_status: np.ndarray
    t_end: float | None
    meta: dict = field(default_factory=dict)

    @property
    def position_error(self) -> np.ndarray:
        """``pcmd − pfb`` ``(N, n)`` [rad or m] (after the profile: target − actual)."""
        return self.pcmd - self.pfb

    def to_recording(self, start_s: float = 0.0) -> Recording:
        """``t, q = pfb, tau = tfb`` from ``start_s`` on (an identification-run record)."""
        k = int(np.searchsorted(self.t, start_s - 1e-12))
        return Recording(self.t[k:] - self.t[k], self.pfb[k:], self.tfb[k:],
                         meta={"source": "dynid closed-loop simulator", **{k_: str(v) for k_, v in self.meta.items()}},
                         source="<simulated closed loop>")

    def log_columns(self) -> tuple[list[str], np.ndarray]:
        """Column names and data of the controller log (``t, q, tau, pcmd, vcmd, acmd, taddcmd``)."""
        n = self.pfb.shape[1]
        names = ["t"]
        blocks = [self.t[:, None]]
        for prefix, a in (("q", self.pfb), ("tau", self.tfb), ("dq", self.vfb), ("pcmd", self.pcmd),
                          ("vcmd", self.vcmd), ("acmd", self.acmd), ("taddcmd", self.taddcmd)):
            names += [f"{prefix}{j + 1}" for j in range(n)]
            blocks.append(a)
        return names, np.hstack(blocks)


def forward_dynamics_terms(plant: Plant, theta: npt.ArrayLike, q: npt.ArrayLike, qd: npt.ArrayLike,
                           sign: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mass matrix ``M`` ``(n, n)`` and bias torque ``h`` ``(n,)`` at one state, from the regressor.

    With ``tau = Y(q, qd, qdd) θ + offset``: ``M[:, i] = tau(q, 0, e_i) − tau(q, 0, 0)`` (armature
    included), ``h = tau(q, qd, 0)`` — gravity, Coriolis/centrifugal terms, payload and friction
    (``sign`` ``(n,)`` as the Coulomb sign if given, else ``sign(qd)``). One batched call; the
    reference the compiled single-sample path is checked against.
    """
    theta = np.asarray(theta, dtype=float)
    q = np.asarray(q, dtype=float).ravel()
    qd = np.asarray(qd, dtype=float).ravel()
    n = plant.n_joints
    Q = np.repeat(q[None, :], n + 2, axis=0)
    QD = np.zeros((n + 2, n))
    QD[0] = qd
    QDD = np.zeros((n + 2, n))
    QDD[2:] = np.eye(n)
    S = np.zeros((n + 2, n))
    S[0] = np.sign(qd) if sign is None else sign
    tau = plant.torque(theta, Q, QD, QDD, sign=S)
    return (tau[2:] - tau[1]).T, tau[0]


def joint_inertia(plant: Plant, theta: npt.ArrayLike, q: npt.ArrayLike) -> np.ndarray:
    """Diagonal of the mass matrix (incl. armature) at ``q`` ``(n,)`` [kg m² or kg] (servo tuning)."""
    M, _ = forward_dynamics_terms(plant, theta, q, np.zeros(plant.n_joints))
    return np.diag(M).copy()


class _Plant:
    """The true robot: forward dynamics and one integration step, with preallocated buffers.

    ``eps`` ``(n,)``: ε of the joints' ``tanh(qd/ε)`` Coulomb sign; coupled motors use
    ``tanh(u_m·qd/ε_m)``, ``ε_m = |u_m|·ε`` (the bound joint velocities at ε put on the motor's).
    ``h``: the integration step [s]. ``every_step=False``: a model that does not compile is evaluated
    by :meth:`refresh`, which the caller runs once per cycle.
    """

    def __init__(self, plant: Plant, theta: np.ndarray, eps: np.ndarray, h: float, every_step: bool = True) -> None:
        self.dyn = compile_dynamics(plant, theta)
        self.per_substep = every_step or isinstance(self.dyn, TrigPolyDynamics)
        self.ws = self.dyn.new_workspace()
        fc = self.fric = plant.friction_coefficients(theta)
        n = plant.n_joints
        self.n = n
        self.M = np.empty((n, n))                      # mass matrix + h·K: the matrix of the step
        self.diag = self.M.reshape(-1)[:: n + 1]       # view on its diagonal
        self.h = np.empty(n)
        self.s = np.empty(n)
        self.k = np.empty(n)
        self.w = np.empty(n)
        self.dt = h
        self.inv_eps = 1.0 / np.asarray(eps, dtype=float)
        self.h_eps = h * self.inv_eps
        inertia = fc.inertia()                         # joint and coupled-motor armature
        self.arm = inertia if np.any(inertia) else None
        # K (stiffness of the Coulomb transition): per joint (1 − s²)/ε · c with c the coefficient of
        # the sign s — Fc, + Fc+ or Fc- by the sign's side, + Fs·exp(−(qd/vs)²) (its smooth slope left out)
        self.c_var = fc.has_asym or fc.has_stribeck
        self.c0 = fc.coulomb + (fc.coulomb_neg if fc.has_asym else 0.0)
        self.c_pos = fc.coulomb_pos - fc.coulomb_neg if fc.has_asym else None
        self.c_h_eps = np.maximum(self.c0, 0.0) * self.h_eps
        self.c = np.empty(n)
        self.above = np.empty(n, dtype=bool)
        self.inv_vs = 1.0 / fc.model.stribeck_velocity
        m = fc.n_coupled
        self.coupled = m > 0
        if self.coupled:
            self.U = np.ascontiguousarray(fc.directions)                       # (m, n)
            self.UT = np.ascontiguousarray(fc.directions.T)
            self.inv_eps_m = 1.0 / fc.model.motor_thresholds(np.asarray(eps, dtype=float))
            self.cm_h_eps = np.maximum(fc.motor_coulomb, 0.0) * h * self.inv_eps_m
            self.v = np.empty(m)
            self.ms = np.empty(m)
            self.km = np.empty(m)
            self.UTk = np.empty((n, m))
            self.Km = np.empty((n, n))
        self.iu, self.ju = np.triu_indices(n)
        self.C = None
        self.g = None

    def refresh(self, q: np.ndarray) -> None:
        """Configuration terms ``M, C, g`` at ``q`` for the per-cycle (fallback) mode."""
        dyn: RegressorDynamics = self.dyn
        n = self.n
        iu, ju = self.iu, self.ju
        nq = iu.size
        P = 1 + n + nq
        Q = np.repeat(q[None], P, axis=0)
        QD = np.zeros((P, n))
        QDD = np.zeros((P, n))
        QDD[1:1 + n] = np.eye(n)
        QD[1 + n + np.arange(nq), iu] = 1.0
        QD[1 + n + np.arange(nq), ju] = 1.0
        tau = dyn.model.torque(dyn.p, Q, QD, QDD)
        g = tau[0]
        A = (tau[1:1 + n] - g).T
        quad = tau[1 + n:] - g
        diag = quad[iu == ju]
        C = quad.copy()
        off = iu != ju
        C[off] -= diag[iu[off]] + diag[ju[off]]
        self.M_cycle = A.copy()
        if self.arm is not None:
            self.M_cycle += self.arm
        self.C = np.ascontiguousarray(C.T)
        self.g = g.copy()
        self.qq = np.empty(nq)

    def step(self, q: np.ndarray, qd: np.ndarray, drive: np.ndarray) -> None:
        """Advance ``q, qd`` ``(n,)`` in place by one step ``h`` under the torque ``drive`` ``(n,)``.

        ``(M + h·K)·Δqd = h·(drive − bias(q, qd))``, ``qd += Δqd``, ``q += h·qd`` (semi-implicit Euler,
        the Coulomb transition linearly implicit); allocates nothing but the solve's result.
        """
        s, k = self.s, self.k
        np.multiply(qd, self.inv_eps, out=s)
        np.tanh(s, out=s)
        if self.per_substep:
            self.dyn.mass_bias_into(self.ws, q, qd, self.M, self.h)
            if self.arm is not None:
                np.add(self.M, self.arm, out=self.M)
        else:
            np.multiply(qd[self.iu], qd[self.ju], out=self.qq)
            np.dot(self.C, self.qq, out=self.h)
            np.add(self.h, self.g, out=self.h)
            np.copyto(self.M, self.M_cycle)
        ms = None
        if self.coupled:
            ms = self.ms
            np.dot(self.U, qd, out=self.v)
            np.multiply(self.v, self.inv_eps_m, out=ms)
            np.tanh(ms, out=ms)
        self.fric.add_into(qd, None, s, self.h, motor_sign=ms)
        np.subtract(drive, self.h, out=self.h)
        # K, the stiffness of the Coulomb transition (skipped where every tanh is saturated): the joints' ...
        np.multiply(s, s, out=k)
        np.subtract(1.0, k, out=k)
        if k.max() > _SATURATED:
            if self.c_var:
                c, w = self.c, self.w
                np.copyto(c, self.c0)
                if self.c_pos is not None:
                    np.greater(s, 0.0, out=self.above)
                    np.multiply(self.above, self.c_pos, out=w)
                    np.add(c, w, out=c)
                if self.fric.has_stribeck:
                    np.multiply(qd, self.inv_vs, out=w)
                    np.multiply(w, w, out=w)
                    np.negative(w, out=w)
                    np.exp(w, out=w)
                    np.multiply(w, self.fric.stribeck, out=w)
                    np.add(c, w, out=c)
                np.maximum(c, 0.0, out=c)
                np.multiply(k, c, out=k)
                np.multiply(k, self.h_eps, out=k)
            else:
                np.multiply(k, self.c_h_eps, out=k)
            np.add(self.diag, k, out=self.diag)
        if self.coupled:                                # ... and Σ_m k_m u_m u_mᵀ of the coupled motors
            km = self.km
            np.multiply(ms, ms, out=km)
            np.subtract(1.0, km, out=km)
            if km.max() > _SATURATED:
                np.multiply(km, self.cm_h_eps, out=km)
                np.multiply(self.UT, km, out=self.UTk)
                np.dot(self.UTk, self.U, out=self.Km)
                np.add(self.M, self.Km, out=self.M)
        _, _, x, info = _dgesv(self.M, self.h)         # LAPACK directly: numpy's solve costs 5x more here
        if info != 0:
            raise np.linalg.LinAlgError(f"singular mass matrix at q = {q.tolist()}")
        x *= self.dt
        qd += x
        np.multiply(qd, self.dt, out=self.w)
        q += self.w


def _initial_bias(plant: Plant, theta: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """Torque that holds the robot at rest at ``q0`` (gravity, payload, friction offset)."""
    z = np.zeros((1, plant.n_joints))
    return plant.torque(theta, q0[None], z, z, sign=z)[0]


def _centred_mean(u: np.ndarray, s: int) -> np.ndarray:
    """Per cycle ``k`` the mean of the drive-step torques ``u`` ``(N·s, n)`` centred on step ``k·s``
    ``(N, n)``: a trapezoid over ``k·s − s/2 … k·s + s/2`` (even ``s``; odd: a plain mean over
    ``k·s ± (s−1)/2``), clipped at the start of the run."""
    m = s // 2
    w = np.ones(2 * m + 1)
    if s % 2 == 0:
        w[0] = w[-1] = 0.5
    w /= w.sum()
    N = u.shape[0] // s
    idx = np.clip(np.arange(N)[:, None] * s + np.arange(-m, m + 1)[None, :], 0, u.shape[0] - 1)
    return np.tensordot(u[idx], w, axes=([1], [0]))


def run_closed_loop(plant: Plant, theta: npt.ArrayLike, command: Command, gains: ServoGains,
                    drive: DriveOptions = DriveOptions(), *, feedforward=None, monitor=None,
                    external_torque: Callable[[float, np.ndarray], None] | None = None,
                    seed: int | None = 0, progress: Callable[[str, float], None] | None = None) -> ClosedLoopRun:
    """Simulate the robot under the cascaded servo following ``command``.

    Parameters
    ----------
    plant : Plant
        The true robot.
    theta : array-like, shape (n_params,)
        Its true parameters, model then friction (physical sign).
    command : Command
        Controller trajectory at ``drive.sample_period``; the robot starts at rest at ``command.q[0]``
        with the servo holding it (integrator preset).
    gains : ServoGains
    drive : DriveOptions
    feedforward : FeedForward, optional
        Additive torque from the (identified) model; without it ``Taddcmd = 0``.
    monitor : CollisionMonitor, optional
        Runs on ``Taddcmd`` vs ``Tfb`` each cycle, gated on the drive's velocity estimate and on the
        command velocity the applied ``Taddcmd`` was computed from (needs ``feedback_window="cycle"``).
    external_torque : callable(t, out), optional
        Writes the external torque ``(n,)`` [N m or N] acting at time ``t`` into ``out`` (e.g.
        :class:`ExternalStep`); called at every drive step, not measured by the drive.
    seed : int, optional
        Seed of the noise.
    progress : callable(stage, fraction), optional
        Called about every 2 % of the cycles.

    Returns
    -------
    ClosedLoopRun
    """
    theta = np.asarray(theta, dtype=float)
    n = plant.n_joints
    if command.n_joints != n:
        raise ConfigError(f"command has {command.n_joints} joints, model {plant.model.name!r} has {n}")
    if gains.kp.size != n:
        raise ConfigError(f"servo gains are for {gains.kp.size} joints, the robot has {n}")
    Ts, s = drive.sample_period, drive.substeps
    if command.t.size > 1 and abs(float(np.median(np.diff(command.t))) - Ts) > 1e-9 * max(Ts, 1.0):
        raise ConfigError(f"command is sampled every {np.median(np.diff(command.t)):.6g} s but the controller cycle "
                          f"is {Ts:.6g} s")
    centred = drive.feedback_window == "centred"
    if centred and monitor is not None:
        raise ConfigError("the collision monitor reads the torque feedback within the cycle: it needs "
                          "feedback_window='cycle'")
    h = Ts / s
    N = command.t.size
    D = drive.command_delay_cycles
    rng = np.random.default_rng(seed)
    saturate = drive.torque_limit is not None
    lim = np.full(n, np.inf) if not saturate else as_vector("torque_limit", drive.torque_limit, n)
    fb_noise = as_vector("feedback_noise", drive.feedback_noise, n)
    ripple = as_vector("torque_ripple", drive.torque_ripple, n)
    res = None if drive.encoder_resolution is None else as_vector("encoder_resolution", drive.encoder_resolution, n)
    alpha = 1.0 if drive.velocity_filter_s == 0 else min(1.0, h / drive.velocity_filter_s)

    # drive-side commands at every substep: delayed by D cycles, linear between cycles
    idx = np.arange(N * s) / s - D
    cyc = np.arange(N, dtype=float)
    q_drv = np.column_stack([np.interp(idx, cyc, command.q[:, j]) for j in range(n)])
    v_drv = np.column_stack([np.interp(idx, cyc, command.qd[:, j]) for j in range(n)])
    ripple_draw = rng.normal(size=(N * s, n)) * ripple if np.any(ripple > 0) else None
    fb_draw = rng.normal(size=(N, n)) * fb_noise

    true = _Plant(plant, theta, as_vector("coulomb_smoothing", drive.coulomb_smoothing, n), h,
                  every_step=drive.plant_update == "step")
    q = command.q[0].copy()
    qd = np.zeros(n)
    hold = _initial_bias(plant, theta, q)
    ffs = None
    tadd = np.zeros(n)
    if feedforward is not None:
        z = np.zeros(n)
        ffs = feedforward.new_state(prefill=feedforward.torque(command.q[0], z, z))   # holding torque at rest
    kp, kv, ki = gains.kp, gains.kv, gains.ki
    integ = np.zeros(n)
    ff0 = ffs.taddcmd if ffs is not None else np.zeros(n)
    np.divide(hold - ff0, ki, out=integ, where=ki > 0)                    # the servo has been holding q0
    mst = monitor.new_state() if monitor is not None else None

    out = {k: np.zeros((N, n)) for k in ("pfb", "vfb", "q", "tfb", "tadd", "ext", "te", "limit")}
    alarm = np.zeros((N, n), dtype=bool)
    ff_status = np.zeros(N, dtype=np.int8)
    mon_status = np.zeros(N, dtype=np.int8)
    if monitor is None:
        out["te"].fill(np.nan)
        out["limit"].fill(np.nan)
    u_hist = np.empty((N * s, n)) if centred else None                     # every drive step's torque
    q_meas = q.copy() if res is None else np.round(q / res) * res
    q_prev = q_meas.copy()
    v_est = np.zeros(n)
    ext = np.zeros(n)
    u = np.empty(n)
    u_sum = np.empty(n)
    ev = np.empty(n)
    w = np.empty(n)
    drive_tq = np.empty(n)
    unsat = np.empty(n, dtype=bool)
    neg_lim = -lim
    stride = max(N // 50, 1)
    for k in range(N):  # the control loop is inherently sequential
        if progress is not None and k % stride == 0:
            progress(f"cycle {k} of {N}", k / N)
        if ffs is not None:
            ff_status[k] = int(feedforward.step(ffs, command.q[k], command.qd[k], command.qdd[k]))
            np.copyto(tadd, ffs.taddcmd)
        if not true.per_substep:
            true.refresh(q)
        u_sum.fill(0.0)
        t_k = command.t[k]
        if external_torque is not None:
            external_torque(t_k, ext)
            out["ext"][k] = ext
        for m in range(s):
            i = k * s + m
            if res is None:
                np.copyto(q_meas, q)
            else:
                np.divide(q, res, out=q_meas)
                np.round(q_meas, out=q_meas)
                np.multiply(q_meas, res, out=q_meas)
            np.subtract(q_meas, q_prev, out=w)
            w /= h
            w -= v_est
            w *= alpha
            v_est += w
            np.copyto(q_prev, q_meas)
            if m == 0:
                out["pfb"][k] = q_meas
                out["vfb"][k] = v_est
                out["q"][k] = q
            # P position loop with velocity feed-forward -> PI velocity loop (+ torque offset)
            np.subtract(q_drv[i], q_meas, out=w)
            w *= kp
            w += v_drv[i]
            np.subtract(w, v_est, out=ev)
            np.multiply(kv, ev, out=u)
            np.multiply(ki, integ, out=w)
            u += w
            if ffs is not None:
                u += tadd
            ev *= h
            if saturate:
                np.minimum(u, lim, out=w)
                np.maximum(w, neg_lim, out=w)
                np.equal(w, u, out=unsat)
                ev *= unsat                                                 # anti-windup: hold when saturated
                np.copyto(u, w)
            integ += ev
            if centred:
                u_hist[i] = u
            else:
                u_sum += u
            np.copyto(drive_tq, u)
            if ripple_draw is not None:
                drive_tq += ripple_draw[i]
            if external_torque is not None:
                if m:
                    external_torque(t_k + m * h, ext)
                drive_tq += ext
            true.step(q, qd, drive_tq)
        if not centred:
            tfb = out["tfb"][k]
            np.multiply(u_sum, 1.0 / s, out=tfb)
            tfb += fb_draw[k]
        out["tadd"][k] = tadd
        if mst is not None:
            kc = k - feedforward.delay_cycles if feedforward is not None else k
            mon_status[k] = int(monitor.step(mst, tadd, out["tfb"][k], out["vfb"][k], command.qd[max(kc, 0)]))
            out["te"][k] = mst.te
            out["limit"][k] = mst.limit
            alarm[k] = mst.alarm
    if centred:
        out["tfb"] = _centred_mean(u_hist, s) + fb_draw
    meta = {"model": plant.model.name, "plant_dynamics": true.dyn.kind,
            "plant_update": "every substep" if true.per_substep else "every controller cycle",
            "feedforward": feedforward is not None, "monitor": monitor is not None}
    return ClosedLoopRun(command.t.copy(), command.q.copy(), command.qd.copy(), command.qdd.copy(), out["pfb"],
                         out["vfb"], out["q"], out["tfb"], out["tadd"], out["ext"], out["te"], out["limit"], alarm,
                         ff_status, mon_status, command.t_end, meta)


# --------------------------------------------------------------------------- metrics

def settling_time(t: npt.ArrayLike, error: npt.ArrayLike, t_end: float, pesettle: float | npt.ArrayLike,
                  timesettle: float = 0.0) -> float:
    """softMC settling: time from the profiler's end until ``ISSETTLED`` is set [s].

    After ``t_end`` the absolute position error is compared with ``PESETTLE`` (every joint, its own
    value); ``ISSETTLED`` is set once it has stayed within for ``TIMESETTLE``. The returned time
    includes ``TIMESETTLE``.

    Parameters
    ----------
    t : array-like, shape (N,)
        [s].
    error : array-like, shape (N, n_joints) or (N,)
        Target − actual [rad or m].
    t_end : float
        Time the profiler completed [s].
    pesettle : float or array-like, shape (n_joints,)
        Settling window [rad or m].
    timesettle : float
        [s] (softMC default 0).

    Returns
    -------
    float
        ``t_settled − t_end`` [s], NaN if the data end first.

    Examples
    --------
    >>> t = np.arange(0, 1, 0.001)
    >>> e = np.exp(-(t - 0.5).clip(0) / 0.05)          # decays after t_end = 0.5 s
    >>> round(settling_time(t, e, 0.5, 0.01, 0.02), 3)  # 0.05·ln(100) = 0.230 s, + 0.02 s
    0.251
    """
    t = np.asarray(t, dtype=float).ravel()
    e = np.abs(np.asarray(error, dtype=float))
    if e.ndim == 1:
        e = e[:, None]
    pe = as_vector("pesettle", pesettle, e.shape[1])
    after = t >= t_end - 1e-12
    inside = np.all(e <= pe, axis=1) & after
    # every sample inside the band, with the first sample of its unbroken run inside (runs start at
    # t_end at the earliest): settled at the first sample whose run has lasted TIMESETTLE
    k = np.arange(t.size)
    starts = inside & ~np.r_[False, inside[:-1]]
    run_start = np.maximum.accumulate(np.where(starts, k, 0))
    settled = inside & (t - t[run_start] >= timesettle - 1e-12)
    return float(t[np.argmax(settled)] - t_end) if settled.any() else float("nan")


def peak_to_peak(x: npt.ArrayLike, t: npt.ArrayLike | None = None, t_from: float | None = None) -> np.ndarray:
    """Peak-to-peak value per column ``(n,)`` of ``x`` ``(N, n)``, optionally only where ``t >= t_from``."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if t is not None and t_from is not None:
        x = x[np.asarray(t) >= t_from]
    return x.max(axis=0) - x.min(axis=0)
