"""Additive torque feed-forward (spec/units-and-runtime.md §3–4), one controller cycle at a time.

Per cycle the controller's trajectory gives the joint command ``pcmd, vcmd, acmd`` (SI). The
identified model turns it into the additive torque (softMC ``TADDCOMMAND``)::

    Taddcmd = model(pcmd, vcmd, acmd, payload) + friction(vcmd)     (physical friction sign)

which is checked against ``TorqueThreshold`` and delayed by ``AdditiveTorqueDelay`` cycles before it
goes to the drive's torque offset (DS402 0x60B2), so that it arrives together with the motion it
was computed for. Command values are used, not feedback (computed-torque feed-forward).

``TorqueThreshold`` (spec/units-and-runtime.md §3) comes from the identified model's configuration
(``torque_limits``, which an ``IDNT<g>.PRG`` fills from its ``<axis>.TorqueThreshold`` lines) unless given.
What happens when ``|Taddcmd|`` exceeds it is ``on_threshold``: ``"error"`` is softMC's behaviour (it raises
an error and stops): :func:`feedforward_batch` raises :class:`TorqueThresholdError` naming the axis, the
sample and the value, and the per-cycle :meth:`FeedForward.step` returns ``THRESHOLD_ERROR`` (it never
raises mid-cycle; the caller stops); ``"clamp"`` clamps to ±threshold and flags; ``"report"`` only flags.

Configuration and state are split as in Pinocchio's Model/Data and Ruckig's Input/Output
(style.md §4): :class:`FeedForward` is immutable; :class:`FeedForwardState` holds the delay line
and the buffers; :meth:`FeedForward.step` fills ``state.taddcmd`` in place, allocates nothing and
returns a :class:`FeedForwardStatus` — nothing raises mid-cycle.

>>> import numpy as np
>>> from dynid.models import make_model, Plant
>>> plant = Plant(make_model("rotary3"))
>>> ff = FeedForward(plant, [0.5, 0.0, 4.0, 0.0, 0.1, 0.3], delay_cycles=2)
>>> st = ff.new_state()
>>> [ff.step(st, [0.0], [1.0], [0.0]).name for _ in range(3)], st.taddcmd.round(3).tolist()
(['OK', 'OK', 'OK'], [0.4])
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._validation import as_joint_array, as_vector
from ..errors import ConfigError, InputDataError
from ..models.base import Plant
from ._compiled import RigidBodyDynamics, compile_dynamics

__all__ = ["FeedForward", "FeedForwardState", "FeedForwardStatus", "FeedForwardBatch", "feedforward_batch",
           "DEFAULT_DELAY_CYCLES", "estimate_delay_cycles", "ON_THRESHOLD", "TorqueThresholdError",
           "check_torque_threshold"]

DEFAULT_DELAY_CYCLES = 3
"""softMC's default ``AdditiveTorqueDelay`` [controller cycles]."""

ON_THRESHOLD = ("error", "clamp", "report")
"""What exceeding ``TorqueThreshold`` does: ``error`` (softMC: an error, the motion stops), ``clamp`` (clamp to
±threshold and flag), ``report`` (flag only)."""


class TorqueThresholdError(InputDataError):
    """The additive torque of a trajectory exceeds ``TorqueThreshold`` (softMC raises an error there).

    Attributes
    ----------
    joint : int
        0-based joint index. ``sample`` : int, 0-based row. ``value``, ``threshold`` : float [N m or N].
    """

    def __init__(self, message: str, *, joint: int, sample: int, value: float, threshold: float, **kw) -> None:
        super().__init__(message, **kw)
        self.joint, self.sample, self.value, self.threshold = joint, sample, value, threshold


def check_torque_threshold(tau: npt.ArrayLike, threshold: npt.ArrayLike | None, on_threshold: str = "error", *,
                           t: npt.ArrayLike | None = None, joint_names=None, what: str = "Taddcmd"
                           ) -> tuple[np.ndarray, np.ndarray]:
    """``TorqueThreshold`` check of a whole torque history (softMC: |TADDCOMMAND| > TorqueThreshold).

    Parameters
    ----------
    tau : array-like, shape (N, n_joints)
        Additive torque per cycle [N m or N].
    threshold : array-like, shape (n_joints,), or None
        ``TorqueThreshold`` per joint [N m or N]; ``None`` or ``inf``: no limit.
    on_threshold : {"error", "clamp", "report"}
        See :data:`ON_THRESHOLD`.
    t : array-like, shape (N,), optional
        Time of each row [s], for the message.
    joint_names : sequence of str, optional
        Axis names for the message (default ``A1..An``).
    what : str
        Name of the torque in the message.

    Returns
    -------
    tau : ndarray, shape (N, n_joints)
        Clamped to ±threshold with ``"clamp"``, else unchanged.
    exceeded : ndarray of bool, shape (N, n_joints)

    Raises
    ------
    TorqueThresholdError
        With ``"error"``, at the first sample (then the lowest axis) that exceeds, naming axis, sample,
        time and value.
    """
    if on_threshold not in ON_THRESHOLD:
        raise ConfigError(f"on_threshold must be one of {', '.join(ON_THRESHOLD)}, got {on_threshold!r}")
    tau = np.asarray(tau, dtype=float)
    n = tau.shape[1]
    thr = np.full(n, np.inf) if threshold is None else as_vector("torque_threshold", threshold, n)
    exceeded = np.abs(tau) > thr
    if on_threshold == "error" and exceeded.any():
        k, j = (int(x) for x in np.argwhere(exceeded)[0])
        names = list(joint_names) if joint_names is not None else [f"A{i + 1}" for i in range(n)]
        when = "" if t is None else f" (t = {float(np.asarray(t, dtype=float)[k]):.6g} s)"
        cycles = int(exceeded[:, j].sum())
        raise TorqueThresholdError(
            f"TorqueThreshold exceeded on axis {names[j]} at sample {k}{when}: |{what}| = {abs(tau[k, j]):.6g} > "
            f"{thr[j]:.6g} ({cycles} cycle{'s' if cycles != 1 else ''} on this axis); softMC raises an error here",
            hint="slow the trajectory down or lighten the payload, raise TorqueThreshold, or clamp instead "
                 "(on_threshold='clamp')", options=("on_threshold",),
            joint=j, sample=k, value=float(tau[k, j]), threshold=float(thr[j]))
    if on_threshold == "clamp":
        tau = np.clip(tau, -thr, thr)
    return tau, exceeded


class FeedForwardStatus(enum.IntEnum):
    """Outcome of one :meth:`FeedForward.step`."""

    OK = 0
    THRESHOLD_EXCEEDED = 1
    """|Taddcmd| > TorqueThreshold on at least one joint (``state.exceeded`` says which) with
    ``on_threshold`` ``"clamp"`` (the value entering the delay line is clamped to the threshold) or
    ``"report"`` (it is not)."""
    INVALID_INPUT = 2
    """A non-finite command, or one where a closed chain does not assemble: the previous additive torque is
    repeated for that cycle."""
    THRESHOLD_ERROR = 3
    """|Taddcmd| > TorqueThreshold with ``on_threshold="error"`` (softMC's behaviour): softMC raises an error
    and stops the motion, so the caller must stop; the value entering the delay line is clamped meanwhile."""


@dataclass(frozen=True, eq=False)
class FeedForward:
    """Immutable feed-forward configuration.

    Parameters
    ----------
    plant : Plant
        Model + friction block; the model's configured payload is included.
    theta : array-like, shape (n_params,)
        Identified parameters, model then friction (physical sign convention).
    delay_cycles : int
        ``AdditiveTorqueDelay`` [cycles], >= 0 (default 3).
    torque_threshold : float or array-like, shape (n_joints,), optional
        ``TorqueThreshold`` [N m or N] per joint; ``None`` = no limit.
    clamp : bool
        Clamp an exceeding value to ``±torque_threshold`` before it enters the delay line (used when
        ``on_threshold`` is not given: ``True`` is ``"clamp"``, ``False`` is ``"report"``).
    dynamics : RigidBodyDynamics, optional
        Single-sample evaluator; default :func:`~dynid.runtime._compiled.compile_dynamics`.
    on_threshold : {"error", "clamp", "report"}, optional
        What exceeding ``torque_threshold`` does (:data:`ON_THRESHOLD`); ``"error"`` is softMC's behaviour:
        :meth:`step` returns ``THRESHOLD_ERROR`` (value clamped), :func:`feedforward_batch` raises
        :class:`TorqueThresholdError`.
    """

    plant: Plant
    theta: np.ndarray
    delay_cycles: int = DEFAULT_DELAY_CYCLES
    torque_threshold: np.ndarray | None = None
    clamp: bool = True
    dynamics: RigidBodyDynamics | None = field(default=None, repr=False)
    on_threshold: str | None = None

    def __post_init__(self) -> None:
        mode = self.on_threshold if self.on_threshold is not None else ("clamp" if self.clamp else "report")
        if mode not in ON_THRESHOLD:
            raise ConfigError(f"on_threshold must be one of {', '.join(ON_THRESHOLD)}, got {mode!r}")
        object.__setattr__(self, "on_threshold", mode)
        object.__setattr__(self, "clamp", mode != "report")
        theta = np.array(self.theta, dtype=float).ravel()
        if theta.shape != (self.plant.n_params,):
            raise ConfigError(f"theta must have {self.plant.n_params} values ({self.plant.model.name} + friction), "
                              f"got {theta.size}")
        if not np.all(np.isfinite(theta)):
            raise ConfigError("theta holds non-finite values")
        theta.flags.writeable = False
        object.__setattr__(self, "theta", theta)
        d = self.delay_cycles
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ConfigError(f"delay_cycles (AdditiveTorqueDelay) must be an integer >= 0, got {d!r}")
        object.__setattr__(self, "delay_cycles", int(d))
        n = self.plant.n_joints
        thr = np.full(n, np.inf) if self.torque_threshold is None else as_vector(
            "torque_threshold", self.torque_threshold, n).copy()
        if np.any(~(thr > 0)):
            raise ConfigError(f"torque_threshold must be positive per joint, got {thr.tolist()}")
        thr.flags.writeable = False
        object.__setattr__(self, "torque_threshold", thr)
        if self.dynamics is None:
            object.__setattr__(self, "dynamics", compile_dynamics(self.plant, theta))

    @classmethod
    def from_result(cls, identified, *, delay_cycles: int = DEFAULT_DELAY_CYCLES,
                    torque_threshold: npt.ArrayLike | None = None, payload_mass: float | None = None,
                    payload_inertia: float | None = None, clamp: bool = True,
                    dynamics: RigidBodyDynamics | None = None, on_threshold: str | None = None) -> "FeedForward":
        """Build from an identification (:class:`~dynid.identification.pipeline.Identification` or the
        :class:`~dynid.fitted.FittedModel`, e.g. ``dynid.load(result.json)`` or ``dynid.load("IDNT1.PRG",
        "scara4", config=...)``), optionally with another payload [kg, kg m²] or another single-sample
        evaluator (``dynamics``, e.g. the generated C: ``dynid.symbolic.GeneratedDynamics.from_fitted(model)``).
        ``torque_threshold`` defaults to the model's ``TorqueThreshold`` (its configuration's ``torque_limits``,
        from the PRG's ``<axis>.TorqueThreshold`` lines), else none."""
        plant = identified.plant
        if torque_threshold is None and plant.model.config.torque_limits is not None:
            torque_threshold = plant.model.config.torque_limits
        if payload_mass is not None or payload_inertia is not None:
            plant = plant.with_model(plant.model.with_payload(payload_mass, payload_inertia))
        return cls(plant, identified.theta, delay_cycles, torque_threshold, clamp, dynamics, on_threshold)

    @property
    def n_joints(self) -> int:
        return self.plant.n_joints

    def new_state(self, prefill: npt.ArrayLike | None = None) -> "FeedForwardState":
        """A fresh state whose delay line holds ``prefill`` ``(n_joints,)`` [N m or N] (default 0):
        what is sent during the first ``delay_cycles`` cycles."""
        return FeedForwardState(self, prefill)

    def torque(self, pcmd: npt.ArrayLike, vcmd: npt.ArrayLike, acmd: npt.ArrayLike) -> np.ndarray:
        """Model torque (with friction, before threshold and delay) of one command ``(n_joints,)``
        [N m or N]; allocating convenience, e.g. for the delay-line prefill at rest."""
        st = FeedForwardState(self)
        q, qd, qdd = (as_vector(k, x, self.n_joints) for k, x in (("pcmd", pcmd), ("vcmd", vcmd), ("acmd", acmd)))
        out = np.empty(self.n_joints)
        self.dynamics.torque_into(st.ws, q, qd, qdd, out)
        st.friction.sign_into(qd, st.sign)
        st.friction.add_into(qd, qdd, st.sign, out)
        return out

    def step(self, state: "FeedForwardState", pcmd, vcmd, acmd) -> FeedForwardStatus:
        """One controller cycle.

        Parameters
        ----------
        state : FeedForwardState
            Updated in place: ``state.taddcmd`` ``(n_joints,)`` is the additive torque to send now
            [N m or N] (computed ``delay_cycles`` cycles ago); ``state.computed`` the value computed
            this cycle; ``state.exceeded`` ``(n_joints,)`` bool.
        pcmd, vcmd, acmd : ndarray, shape (n_joints,)
            Commanded position [rad, m], velocity [rad/s, m/s], acceleration [rad/s², m/s²]
            (float64 arrays for the allocation-free path).

        Returns
        -------
        FeedForwardStatus
        """
        s = state
        comp = s.computed
        status = FeedForwardStatus.OK
        fin = s.finite
        n = fin.shape[0]
        valid = (np.count_nonzero(np.isfinite(pcmd, out=fin)) + np.count_nonzero(np.isfinite(vcmd, out=fin))
                 + np.count_nonzero(np.isfinite(acmd, out=fin))) == 3 * n
        if valid:
            try:
                self.dynamics.torque_into(s.ws, pcmd, vcmd, acmd, comp)
            except ValueError:   # a closed chain that does not assemble at pcmd (forward kinematics)
                valid = False
        if not valid:
            np.copyto(comp, s.last_valid)
            s.exceeded.fill(False)
            status = FeedForwardStatus.INVALID_INPUT
        else:
            s.friction.sign_into(vcmd, s.sign)
            s.friction.add_into(vcmd, acmd, s.sign, comp)
            np.abs(comp, out=s.work)
            np.greater(s.work, self.torque_threshold, out=s.exceeded)
            if np.count_nonzero(s.exceeded):
                status = s.exceeded_status
                if self.clamp:
                    np.minimum(comp, self.torque_threshold, out=comp)
                    np.maximum(comp, s.neg_threshold, out=comp)
            np.copyto(s.last_valid, comp)
        rows = s.rows
        np.copyto(rows[s.head], comp)
        out_slot = s.head + 1 if s.head + 1 < len(rows) else 0       # written delay_cycles cycles ago
        np.copyto(s.taddcmd, rows[out_slot])
        s.head = out_slot
        s.cycle += 1
        return status


class FeedForwardState:
    """Mutable per-run state of a :class:`FeedForward`: the delay line and preallocated buffers.

    Attributes
    ----------
    taddcmd : ndarray, shape (n_joints,)
        Additive torque to send this cycle [N m or N].
    computed : ndarray, shape (n_joints,)
        Value computed this cycle (after clamping), sent ``delay_cycles`` cycles later.
    exceeded : ndarray of bool, shape (n_joints,)
        Joints whose computed value exceeded ``TorqueThreshold`` this cycle.
    cycle : int
        Cycles stepped since the state was created.
    """

    def __init__(self, ff: FeedForward, prefill: npt.ArrayLike | None = None) -> None:
        n = ff.n_joints
        fill = np.zeros(n) if prefill is None else as_vector("prefill", prefill, n)
        self.line = np.tile(fill, (ff.delay_cycles + 1, 1))
        self.rows = [self.line[i] for i in range(ff.delay_cycles + 1)]   # views, made once
        self.head = 0
        self.taddcmd = fill.copy()
        self.computed = fill.copy()
        self.last_valid = fill.copy()
        self.exceeded = np.zeros(n, dtype=bool)
        self.finite = np.zeros(n, dtype=bool)
        self.work = np.empty(n)
        self.sign = np.empty(n)
        self.neg_threshold = -ff.torque_threshold
        self.exceeded_status = (FeedForwardStatus.THRESHOLD_ERROR if ff.on_threshold == "error"
                                else FeedForwardStatus.THRESHOLD_EXCEEDED)
        self.ws = ff.dynamics.new_workspace()
        self.friction = ff.plant.friction_coefficients(ff.theta)
        self.cycle = 0


@dataclass(frozen=True)
class FeedForwardBatch:
    """Feed-forward of a whole trajectory.

    taddcmd : (N, n_joints) additive torque sent at each cycle [N m or N] (``computed`` shifted by
    the delay; the first ``delay`` rows hold the prefill) ; computed : (N, n_joints) ;
    exceeded : (N, n_joints) bool ; delay_cycles : int
    """

    taddcmd: np.ndarray
    computed: np.ndarray
    exceeded: np.ndarray
    delay_cycles: int

    @property
    def n_exceeded(self) -> np.ndarray:
        """Cycles with a TorqueThreshold exceedance, per joint ``(n_joints,)``."""
        return self.exceeded.sum(axis=0)


def feedforward_batch(ff: FeedForward, pcmd: npt.ArrayLike, vcmd: npt.ArrayLike, acmd: npt.ArrayLike, *,
                      prefill: npt.ArrayLike | None = None, t: npt.ArrayLike | None = None) -> FeedForwardBatch:
    """The additive torque of a whole commanded trajectory (vectorised; equal to stepping while no
    ``TorqueThreshold`` error occurs).

    Parameters
    ----------
    ff : FeedForward
    pcmd, vcmd, acmd : array-like, shape (N, n_joints)
        Commanded positions [rad, m], velocities, accelerations (SI), one row per controller cycle.
    prefill : array-like, shape (n_joints,), optional
        Delay-line content sent during the first ``delay_cycles`` cycles (default 0).
    t : array-like, shape (N,), optional
        Time of each cycle [s], for the message of a threshold error.

    Returns
    -------
    FeedForwardBatch

    Raises
    ------
    TorqueThresholdError
        ``ff.on_threshold == "error"`` and the computed torque exceeds ``TorqueThreshold`` (axis, sample, value).
    """
    n = ff.n_joints
    q = as_joint_array("pcmd", pcmd, n)
    qd = as_joint_array("vcmd", vcmd, n, n_samples=q.shape[0])
    qdd = as_joint_array("acmd", acmd, n, n_samples=q.shape[0])
    tau = ff.plant.torque(ff.theta, q, qd, qdd)          # exact sign(qd), as the per-cycle path
    tau, exceeded = check_torque_threshold(tau, ff.torque_threshold, ff.on_threshold, t=t,
                                           joint_names=[j.name for j in ff.plant.model.joints])
    d = ff.delay_cycles
    fill = np.zeros(n) if prefill is None else as_vector("prefill", prefill, n)
    out = np.empty_like(tau)
    m = max(tau.shape[0] - d, 0)
    out[: tau.shape[0] - m] = fill
    out[tau.shape[0] - m:] = tau[:m]
    return FeedForwardBatch(out, tau, exceeded, d)


def estimate_delay_cycles(ff: FeedForward, pcmd: npt.ArrayLike, vcmd: npt.ArrayLike, acmd: npt.ArrayLike,
                          tfb: npt.ArrayLike, *, max_delay: int = 10) -> tuple[int, np.ndarray]:
    """``AdditiveTorqueDelay`` that best matches a log: the shift of the model torque of the command that
    minimises the median absolute ``tfb − model(cmd[k − d])`` (spec/units-and-runtime.md §3, "optionally
    estimate the delay by maximising the agreement between modelled and measured torque").

    Parameters
    ----------
    ff : FeedForward
        The identified model (its own delay and threshold are not used).
    pcmd, vcmd, acmd : array-like, shape (N, n_joints)
        Command of each controller cycle (SI).
    tfb : array-like, shape (N, n_joints)
        Measured torque of each cycle [N m or N], logged while following that command.
    max_delay : int
        Largest delay tried [cycles].

    Returns
    -------
    delay : int
        Best delay [cycles].
    spread : ndarray, shape (max_delay + 1,)
        Median absolute residual for each delay 0..max_delay, joints weighted by 1 / RMS of their
        torque so small joints count [dimensionless].
    """
    n = ff.n_joints
    q = as_joint_array("pcmd", pcmd, n)
    qd = as_joint_array("vcmd", vcmd, n, n_samples=q.shape[0])
    qdd = as_joint_array("acmd", acmd, n, n_samples=q.shape[0])
    tau = as_joint_array("tfb", tfb, n, n_samples=q.shape[0])
    if not 0 <= max_delay < q.shape[0] // 2:
        raise ConfigError(f"max_delay must be in 0..{q.shape[0] // 2 - 1} for {q.shape[0]} samples, got {max_delay}")
    model = ff.plant.torque(ff.theta, q, qd, qdd)
    w = 1.0 / np.maximum(np.sqrt(np.mean(tau**2, axis=0)), 1e-12)
    N = q.shape[0]
    # robust spread (median absolute residual): a collision or a saturation in the log does not decide it
    spread = np.array([np.median(np.abs((tau[max_delay:] - model[max_delay - d: N - d]) * w))
                       for d in range(max_delay + 1)])
    return int(np.argmin(spread)), spread
