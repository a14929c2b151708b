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
the reported torque is the drive's command averaged over the cycle plus measurement noise.

The robot is any :class:`~dynid.models.Plant` with any parameters: forward dynamics
``M(q) qdd = u − C(q)(qd⊗qd) − g(q) − friction(qd)``, with ``M, C, g`` from the compiled
single-sample path of the model (refreshed every substep), or, for models that do not compile (a
Delta), from the batch regressor refreshed once per controller cycle. Coulomb friction in the
plant is ``Fc·tanh(qd/ε)``. Integration: semi-implicit Euler at ``Ts/substeps``.

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



def _dgesv(M, b):
    """LAPACK ``dgesv`` (numpy's solve costs 5x more in the per-cycle loop); scipy imported on first use."""
    global _dgesv
    from scipy.linalg.lapack import dgesv

    _dgesv = dgesv
    return dgesv(M, b)

__all__ = ["ServoGains", "DriveOptions", "Command", "ExternalStep", "ClosedLoopRun", "run_closed_loop",
           "settling_time", "peak_to_peak", "joint_inertia"]


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
        interpolation); ``AdditiveTorqueDelay`` should match it.
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
    coulomb_smoothing : float
        ε of the plant's ``tanh(qd/ε)`` Coulomb friction [rad/s or m/s].
    """

    sample_period: float = 1e-3
    substeps: int = 4
    command_delay_cycles: int = 3
    torque_limit: float | Sequence[float] | None = None
    feedback_noise: float | Sequence[float] = 0.0
    torque_ripple: float | Sequence[float] = 0.0
    encoder_resolution: float | Sequence[float] | None = None
    velocity_filter_s: float = 2.5e-4
    coulomb_smoothing: float = 0.01

    def __post_init__(self) -> None:
        if not self.sample_period > 0 or self.substeps < 1:
            raise ConfigError("sample_period must be positive and substeps >= 1")
        if self.command_delay_cycles < 1:
            raise ConfigError("command_delay_cycles must be >= 1 (the drive interpolates between cycles)")
        if self.velocity_filter_s < 0 or not self.coulomb_smoothing > 0:
            raise ConfigError("velocity_filter_s must be >= 0 and coulomb_smoothing > 0")

    def to_dict(self) -> dict[str, Any]:
        def lst(x):
            return None if x is None else np.atleast_1d(np.asarray(x, dtype=float)).tolist()
        return {"sample_period_s": self.sample_period, "substeps": self.substeps,
                "command_delay_cycles": self.command_delay_cycles, "torque_limit": lst(self.torque_limit),
                "feedback_noise_std": lst(self.feedback_noise), "torque_ripple_std": lst(self.torque_ripple),
                "encoder_resolution": lst(self.encoder_resolution), "velocity_filter_s": self.velocity_filter_s,
                "coulomb_smoothing": self.coulomb_smoothing}


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


def joint_inertia(plant: Plant, theta: npt.ArrayLike, q: npt.ArrayLike) -> np.ndarray:
    """Diagonal of the mass matrix (incl. armature) at ``q`` ``(n,)`` [kg m² or kg] (servo tuning)."""
    theta = np.asarray(theta, dtype=float)
    n = plant.n_joints
    q = np.asarray(q, dtype=float).ravel()
    Q = np.repeat(q[None], n + 1, axis=0)
    QDD = np.vstack([np.zeros(n), np.eye(n)])
    tau = plant.torque(theta, Q, np.zeros_like(Q), QDD)
    return np.diag(tau[1:] - tau[0]).copy()


class _Plant:
    """Forward dynamics of the true robot with preallocated buffers."""

    def __init__(self, plant: Plant, theta: np.ndarray, eps: float) -> None:
        self.dyn = compile_dynamics(plant, theta)
        self.per_substep = isinstance(self.dyn, TrigPolyDynamics)
        self.ws = self.dyn.new_workspace()
        self.fric = plant.friction_coefficients(theta)
        n = plant.n_joints
        self.n = n
        self.M = np.empty((n, n))
        self.h = np.empty(n)
        self.s = np.empty(n)
        self.eps = eps
        inertia = self.fric.inertia()                  # joint and coupled-motor armature
        self.arm = inertia if np.any(inertia) else None
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

    def accel(self, q: np.ndarray, qd: np.ndarray, drive: np.ndarray) -> np.ndarray:
        """``qdd = M⁻¹ (drive − bias)`` at the state ``(q, qd)``."""
        np.divide(qd, self.eps, out=self.s)
        np.tanh(self.s, out=self.s)
        if self.per_substep:
            self.dyn.mass_bias_into(self.ws, q, qd, self.M, self.h)
            if self.arm is not None:
                np.add(self.M, self.arm, out=self.M)
            M = self.M
        else:
            np.multiply(qd[self.iu], qd[self.ju], out=self.qq)
            np.dot(self.C, self.qq, out=self.h)
            np.add(self.h, self.g, out=self.h)
            M = self.M_cycle
        self.fric.add_into(qd, None, self.s, self.h)
        np.subtract(drive, self.h, out=self.h)
        _, _, x, info = _dgesv(M, self.h)          # LAPACK directly: numpy's solve costs 5x more here
        if info != 0:
            raise np.linalg.LinAlgError(f"singular mass matrix at q = {q.tolist()}")
        return x


def _initial_bias(plant: Plant, theta: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """Torque that holds the robot at rest at ``q0`` (gravity, payload, friction offset)."""
    z = np.zeros((1, plant.n_joints))
    return plant.torque(theta, q0[None], z, z, sign=z)[0]


def run_closed_loop(plant: Plant, theta: npt.ArrayLike, command: Command, gains: ServoGains,
                    drive: DriveOptions = DriveOptions(), *, feedforward=None, monitor=None,
                    external_torque: Callable[[float, np.ndarray], None] | None = None,
                    seed: int | None = 0) -> ClosedLoopRun:
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
        command velocity the applied ``Taddcmd`` was computed from.
    external_torque : callable(t, out), optional
        Writes the external torque ``(n,)`` [N m or N] acting at time ``t`` into ``out`` (e.g.
        :class:`ExternalStep`); not measured by the drive.
    seed : int, optional
        Seed of the noise.

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
    h = Ts / s
    N = command.t.size
    D = drive.command_delay_cycles
    rng = np.random.default_rng(seed)
    lim = np.full(n, np.inf) if drive.torque_limit is None else as_vector("torque_limit", drive.torque_limit, n)
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

    true = _Plant(plant, theta, drive.coulomb_smoothing)
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
    for k in range(N):  # the control loop is inherently sequential
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
            u += tadd
            np.minimum(u, lim, out=w)
            np.maximum(w, neg_lim, out=w)
            np.equal(w, u, out=unsat)
            ev *= h
            ev *= unsat                                                     # anti-windup: hold when saturated
            integ += ev
            np.copyto(u, w)
            u_sum += u
            np.copyto(drive_tq, u)
            if ripple_draw is not None:
                drive_tq += ripple_draw[i]
            if external_torque is not None:
                if m:
                    external_torque(t_k + m * h, ext)
                drive_tq += ext
            qdd = true.accel(q, qd, drive_tq)
            qdd *= h
            qd += qdd
            np.multiply(qd, h, out=w)
            q += w
        tfb = out["tfb"][k]
        np.multiply(u_sum, 1.0 / s, out=tfb)
        tfb += fb_draw[k]
        out["tadd"][k] = tadd
        if mst is not None:
            kc = k - feedforward.delay_cycles if feedforward is not None else k
            mon_status[k] = int(monitor.step(mst, tadd, tfb, out["vfb"][k], command.qd[max(kc, 0)]))
            out["te"][k] = mst.te
            out["limit"][k] = mst.limit
            alarm[k] = mst.alarm
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
