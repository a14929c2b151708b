"""Predicted identifiability of a planned motion, before running it.

For a planned motion ``(q, qd, qdd)`` on a time grid and a :class:`~dynid.models.Plant`:

- the observation matrix ``W``: the regressor's structural base columns (spec/identification.md §9,
  friction block included, parameters the configuration fixes left out, as ``identify`` does),
  rows stacked sample-major;
- its 2-norm condition number, raw (SI parameter units, the number ``dynid identify`` reports as
  ``condition_number``) and with unit-norm columns (``condition_number_scaled``, invariant to
  parameter units);
- the expected standard deviation of each base parameter for white torque noise of
  ``noise`` × each joint's predicted peak torque (the simulator's noise model) in a recording with
  one sample every ``sample_period_s``: ``cov = (W^T Σ^-1 W)^-1 · N_grid / N_record`` (per-joint
  weights ``1/σ_j`` as the weighted fit; the grid stands for the ``N_record`` samples of the run);
  relative to the example parameter values, > ``max_relative_std`` (30 %, identification.md §10) =
  poorly excited;
- the predicted torque (example parameters, friction unknown before identification = 0 unless
  ``theta`` is given), its peak per joint against the torque limits (saturation warning);
- the coverage of each joint's position range (motion range / configured range);
- the confounded parameter groups (:func:`confounded_groups`): parameters the motion cannot separate
  at all, with the combinations of them it does determine, and what would separate them.

Confounding
-----------
On the regressor with unit-norm columns (noise-free, the planned samples), every right singular vector
whose singular value is below ``CONFOUNDED_RTOL`` (1e-3) × the largest is an undetermined direction:
moving the parameters along it changes the predicted torque by less than 1/1000 of what the
best-determined direction does (equivalently, it alone makes the unit-column condition number exceed
1000). A pure sine gives exactly 0 (``qdd = -w^2 (q - c)`` makes the mass column a combination of the
position and constant columns), so the tolerance only decides near-collinear motions: the good
catalogue programs stay above 4e-3 (6upru; scara4 6e-2), and at 1e-3 the precision of that direction
rests entirely on the model being exact, since any unmodelled torque is amplified 1000-fold into it.
A parameter belongs to a confounded group when its share of the undetermined directions,
``sqrt(P_ii)`` with ``P`` the projector onto them, exceeds ``CONFOUNDED_WEIGHT`` (0.05); parameters
coupled through ``P`` (``|P_ij| > 0.05^2``) form one group. A group whose parameters are all
undetermined (e.g. a zero column) is *not excited*.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..identification.base_params import (CONFOUNDED_RTOL, CONFOUNDED_WEIGHT, BaseParameters, Confounding, join_names,
                                          confounded_groups, structural_base)
from ..identification.regression import known_parameters
from ..errors import ConfigError, ShapeError
from ..models.base import Plant
from ..threads import blas_single_threaded
from .limits import JointLimits
from ..units import force_unit

__all__ = ["Identifiability", "predict_identifiability", "observation_matrix", "condition_numbers",
           "plant_base", "default_theta", "Confounding", "confounded_groups", "MAX_RELATIVE_STD", "DEFAULT_NOISE",
           "CONFOUNDED_RTOL", "CONFOUNDED_WEIGHT"]

MAX_RELATIVE_STD = 0.30
"""Expected relative std above which a base parameter is *poorly excited* (identification.md §10)."""
DEFAULT_NOISE = 0.005
"""Torque noise: 0.5 % of each joint's peak torque (the simulator's default)."""



def plant_base(plant: Plant) -> BaseParameters:
    """Structural base parameters of ``plant`` with its known parameters excluded (as ``identify``)."""
    return structural_base(plant, exclude=sorted(known_parameters(plant)))


def default_theta(plant: Plant) -> np.ndarray | None:
    """Full parameter vector ``(n_params,)`` for torque predictions: the model's example parameters with any
    configured known values, friction 0 (unknown before identification); ``None`` if the model has none."""
    ex = plant.model.example_parameters()
    if ex is None:
        return None
    theta = np.zeros(plant.n_params)
    theta[: plant.n_model] = np.asarray(ex, dtype=float)
    for key, v in plant.model.config.parameters.items():
        theta[plant.param_names.index(key)] = float(v)
    return theta


def observation_matrix(plant: Plant, q, qd, qdd, *, base: BaseParameters | None = None) -> np.ndarray:
    """Base-parameter observation matrix ``W`` ``(N*n_joints, n_base)`` of a motion (rows sample-major).

    Parameters
    ----------
    plant : Plant
    q, qd, qdd : array-like, shape (N, n_joints)
        Positions [rad, m], velocities, accelerations (SI).
    base : BaseParameters, optional
        Default :func:`plant_base`.
    """
    base = plant_base(plant) if base is None else base
    Y = plant.regressor(q, qd, qdd)
    return Y[:, :, base.independent].reshape(-1, base.n_base)


def condition_numbers(W: np.ndarray) -> tuple[float, float]:
    """``(raw, scaled)`` 2-norm condition numbers of ``W`` ``(rows, cols)``; scaled = unit-norm columns.

    From the eigenvalues of the Gram matrix ``W^T W`` (``cond = sqrt(lambda_max / lambda_min)``), which
    is exact to rounding while ``cond < 1e6``; beyond that the singular values of ``W`` are used.
    ``inf`` for a rank-deficient matrix.

    Examples
    --------
    >>> condition_numbers(np.diag([1.0, 10.0]))
    (10.0, 1.0)
    """
    W = np.asarray(W, dtype=float)
    G = W.T @ W
    d = np.sqrt(np.diag(G))
    d = np.where(d > 0, d, 1.0)
    out = []
    for M, Gm in ((W, G), (None, G / np.outer(d, d))):
        lam = np.linalg.eigvalsh(Gm)
        if lam[0] > lam[-1] * 1e-12:
            out.append(float(np.sqrt(lam[-1] / lam[0])))
            continue
        M = W / d if M is None else M
        s = np.linalg.svd(M, compute_uv=False)
        out.append(float(s[0] / s[-1]) if s[-1] > s[0] * np.finfo(float).eps * max(W.shape) else float("inf"))
    return out[0], out[1]


@dataclass(frozen=True)
class Identifiability:
    """What a planned motion will identify (SI units).

    Attributes
    ----------
    base_names : tuple of str, (n_base,)
        Base parameters (the kept column of each combination).
    condition_number, condition_number_scaled : float
        Of the base-parameter observation matrix: raw and with unit-norm columns.
    std : ndarray, (n_base,)
        Expected standard deviation of each base parameter (its unit).
    values : ndarray, (n_base,)
        Base parameter values of the prediction (NaN if unknown).
    relative_std : ndarray, (n_base,)
        ``std / |value|`` (NaN where the value is unknown or 0).
    poorly_excited : tuple of str
        Base parameters with ``relative_std`` > ``max_relative_std``.
    peak_torque : ndarray (n_joints,) or None
        Predicted peak |torque| [N m or N] (None without parameter values).
    saturation : tuple of str
        One line per joint whose predicted peak torque exceeds its limit.
    motion_range : ndarray, (n_joints,)
        ``max q - min q`` [rad or m].
    coverage : ndarray, (n_joints,)
        ``motion_range`` / configured position range (NaN where the range is not configured).
    noise : float
        Torque noise used (fraction of each joint's peak torque).
    max_relative_std : float
        Threshold of ``poorly_excited``.
    confounded : tuple of Confounding
        Groups of base parameters the motion cannot separate, or does not excite at all
        (:func:`confounded_groups` on the noise-free observation matrix, with a remedy each); empty when
        every base parameter is identifiable from it.
    """

    base_names: tuple[str, ...]
    condition_number: float
    condition_number_scaled: float
    std: np.ndarray
    values: np.ndarray
    relative_std: np.ndarray
    poorly_excited: tuple[str, ...]
    peak_torque: np.ndarray | None
    saturation: tuple[str, ...]
    motion_range: np.ndarray
    coverage: np.ndarray
    noise: float
    max_relative_std: float = MAX_RELATIVE_STD
    confounded: tuple[Confounding, ...] = ()

    @property
    def identifiable(self) -> bool:
        """No base parameter is confounded or unexcited."""
        return not self.confounded

    def to_dict(self) -> dict:
        f = lambda a: None if a is None else [float(x) if np.isfinite(x) else None for x in np.asarray(a)]  # noqa: E731
        return {"condition_number": self.condition_number, "condition_number_scaled": self.condition_number_scaled,
                "base_parameters": list(self.base_names), "expected_std": f(self.std), "values": f(self.values),
                "relative_std": f(self.relative_std), "poorly_excited": list(self.poorly_excited),
                "max_relative_std": self.max_relative_std, "noise": self.noise, "peak_torque": f(self.peak_torque),
                "saturation": list(self.saturation), "motion_range": f(self.motion_range), "coverage": f(self.coverage),
                "confounded": [c.to_dict() for c in self.confounded]}


@blas_single_threaded
def predict_identifiability(plant: Plant, q, qd, qdd, *, record_s: float, theta=None, noise: float = DEFAULT_NOISE,
                            sample_period_s: float = 1e-3, limits: JointLimits | None = None,
                            max_relative_std: float = MAX_RELATIVE_STD, base: BaseParameters | None = None,
                            coverage_range: Sequence[Sequence[float]] | None = None,
                            confounded_rtol: float = CONFOUNDED_RTOL) -> Identifiability:
    """Predict condition number, parameter precision, confounded parameters, peak torques and range coverage
    of a motion.

    Parameters
    ----------
    plant : Plant
    q, qd, qdd : array-like, shape (N, n_joints)
        The planned motion on a uniform grid covering the recording [rad, m; SI].
    record_s : float
        Recording time the grid stands for [s].
    theta : array-like, shape (n_params,), optional
        Parameters for the torque prediction (model then friction). Default :func:`default_theta`.
    noise : float
        Torque noise std as a fraction of each joint's peak torque.
    sample_period_s : float
        Recording sample period [s] (number of recorded samples = ``record_s / sample_period_s``).
    limits : JointLimits, optional
        Torque limits for the saturation warning; position limits for the coverage.
    max_relative_std : float
        Threshold for "poorly excited".
    base : BaseParameters, optional
    coverage_range : array-like, shape (n_joints, 2), optional
        Position range the coverage is relative to (default: ``limits`` position, else the model's
        ``position_limits``).
    confounded_rtol : float
        Relative singular-value tolerance of :func:`confounded_groups`.

    Returns
    -------
    Identifiability
    """
    n = plant.n_joints
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    qdd = np.asarray(qdd, dtype=float)
    if q.ndim != 2 or q.shape[1] != n:
        raise ShapeError(f"q has shape {q.shape} but model {plant.model.name!r} has {n} joints")
    if not (record_s > 0 and sample_period_s > 0 and noise > 0):
        raise ConfigError("record_s, sample_period_s and noise must be positive")
    base = plant_base(plant) if base is None else base
    Y = plant.regressor(q, qd, qdd)                                   # (N, n, P)
    W = Y[:, :, base.independent].reshape(-1, base.n_base)
    raw, scaled = condition_numbers(W)
    theta = default_theta(plant) if theta is None else np.asarray(theta, dtype=float)
    if theta is not None and theta.shape != (plant.n_params,):
        raise ShapeError(f"theta must have {plant.n_params} values (model + friction), got {theta.shape}")
    names = tuple(plant.param_names[i] for i in base.independent)
    n_rec = record_s / sample_period_s
    if theta is not None:
        tau = Y @ theta + plant.offset(q, qd, qdd)
        peak = np.abs(tau).max(axis=0)
        values = base.base_values(theta)
        sigma = noise * np.where(peak > 0, peak, np.nan)
    else:
        peak = None
        values = np.full(base.n_base, np.nan)
        sigma = None
    if sigma is None or not np.all(np.isfinite(sigma)):
        std = np.full(base.n_base, np.nan)
    else:
        w = np.tile(1.0 / sigma, q.shape[0])                          # row weights, sample-major
        Ww = W * w[:, None]
        scale = np.linalg.norm(Ww, axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        R = np.linalg.qr(Ww / scale, mode="r")
        try:
            Rinv = np.linalg.solve(R, np.eye(R.shape[0]))
            cov_diag = np.sum(Rinv**2, axis=1) / scale**2
            std = np.sqrt(cov_diag * q.shape[0] / n_rec)
        except np.linalg.LinAlgError:
            std = np.full(base.n_base, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.isfinite(values) & (values != 0), std / np.abs(values), np.nan)
    poor = tuple(nm for nm, r in zip(names, rel) if np.isfinite(r) and r > max_relative_std)
    sat: list[str] = []
    if limits is not None and peak is not None:
        for j in np.nonzero(np.isfinite(limits.torque) & (peak > limits.torque))[0]:
            jn = plant.model.joints[j].name
            u = force_unit(plant.model.joints[j].kind)
            sat.append(f"joint {j + 1} ({jn}): predicted peak torque {peak[j]:.4g} {u} exceeds its limit "
                       f"{limits.torque[j]:.4g} {u}: the drive saturates")
    rng_ = q.max(axis=0) - q.min(axis=0)
    if coverage_range is None:
        if limits is not None and np.any(np.isfinite(limits.upper - limits.lower)):
            coverage_range = limits.position
        elif plant.model.config.position_limits is not None:
            coverage_range = plant.model.config.position_limits
    if coverage_range is not None:
        cr = np.asarray(coverage_range, dtype=float)
        span = cr[:, 1] - cr[:, 0]
        coverage = np.where(np.isfinite(span) & (span > 0), rng_ / np.where(span > 0, span, 1.0), np.nan)
    else:
        coverage = np.full(n, np.nan)
    groups = confounded_groups(W, names, confounded_rtol)
    confounded = tuple(_with_remedy(plant, c, q, qdd, Y[:, :, base.independent]) for c in groups)
    return Identifiability(names, raw, scaled, std, values, rel, poor, peak, tuple(sat), rng_, coverage, noise,
                           max_relative_std, confounded)


SINGLE_SINE_RTOL = 1e-6
"""A joint moves as one sine when ``qdd = a q + b`` (a < 0) to this relative residual."""


def _joint_label(plant: Plant, j: int) -> str:
    return f"joint {j + 1} ({plant.model.joints[j].name})"


def _with_remedy(plant: Plant, c: Confounding, q: np.ndarray, qdd: np.ndarray, Yb: np.ndarray) -> Confounding:
    """``c`` with a remedy from the motion of the joints whose torques carry its parameters."""
    cols = list(c.indices)
    per_joint = np.linalg.norm(Yb[:, :, cols], axis=0)                   # (n_joints, |G|)
    total = np.linalg.norm(per_joint, axis=0)
    involved = [j for j in range(plant.n_joints) if np.any(per_joint[j] > 1e-9 * np.where(total > 0, total, np.inf))]
    if not involved:      # zero columns on every joint: the joints that would carry them are unknown here
        involved = list(range(plant.n_joints))
    still, sine = [], {}
    for j in involved:
        x = q[:, j] - q[:, j].mean()
        if not np.any(np.abs(x) > 1e-12 * max(1.0, float(np.abs(q[:, j]).max()))):
            still.append(j)
            continue
        a = float(x @ qdd[:, j]) / float(x @ x)
        r = qdd[:, j] - qdd[:, j].mean() - a * x
        if a < 0 and np.linalg.norm(r) <= SINGLE_SINE_RTOL * max(np.linalg.norm(qdd[:, j]), 1e-300):
            sine[j] = np.sqrt(-a) / (2 * np.pi)
    if c.not_excited and not still:
        remedy = (f"{'it needs' if len(c.parameters) == 1 else 'they need'} a motion whose torques depend on "
                  f"{'it' if len(c.parameters) == 1 else 'them'} (zero regressor column on this one)")
    elif still:
        lab = join_names([_joint_label(plant, j) for j in still])
        one = len(still) == 1
        remedy = f"{lab} {'does' if one else 'do'} not move: give {'it' if one else 'them'} a range"
    else:
        same = [(i, j) for i in sine for j in sine if i < j and abs(sine[i] - sine[j]) <= 1e-6 * max(sine[i], sine[j])]
        if same:
            i, j = same[0]
            remedy = (f"{_joint_label(plant, i)} and {_joint_label(plant, j)} move at the same frequency "
                      f"({sine[i]:.4g} Hz): different frequencies separate them")
        elif sine:
            js = sorted(sine)
            lab = join_names([_joint_label(plant, j) for j in js])
            hz = ", ".join(f"{sine[j]:.4g}" for j in js)
            one = len(js) == 1
            remedy = (f"a second frequency on {lab} separates them ({'it' if one else 'each'} moves as one sine, "
                      f"{hz} Hz, so acceleration is a fixed multiple of position; a SineWave has one frequency per "
                      f"joint: plan a multi-harmonic trajectory, dynid excite --fourier N with N >= 2)")
        else:
            lab = join_names([_joint_label(plant, j) for j in involved])
            remedy = f"more varied motion of {lab} (more frequencies, a wider range) separates them"
    return replace(c, remedy=remedy)
