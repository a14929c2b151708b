"""Torque-error collision detection (spec/units-and-runtime.md §5), per cycle and on recordings.

softMC's detector compares the model's additive torque with the measured torque per joint::

    TE_now = Taddcmd − Tfb
    TE_k   = TEF·TE_now + (1 − TEF)·TE_{k−1}          (TorqueErrorFilter, first-order IIR)
    alarm  = TorqueErrorEnable and |TE_k| > TorqueErrorMax

with the application-level velocity gating the source recommends: below ``v_gate`` (start, stop,
reversal: the Coulomb step) a separate, larger threshold applies, or none (``inf`` = ignore).

Beyond softMC, :func:`derive_thresholds` sets ``TorqueErrorMax`` from the validation residuals of
the identification (model torque on the identification motion minus the raw measured torque),
filtered with the monitor's own TEF and split at the velocity gate: a better model has smaller
residuals and automatically gets a more sensitive detector. It also reports the false-alarm rate
on that data and a Gaussian-tail extrapolation of it.

:class:`CollisionMonitor` is immutable configuration, :class:`MonitorState` the small mutable state;
:meth:`CollisionMonitor.step` allocates nothing and returns a :class:`MonitorStatus`.
:func:`replay` runs the same detector, vectorised, over a whole recording.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import as_joint_array, as_vector
from ..errors import ConfigError, ShapeError
from ..models.base import Plant

__all__ = ["CollisionMonitor", "MonitorState", "MonitorStatus", "Detection", "Replay", "replay",
           "ThresholdOptions", "DerivedThresholds", "derive_thresholds", "model_residuals", "thresholds_from_fit"]


class MonitorStatus(enum.IntEnum):
    """Outcome of one :meth:`CollisionMonitor.step`."""

    OK = 0
    COLLISION = 1
    """|TE| exceeds the active threshold on at least one enabled joint (``state.alarm`` says which)."""
    INVALID_INPUT = 2
    """A non-finite input: the filter state is kept, no decision this cycle."""


def _vec(name: str, x, n: int, *, positive: bool = False, allow_inf: bool = False) -> np.ndarray:
    a = as_vector(name, x, n).copy()
    if np.any(np.isnan(a)) or (not allow_inf and np.any(~np.isfinite(a))):
        raise ConfigError(f"{name} must be finite numbers, got {a.tolist()}")
    if positive and np.any(a <= 0):
        raise ConfigError(f"{name} must be positive per joint, got {a.tolist()}")
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class CollisionMonitor:
    """Immutable detector configuration (softMC ``TorqueErrorEnable/Max/Filter`` + velocity gating).

    Parameters
    ----------
    temax : float or array-like, shape (n_joints,)
        ``TorqueErrorMax`` [N m or N], active while |v| >= ``v_gate`` (finite; disable a joint with
        ``enable``).
    tef : float or array-like, shape (n_joints,)
        ``TorqueErrorFilter`` in (0, 1] (1 = no filtering; time constant ≈ Ts/TEF).
    v_gate : float or array-like, shape (n_joints,)
        Gating velocity [rad/s or m/s]; 0 disables gating.
    temax_lowvel : float or array-like, shape (n_joints,), optional
        Threshold while |v| < ``v_gate`` [N m or N], >= ``temax``; ``inf`` ignores those samples.
        Default ``temax``.
    enable : bool or array-like of bool, shape (n_joints,)
        ``TorqueErrorEnable`` per joint.
    joint_names : tuple of str, optional
    hold_cycles : int
        The low-velocity threshold stays active this many cycles after the velocity last was below
        the gate (the filtered error of a start/stop decays over a few filter time constants).
    """

    temax: np.ndarray
    tef: np.ndarray
    v_gate: np.ndarray
    temax_lowvel: np.ndarray | None = None
    enable: np.ndarray | bool = True
    joint_names: tuple[str, ...] | None = None
    hold_cycles: int = 0

    def __post_init__(self) -> None:
        temax = np.atleast_1d(np.asarray(self.temax, dtype=float))
        n = temax.size
        object.__setattr__(self, "temax", _vec("temax", temax, n, positive=True))
        tef = _vec("tef", self.tef, n)
        if np.any((tef <= 0) | (tef > 1)):
            raise ConfigError(f"tef (TorqueErrorFilter) must be in (0, 1] per joint, got {tef.tolist()}")
        object.__setattr__(self, "tef", tef)
        gate = _vec("v_gate", self.v_gate, n)
        if np.any(gate < 0):
            raise ConfigError(f"v_gate must be >= 0 per joint, got {gate.tolist()}")
        object.__setattr__(self, "v_gate", gate)
        low = self.temax if self.temax_lowvel is None else self.temax_lowvel
        low = _vec("temax_lowvel", low, n, positive=True, allow_inf=True)
        if np.any(low < self.temax):
            raise ConfigError(f"temax_lowvel {low.tolist()} must be >= temax {self.temax.tolist()} per joint",
                              hint="below the velocity gate the threshold is raised (or inf: ignored), never lowered")
        object.__setattr__(self, "temax_lowvel", low)
        en = np.broadcast_to(np.asarray(self.enable, dtype=bool), (n,)).copy()
        en.flags.writeable = False
        object.__setattr__(self, "enable", en)
        names = self.joint_names or tuple(f"A{j + 1}" for j in range(n))
        if len(names) != n:
            raise ShapeError(f"joint_names has {len(names)} names but the monitor has {n} joints")
        object.__setattr__(self, "joint_names", tuple(names))
        h = self.hold_cycles
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 0:
            raise ConfigError(f"hold_cycles must be an integer >= 0, got {h!r}")
        object.__setattr__(self, "hold_cycles", int(h))

    @property
    def n_joints(self) -> int:
        return int(self.temax.size)

    def new_state(self) -> "MonitorState":
        """A fresh state: filtered error 0, no alarm."""
        return MonitorState(self)

    def step(self, state: "MonitorState", taddcmd, tfb, v, vcmd=None) -> MonitorStatus:
        """One controller cycle.

        Parameters
        ----------
        state : MonitorState
            Updated in place: ``te`` (filtered torque error), ``limit`` (active threshold), ``alarm``.
        taddcmd : ndarray, shape (n_joints,)
            Additive torque applied in the measured cycle [N m or N].
        tfb : ndarray, shape (n_joints,)
            Measured torque of that cycle [N m or N].
        v : ndarray, shape (n_joints,)
            Joint velocity (feedback) for the gating [rad/s or m/s].
        vcmd : ndarray, shape (n_joints,), optional
            Commanded velocity: when given, a joint is also "slow" while its command is below the gate
            (the feed-forward's Coulomb term follows the command's sign).

        Returns
        -------
        MonitorStatus
        """
        s = state
        fin = s.finite
        n = fin.shape[0]
        if (np.count_nonzero(np.isfinite(taddcmd, out=fin)) + np.count_nonzero(np.isfinite(tfb, out=fin))
                + np.count_nonzero(np.isfinite(v, out=fin))
                + (n if vcmd is None else np.count_nonzero(np.isfinite(vcmd, out=fin)))) != 4 * n:
            s.alarm.fill(False)
            s.cycle += 1
            return MonitorStatus.INVALID_INPUT
        w = s.work
        np.subtract(taddcmd, tfb, out=s.te_now)
        np.multiply(s.te, s.keep, out=s.te)
        np.multiply(s.te_now, self.tef, out=w)
        np.add(s.te, w, out=s.te)
        # velocity gate with hold-off, in float arithmetic (masked copies would allocate):
        # moving = 1 where |v| >= v_gate (and |vcmd| >= v_gate); since = (since + 1)·moving
        np.abs(v, out=w)
        np.subtract(w, self.v_gate, out=w)
        np.heaviside(w, s.one, out=s.moving)
        if vcmd is not None:
            np.abs(vcmd, out=w)
            np.subtract(w, self.v_gate, out=w)
            np.heaviside(w, s.one, out=s.moving2)
            np.multiply(s.moving, s.moving2, out=s.moving)
        np.add(s.since, s.one, out=s.since)
        np.multiply(s.since, s.moving, out=s.since)
        np.subtract(s.hold, s.since, out=w)
        np.heaviside(w, s.one, out=s.lowf)                 # 1 while since <= hold_cycles
        np.greater(s.lowf, s.half, out=s.low)
        np.multiply(s.lowf, s.delta, out=s.limit)          # temax + low·(temax_lowvel − temax)
        np.add(s.limit, self.temax, out=s.limit)
        np.abs(s.te, out=w)
        np.greater(w, s.limit, out=s.alarm)
        np.logical_and(s.alarm, self.enable, out=s.alarm)
        s.cycle += 1
        if np.count_nonzero(s.alarm):
            if s.first_alarm_cycle < 0:
                s.first_alarm_cycle = s.cycle - 1
            return MonitorStatus.COLLISION
        return MonitorStatus.OK


class MonitorState:
    """Mutable state of a :class:`CollisionMonitor`.

    te : (n,) filtered torque error [N m or N] ; te_now : (n,) unfiltered ; limit : (n,) active
    threshold (:data:`IGNORED` = 1e300 where the low-velocity band is ignored) ; alarm : (n,) bool ; low : (n,) bool, low-velocity threshold active ;
    since : (n,) float, cycles since the velocity was last below the gate ;
    first_alarm_cycle : int, -1 until the first alarm ; cycle : int
    """

    def __init__(self, monitor: CollisionMonitor) -> None:
        n = monitor.n_joints
        self.te = np.zeros(n)
        self.te_now = np.zeros(n)
        self.limit = np.zeros(n)
        self.alarm = np.zeros(n, dtype=bool)
        self.low = np.zeros(n, dtype=bool)
        self.finite = np.zeros(n, dtype=bool)
        self.work = np.empty(n)
        self.keep = 1.0 - monitor.tef            # (1 − TEF), so the step multiplies only
        # float state and constants as arrays: scalars would be boxed on every ufunc call
        self.since = np.full(n, monitor.hold_cycles + 1.0)  # cycles since the velocity was below the gate
        self.moving = np.zeros(n)
        self.moving2 = np.zeros(n)
        self.lowf = np.zeros(n)
        self.one = np.ones(n)
        self.half = np.full(n, 0.5)
        self.hold = np.full(n, float(monitor.hold_cycles))
        self.delta = _finite_lowvel(monitor) - monitor.temax  # limit = temax + low·delta (inf·0 would be NaN)
        self.first_alarm_cycle = -1
        self.cycle = 0


# --------------------------------------------------------------------------- replay over a recording

@dataclass(frozen=True)
class Detection:
    """One alarm event: the rising edge of ``|TE| > limit`` on one joint.

    t_s : time of the first alarmed sample [s] ; joint : 0-based joint index ; joint_name ;
    te : filtered torque error there [N m or N] ; limit : threshold there ; peak_te : largest |TE|
    of the event ; duration_s : how long the alarm lasted [s]
    """

    t_s: float
    joint: int
    joint_name: str
    te: float
    limit: float
    peak_te: float
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"t_s": self.t_s, "joint": self.joint + 1, "joint_name": self.joint_name, "te": self.te,
                "limit": self.limit, "peak_abs_te": self.peak_te, "duration_s": self.duration_s}


@dataclass(frozen=True)
class Replay:
    """The detector run over a recording.

    t : (N,) [s] ; te : (N, n) filtered torque error ; limit : (N, n) active threshold ;
    alarm : (N, n) bool ; detections : events in time order
    """

    t: np.ndarray
    te: np.ndarray
    limit: np.ndarray
    alarm: np.ndarray
    detections: tuple[Detection, ...]

    @property
    def n_alarms(self) -> int:
        return len(self.detections)


def replay(monitor: CollisionMonitor, t: npt.ArrayLike, taddcmd: npt.ArrayLike, tfb: npt.ArrayLike,
           v: npt.ArrayLike, vcmd: npt.ArrayLike | None = None) -> Replay:
    """Run ``monitor`` over a whole recording (vectorised; equal to stepping it sample by sample).

    Parameters
    ----------
    monitor : CollisionMonitor
    t : array-like, shape (N,)
        Time [s].
    taddcmd, tfb : array-like, shape (N, n_joints)
        Additive (model) torque and measured torque [N m or N].
    v : array-like, shape (N, n_joints)
        Velocity used for the gating [rad/s or m/s].
    vcmd : array-like, shape (N, n_joints), optional
        Commanded velocity, also gated (see :meth:`CollisionMonitor.step`).

    Returns
    -------
    Replay
    """
    from scipy.signal import lfilter

    n = monitor.n_joints
    tadd = as_joint_array("taddcmd", taddcmd, n)
    N = tadd.shape[0]
    tfb = as_joint_array("tfb", tfb, n, n_samples=N)
    v = as_joint_array("v", v, n, n_samples=N)
    t = np.asarray(t, dtype=float).ravel()
    if t.size != N:
        raise ShapeError(f"t has {t.size} samples but taddcmd has {N}")
    raw = tadd - tfb
    te = np.empty_like(raw)
    for j in range(n):  # one IIR per joint
        a = monitor.tef[j]
        te[:, j] = lfilter([a], [1.0, -(1.0 - a)], raw[:, j])
    low = np.abs(v) < monitor.v_gate
    if vcmd is not None:
        low |= np.abs(as_joint_array("vcmd", vcmd, n, n_samples=N)) < monitor.v_gate
    low = _hold(low, monitor.hold_cycles)
    limit = np.where(low, _finite_lowvel(monitor), monitor.temax)
    alarm = (np.abs(te) > limit) & monitor.enable
    return Replay(t, te, limit, alarm, _events(t, te, limit, alarm, monitor.joint_names))


IGNORED = 1e300
"""Active threshold reported while a joint's low-velocity band is ignored (``temax_lowvel = inf``)."""


def _finite_lowvel(monitor: CollisionMonitor) -> np.ndarray:
    return np.where(np.isinf(monitor.temax_lowvel), IGNORED, monitor.temax_lowvel)


def _hold(low: np.ndarray, hold: int) -> np.ndarray:
    """Extend each below-gate stretch by ``hold`` samples (the step's ``since <= hold_cycles``)."""
    if hold == 0:
        return low
    idx = np.arange(low.shape[0])[:, None]
    last = np.maximum.accumulate(np.where(low, idx, -(hold + 2) - low.shape[0]), axis=0)
    return (idx - last) <= hold


def _events(t, te, limit, alarm, names) -> tuple[Detection, ...]:
    out = []
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    for j in range(alarm.shape[1]):
        a = alarm[:, j].astype(np.int8)
        edges = np.diff(np.concatenate([[0], a, [0]]))
        starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
        for s, e in zip(starts, stops):
            out.append(Detection(float(t[s]), j, names[j], float(te[s, j]), float(limit[s, j]),
                                 float(np.abs(te[s:e, j]).max()), float((e - s) * dt)))
    out.sort(key=lambda d: (d.t_s, d.joint))
    return tuple(out)


# --------------------------------------------------------------------------- thresholds from residuals

@dataclass(frozen=True)
class ThresholdOptions:
    """Rule that turns validation residuals into ``TorqueErrorMax`` per joint.

    With ``TE_f`` the residual filtered by the monitor's IIR (``tef``), over the samples of each
    velocity band (|v| >= v_gate, and |v| < v_gate)::

        temax = margin · max(k_sigma · rms(TE_f), max|TE_f|)

    tef : float
        ``TorqueErrorFilter`` of the derived monitor.
    k_sigma : float
        Width of the band in RMS units (Gaussian tail: 5σ).
    margin : float
        Factor over the larger of the RMS band and the largest residual seen (the residuals come
        from one motion; another motion of the same robot differs a little).
    gate_factor : float
        ``v_gate = gate_factor · velocity threshold`` of the identification (the samples softMC's
        fit ignores, where the Coulomb step makes the model least reliable).
    low_velocity : {"derive", "ignore"}
        Below the gate: a threshold derived the same way from the slow samples, or none.
    hold_time_constants : float
        The low-velocity threshold stays active ``ceil(hold_time_constants / tef)`` cycles after the
        velocity was last below the gate (that many filter time constants ``Ts/TEF``).
    """

    tef: float = 0.25
    k_sigma: float = 5.0
    margin: float = 1.25
    gate_factor: float = 3.0
    low_velocity: str = "derive"
    hold_time_constants: float = 3.0

    def __post_init__(self) -> None:
        if not 0 < self.tef <= 1:
            raise ConfigError(f"tef must be in (0, 1], got {self.tef}")
        if self.k_sigma <= 0 or self.margin < 1 or self.gate_factor < 0 or self.hold_time_constants < 0:
            raise ConfigError("k_sigma must be > 0, margin >= 1, gate_factor >= 0 and hold_time_constants >= 0")

    @property
    def hold_cycles(self) -> int:
        return int(math.ceil(self.hold_time_constants / self.tef - 1e-9))
        if self.low_velocity not in ("derive", "ignore"):
            raise ConfigError(f"low_velocity must be 'derive' or 'ignore', got {self.low_velocity!r}")


@dataclass(frozen=True)
class DerivedThresholds:
    """Thresholds derived from residuals, with the statistics behind them (per joint ``(n,)``).

    monitor : the derived :class:`CollisionMonitor` ; rms_moving, max_moving, rms_slow, max_slow :
    RMS and max |TE_f| of each velocity band [N m or N] ; samples_moving, samples_slow ;
    observed_alarms : alarm events when the derived monitor replays the residuals themselves ;
    duration_s : length of that data [s] ; expected_false_alarms_per_hour : Gaussian-tail
    extrapolation (per joint) ; options : the rule used
    """

    monitor: CollisionMonitor
    rms_moving: np.ndarray
    max_moving: np.ndarray
    rms_slow: np.ndarray
    max_slow: np.ndarray
    samples_moving: np.ndarray
    samples_slow: np.ndarray
    observed_alarms: int
    duration_s: float
    expected_false_alarms_per_hour: np.ndarray
    options: ThresholdOptions = field(default_factory=ThresholdOptions)

    @property
    def observed_false_alarms_per_hour(self) -> float:
        return 3600.0 * self.observed_alarms / self.duration_s if self.duration_s > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        m = self.monitor
        return {
            "joints": list(m.joint_names),
            "torque_error_max": m.temax, "torque_error_max_low_velocity": m.temax_lowvel,
            "torque_error_filter": m.tef, "velocity_gate": m.v_gate, "enable": m.enable,
            "hold_cycles": m.hold_cycles,
            "residual_rms_moving": self.rms_moving, "residual_max_moving": self.max_moving,
            "residual_rms_slow": self.rms_slow, "residual_max_slow": self.max_slow,
            "samples_moving": self.samples_moving, "samples_slow": self.samples_slow,
            "observed_alarms": self.observed_alarms, "data_duration_s": self.duration_s,
            "observed_false_alarms_per_hour": self.observed_false_alarms_per_hour,
            "expected_false_alarms_per_hour": self.expected_false_alarms_per_hour,
            "expected_false_alarms_per_hour_total": float(np.sum(self.expected_false_alarms_per_hour)),
            "rule": {"tef": self.options.tef, "k_sigma": self.options.k_sigma, "margin": self.options.margin,
                     "gate_factor": self.options.gate_factor, "low_velocity": self.options.low_velocity,
                     "hold_time_constants": self.options.hold_time_constants},
        }

    @classmethod
    def monitor_from_dict(cls, data: dict[str, Any]) -> CollisionMonitor:
        """Rebuild the monitor from :meth:`to_dict` output (JSON ``null`` = no threshold)."""
        low = [math.inf if x is None else float(x) for x in data["torque_error_max_low_velocity"]]
        high = [math.inf if x is None else float(x) for x in data["torque_error_max"]]
        return CollisionMonitor(high, data["torque_error_filter"], data["velocity_gate"], low,
                                data.get("enable", True), tuple(data["joints"]), int(data.get("hold_cycles", 0)))


def model_residuals(plant: Plant, theta: npt.ArrayLike, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike,
                    tau_measured: npt.ArrayLike) -> np.ndarray:
    """Runtime torque error ``model(q, qd, qdd) − tau_measured`` ``(N, n_joints)`` [N m or N].

    The model torque includes friction with the exact ``sign(qd)``, as the feed-forward computes
    it; ``q, qd, qdd`` should be smooth (the identification's conditioned kinematics, or commands)
    and ``tau_measured`` raw (unfiltered, as the drive reports it each cycle).
    """
    return plant.torque(np.asarray(theta, dtype=float), q, qd, qdd) - as_joint_array(
        "tau_measured", tau_measured, plant.n_joints)


def _iir(x: np.ndarray, tef: float) -> np.ndarray:
    from scipy.signal import lfilter

    return lfilter([tef], [1.0, -(1.0 - tef)], x, axis=0)


def derive_thresholds(te: npt.ArrayLike, v: npt.ArrayLike, sample_period: float, velocity_threshold: npt.ArrayLike,
                      options: ThresholdOptions = ThresholdOptions(), *,
                      joint_names: tuple[str, ...] | None = None,
                      coulomb: npt.ArrayLike | None = None) -> DerivedThresholds:
    """``TorqueErrorMax`` per joint from validation residuals (see :class:`ThresholdOptions`).

    Parameters
    ----------
    te : array-like, shape (N, n_joints)
        Unfiltered torque error model − measured [N m or N], e.g. :func:`model_residuals` on the
        identification data, one row per controller cycle.
    v : array-like, shape (N, n_joints)
        Joint velocity of each row [rad/s or m/s].
    sample_period : float
        Controller cycle [s].
    velocity_threshold : array-like, shape (n_joints,)
        The identification's velocity threshold [rad/s or m/s] (result.json ``conditioning``).
    options : ThresholdOptions
    joint_names : tuple of str, optional
    coulomb : array-like, shape (n_joints,), optional
        Identified Coulomb friction [N m or N]. Below the gate the sign of friction is not known
        from the command (the joint may creep while the command stands still), so the low-velocity
        threshold is at least ``temax + |coulomb|``.

    Returns
    -------
    DerivedThresholds
        With the derived monitor, the residual statistics, the alarms the monitor raises on these
        very data, and a Gaussian-tail extrapolation of the false-alarm rate.
    """
    te = as_joint_array("te", te)
    n = te.shape[1]
    v = as_joint_array("v", v, n, n_samples=te.shape[0])
    if not sample_period > 0:
        raise ConfigError(f"sample_period must be positive, got {sample_period}")
    gate = options.gate_factor * as_vector("velocity_threshold", velocity_threshold, n)
    tf = _iir(te, options.tef)
    slow = _hold(np.abs(v) < gate, options.hold_cycles)
    stats = {}
    for band, mask in (("moving", ~slow), ("slow", slow)):
        cnt = mask.sum(axis=0)
        sq = np.where(mask, tf**2, 0.0).sum(axis=0)
        rms = np.sqrt(sq / np.maximum(cnt, 1))
        mx = np.where(mask, np.abs(tf), 0.0).max(axis=0)
        stats[band] = (rms, mx, cnt)
    rms_m, max_m, cnt_m = stats["moving"]
    rms_s, max_s, cnt_s = stats["slow"]
    if np.any(cnt_m == 0):
        j = int(np.argmin(cnt_m))
        raise ConfigError(f"joint {j + 1}: no residual sample is faster than the gate {gate[j]:.4g}",
                          hint="use residuals of a motion that moves every joint, or a smaller gate_factor")
    temax = options.margin * np.maximum(options.k_sigma * rms_m, max_m)
    if options.low_velocity == "ignore":
        low = np.full(n, np.inf)
    else:
        low = options.margin * np.maximum(options.k_sigma * rms_s, max_s)
        floor = temax if coulomb is None else temax + np.abs(as_vector("coulomb", coulomb, n))
        low = np.where(cnt_s > 0, np.maximum(low, floor), floor)
    monitor = CollisionMonitor(temax, options.tef, gate, low, True, joint_names, options.hold_cycles)
    t = np.arange(te.shape[0]) * sample_period
    rep = replay(monitor, t, te, np.zeros_like(te), v)
    # Gaussian tail: AR(1)-filtered white residual, about tef/(2 − tef) independent samples per cycle
    indep = options.tef / (2.0 - options.tef) / sample_period
    frac_m = cnt_m / te.shape[0]
    frac_s = cnt_s / te.shape[0]
    rate = np.zeros(n)
    for rms, thr, frac in ((rms_m, temax, frac_m), (rms_s, low, frac_s)):
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(rms > 0, thr / (rms * math.sqrt(2.0)), np.inf)
        p = np.array([math.erfc(x) if math.isfinite(x) else 0.0 for x in z])
        rate += 3600.0 * indep * frac * p
    return DerivedThresholds(monitor, rms_m, max_m, rms_s, max_s, cnt_m, cnt_s, rep.n_alarms,
                             float(te.shape[0] * sample_period), rate, options)


def thresholds_from_fit(plant: Plant, theta: npt.ArrayLike, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike,
                        tau_raw: npt.ArrayLike, sample_period: float, velocity_threshold: npt.ArrayLike,
                        options: ThresholdOptions = ThresholdOptions()) -> DerivedThresholds:
    """Thresholds from an identification: its conditioned motion ``q, qd, qdd`` ``(N, n)`` and raw torque
    ``tau_raw`` ``(N, n)`` (the Identification's ``cond``, or the ``pfb, vfb, afb, tfbRaw`` channels of
    ``IDNT<group>.REC``), the identified ``theta`` and velocity threshold ``(n,)``.

    Residuals by :func:`model_residuals`, rule by :func:`derive_thresholds`, with the identified
    Coulomb coefficients as the floor of the low-velocity band.
    """
    theta = np.asarray(theta, dtype=float)
    te = model_residuals(plant, theta, q, qd, qdd, tau_raw)
    fr = plant.friction.values_by_term(theta[plant.n_model:])
    coulomb = np.abs(np.asarray(fr.get("coulomb", [0.0] * plant.n_joints), dtype=float))
    return derive_thresholds(te, qd, sample_period, velocity_threshold, options,
                             joint_names=tuple(j.name for j in plant.model.joints), coulomb=coulomb)
