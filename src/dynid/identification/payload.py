"""Payload identification (softMC ``IdentPayload``; spec/identification.md §6).

Two-run method. Step 1 identifies the robot without payload (``dynid identify``). Step 2 runs with
the payload mounted and keeps the robot's parameters and friction fixed (``--payload-of
RESULT.json``):

- payload unknown: identify the payload mass and inertia. Payload terms are linear in them, so
  their regressor columns are the torque differences ``tau(payload = e_k) − tau(payload = 0)``
  of the model itself — one mechanism for every model;
- payload known (``payload: {mass}`` in the configuration): identify the model's payload
  coefficients instead (L², g·L of a crank arm, g·cos α of a tilted axis).

Not for PUMA Dynamic Model 1, as softMC.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from ..signal.conditioning import condition
from ..models.config import Payload
from ..errors import ConfigError, IdentifiabilityError
from .solve import weighted_lstsq
from .pipeline import Identification, IdentifyOptions, ParameterStatus, identify
from ..fitted import FittedModel
from .summary import LogSummary
from ..models.base import Plant
from ..recording import Recording

__all__ = ["PayloadEstimate", "identify_payload", "PAYLOAD_FIELDS", "NO_PAYLOAD_MODELS"]

PAYLOAD_FIELDS = ("mass", "inertia")
PAYLOAD_UNITS = {"mass": "kg", "inertia": "kg m^2"}
PRG_PROPERTY = {"mass": "PayloadMass", "inertia": "PayloadInertia"}
NO_PAYLOAD_MODELS = ("puma",)
"""softMC offers no payload identification for these models (PUMA Dynamic Model 1)."""


@dataclass(frozen=True)
class PayloadEstimate:
    """Payload identification result.

    mode : ``"properties"`` (mass/inertia identified) or ``"coefficients"`` (payload known, the model's
        payload coefficients identified)
    values, std : identified payload properties {field: value} and their standard deviations (SI)
    identification : the loaded robot's Identification (errors, diagnostics, REC signals)
    """

    mode: str
    values: Mapping[str, float]
    std: Mapping[str, float]
    identification: Identification

    def prg_properties(self) -> dict[str, float]:
        """``<ELEMENT>.PayloadMass`` / ``PayloadInertia`` lines for the PRG."""
        payload = self.identification.plant.model.payload
        return {PRG_PROPERTY[f]: getattr(payload, f) for f in PAYLOAD_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "values": dict(self.values), "std": dict(self.std),
                "units": {k: PAYLOAD_UNITS[k] for k in self.values}}


def _robot_known(idm: FittedModel, keep_free: tuple[str, ...] = ()) -> dict[str, float]:
    names = idm.plant.param_names
    return {n: float(v) for n, v in zip(names, idm.theta) if n not in keep_free}


def identify_payload(rec: Recording, idm: FittedModel, *, config: Mapping[str, Any] | None = None,
                     options: IdentifyOptions = IdentifyOptions(),
                     progress: Callable[[str, float], None] | None = None) -> PayloadEstimate:
    """Identify the payload of a run with the payload mounted, the robot's parameters held fixed.

    Parameters
    ----------
    rec : Recording
        Run with the payload mounted (SI).
    idm : FittedModel
        The robot identified without payload (``dynid.load(RESULT.json)``).
    config : mapping, optional
        Overrides of the robot's configuration; a ``payload`` with ``mass > 0`` switches to identifying
        the model's payload coefficients (L², g·L, ...) for that known payload.
    options : IdentifyOptions
        Conditioning; the identification run's cutoff is reused unless ``options`` sets one.

    Raises
    ------
    ConfigError
        PUMA model 1 (softMC offers no payload identification there).
    IdentifiabilityError
        The model's payload terms are all zero (e.g. L² and g·L are 0 in the result).
    """
    model = idm.plant.model
    if model.name in NO_PAYLOAD_MODELS:
        raise ConfigError(f"payload identification is not available for model {model.name!r} (softMC Dynamic Model 1)",
                          hint="identify the robot with the payload as part of the last link instead")
    user = dict(config or {})
    known_payload = user.get("payload") or {}
    if options.conditioning.cutoff_hz is None:
        options = replace(options, conditioning=replace(options.conditioning, cutoff_hz=idm.cutoff_hz))
    payload_params = tuple(p.name for p in model.parameters if p.role == "payload")
    if known_payload.get("mass", 0) and payload_params:
        return _coefficients(rec, idm, user, payload_params, options, progress)
    return _properties(rec, idm, user, options, progress)


def _coefficients(rec, idm, user, payload_params, options, progress) -> PayloadEstimate:
    """Known payload: the robot's parameters and friction are known, the payload coefficients are fitted."""
    cfg = dict(user)
    known = _robot_known(idm, keep_free=payload_params)
    known.update(user.get("parameters", {}))
    for p in payload_params:
        known.pop(p, None)
    cfg["parameters"] = known
    plant = Plant(idm.model_with(cfg), idm.friction)
    ident = identify(rec, plant, options, progress=progress)
    values = {p: ident.values[p] for p in payload_params}
    std = {p: float(ident.std[plant.param_names.index(p)]) for p in payload_params}
    return PayloadEstimate("coefficients", values, std, ident)


def _properties(rec, idm, user, options, progress) -> PayloadEstimate:
    """Unknown payload: its mass and inertia are fitted, everything else is held."""
    step = progress or (lambda s, f: None)
    cfg = {k: v for k, v in user.items() if k != "payload"}
    cfg["payload"] = {"mass": 0.0, "inertia": 0.0}
    model0 = idm.model_with(cfg)
    plant0 = Plant(model0, idm.plant.friction)
    theta = idm.theta
    step("conditioning", 0.0)
    cond = condition(rec, options.conditioning, model0.joint_kinds)
    args = (cond.q, cond.qd, cond.qdd)
    tau0 = plant0.torque(theta, *args, sign=cond.sign)
    cols, fields = [], []
    for f in PAYLOAD_FIELDS:
        unit = Payload(**{f: 1.0})
        m1 = model0.with_payload(mass=unit.mass, inertia=unit.inertia)
        col = Plant(m1, idm.plant.friction).torque(theta, *args, sign=cond.sign) - tau0
        if np.abs(col).max() > 1e-12 * max(1.0, np.abs(tau0).max()):
            cols.append(col)
            fields.append(f)
    if "mass" not in fields:  # a payload's mass always loads a real robot: the model must see it
        coef = [p.name for p in model0.parameters if p.role == "payload"]
        raise IdentifiabilityError(
            f"the payload mass does not change the torque of model {model0.name!r} with the identified parameters"
            + (f" (its payload coefficients {', '.join(coef)} are 0)" if coef else ""),
            hint="give the payload coefficients in the configuration's 'parameters' (from the kinematics) or identify them "
                 "first with a known payload mass")
    step("least squares", 0.5)
    mask = cond.moving
    W = np.stack(cols, axis=-1)[mask]
    y = (cond.tau - tau0)[mask]
    joint = np.nonzero(mask)[1]
    lsq = weighted_lstsq(W, y, joint, model0.n_joints, weighting=options.weighting)
    est = {f: float(v) for f, v in zip(fields, lsq.x)}
    std = {f: float(s) for f, s in zip(fields, lsq.std)}
    notes = []
    for f, v in list(est.items()):
        if v < 0:  # physically impossible; within noise of 0 when |v| is a few std
            notes.append(f"payload {f} estimate {v:.4g} {PAYLOAD_UNITS[f]} (std {std[f]:.2g}) is negative: set to 0")
            est[f] = 0.0
    # the loaded robot as an Identification: every parameter known (from step 1), payload applied
    known_cfg = {**cfg, "payload": {"mass": est.get("mass", 0.0), "inertia": est.get("inertia", 0.0)},
                 "parameters": _robot_known(idm)}
    step("evaluation", 0.8)
    ident = _evaluate_fixed(rec, Plant(idm.model_with(known_cfg), idm.plant.friction), theta, cond, options)
    ident = replace(ident, notes=ident.notes + tuple(notes))
    step("done", 1.0)
    return PayloadEstimate("properties", est, std, ident)


def _evaluate_fixed(rec, plant, theta, cond, options) -> Identification:
    """Identification record of a fully known plant on conditioned data (no fit): errors + diagnostics."""
    from .base_params import BaseParameters
    from .diagnostics import diagnose
    from .solve import LeastSquares

    tcmd = plant.torque(theta, cond.q, cond.qd, cond.qdd, sign=cond.sign)
    summary = LogSummary.of(cond, tcmd)
    errors = summary.errors(options.allowed_error)
    n = plant.n_params
    base = BaseParameters(plant.param_names, np.zeros(0, int), np.arange(n), np.zeros((0, n)))
    lsq = LeastSquares(np.zeros(0), np.zeros(0), np.zeros(0, bool), 0, float("nan"), float("nan"),
                       np.ones(plant.n_joints), float("nan"))
    ident = Identification(plant=plant, theta=np.asarray(theta, float), std=np.full(n, np.nan),
                           status=(ParameterStatus.KNOWN,) * n, base=base, base_values=np.zeros(0),
                           base_std=np.zeros(0), base_excited=np.zeros(0, bool), lsq=lsq, cond=cond, tcmd=tcmd,
                           errors=errors, diagnostics=(), notes=("parameters from the identification without payload",),
                           derived=plant.model.derived(dict(zip(plant.param_names, theta))), summary=summary)
    return replace(ident, diagnostics=tuple(d for d in diagnose(ident) if d.code not in ("poorly_identified",)))
