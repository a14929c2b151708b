"""Optimised Fourier-series excitation (spec/identification.md §8; the 6-UPRU paper's 5 harmonics).

Trajectory of joint i (``w = 2 pi / period_s``, ``l = 1..N``)::

    q_i(t)   = q_i0 + sum_l [ a_il/(w l) sin(w l t) - b_il/(w l) cos(w l t) ]
    qd_i(t)  = sum_l [ a_il cos(w l t) + b_il sin(w l t) ]
    qdd_i(t) = sum_l w l [ -a_il sin(w l t) + b_il cos(w l t) ]

It is periodic, so it ends where it starts, and it starts and ends at rest: ``qd(0) = sum_l a_il = 0``
and ``qdd(0) = w sum_l l b_il = 0``. Both are imposed exactly by eliminating ``a_iN`` and ``b_i1``,
leaving ``2N - 2`` coefficients plus ``q_i0`` per joint. The period is the record time divided by
``periods`` (1 by default: one period fills the record).

Optimisation
------------
Objective, on a coarse grid of ``grid_points`` samples over one period: ``"cond"`` (default)
``log cond(W) - kappa · mean_i log sigma_i(W)``, the raw 2-norm condition number of the base-parameter
observation matrix (the number reported) with a D-optimal term of weight ``kappa = dopt_weight`` (3;
0 gives the pure condition number, see :class:`FourierOptions` for why the term is there); the same
with unit-norm columns (``"cond_scaled"``); or D-optimality ``-log det(W^T W)`` (``"dopt"``). Options
``snr_weight`` and ``slow_fraction`` refine the criterion further. Exact
gradient: the singular-value derivative ``d sigma = u^T dW v`` (through the Gram matrix eigenpairs),
chained with ``dW/d(q, qd, qdd)`` per sample by forward differences of the regressor with the Coulomb
sign held fixed (one batched regressor call), then with the linear map from coefficients to states.

Constraints on the coarse grid, tightened by ``margin`` (2 %): positions inside the limits (the
start/target box), ``|qd| <= v_max``, ``|qdd| <= a_max`` (all linear in the coefficients), when
torque limits are given, ``|tau| <= tau_max`` with the torque predicted from the example parameters
(or ``theta``), and the mechanism's own limits where the model has them
(:meth:`~dynid.models.DynamicModel.configuration_check`: a hexapod's U-joint angles, its distance from
singularity, a Delta's transmission angles and distance from its parallel singularity; assembly), with
derivatives by forward differences in the joint positions. Solver: SciPy SLSQP. Its iterates may leave
the constraints on the way (the line search of the first iterations can reach positions far outside the
box): where a closed chain does not assemble there the objective is a large constant
(:class:`~dynid.models.closed_chain.KinematicsError` is caught), and each run keeps its best iterate that
satisfies every constraint (to 1e-6), not merely its last. Starts: with ``reference_hz`` (the frequencies
of the sine program the design is compared with) one start imitates that sine (each joint's sine
velocity over one period projected by least squares onto the series, about the box centre, filled to
the limits), so the search begins about as informative as the sine; then ``restarts`` random starts
(coefficients from a seeded ``numpy.random.default_rng(seed)``, scaled to use 90 % of the tightest
limit, ``q_i0`` at the box centre). Each runs ``screen_iter`` iterations; the best is polished up to
``max_iter`` iterations.

Final check: the trajectory is sampled every ``check_dt`` (1 ms) over the record and checked against
every limit. If the coarse grid missed a peak, the oscillation is scaled about ``q_i0`` (which keeps
it inside the box) by the largest factor that passes; a trajectory that still violates a limit is
returned with ``limits_ok = False`` (``strict=True``, the default, raises
:class:`~dynid.excite.limits.LimitViolationError`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..bounds import HARMONICS_WHY, MAX_HARMONICS, TIME_BUDGET_S
from ..errors import ConfigError, ShapeError
from ..models.base import Plant
from ..models.closed_chain import KinematicsError
from ._search import Clock, search
from .identifiability import condition_numbers, default_theta, plant_base
from ..threads import blas_single_threaded
from .limits import JointLimits, LimitCheck, check_limits

__all__ = ["FourierTrajectory", "FourierMotion", "FourierOptions", "FourierDesign", "optimize_fourier", "OBJECTIVES",
           "choose_periods", "MAX_HARMONICS", "HARMONICS_WHY", "TIME_BUDGET_S"]

OBJECTIVES = ("cond", "cond_scaled", "dopt")

_UNASSEMBLED = 1e3
"""Objective (and constraint deficit) where a closed chain does not assemble: far above any log cond."""


@dataclass(frozen=True)
class FourierTrajectory:
    """A finite Fourier series trajectory (module docstring), SI units.

    Attributes
    ----------
    period_s : float
        [s]; base angular frequency ``w = 2 pi / period_s``.
    q0 : ndarray, shape (n_joints,)
        Offsets [rad or m] (the mean position).
    a, b : ndarray, shape (n_joints, n_harmonics)
        Velocity amplitudes [rad/s or m/s] of the cosine and sine terms of ``qd``.
    """

    period_s: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __post_init__(self) -> None:
        q0 = np.array(self.q0, dtype=float).ravel()
        a = np.array(self.a, dtype=float)
        b = np.array(self.b, dtype=float)
        if a.ndim != 2 or a.shape != b.shape or a.shape[0] != q0.size:
            raise ShapeError(f"a and b must have shape (n_joints, n_harmonics) = ({q0.size}, N), got {a.shape} and {b.shape}")
        if not (math.isfinite(self.period_s) and self.period_s > 0):
            raise ConfigError(f"period_s must be positive, got {self.period_s}")
        for name, v in (("q0", q0), ("a", a), ("b", b)):
            v.flags.writeable = False
            object.__setattr__(self, name, v)

    @property
    def n_joints(self) -> int:
        return int(self.q0.size)

    @property
    def harmonics(self) -> int:
        return int(self.a.shape[1])

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, qd, qdd)``, each ``(N, n_joints)``, at times ``t`` ``(N,)`` [s]."""
        t = np.asarray(t, dtype=float).ravel()
        w = 2 * np.pi / self.period_s
        l = np.arange(1, self.harmonics + 1)
        wt = w * t[:, None] * l[None, :]                      # (N, H)
        s, c = np.sin(wt), np.cos(wt)
        wl = w * l
        q = self.q0 + s @ (self.a / wl).T - c @ (self.b / wl).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * wl).T + c @ (self.b * wl).T
        return q, qd, qdd

    def sample(self, duration_s: float, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(t, q, qd, qdd)`` on ``t = 0, dt, .., duration_s`` (both ends included) [s]."""
        if not (dt > 0 and duration_s > 0):
            raise ConfigError(f"duration_s and dt must be positive, got {duration_s} and {dt}")
        t = np.arange(int(math.floor(duration_s / dt + 1e-9)) + 1) * dt
        return (t, *self.evaluate(t))

    def motion(self, record_s: float, settle_s: float = 0.0) -> "FourierMotion":
        """The motion for the simulator: run ``settle_s`` then record ``record_s`` [s]."""
        return FourierMotion(self, float(record_s), float(settle_s))

    def to_dict(self) -> dict:
        return {"period_s": self.period_s, "harmonics": self.harmonics, "q0": self.q0.tolist(), "a": self.a.tolist(),
                "b": self.b.tolist()}


@dataclass(frozen=True)
class FourierMotion:
    """A :class:`FourierTrajectory` as a simulator motion (``dynid.sim.Motion``): starts at rest at ``q(0)``."""

    trajectory: FourierTrajectory
    record_s: float
    settle_s: float = 0.0

    @property
    def n_joints(self) -> int:
        return self.trajectory.n_joints

    @property
    def duration(self) -> float:
        return self.settle_s + self.record_s

    def command(self, t):
        return self.trajectory.evaluate(t)


@dataclass(frozen=True)
class FourierOptions:
    """Settings of :func:`optimize_fourier`.

    harmonics : int
        N (5, the 6-UPRU paper's).
    periods : int
        Periods per record (the period is ``record_s / periods``).
    objective : {"cond", "cond_scaled", "dopt"}
    restarts : int
        Random starts (screened for ``screen_iter`` iterations; the best is polished).
    seed : int
        Seed of the random starts (same seed, same trajectory).
    grid_points : int, optional
        Coarse optimisation grid per period (default ``16 · harmonics``, at least 96).
    max_iter, screen_iter : int
        SLSQP iterations for the polish and for each screened start.
    tol : float
        SLSQP ``ftol`` on the objective.
    margin : float
        Constraints on the coarse grid are tightened by this fraction of each limit.
    check_dt : float
        Spacing of the final limit check [s] (1 ms).
    init_fill : float
        Random starts are scaled to use this fraction of the tightest limit.
    slow_fraction : float
        Rows of the objective's observation matrix are weighted by ``1 - exp(-(qd_j / v_slow,j)^2)`` with
        ``v_slow = slow_fraction · v_max`` (0, the default: no weighting): samples where a joint barely moves
        carry little information and are where friction models are least accurate (Stribeck, stiction);
        identification gates them out, and this makes the design not count on them either.
    dopt_weight : float
        ``kappa`` of the ``cond`` and ``cond_scaled`` objectives: ``log cond(W) - kappa · mean_i log sigma_i(W)``
        (3 by default; 0 is the pure condition number). The condition number alone is blind to how large
        the excitation is: it is as happy with a slow, small motion as with one that uses the limits, and
        pure-cond designs dwell at low speed. The D-optimal term (the mean log singular value, i.e.
        ``log det(W^T W) / (2 n_base)``) keeps every singular value large. With ``kappa = 3`` the PUMA
        design still has ~1/20 of the sine program's condition number and identifies about twice as well
        in the simulator (benchmarks/excitation.py).
    snr_weight : float
        ``alpha``: the ``log sigma_min`` term gets weight ``1 + alpha`` (0 by default): rewards a large smallest
        singular value, Gautier and Khalil's ``cond + k / sigma_min`` idea.
    time_budget_s : float or None
        Wall time the optimisation may take [s] (:data:`TIME_BUDGET_S`; None: no limit): when it is used up the
        search stops at the next evaluation and the best design found so far is returned, with
        ``FourierDesign.stopped_early`` and a message saying so.
    """

    harmonics: int = 5
    periods: int = 1
    objective: str = "cond"
    restarts: int = 3
    seed: int = 0
    grid_points: int | None = None
    max_iter: int = 60
    screen_iter: int = 15
    tol: float = 1e-6
    margin: float = 0.02
    check_dt: float = 1e-3
    init_fill: float = 0.9
    slow_fraction: float = 0.0
    snr_weight: float = 0.0
    dopt_weight: float = 3.0
    time_budget_s: float | None = TIME_BUDGET_S

    def __post_init__(self) -> None:
        if not (isinstance(self.harmonics, (int, np.integer)) and self.harmonics >= 1):
            raise ConfigError(f"harmonics must be an integer >= 1, got {self.harmonics!r}", options=("harmonics",))
        if self.harmonics > MAX_HARMONICS:
            raise ConfigError(f"{self.harmonics} harmonics: at most {MAX_HARMONICS}. " + HARMONICS_WHY,
                              hint=f"use {MAX_HARMONICS} or fewer harmonics (5, the default, is the 6-UPRU paper's), "
                                   "or more periods per record", options=("harmonics",))
        if self.time_budget_s is not None and not self.time_budget_s > 0:
            raise ConfigError(f"time_budget_s must be positive [s] or None, got {self.time_budget_s}",
                              options=("time_budget_s",))
        if not (isinstance(self.periods, (int, np.integer)) and self.periods >= 1):
            raise ConfigError(f"periods must be an integer >= 1, got {self.periods!r}")
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if self.restarts < 1 or self.max_iter < 1 or self.screen_iter < 0:
            raise ConfigError("restarts and max_iter must be >= 1, screen_iter >= 0")
        if not 0 <= self.margin < 0.5:
            raise ConfigError(f"margin must be in [0, 0.5), got {self.margin}")
        if not self.snr_weight >= 0:
            raise ConfigError(f"snr_weight must be >= 0, got {self.snr_weight}")
        if not 0 <= self.slow_fraction < 1:
            raise ConfigError(f"slow_fraction must be in [0, 1), got {self.slow_fraction}")
        if not self.check_dt > 0:
            raise ConfigError(f"check_dt must be positive, got {self.check_dt}")
        if self.grid_points is not None and self.grid_points < 4 * self.harmonics:
            raise ConfigError(f"grid_points must be at least 4 x harmonics ({4 * self.harmonics}), got {self.grid_points}")

    @property
    def n_grid(self) -> int:
        return int(self.grid_points) if self.grid_points is not None else max(96, 16 * int(self.harmonics))


@dataclass(frozen=True)
class FourierDesign:
    """Result of :func:`optimize_fourier`.

    trajectory : FourierTrajectory
    record_s : float
    limits : JointLimits — the limits enforced (SI)
    condition_number, condition_number_scaled : float — of the base-parameter observation matrix over the
        record (``check_dt`` grid, at most 20 000 samples)
    limits_ok : bool — every limit holds on the ``check_dt`` grid
    check : LimitCheck
    scale : float — factor the optimised oscillation was scaled by in the final repair (1 = none)
    objective : str ; objective_value : float (coarse grid)
    restarts : tuple of dict — per start (``"reference"``, 1, 2, .., then ``"polish"``): objective, iterations,
        success, message
    seed : int ; run_time_s : float
    success : bool ; message : str
    stopped_early : bool — the time budget ended the search (the best design found is returned)
    """

    trajectory: FourierTrajectory
    record_s: float
    limits: JointLimits
    condition_number: float
    condition_number_scaled: float
    limits_ok: bool
    check: LimitCheck
    scale: float
    objective: str
    objective_value: float
    restarts: tuple = field(default_factory=tuple)
    seed: int = 0
    run_time_s: float = 0.0
    success: bool = True
    message: str = ""
    stopped_early: bool = False

    def to_dict(self) -> dict:
        return {"condition_number": self.condition_number, "condition_number_scaled": self.condition_number_scaled,
                "limits_ok": self.limits_ok, "violations": list(self.check.violations), "limit_usage": self.check.to_dict()["usage"],
                "check_grid_s": self.check.dt, "scale": self.scale, "objective": self.objective,
                "objective_value": self.objective_value, "restarts": list(self.restarts), "seed": self.seed,
                "run_time_s": self.run_time_s, "record_s": self.record_s, "success": self.success, "message": self.message,
                "stopped_early": self.stopped_early,
                "trajectory": self.trajectory.to_dict(), "limits": self.limits.to_dict()}


def choose_periods(limits: JointLimits, record_s: float, harmonics: int) -> int:
    """Periods per record that let an N-harmonic series use the limits (at least 1).

    A joint with half range ``A``, velocity limit ``v`` and acceleration limit ``a`` is used fully by a
    sine at ``ω* = min(v/A, sqrt(a/A))``; the base frequency is chosen so that the middle harmonic sits
    there, ``ω0 = 2 ω*/N`` (median ``ω*`` over the joints), and the record holds ``round(record_s ω0 / 2π)``
    periods. A small range with brisk limits (a hexapod's ±5 cm legs) gets several periods; a 20 s PUMA
    program over ±100° gets 2.
    """
    half = 0.5 * (limits.upper - limits.lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.minimum(limits.velocity / half, np.sqrt(limits.acceleration / half))
    w = w[np.isfinite(w) & (w > 0)]
    if w.size == 0:
        return 1
    w0 = 2.0 * float(np.median(w)) / max(int(harmonics), 1)
    return max(1, int(round(record_s * w0 / (2 * np.pi))))


# ------------------------------------------------------------------------------------------ problem

def _reduction(H: int) -> np.ndarray:
    """``x = (a_1..a_H, b_1..b_H) = R z`` with ``z = (a_1..a_{H-1}, b_2..b_H)``: sum a = 0, sum l b_l = 0."""
    R = np.zeros((2 * H, 2 * H - 2))
    for k in range(H - 1):
        R[k, k] = 1.0
        R[H - 1, k] = -1.0
    for k in range(1, H):
        R[H + k, H - 2 + k] = 1.0
        R[H, H - 2 + k] = -(k + 1.0)
    return R


def _basis(t: np.ndarray, H: int, w: float):
    """Maps from ``(a, b)`` ``(2H,)`` to q - q0, qd, qdd at times ``t``: three ``(N, 2H)`` matrices."""
    l = np.arange(1, H + 1)[None, :]
    wt = w * l * t[:, None]
    s, c = np.sin(wt), np.cos(wt)
    return (np.hstack([s / (w * l), -c / (w * l)]), np.hstack([c, s]), np.hstack([-w * l * s, w * l * c]))


class _Problem:
    """Coefficients ``u`` (scaled) -> states on the coarse grid, objective, gradient and constraints."""

    def __init__(self, plant: Plant, limits: JointLimits, period: float, opts: FourierOptions, theta, base_idx):
        self.plant = plant
        self.n = plant.n_joints
        self.H = H = int(opts.harmonics)
        self.nz = 2 * H - 2
        self.idx = base_idx
        self.opts = opts
        self.w = 2 * np.pi / period
        self.t = np.arange(opts.n_grid) * period / opts.n_grid
        R = _reduction(H)
        self.R = R
        Pq, Pv, Pa = (M @ R for M in _basis(self.t, H, self.w))
        self.Pq, self.Pv, self.Pa = Pq, Pv, Pa
        self.limits = limits
        # variable scaling: coefficients in units of the velocity limit, q0 in half-ranges
        half = 0.5 * (limits.upper - limits.lower)
        self.center = 0.5 * (limits.upper + limits.lower)
        self.sc = np.concatenate([np.repeat(limits.velocity, self.nz), half])
        self.theta = theta
        self.v_slow = None if not opts.slow_fraction else opts.slow_fraction * limits.velocity
        self.torque_joints = np.nonzero(np.isfinite(limits.torque))[0] if theta is not None else np.array([], int)
        self._cache_key = None
        self._build_linear()
        probe = plant.model.configuration_check(self.center[None])
        self.n_config = 0 if probe is None else len(probe.names)

    # --- states
    def split(self, u):
        x = u * self.sc
        Z = x[: self.n * self.nz].reshape(self.n, self.nz)
        return Z, x[self.n * self.nz:]

    def states(self, u):
        Z, q0 = self.split(u)
        return q0 + self.Pq @ Z.T, self.Pv @ Z.T, self.Pa @ Z.T

    def to_trajectory(self, u, period: float) -> FourierTrajectory:
        Z, q0 = self.split(u)
        X = Z @ self.R.T                                   # (n, 2H)
        return FourierTrajectory(period, q0, X[:, : self.H], X[:, self.H:])

    # --- linear constraints  A u + c >= 0
    def _build_linear(self):
        n, nz, NG = self.n, self.nz, self.t.size
        m = 1.0 - self.opts.margin
        L = self.limits
        rows, consts = [], []
        for j in range(n):  # per joint: three two-sided blocks on the grid
            off = slice(j * nz, (j + 1) * nz)
            span = L.upper[j] - L.lower[j]
            for P, lo, hi, with_q0 in ((self.Pq, L.lower[j] + 0.5 * (1 - m) * span, L.upper[j] - 0.5 * (1 - m) * span, True),
                                       (self.Pv, -m * L.velocity[j], m * L.velocity[j], False),
                                       (self.Pa, -m * L.acceleration[j], m * L.acceleration[j], False)):
                M = np.zeros((NG, n * nz + n))
                M[:, off] = P
                if with_q0:
                    M[:, n * nz + j] = 1.0
                M = M * self.sc[None, :]
                rows += [M, -M]
                consts += [np.full(NG, -lo), np.full(NG, hi)]
        self.A = np.vstack(rows)
        self.c = np.concatenate(consts)

    def linear(self, u):
        return self.A @ u + self.c

    # --- regressor and its state derivatives (cached per u)
    def _eval(self, u, with_derivs: bool):
        key = (u.tobytes(), with_derivs)
        if self._cache_key is not None and self._cache_key[0] == key[0] and (self._cache_key[1] or not with_derivs):
            return self._cache
        q, qd, qdd = self.states(u)
        sg = np.sign(qd)
        n, NG = self.n, q.shape[0]
        if with_derivs:
            hs = [1e-6 * (1 + np.abs(q).max()), 1e-6 * (1 + np.abs(qd).max()), 1.0]  # qdd: Y is linear in it
            Q = np.tile(q, (3 * n + 1, 1))
            V = np.tile(qd, (3 * n + 1, 1))
            Acc = np.tile(qdd, (3 * n + 1, 1))
            for k in range(3):  # perturb one state of one joint per block
                for j in range(n):
                    b = (1 + k * n + j) * NG
                    (Q, V, Acc)[k][b:b + NG, j] += hs[k]
            Yall = self.plant.regressor(Q, V, Acc, sign=np.tile(sg, (3 * n + 1, 1)))
            Y = Yall[:NG]
            D = (Yall[NG:].reshape(3, n, NG, n, -1) - Y[None, None]) / np.array(hs)[:, None, None, None, None]
            off = self.plant.offset(Q, V, Acc) if self.torque_joints.size else None
        else:
            Y = self.plant.regressor(q, qd, qdd, sign=sg)
            D, off = None, (self.plant.offset(q, qd, qdd) if self.torque_joints.size else None)
        cache = {"q": q, "qd": qd, "qdd": qdd, "Y": Y, "D": D}
        if self.torque_joints.size:
            tau = Y @ self.theta + off[:NG]
            cache["tau"] = tau
            if D is not None:
                dtau = D @ self.theta + (off[NG:].reshape(3, n, NG, n) - off[:NG][None, None]) / np.array(hs)[:, None, None, None]
                cache["dtau"] = dtau                        # (3, n_state_joint, NG, n_joint)
        self._cache_key = key
        self._cache = cache
        return cache

    def _objective(self, W):
        """Value and dvalue/dW of the objective on W (rows, nb)."""
        kind = self.opts.objective
        if kind == "dopt":
            G0 = W.T @ W
            sign, logdet = np.linalg.slogdet(G0)
            if sign <= 0:
                return 1e6, np.zeros_like(W)
            return -logdet, -2.0 * W @ np.linalg.inv(G0)
        if kind == "cond_scaled":
            d = np.linalg.norm(W, axis=0)
            d = np.where(d > 0, d, 1.0)
            S = W / d
            f, GS = self._logcond(S, self.opts.snr_weight, self.opts.dopt_weight)
            return f, (GS - S * np.sum(S * GS, axis=0)) / d
        return self._logcond(W, self.opts.snr_weight, self.opts.dopt_weight)

    @staticmethod
    def _logcond(W, alpha: float = 0.0, kappa: float = 0.0):
        """``log sigma_max - (1 + alpha) log sigma_min - kappa mean_i log sigma_i`` and its gradient
        (``alpha = kappa = 0``: log cond)."""
        lam, V = np.linalg.eigh(W.T @ W)
        if lam[0] <= lam[-1] * 1e-28:
            return 0.5 * math.log(1e28), np.zeros_like(W)
        v1, vn = V[:, -1], V[:, 0]
        G = np.outer(W @ v1, v1) / lam[-1] - (1.0 + alpha) * np.outer(W @ vn, vn) / lam[0]
        f = 0.5 * math.log(lam[-1]) - 0.5 * (1.0 + alpha) * math.log(lam[0])
        if kappa:
            f -= kappa * 0.5 * float(np.mean(np.log(lam)))
            G = G - (kappa / lam.size) * (W @ (V / lam) @ V.T)
        return f, G

    def _weights(self, qd):
        """Row weights ``1 - exp(-(qd/v_slow)^2)`` ``(NG, n)`` and their derivatives w.r.t. qd."""
        if self.v_slow is None:
            return np.ones_like(qd), np.zeros_like(qd)
        x = qd / self.v_slow
        e = np.exp(-x * x)
        return 1.0 - e, 2.0 * x * e / self.v_slow

    def _weighted(self, c):
        w, dw = self._weights(c["qd"])
        Yb = c["Y"][:, :, self.idx]                          # (NG, n, nb)
        return Yb, w, dw, (Yb * w[:, :, None]).reshape(-1, self.idx.size)

    def _try_eval(self, u, with_derivs: bool):
        """:meth:`_eval`, or None where the mechanism does not assemble (SLSQP's line search may try
        coefficients outside the constraints; a closed chain has no torque there)."""
        try:
            return self._eval(u, with_derivs)
        except KinematicsError:
            return None

    def fun(self, u):
        c = self._try_eval(u, False)
        if c is None:
            return _UNASSEMBLED
        return float(self._objective(self._weighted(c)[3])[0])

    def grad(self, u):
        c = self._try_eval(u, True)
        if c is None:
            return np.zeros_like(u)
        NG, n = c["q"].shape
        Yb, w, dw, W = self._weighted(c)
        _, G = self._objective(W)
        G = G.reshape(NG, n, self.idx.size)
        D = c["D"][..., self.idx]                            # (3, n, NG, n, nb)
        g = np.einsum("ksrjc,rjc->ksr", D, G * w[:, :, None])  # d obj / d state_(kind, joint) at each grid sample
        g[1] += (np.sum(G * Yb, axis=2) * dw).T             # the row weight depends on the row joint's own speed
        return self._chain(g[0], g[1], g[2])

    def _chain(self, gq, gv, ga):
        """Gradient w.r.t. u from gradients w.r.t. q, qd, qdd at the grid samples, each ``(n, NG)`` (or ``(..., n, NG)``)."""
        gZ = gq @ self.Pq + gv @ self.Pv + ga @ self.Pa         # (..., n, nz)
        gq0 = gq.sum(axis=-1)                                   # (..., n)
        lead = gZ.shape[:-2]
        out = np.concatenate([gZ.reshape(*lead, -1), gq0], axis=-1)
        return out * self.sc

    # --- torque constraints  tau_max (1 - margin) -/+ tau >= 0
    def torque_con(self, u):
        c = self._try_eval(u, False)
        J = self.torque_joints
        if c is None:
            return np.full(2 * self.t.size * J.size, -_UNASSEMBLED)
        lim = (1 - self.opts.margin) * self.limits.torque[J]
        tau = c["tau"][:, J]
        return np.concatenate([(lim - tau).ravel(), (lim + tau).ravel()])

    def torque_jac(self, u):
        c = self._try_eval(u, True)
        J = self.torque_joints
        if c is None:
            return np.zeros((2 * self.t.size * J.size, u.size))
        dt = c["dtau"][..., J]                                 # (3, n, NG, nJ)
        # d tau_(r, J) / d u : chain each (kind, state joint) over the grid sample r
        g = np.moveaxis(dt, -1, 0)                            # (nJ, 3, n, NG)
        nJ, NG = g.shape[0], g.shape[-1]
        gq, gv, ga = g[:, 0], g[:, 1], g[:, 2]                # (nJ, n, NG)
        # per grid row r: gZ[r] = gq[..., r] * Pq[r] ...  (row-wise, not summed over r)
        gZ = (gq[..., None] * self.Pq[None, None]) + (gv[..., None] * self.Pv[None, None]) + (ga[..., None] * self.Pa[None, None])
        gZ = np.moveaxis(gZ, 2, 1)                             # (nJ, NG, n, nz)
        gq0 = np.moveaxis(gq, 2, 1)                            # (nJ, NG, n)
        full = np.concatenate([gZ.reshape(nJ, NG, -1), gq0], axis=-1) * self.sc
        full = np.moveaxis(full, 0, 1).reshape(NG * nJ, -1)    # rows (r, joint) as torque_con ravels (NG, nJ)
        return np.vstack([-full, full])

    # --- mechanism limits  margin(q) - opts.margin >= 0 (margin = 1 - value/limit; -10 where it does not assemble)
    def _config_margins(self, q):
        m = self.plant.model.configuration_check(q).margins()
        return np.where(np.isfinite(m), m, -10.0) - self.opts.margin

    def config_con(self, u):
        return self._config_margins(self.states(u)[0]).ravel()

    def config_jac(self, u):
        q = self.states(u)[0]
        n, NG = self.n, q.shape[0]
        h = 1e-6 * (1 + np.abs(q).max())
        Q = np.tile(q, (n + 1, 1))
        for j in range(n):
            Q[(1 + j) * NG:(2 + j) * NG, j] += h
        M = self._config_margins(Q).reshape(n + 1, NG, -1)
        D = (M[1:] - M[0]) / h                                 # (n, NG, k): d margin_k(r) / d q_j(r)
        g = np.moveaxis(D, -1, 0)                              # (k, n, NG), row-wise as in torque_jac
        gZ = np.moveaxis(g[..., None] * self.Pq[None, None], 2, 1)   # (k, NG, n, nz)
        k = g.shape[0]
        full = np.concatenate([gZ.reshape(k, NG, -1), np.moveaxis(g, 2, 1)], axis=-1) * self.sc
        return np.moveaxis(full, 0, 1).reshape(NG * k, -1)     # rows (r, k) as config_con ravels (NG, k)

    def constraints(self):
        cons = [{"type": "ineq", "fun": self.linear, "jac": lambda u: self.A}]
        if self.torque_joints.size:
            cons.append({"type": "ineq", "fun": self.torque_con, "jac": self.torque_jac})
        if self.n_config:
            cons.append({"type": "ineq", "fun": self.config_con, "jac": self.config_jac})
        return cons

    def feasible(self, u, tol: float = 0.0) -> bool:
        if np.min(self.linear(u)) < -tol:
            return False
        if self.n_config and np.min(self.config_con(u)) < -tol:
            return False
        return not self.torque_joints.size or np.min(self.torque_con(u)) >= -tol

    def initial(self, rng: np.random.Generator) -> np.ndarray:
        """A random start: coefficients ~ N(0, 1/H), ``q0`` at the box centre, filled to ``init_fill``."""
        nc = self.n * self.nz
        u = np.concatenate([rng.normal(size=nc) / math.sqrt(self.H), self.center / np.where(self.sc[nc:] > 0, self.sc[nc:], 1)])
        return self._fill(u, self.opts.init_fill)

    def reference_start(self, freqs_hz) -> np.ndarray:
        """The start that imitates a sine program over the box: joint j's sine velocity
        ``A_j ω_j sin(ω_j t)`` (``ω_j = 2π f_j``, ``A_j`` the half range) over one period, projected by least
        squares onto the series that starts and ends at rest, about the box centre, filled to the limits."""
        f = np.asarray(freqs_hz, dtype=float).ravel()
        if f.shape != (self.n,) or not np.all(np.isfinite(f) & (f > 0)):
            raise ConfigError(f"reference frequencies must be {self.n} positive numbers [Hz], got {f.tolist()}")
        w = 2 * np.pi * f
        half = 0.5 * (self.limits.upper - self.limits.lower)
        V = half * w * np.sin(np.outer(self.t, w))              # (NG, n)
        Z = np.linalg.lstsq(self.Pv, V, rcond=None)[0]           # (nz, n)
        u = np.concatenate([Z.T.ravel(), self.center]) / np.where(self.sc > 0, self.sc, 1)
        return self._fill(u, 1.0)

    def _fill(self, u: np.ndarray, fill: float) -> np.ndarray:
        """Scale the oscillation of ``u`` to ``fill`` of the largest that keeps the linear constraints, then
        shrink it until the torque and mechanism constraints hold too (or give up: SLSQP starts infeasible)."""
        nc = self.n * self.nz
        u = u.copy()
        a_osc = self.A[:, :nc] @ u[:nc]
        slack = self.A[:, nc:] @ u[nc:] + self.c
        neg = a_osc < 0
        s = float(np.min(slack[neg] / -a_osc[neg])) if np.any(neg) else 1.0
        u[:nc] *= fill * s
        for _ in range(30):
            if ((not self.torque_joints.size or np.min(self.torque_con(u)) >= 0)
                    and (not self.n_config or np.min(self.config_con(u)) >= 0)):
                break
            u[:nc] *= 0.7
        return u


def _scaled(traj: FourierTrajectory, s: float) -> FourierTrajectory:
    return FourierTrajectory(traj.period_s, traj.q0, traj.a * s, traj.b * s)


@blas_single_threaded
def optimize_fourier(plant: Plant, limits: JointLimits, record_s: float, options: FourierOptions = FourierOptions(), *,
                     theta=None, strict: bool = True, reference_hz=None,
                     progress: Callable[[str, float], None] | None = None) -> FourierDesign:
    """Optimise an N-harmonic Fourier excitation for ``plant`` within ``limits`` (module docstring).

    Parameters
    ----------
    plant : Plant
        Model + friction block; its base columns form the observation matrix.
    limits : JointLimits
        SI limits. Position (the start/target box), velocity and acceleration limits must be finite for
        every joint; torque limits are enforced where finite.
    record_s : float
        Recording time [s]; the trajectory repeats ``options.periods`` times in it.
    options : FourierOptions
    theta : array-like, shape (n_params,), optional
        Parameters for the torque prediction (default: the model's example parameters, friction 0).
    strict : bool
        Raise :class:`~dynid.excite.limits.LimitViolationError` when the final 1 ms check fails (else return
        the design with ``limits_ok = False``).
    reference_hz : array-like, shape (n_joints,), optional
        Frequencies [Hz] of the sine program the design is compared with (``dynid excite``'s reference):
        one more start imitates it (module docstring), so the optimiser begins from a motion about as
        informative as the sine instead of from random starts only.
    progress : callable(stage, fraction), optional

    Returns
    -------
    FourierDesign

    Raises
    ------
    ConfigError
        Missing limits, torque limits without parameter values.
    LimitViolationError
        ``strict`` and a limit is violated on the final check grid.
    """
    t0 = time.perf_counter()
    step = progress or (lambda s, f: None)
    n = plant.n_joints
    if limits.n_joints != n:
        raise ShapeError(f"limits are for {limits.n_joints} joints, model {plant.model.name!r} has {n}")
    for name, arr in (("position (start/target range)", limits.upper - limits.lower), ("velocity", limits.velocity),
                      ("acceleration", limits.acceleration)):
        bad = np.nonzero(~np.isfinite(arr))[0]
        if bad.size:
            raise ConfigError(f"the Fourier optimiser needs a finite {name} limit for every joint; joint {int(bad[0]) + 1} has none",
                              hint="give the start and target positions, velocity and acceleration limits, or a reference sine's frequencies", options=("start", "target", "limits", "acc_limits", "freqs"))
    if not (math.isfinite(record_s) and record_s > 0):
        raise ConfigError(f"record time must be positive [s], got {record_s}")
    if theta is None and np.any(np.isfinite(limits.torque)):
        theta = default_theta(plant)
        if theta is None:
            raise ConfigError(f"torque limits need parameter values, but model {plant.model.name!r} has no example parameters",
                              hint="pass theta (e.g. from a previous identification) or drop the torque limits")
    theta = None if theta is None else np.asarray(theta, dtype=float)
    if theta is not None and theta.shape != (plant.n_params,):
        raise ShapeError(f"theta must have {plant.n_params} values (model + friction), got {theta.shape}")
    period = record_s / options.periods
    base = plant_base(plant)
    prob = _Problem(plant, limits, period, options, theta, base.independent)
    rng = np.random.default_rng(options.seed)
    starts = [prob.initial(rng) for _ in range(options.restarts)]
    if reference_hz is not None:
        starts.insert(0, prob.reference_start(reference_hz))
    labels = [k + 1 if reference_hz is None else (k or "reference") for k in range(len(starts))]
    screen = options.screen_iter if len(starts) > 1 else options.max_iter
    polish = options.max_iter if len(starts) > 1 and options.max_iter > screen else 0
    clock = Clock(t0, options.time_budget_s, step, planned=len(starts) * max(screen, 1) + polish)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*Values in x were outside bounds.*")
        best_u, best_f, runs = search(prob, starts, labels, max(screen, 1), polish, options.tol, clock)
    step("checking limits on the fine grid", 0.85)
    traj = prob.to_trajectory(best_u, period)
    check, scale, traj = _final_check(plant, traj, limits, record_s, options.check_dt, theta)
    if not check.ok:
        message = "the optimised trajectory violates joint limits on the final check grid"
    else:
        message = f"optimised {options.harmonics}-harmonic trajectory; every limit holds on the {1000 * options.check_dt:g} ms grid"
    if clock.stopped:
        message += f"; {clock.stopped}"
    try:
        raw, scaled = _design_cond(plant, traj, record_s, options.check_dt, base)
    except KinematicsError:   # the check has said where the mechanism does not assemble
        raw = scaled = math.inf
    step("done", 1.0)
    design = FourierDesign(traj, float(record_s), limits, raw, scaled, check.ok, check, scale, options.objective,
                           float(best_f), tuple(runs), int(options.seed), time.perf_counter() - t0, check.ok, message,
                           bool(clock.stopped))
    if strict:
        check.raise_if_violated("optimised Fourier trajectory")
    return design


def _design_cond(plant, traj, record_s, dt, base):
    step_ = max(dt, record_s / 20000)
    _, q, qd, qdd = traj.sample(record_s, step_)
    W = plant.regressor(q, qd, qdd)[:, :, base.independent].reshape(-1, base.n_base)
    return condition_numbers(W)


def _final_check(plant: Plant, traj: FourierTrajectory, limits: JointLimits, record_s: float, dt: float, theta):
    """Check on the fine grid; scale the oscillation down if needed (keeps positions inside the box)."""
    names = [j.name for j in plant.model.joints]
    kinds = list(plant.model.joint_kinds)

    def run(tr):
        t, q, qd, qdd = tr.sample(record_s, dt)
        tau = None
        if theta is not None and np.any(np.isfinite(limits.torque)):
            try:
                tau = plant.torque(theta, q, qd, qdd)
            except KinematicsError:   # no torque where a closed chain does not assemble: the check says where
                tau = None
        return check_limits(limits, t, q, qd, qdd, tau, joint_names=names, kinds=kinds,
                            configuration=plant.model.configuration_check(q)), (t, q, qd, qdd)

    check, (t, q, qd, qdd) = run(traj)
    if check.ok:
        return check, 1.0, traj
    # exact linear bound on the scale from positions, velocities and accelerations, then bisection for torque
    d = q - traj.q0
    with np.errstate(divide="ignore", invalid="ignore"):
        s_pos = np.where(d > 0, (limits.upper - traj.q0) / d, np.where(d < 0, (limits.lower - traj.q0) / d, np.inf))
        s_vel = limits.velocity / np.abs(qd).max(axis=0)
        s_acc = limits.acceleration / np.abs(qdd).max(axis=0)
    s = float(min(1.0, np.nanmin(s_pos), np.nanmin(s_vel), np.nanmin(s_acc))) * (1 - 1e-9)
    s = max(s, 0.0)
    cand = _scaled(traj, s)
    check, _ = run(cand)
    lo, hi = 0.0, s
    for _ in range(12):  # bisection on the torque limits only (rarely needed)
        if check.ok:
            break
        hi = 0.5 * (lo + hi)
        cand = _scaled(traj, hi)
        check, _ = run(cand)
    return check, (hi if check.ok else s), cand
