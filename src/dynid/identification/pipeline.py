"""The identification pipeline: ``Recording -> Conditioned -> regression -> fit -> Identification``.

>>> from dynid.models import make_model, Plant
>>> from dynid.sim import SineMotion, simulate
>>> plant = Plant(make_model("rotary1"))
>>> rec = simulate(plant, [0.02, 0.5, 0.3], SineMotion([-1.0], [1.0], [1.0], record_s=6.0), seed=1)
>>> res = identify(rec, plant)
>>> bool(res.success), round(res.values["I"], 2)
(True, 0.02)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable, Mapping

import numpy as np

from .base_params import BaseParameters, structural_base
from ..signal.conditioning import Conditioned, ConditioningOptions, condition
from .consistent import ConsistentFit, ConsistentOptions
from ..errors import ConfigError, IdentifiabilityError
from ..fitted import FittedModel, jsonable
from .solve import LeastSquares, weighted_lstsq
from ..metrics import RelativeErrors, relative_errors
from ..models.base import Plant
from ..recording import Recording

__all__ = ["IdentifyOptions", "Identification", "identify", "ParameterStatus", "ESTIMATORS"]

ESTIMATORS = ("wls", "ols", "irls", "consistent")


class ParameterStatus:
    """Why a parameter has its value."""

    IDENTIFIED = "identified"          # estimated from the data (possibly as a base combination)
    KNOWN = "known"                    # given in the configuration, held fixed
    NOT_IDENTIFIABLE = "not identifiable"  # structurally (e.g. L^2 without payload): held at the prior or 0
    NOT_EXCITED = "not excited"        # structurally identifiable, but this recording does not excite it
    DERIVED = "derived"                # filled by the model from physics (e.g. g*cos(alpha) = p2/p1)
    CONSTANT = "constant"              # a user constant of the model (never identified)


@dataclass(frozen=True)
class IdentifyOptions:
    """Options of :func:`identify`.

    conditioning : ConditioningOptions
    estimator : {"wls", "ols", "irls", "consistent"}
        ``wls``: per-joint weighted least squares on the filtered torque (``weighting``);
        ``ols``: ordinary least squares; ``irls``: robust to gross outliers (spikes, glitches): the
        raw torque's outliers are found with Tukey's bisquare on the residual of the current model
        minus its running median, over the gated samples (so slow model mismatch and the real
        transients at velocity reversals are not taken for outliers), replaced by model + local residual *before* filtering (the filter would smear
        them), and the fit is repeated until the outlier set no longer changes. ``consistent``: physically
        consistent link inertias (every link's pseudo-inertia positive definite, so positive masses and the
        triangle inequalities hold) by nonlinear least squares on the WLS rows, pulled toward the model's prior
        (URDF) where the data are silent (:mod:`dynid.identification.consistent`); models with link-wise standard parameters
        only (``serial``).
    consistent : ConsistentOptions
        Options of the ``consistent`` estimator (``prior_weight``, ``friction_nonnegative``).
    weighting : {"residual_std", "torque_std", "none"}
    allowed_error : float
        softMC's success threshold on the max relative torque error (0.5 = 50 %).
    structural_states : int
        Random states used for the structural base-parameter analysis.
    seed : int
        Seed of those random states.
    decimate : int, optional
        Fit on every ``decimate``-th sample (Gautier's parallel filtering + decimation): the filtered
        signals hold no information above the cutoff, so the default ``max(1, floor(fs / (10·cutoff)))``
        keeps 5 times the Nyquist rate of the filtered band and makes large recordings cheap. The errors
        and the REC still use every sample.
    align_torque : bool
        Estimate the torque/kinematics delay after a first fit and, if it is at least half a
        sample, shift the torque and fit again (the shift is recorded in the conditioning options).
    """

    conditioning: ConditioningOptions = field(default_factory=ConditioningOptions)
    estimator: str = "wls"
    decimation: int = 1
    weighting: str = "residual_std"
    allowed_error: float = 0.5
    structural_states: int = 400
    seed: int = 0
    decimate: int | None = None
    align_torque: bool = False
    consistent: ConsistentOptions = field(default_factory=ConsistentOptions)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ConfigError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {self.estimator!r}")
        if self.decimate is not None and self.decimate < 1:
            raise ConfigError(f"decimate must be >= 1, got {self.decimate}")
        if not 0 < self.allowed_error:
            raise ConfigError(f"allowed_error must be positive, got {self.allowed_error}")


@dataclass(frozen=True)
class Identification:
    """Everything an identification run produced (SI units). Writers only read it."""

    plant: Plant
    theta: np.ndarray                 # (n_params,) full parameter vector: model then friction
    std: np.ndarray                   # (n_params,) NaN where not estimated
    status: tuple[str, ...]           # (n_params,) ParameterStatus per parameter
    base: BaseParameters              # structural base (known parameters excluded)
    base_values: np.ndarray           # (n_base,)
    base_std: np.ndarray              # (n_base,)
    base_excited: np.ndarray          # (n_base,) bool
    lsq: LeastSquares
    cond: Conditioned
    tcmd: np.ndarray                  # (N, n_joints) model torque on the conditioned samples
    errors: RelativeErrors
    diagnostics: tuple               # of dynid.identification.diagnostics.Diagnostic
    notes: tuple[str, ...]
    derived: Mapping[str, Any]
    estimator: str = "wls"
    decimation: int = 1
    consistent: ConsistentFit | None = None  # the consistent estimator's record (estimator="consistent")

    @property
    def success(self) -> bool:
        return self.errors.success

    @property
    def message(self) -> str:
        return self.model.message

    @cached_property
    def model(self) -> FittedModel:
        """The identified model (what result.json holds): parameters, friction, conditioning, metrics."""
        return fitted_model(self)

    @property
    def values(self) -> dict[str, float]:
        return dict(zip(self.plant.param_names, self.theta.tolist()))

    @property
    def model_values(self) -> np.ndarray:
        return self.theta[: self.plant.n_model]

    @property
    def friction_values(self) -> np.ndarray:
        return self.theta[self.plant.n_model:]

    @property
    def te(self) -> np.ndarray:
        return self.tcmd - self.cond.tau


def fitted_model(ident: Identification) -> FittedModel:
    """The :class:`~dynid.fitted.FittedModel` of an identification run: its parameters with their std
    and status, and result.json's ``conditioning`` and ``metrics`` sections built from the run."""
    from ..units import velocity_unit

    cond, lsq, model = ident.cond, ident.lsq, ident.plant.model
    conditioning = {
        "sample_period_s": cond.sample_period_s,
        "cutoff_hz": cond.cutoff_hz,
        "filter_order": cond.options.filter_order,
        "raw_length": cond.raw_length,
        "data_length": cond.data_length,
        "trim_samples": cond.start,
        "velocity_threshold": cond.velocity_threshold,
        "velocity_threshold_units": [velocity_unit(k) for k in model.joint_kinds],
        "upper_velocity_threshold": cond.upper_velocity_threshold,
        "moving_samples": cond.moving_samples,
        "smooth_sign": cond.options.smooth_sign,
        "torque_delay_s": cond.options.torque_delay_s,
    }
    metrics = {
        "max_relative_error": ident.errors.max_relative,
        "mean_relative_error": ident.errors.mean_relative,
        "allowed": ident.errors.allowed,
        "success": ident.errors.success,
        "condition_number": lsq.condition_number,
        "condition_number_scaled": lsq.condition_number_scaled,
        "rank": lsq.rank,
        "estimator": ident.estimator,
        "fit_decimation": ident.decimation,
        "fit_rows": int(np.sum(cond.moving[::ident.decimation])),
        "weights": lsq.weights,
        "residual_rms": np.sqrt(np.mean(np.where(cond.moving, ident.te, 0.0) ** 2, axis=0)
                                * cond.data_length / np.maximum(cond.moving_samples, 1)),
        "diagnostics": [d.message for d in ident.diagnostics],
        "diagnostics_detail": [d.to_dict() for d in ident.diagnostics],
    }
    names = ident.plant.param_names
    info = {
        "base_parameters": {
            "count": ident.base.n_base,
            "names": [names[i] for i in ident.base.independent],
            "expressions": ident.base.expressions(),
            "values": ident.base_values,
            "std": ident.base_std,
            "excited": ident.base_excited,
        },
        "derived": dict(ident.derived),
        **({"physical_consistency": ident.consistent.to_dict()} if ident.consistent is not None else {}),
        "notes": list(ident.notes),
    }
    return FittedModel(ident.plant, ident.theta, ident.std, ident.status, jsonable(conditioning), jsonable(metrics),
                       info=jsonable(info))


def default_decimation(cond: Conditioned) -> int:
    """Fit every k-th sample: ``k = max(1, floor(fs / (10·cutoff)))`` (see :class:`IdentifyOptions`)."""
    return max(1, int(1.0 / (10.0 * cond.cutoff_hz * cond.sample_period_s)))


def _known(plant: Plant) -> dict[int, float]:
    names = plant.param_names
    known: dict[int, float] = {}
    for key, value in plant.model.config.parameters.items():
        if key not in names:
            raise ConfigError(f"configuration 'parameters' names {key!r}, which model {plant.model.name!r} does not have",
                              hint=f"parameters are: {', '.join(names)}")
        known[names.index(key)] = float(value)
    for i, role in enumerate(plant.param_roles):
        if role == "constant" and i not in known:
            known[i] = 0.0
    return known


def identify(rec: Recording, plant: Plant, options: IdentifyOptions = IdentifyOptions(), *,
             progress: Callable[[str, float], None] | None = None) -> Identification:
    """Identify the parameters of ``plant`` from a recording.

    Parameters
    ----------
    rec : Recording
        SI units, with torques.
    plant : Plant
        Model + friction block; its configuration supplies payload, known parameters and limits.
    options : IdentifyOptions
    progress : callable(stage, fraction), optional
        Called between stages (the command line draws a progress bar with it).

    Returns
    -------
    Identification
        ``success`` follows softMC's 50 % rule; a failed rule is a result, not an exception.

    Raises
    ------
    InputDataError, IdentifiabilityError
        Unusable data (no motion, too few samples).
    """
    from .diagnostics import MIN_DELAY_SAMPLES, diagnose, estimate_delay

    if options.estimator == "consistent":
        from .consistent import link_groups

        link_groups(plant)  # fail early, before any work, for models without link-wise inertias
    if plant.auto_friction:
        from .friction_select import select_friction

        sel = select_friction(rec, plant, options, progress=progress)
        chosen = Plant(plant.model.with_config(friction=sel.chosen))
        res = identify(rec, chosen, options, progress=progress)
        return replace(res, notes=res.notes + (sel.note(),))
    if options.estimator == "irls":
        return _identify_robust(rec, plant, options, progress)
    if options.align_torque:
        first = identify(rec, plant, replace(options, align_torque=False))
        delay, _ = estimate_delay(first)
        if abs(delay) < MIN_DELAY_SAMPLES * first.cond.sample_period_s:
            return first
        copt = replace(options.conditioning, torque_delay_s=options.conditioning.torque_delay_s + delay)
        return identify(rec, plant, replace(options, conditioning=copt, align_torque=False), progress=progress)
    step = progress or (lambda stage, frac: None)
    if rec.tau is None:
        raise IdentifiabilityError(f"{rec.source}: the recording has no torque columns", hint="identification needs tau1..taun")
    if rec.n_joints != plant.n_joints:
        raise IdentifiabilityError(f"{rec.source}: {rec.n_joints} joints recorded, model {plant.model.name!r} has {plant.n_joints}")
    step("conditioning", 0.0)
    copt = options.conditioning
    frac = plant.model.upper_velocity_fraction
    if frac is not None and copt.upper_velocity_threshold is None and copt.upper_velocity_fraction is None:
        copt = replace(copt, upper_velocity_fraction=frac)
    if plant.friction.sign_directions and not copt.sign_directions:  # coupled motors: filter their sign too
        copt = replace(copt, sign_directions=plant.friction.sign_directions)
    cond = condition(rec, copt, plant.model.joint_kinds)
    step("structural analysis", 0.2)
    known = _known(plant)
    base = structural_base(plant, n_states=options.structural_states, seed=options.seed, exclude=list(known))
    indep = base.independent
    step("regressor", 0.35)
    k = options.decimate or default_decimation(cond)
    fit = np.arange(0, cond.data_length, k)                                 # decimated samples for the fit
    args = (cond.q[fit], cond.qd[fit], cond.qdd[fit])
    Y = plant.regressor(*args, sign=cond.sign[fit])                         # (N/k, n, P)
    off = plant.offset(*args)                                               # (N/k, n)
    theta_known = np.zeros(plant.n_params)
    for i, v in known.items():
        theta_known[i] = v
    mask = cond.moving[fit]
    joint = np.nonzero(mask)[1]
    step("least squares", 0.55)
    rows = Y[mask]                                                          # (n_rows, P), sample-major
    y = cond.tau[fit][mask] - off[mask] - rows @ theta_known
    weighting = "none" if options.estimator == "ols" else options.weighting
    lsq = weighted_lstsq(rows[:, indep], y, joint, plant.n_joints, weighting=weighting)
    del Y
    beta = lsq.x
    # parameters the data cannot identify are held at the model's prior (e.g. a URDF's values), else 0,
    # so the full parameter set stays physical while reproducing the same torques
    theta_hold = theta_known.copy()
    prior = plant.model.prior_parameters()
    if prior is not None:
        for i in range(plant.n_model):
            if i not in known:
                theta_hold[i] = prior[i]
    theta = base.to_full(beta, theta_hold[base.dependent])
    std = np.full(plant.n_params, np.nan)
    std[indep] = lsq.std
    consistent = None
    if options.estimator == "consistent":
        from .consistent import fit_consistent

        step("physically consistent fit", 0.65)
        consistent = fit_consistent(plant, rows, y, joint, lsq=lsq, base=base, theta_linear=theta, theta_hold=theta_hold,
                                    known=list(known), options=options.consistent)
        theta, std, beta, lsq = consistent.theta, consistent.std, consistent.base_values, consistent.lsq
    del rows
    status = []
    for i in range(plant.n_params):
        if plant.param_roles[i] == "constant":
            status.append(ParameterStatus.CONSTANT)
        elif i in known:
            status.append(ParameterStatus.KNOWN)
        elif i in set(indep.tolist()):
            status.append(ParameterStatus.IDENTIFIED if lsq.excited[list(indep).index(i)] else ParameterStatus.NOT_EXCITED)
        else:
            status.append(ParameterStatus.NOT_IDENTIFIABLE)
    names = plant.param_names
    values = dict(zip(names, theta.tolist()))
    identified = {n: s == ParameterStatus.IDENTIFIED for n, s in zip(names, status)}
    if consistent is None:
        values, notes = plant.model.complete(values, identified)
    else:  # the link inertias are already complete and consistent; a model's completion could break that
        notes = list(consistent.notes)
    theta_c = np.array([values[n] for n in names])
    for i in range(plant.n_params):
        if theta_c[i] != theta[i] and status[i] in (ParameterStatus.NOT_IDENTIFIABLE, ParameterStatus.NOT_EXCITED):
            status[i] = ParameterStatus.DERIVED
    theta = theta_c
    step("evaluation", 0.75)
    tcmd = plant.torque(theta, cond.q, cond.qd, cond.qdd, sign=cond.sign)  # every sample, in chunks
    errors = relative_errors(tcmd, cond.tau, cond.moving, options.allowed_error)
    ident = Identification(
        plant=plant, theta=theta, std=std, status=tuple(status), base=base, base_values=beta,
        base_std=lsq.std, base_excited=lsq.excited, lsq=lsq, cond=cond, tcmd=tcmd, errors=errors,
        diagnostics=(), notes=tuple(notes), derived=plant.model.derived(values), estimator=options.estimator,
        decimation=k, consistent=consistent)
    step("diagnostics", 0.9)
    ident = replace(ident, diagnostics=tuple(diagnose(ident)))
    step("done", 1.0)
    return ident


BISQUARE_C = 4.685
"""Tukey bisquare tuning constant (95 % efficiency for Gaussian noise): a raw torque sample whose
residual exceeds ``BISQUARE_C`` robust standard deviations (1.4826·MAD, per joint) is an outlier."""
OUTLIER_WINDOW = 15
"""Samples in the running median of the residual (odd)."""


def _running_median(x: np.ndarray, window: int) -> np.ndarray:
    """Centred running median along axis 0 (edges use the nearest full window)."""
    from numpy.lib.stride_tricks import sliding_window_view

    h = window // 2
    padded = np.concatenate([x[h:0:-1], x, x[-2:-h - 2:-1]])
    return np.median(sliding_window_view(padded, window, axis=0), axis=-1)


def _identify_robust(rec: Recording, plant: Plant, options: IdentifyOptions, progress, max_iter: int = 10):
    """Outlier-robust identification (``estimator="irls"``), see :class:`IdentifyOptions`."""
    base_opts = replace(options, estimator="wls")
    work = rec
    outliers = None
    res = None
    for it in range(1, max_iter + 1):  # refits of the whole pipeline, each vectorised
        res = identify(work, plant, base_opts, progress=progress)
        cond = res.cond
        kept = slice(cond.start, cond.start + cond.data_length)
        pred = plant.torque(res.theta, cond.q, cond.qd, cond.qdd)         # physical (sharp) friction step
        r = rec.tau[kept] - pred
        base = _running_median(r, OUTLIER_WINDOW)
        hp = np.where(cond.moving, r - base, np.nan)  # only the gated samples: reversals carry real transients
        scale = 1.4826 * np.nanmedian(np.abs(hp - np.nanmedian(hp, axis=0)), axis=0)
        new = np.nan_to_num(np.abs(hp)) >= BISQUARE_C * np.where(scale > 0, scale, np.inf)
        if outliers is not None and np.array_equal(new, outliers):
            break
        outliers = new
        tau = rec.tau.copy()
        tau[kept][outliers] = (pred + base)[outliers]
        work = Recording(rec.t, rec.q, tau, rec.qd, rec.qdd, rec.meta, rec.source)
    n_out = int(outliers.sum())
    frac = n_out / outliers.size
    note = (f"robust fit: {n_out} torque samples ({100 * frac:.2f} %) rejected as outliers (|residual| > "
            f"{BISQUARE_C} robust std) and replaced by the model before filtering; {it} iterations")
    cond = replace(res.cond, tau_raw=rec.tau[res.cond.start:res.cond.start + res.cond.data_length])  # REC shows them
    return replace(res, cond=cond, notes=res.notes + (note,), estimator="irls")
