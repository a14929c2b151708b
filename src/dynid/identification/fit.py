"""One identification pass, stage by stage: condition → regression → solve → complete → evaluate.

:func:`fit_once` is what every estimator and every selection runs; the choices made around it (the
friction model, the cutoff, outlier rejection, the torque delay) wrap it in
:mod:`~dynid.identification.robust` and :mod:`~dynid.identification.select`, and
:func:`dynid.identification.pipeline.identify` composes them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ..errors import ConfigError, IdentifiabilityError
from ..models.base import Plant
from ..models.inertia import physical_consistency
from ..recording import Recording
from ..signal.conditioning import Conditioned, ConditioningOptions, condition
from ..threads import num_threads
from .base_params import Confounding, confounded_groups
from .diagnostics import assess
from .options import IdentifyOptions, ParameterStatus
from .regression import Regression, build_regression
from .result import Identification
from .summary import LogSummary
from .consistent import ConsistentFit, fit_consistent
from .solve import LeastSquares, lstsq_rows

__all__ = ["fit_once", "condition_for", "conditioning_options", "solve", "Solution", "Fit", "estimate", "Estimate"]

SPLIT_CONDITIONING = 60_000
"""Recordings of at least this many values (samples x joints) are conditioned on two threads where two are allowed
(half the work on each; below it, starting the thread costs more than it saves)."""

Fit = Callable[..., Identification]
"""``fit(rec, plant, options, progress=None) -> Identification``: one estimator, as the selections call it."""


def condition_for(rec: Recording, plant: Plant, options: IdentifyOptions, *, pool=None) -> Conditioned:
    """Stage 2: the recording conditioned for ``plant`` (the model's upper velocity fraction, the coupled
    motors' Coulomb signs filtered like the joints'); ``pool``: an idle worker for half of it
    (:func:`~dynid.signal.conditioning.condition`)."""
    if rec.tau is None:
        raise IdentifiabilityError(f"{rec.source}: the recording has no torque columns",
                                   hint="identification needs tau1..taun")
    if rec.n_joints != plant.n_joints:
        raise IdentifiabilityError(f"{rec.source}: {rec.n_joints} joints recorded, model {plant.model.name!r} "
                                   f"has {plant.n_joints}")
    return condition(rec, conditioning_options(plant, options), plant.model.joint_kinds, pool=pool)


def conditioning_options(plant: Plant, options: IdentifyOptions) -> ConditioningOptions:
    """The conditioning options :func:`condition_for` uses for ``plant``."""
    copt = options.conditioning
    frac = plant.model.upper_velocity_fraction
    if frac is not None and copt.upper_velocity_threshold is None and copt.upper_velocity_fraction is None:
        copt = replace(copt, upper_velocity_fraction=frac)
    if plant.friction.sign_directions and not copt.sign_directions:
        copt = replace(copt, sign_directions=plant.friction.sign_directions)
    return copt


def fit_once(rec: Recording, plant: Plant, options: IdentifyOptions = IdentifyOptions(), *,
             progress: Callable[[str, float], None] | None = None,
             conditioned: Conditioned | None = None,
             on_conditioned: Callable[[Conditioned], None] | None = None,
             on_evaluated: Callable[[Conditioned, np.ndarray], None] | None = None) -> Identification:
    """One pass of the identification with the plant's friction model and the options' cutoff.

    ``conditioned``: ``rec`` already conditioned (by a selection that scored this cutoff); used only when
    it was conditioned with exactly the options this pass would use, else the recording is conditioned anew.
    ``on_conditioned``: called with the conditioned recording once its regression is built, before the solve (what
    needs only the recording can run meanwhile, beside the single-threaded solve); ``on_evaluated``: called with
    the conditioned recording and the model torque on it as soon as that is known, before the uncertainty and the
    diagnoses (what needs only those — the REC's rows — can start meanwhile).

    Raises
    ------
    InputDataError, IdentifiabilityError
        Unusable data (no torque, no motion, too few samples).
    """
    step = progress or (lambda stage, frac: None)
    step("conditioning", 0.0)
    if conditioned is not None and conditioned.options == conditioning_options(plant, options):
        cond = conditioned
    elif num_threads() > 1 and rec.n_samples * rec.n_joints >= SPLIT_CONDITIONING:
        with ThreadPoolExecutor(1) as pool:
            cond = condition_for(rec, plant, options, pool=pool)
    else:
        cond = condition_for(rec, plant, options)
    reg = build_regression(cond, plant, options, progress=step)     # (its regressor kernel on every core allowed)
    if on_conditioned is not None:
        on_conditioned(cond)
    est = estimate(reg, plant, options, progress=step)
    theta, notes = est.theta, list(est.notes)
    if (cond.time_base or {}).get("note"):
        notes = [cond.time_base["note"], *notes]
    step("evaluation", 0.75)
    tcmd = plant.torque(theta, cond.q, cond.qd, cond.qdd, sign=cond.sign)  # every sample, in chunks
    if on_evaluated is not None:
        on_evaluated(cond, tcmd)
    summary = LogSummary.of(cond, tcmd, reg.decimation)
    errors = summary.errors(options.allowed_error)
    ident = est.identification(cond, tcmd, errors, summary, notes)
    step("diagnostics", 0.9)
    ident = assess(ident)                   # the prediction uncertainty and the diagnoses
    step("done", 1.0)
    return ident


@dataclass(frozen=True)
class Estimate:
    """Stages 4–5 of a regression: the solution, the parameters completed by the model (``theta``, ``status``,
    ``values``), the confounded groups and the notes — what an :class:`Identification` records of the fit."""

    plant: Plant
    reg: Regression
    sol: "Solution"
    theta: np.ndarray
    status: tuple
    values: dict
    confounded: tuple
    notes: tuple
    estimator: str

    def identification(self, cond: Conditioned, tcmd: np.ndarray, errors, summary, notes=None) -> Identification:
        """The :class:`Identification` of this estimate evaluated on ``cond`` (model torque ``tcmd``; ``errors``,
        ``summary`` of the whole recording), without its diagnoses."""
        sol, reg = self.sol, self.reg
        return Identification(
            plant=self.plant, theta=self.theta, std=sol.std, status=self.status, base=reg.base,
            base_values=sol.base_values, base_std=sol.lsq.std, base_excited=sol.lsq.excited, lsq=sol.lsq, cond=cond,
            tcmd=tcmd, errors=errors, diagnostics=(), notes=tuple(self.notes if notes is None else notes),
            derived=self.plant.model.derived(self.values), estimator=self.estimator, decimation=reg.decimation,
            consistent=sol.consistent, confounded=self.confounded, summary=summary)


def estimate(reg: Regression, plant: Plant, options: IdentifyOptions, *, progress=None) -> Estimate:
    """Stages 4–5: solve the regression, find what it determines only in combination, complete the parameters."""
    sol = solve(reg, plant, options, progress=progress)
    confounded = confounding(plant, reg, sol)
    theta, status, notes, values = _complete(plant, reg, sol, confounded)
    if sol.note:
        notes = [*notes, sol.note]
    estimator = (("consistent" if sol.consistent is not None else "wls") if options.estimator == "auto"
                 else options.estimator)
    return Estimate(plant, reg, sol, theta, tuple(status), values, tuple(confounded), tuple(notes), estimator)


@dataclass(frozen=True)
class Solution:
    """The estimate of a regression: ``theta`` ``(n_params,)`` (the parameters the data cannot identify at
    their held values), ``std`` ``(n_params,)`` (NaN where not estimated), the base parameters' values
    ``base_values`` and the least-squares record; ``consistent`` the physically consistent fit's record."""

    theta: np.ndarray
    std: np.ndarray
    base_values: np.ndarray
    lsq: LeastSquares
    consistent: ConsistentFit | None = None
    note: str | None = None                 # why estimator "auto" chose what it chose (None: nothing to say)


def solve(reg, plant, options, *, progress=None) -> Solution:
    """Stage 4: estimate the base parameters of a :class:`~dynid.identification.regression.Regression`.

    ``options.estimator``: ``wls``/``irls`` weighted least squares (``options.weighting``), ``ols``
    unweighted; ``consistent`` starts from the weighted solution and makes every link's inertia
    physically consistent (:mod:`dynid.identification.consistent`); ``auto`` is ``wls``, continued by the
    consistent fit on the same rows where a link of the least-squares estimate is significantly no rigid
    body (:func:`rigid_body_violations`).
    """
    step = progress or (lambda stage, frac: None)
    step("least squares", 0.55)
    indep = reg.independent
    weighting = "none" if options.estimator == "ols" else options.weighting
    ridge = {}
    if options.prior_regularization > 0 and plant.model.prior_parameters() is not None:
        # toward the a-priori model: its base parameters (held values = the prior) on the model's columns
        # only the link inertias carry an a-priori value (a counterbalance's charge, say, does not)
        groups = plant.model.link_parameter_groups()
        linked = np.concatenate(groups) if groups else np.arange(plant.n_model)
        ridge = {"prior": reg.base.base_values(reg.theta_hold), "prior_mask": np.isin(indep, linked),
                 "ridge": options.prior_regularization}
    lsq = lstsq_rows(reg.rows, weighting=weighting, columns=indep, **ridge)
    theta = reg.base.to_full(lsq.x, reg.theta_hold[reg.base.dependent])
    std = np.full(plant.n_params, np.nan)
    std[indep] = lsq.std
    note = None
    if options.estimator == "auto":
        bad, kept = rigid_body_violations(plant, theta, std)
        if not bad:
            note = (f"estimator: {', '.join(kept)} of the least-squares estimate is within two standard deviations "
                    "of a rigid body (kept)") if kept else None
            return Solution(theta, std, lsq.x, lsq, note=note)
        note = (f"estimator: the least-squares estimate describes no rigid body for {', '.join(bad)} (negative "
                "mass or principal moments violating the triangle inequality), so the physically consistent "
                "estimator was used")
    elif options.estimator != "consistent":
        return Solution(theta, std, lsq.x, lsq)
    step("physically consistent fit", 0.65)
    try:
        c = fit_consistent(plant, reg.rows, lsq=lsq, base=reg.base, theta_linear=theta,
                           theta_hold=reg.theta_hold, known=list(reg.known), options=options.consistent)
    except ConfigError as err:
        if options.estimator != "auto":
            raise
        return Solution(theta, std, lsq.x, lsq, note=f"{note} — but it cannot run here ({err}); least squares kept")
    return Solution(c.theta, c.std, c.base_values, c.lsq, c, note)


def confounding(plant: Plant, reg: Regression, sol: Solution) -> tuple[Confounding, ...]:
    """The parameters this recording determines only in combination (from the fit's R factor)."""
    r = sol.lsq.r_factor
    if r is None or r.shape[1] < 2:
        return ()
    names = [plant.param_names[i] for i in np.asarray(reg.independent)[sol.lsq.excited]]
    return tuple(confounded_groups(r, names))


def _complete(plant: Plant, reg: Regression, sol: Solution, confounded: tuple[Confounding, ...] = ()):
    """Stage 5: each parameter's status, and the model's physics filling what the data could not identify."""
    indep = reg.independent
    position = {int(i): k for k, i in enumerate(indep)}
    status = []
    for i in range(plant.n_params):
        if plant.param_roles[i] == "constant":
            status.append(ParameterStatus.CONSTANT)
        elif i in reg.known:
            status.append(ParameterStatus.KNOWN)
        elif i in position:
            status.append(ParameterStatus.IDENTIFIED if sol.lsq.excited[position[i]] else ParameterStatus.NOT_EXCITED)
        else:
            status.append(ParameterStatus.NOT_IDENTIFIABLE)
    names = plant.param_names
    theta = sol.theta
    values = dict(zip(names, theta.tolist()))
    identified = {n: s == ParameterStatus.IDENTIFIED for n, s in zip(names, status)}
    if sol.consistent is None:
        values, notes = plant.model.complete(values, identified)
    else:  # the link inertias are already complete and consistent; a model's completion could break that
        notes = list(sol.consistent.notes)
    theta_c = np.array([values[n] for n in names])
    mixed = {n for c in confounded for n in c.parameters}
    status = [ParameterStatus.CONFOUNDED if s == ParameterStatus.IDENTIFIED and n in mixed else s
              for n, s in zip(names, status)]
    for i in range(plant.n_params):
        if theta_c[i] != theta[i] and status[i] in (ParameterStatus.NOT_IDENTIFIABLE, ParameterStatus.NOT_EXCITED):
            status[i] = ParameterStatus.DERIVED
    return theta_c, tuple(status), notes, values


def rigid_body_violations(plant: Plant, theta: np.ndarray, std: np.ndarray) -> tuple[list[str], list[str]]:
    """Links of ``theta`` that are no rigid body: ``(significant, within_noise)``. Significant: negative mass,
    or a triangle margin below −2 standard deviations of the link's diagonal inertia terms. Models without
    link-wise inertias have none."""
    groups = plant.model.link_parameter_groups()
    if not groups:
        return [], []
    G = np.array([np.asarray(g) for g in groups])
    names = tuple(plant.param_names[g[0]].rsplit(".", 1)[0] for g in groups)
    check = physical_consistency(theta[G], names)
    if check.consistent:
        return [], []
    sigma = np.sqrt(np.sum(np.nan_to_num(std[G], nan=0.0)[:, [0, 3, 5]] ** 2, axis=1))
    bad, kept = [], []
    for n, ok, m, margin, s in zip(names, check.link_ok, check.mass, check.triangle_margin, sigma):
        if ok:
            continue
        (bad if (not m > 0 or not np.isfinite(margin) or margin < -2.0 * s) else kept).append(n)
    return bad, kept
