"""The record of an identification run (:class:`Identification`) and its :class:`~dynid.fitted.FittedModel`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import numpy as np

from .._json import jsonable
from ..fitted import FittedModel
from ..metrics import RelativeErrors
from ..models.base import Plant
from ..signal.conditioning import Conditioned
from ..units import velocity_unit
from .base_params import BaseParameters
from .consistent import ConsistentFit
from .diagnostics import verdict
from .solve import LeastSquares
from .summary import LogSummary

__all__ = ["Identification", "fitted_model"]


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
    selections: Mapping[str, Any] = field(default_factory=dict)  # choices made by the data: {"cutoff_selection": ...}
    confounded: tuple = ()           # of base_params.Confounding: parameters determined only in combination
    uncertainty: Mapping[str, Any] | None = None  # diagnostics.prediction_uncertainty on another motion
    summary: LogSummary | None = None  # sums, extents and counts over the whole conditioned recording (None: of cond)

    def __post_init__(self) -> None:
        if self.summary is None:          # a recording in memory: its summary from its rows
            object.__setattr__(self, "summary", LogSummary.of(self.cond, self.tcmd, self.decimation))

    @property
    def success(self) -> bool:
        """The verdict: softMC's rule holds AND no diagnosis is an error (a physically impossible or
        undetermined model, a saturated drive ...). :func:`~dynid.identification.diagnostics.verdict`."""
        return verdict(self.errors, self.diagnostics)["passed"]

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

    @cached_property
    def te(self) -> np.ndarray:
        """Model torque minus the conditioned measured torque ``(N, n_joints)`` (computed once: the diagnoses
        read it many times)."""
        return self.tcmd - self.cond.tau


def _prior_base_values(ident: Identification) -> np.ndarray | None:
    """The a-priori model's value of each base parameter (URDF/configured inertias; NaN for combinations with
    friction, which has no a-priori value), or None when the model has none."""
    plant, base = ident.plant, ident.base
    prior = plant.model.prior_parameters()
    if prior is None:
        return None
    theta = np.zeros(plant.n_params)
    theta[: plant.n_model] = prior
    values = base.base_values(theta)
    friction = np.asarray(base.independent) >= plant.n_model
    if base.dependent.size:
        friction |= np.any((base.K != 0) & (np.asarray(base.dependent) >= plant.n_model)[None, :], axis=1)
    return np.where(friction, np.nan, values)


def fitted_model(ident: Identification) -> FittedModel:
    """The :class:`~dynid.fitted.FittedModel` of an identification run: its parameters with their std
    and status, and result.json's ``conditioning`` and ``metrics`` sections built from the run."""
    cond, lsq, model, summary = ident.cond, ident.lsq, ident.plant.model, ident.summary
    conditioning = {
        "sample_period_s": cond.sample_period_s,
        "cutoff_hz": cond.cutoff_hz,
        "filter_order": cond.options.filter_order,
        "raw_length": summary.raw_length,
        "data_length": summary.data_length,
        "trim_samples": summary.start,
        "velocity_threshold": cond.velocity_threshold,
        "velocity_threshold_units": [velocity_unit(k) for k in model.joint_kinds],
        "upper_velocity_threshold": cond.upper_velocity_threshold,
        "moving_samples": summary.moving,
        "smooth_sign": cond.options.smooth_sign,
        "torque_delay_s": cond.options.torque_delay_s,
        **({"time_base": cond.time_base} if getattr(cond, "time_base", None) else {}),
    }
    metrics = {
        "max_relative_error": ident.errors.max_relative,
        "mean_relative_error": ident.errors.mean_relative,
        "allowed": ident.errors.allowed,
        "success": ident.success,
        "softmc_rule": ident.errors.success,
        "verdict": verdict(ident.errors, ident.diagnostics),
        **({"prediction_uncertainty": ident.uncertainty["relative"]} if ident.uncertainty else {}),
        "condition_number": lsq.condition_number,
        "condition_number_scaled": lsq.condition_number_scaled,
        "rank": lsq.rank,
        "estimator": ident.estimator,
        "fit_decimation": ident.decimation,
        "fit_rows": summary.fit_rows,
        "weights": lsq.weights,
        "residual_rms": summary.residual_rms,
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
            "correlation": ident.lsq.correlation,
            **({"prior": prior_base} if (prior_base := _prior_base_values(ident)) is not None else {}),
        },
        "derived": dict(ident.derived),
        **({"physical_consistency": ident.consistent.to_dict()} if ident.consistent is not None else {}),
        "confounded": [c.to_dict() for c in ident.confounded],
        "notes": list(ident.notes),
        **dict(ident.selections),
    }
    return FittedModel(ident.plant, ident.theta, ident.std, ident.status, jsonable(conditioning), jsonable(metrics),
                       info=jsonable(info))
