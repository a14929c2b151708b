"""Choices the data make: the friction model, the cutoff, the torque delay — each wrapped around a fit.

Friction model (``friction: auto``): each candidate friction model is identified on one part of the recording and scored on the
held-out part, both ways round: fit on the first 70 % and validate on the last 30 %, then fit on the
last 70 % and validate on the first 30 %. The score is the torque NRMSE (RMSE / RMS of the
measured torque, per joint, averaged over joints and folds) of the prediction ``dynid predict``
makes for the held-out part, against the raw measured torque. The chosen model is the simplest one
(fewest friction parameters) whose score is within ``MIN_GAIN`` (2 %, relative) of the best; among
equally simple ones, the lowest score.

Cutoff (``cutoff: auto``): the default cutoff (20 × the motion bandwidth, :func:`dynid.signal.conditioning.default_cutoff`) looks
only at the positions. How much of the torque above it the model explains depends on the robot:
link-side torque sensors on a light arm see elastic vibrations the rigid model lacks (a lower
cutoff is better), while motor torques and motor encoders of a heavy geared robot carry the rotor
inertia's response to fast motor accelerations (a higher one is better). So the cutoff can be
chosen by the data, the way ``friction: auto`` chooses the friction model: each candidate
``factor × default`` (0.5, 1, 2, 4; below 0.4 fs) is identified on one part of the recording and
scored on the held-out part, both ways round (first 70 % / last 30 %, then last 70 % / first
30 %). The score is the torque NRMSE (RMSE / RMS of the measured torque, per joint, averaged over
joints and folds) of :meth:`dynid.FittedModel.predict`, i.e. the model's physical torque against the
raw measured torque. The default is kept unless another candidate lowers the score by more than
``MIN_GAIN`` (2 %, relative); then the best candidate is chosen.

Torque delay (``--align``): :func:`aligned` fits once, estimates the torque/kinematics delay from the
residual and, when it is at least half a sample, fits again with the torque shifted.

Each selection takes the fit it wraps (``fit(rec, plant, options, progress=None) -> Identification``):
they never call back into :func:`dynid.identification.pipeline.identify`, which composes them.

>>> from dynid.models import make_model, Plant
>>> from dynid.sim import SineMotion, simulate
>>> plant = Plant(make_model("rotary1"))
>>> rec = simulate(plant, [0.02, 0.5, 0.3], SineMotion([-1.0], [1.0], [1.0], record_s=8.0), seed=1)
>>> sel = select_cutoff(rec, plant)
>>> sel.chosen_hz in sel.scores
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ..errors import DynidError
from ..metrics import nrmse
from ..models.base import Plant
from ..recording import Recording
from ..signal.conditioning import default_cutoff
from .diagnostics import MIN_DELAY_SAMPLES, estimate_delay
from .fit import Fit, fit_once
from .options import IdentifyOptions
from .result import Identification

__all__ = ["CANDIDATES", "FrictionSelection", "select_friction", "candidates_for", "CutoffSelection",
           "select_cutoff", "FACTORS", "aligned", "MIN_GAIN", "FIT_SHARE"]

MIN_GAIN = 0.02
"""A richer friction model, or another cutoff than the default, must lower the held-out error by this
fraction (relative) to be chosen."""
FIT_SHARE = 0.7
"""Share of the recording each fold fits (the rest is held out)."""


CANDIDATES = (
    "viscous+coulomb",
    "viscous+coulomb+offset",
    "viscous+coulomb_asym",
    "viscous+coulomb+offset+armature",
    "viscous+coulomb_asym+armature",
    "viscous+coulomb+offset+stribeck",
    "viscous+coulomb+offset+stribeck+armature",
)
MOTOR_CANDIDATE_TERMS = "motor_viscous+motor_coulomb"
"""Appended to every candidate when the transmission has coupled motors (``+motor_armature`` as well
where the candidate has joint armature): their friction moves with several joints."""


def candidates_for(model, candidates: Sequence[str] = CANDIDATES) -> tuple[str, ...]:
    """The candidate friction models for ``model``: with coupled motors, their terms on every candidate."""
    tr = model.config.transmission
    if tr is None or not tr.coupled_motors:
        return tuple(candidates)
    out = []
    for c in candidates:
        extra = MOTOR_CANDIDATE_TERMS + ("+motor_armature" if "armature" in c.split("+") else "")
        out.append(f"{c}+{extra}")
    return tuple(out)


@dataclass(frozen=True)
class FrictionSelection:
    """The chosen friction model and the validation score of every candidate (NRMSE, or None if it failed)."""

    chosen: str
    scores: dict

    def table(self) -> list[tuple[str, float | None]]:
        return list(self.scores.items())

    def note(self) -> str:
        parts = [f"{k}: {'-' if v is None else f'{100 * v:.3f} %'}" for k, v in self.scores.items()]
        return f"friction model chosen by validation error: {self.chosen} (held-out NRMSE " + "; ".join(parts) + ")"


def select_friction(rec: Recording, plant: Plant, options: IdentifyOptions | None = None,
                    candidates: Sequence[str] | None = None, progress: Callable[[str, float], None] | None = None,
                    *, fit: Fit = fit_once) -> FrictionSelection:
    """Choose the friction model of ``plant`` for ``rec`` by two-fold held-out torque error.

    ``fit`` is the estimator each candidate is identified with (default one plain pass; ``identify``
    passes the robust one for ``irls``); the torque-delay alignment is not run for the candidates.
    """
    options = options if options is not None else IdentifyOptions()
    model = plant.model
    candidates = candidates_for(model) if candidates is None else tuple(candidates)
    N = rec.n_samples
    cut_a, cut_b = int(FIT_SHARE * N), int((1 - FIT_SHARE) * N)
    folds = [((0, cut_a), (cut_a, N)), ((cut_b, N), (0, cut_b))]
    scores: dict[str, float | None] = {}
    opts = replace(options, align_torque=False)
    for c, spec in enumerate(candidates):
        if progress:
            progress(f"friction {spec}", 0.3 * c / len(candidates))
        cand = Plant(model.with_config(friction=spec))
        errs = []
        try:
            for (fa, fb), (va, vb) in folds:
                res = fit(rec.slice(fa, fb), cand, opts)
                # scored exactly as 'dynid predict' would predict the held-out part
                pred = res.model.predict(rec.slice(va, vb))
                errs.append(np.nanmean(nrmse(pred.tau, pred.measured)))
        except DynidError:
            scores[spec] = None
            continue
        scores[spec] = float(np.mean(errs))
    valid = [(s, v) for s, v in scores.items() if v is not None]
    if not valid:
        return FrictionSelection(candidates[0], scores)
    # the simplest model (fewest friction parameters) within MIN_GAIN of the best score; equal
    # counts go to the lower score
    best = min(v for _, v in valid)
    size = {spec: Plant(model.with_config(friction=spec)).friction.n_params for spec, _ in valid}
    near = [(size[spec], v, spec) for spec, v in valid if v <= (1.0 + MIN_GAIN) * best]
    chosen = min(near)[2]
    return FrictionSelection(chosen, scores)


FACTORS = (0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class CutoffSelection:
    """The chosen cutoff [Hz], the default it was compared with, and every candidate's score
    (held-out NRMSE, or None if the candidate could not be identified)."""

    chosen_hz: float
    default_hz: float
    scores: dict

    def note(self) -> str:
        parts = [f"{fc:.3g} Hz: {'-' if v is None else f'{100 * v:.3f} %'}" for fc, v in self.scores.items()]
        return (f"cutoff chosen by validation error: {self.chosen_hz:.3g} Hz (default {self.default_hz:.3g} Hz; "
                "held-out NRMSE " + "; ".join(parts) + ")")

    def to_dict(self) -> dict:
        return {"chosen_hz": self.chosen_hz, "default_hz": self.default_hz,
                "candidates_hz": list(self.scores), "held_out_nrmse": list(self.scores.values())}


def select_cutoff(rec: Recording, plant: Plant, options: IdentifyOptions | None = None,
                  factors: Sequence[float] = FACTORS, progress: Callable[[str, float], None] | None = None,
                  *, fit: Fit = fit_once) -> CutoffSelection:
    """Choose the low-pass cutoff for identifying ``plant`` from ``rec`` by two-fold held-out torque error.

    Parameters
    ----------
    rec : Recording
        SI, joint side, with torques.
    plant : Plant
    options : IdentifyOptions, optional
        Everything but the cutoff is used as given (its ``conditioning.cutoff_hz`` is ignored).
    factors : sequence of float
        Candidates are ``factor × default cutoff`` (1 must be among them), kept below 0.4 × the sample rate.

    Returns
    -------
    CutoffSelection
    """
    options = options if options is not None else IdentifyOptions()
    copt = options.conditioning
    dt = rec.sample_period
    base = default_cutoff(rec.q, dt, copt)
    cands = sorted({float(f * base) for f in factors if 0 < f * base < 0.4 / dt} | {float(base)})
    n = rec.n_samples
    cut_a, cut_b = int(FIT_SHARE * n), int((1 - FIT_SHARE) * n)
    folds = [((0, cut_a), (cut_a, n)), ((cut_b, n), (0, cut_b))]
    scores: dict[float, float | None] = {}
    for c, fc in enumerate(cands):
        if progress:
            progress(f"cutoff {fc:.3g} Hz", 0.3 * c / len(cands))
        opts = replace(options, conditioning=replace(copt, cutoff_hz=fc), align_torque=False)
        errs = []
        try:
            for (fa, fb), (va, vb) in folds:
                res = fit(rec.slice(fa, fb), plant, opts)
                errs.append(float(np.nanmean(res.model.predict(rec.slice(va, vb)).nrmse())))
        except DynidError:
            scores[fc] = None
            continue
        scores[fc] = float(np.mean(errs))
    valid = {fc: v for fc, v in scores.items() if v is not None}
    chosen = float(base)
    if valid:
        best = min(valid, key=valid.get)
        ref = valid.get(float(base))
        if ref is None or valid[best] < (1.0 - MIN_GAIN) * ref:
            chosen = best
    return CutoffSelection(chosen, float(base), scores)


def aligned(fit: Fit) -> Fit:
    """``fit`` with the torque/kinematics delay estimated after a first fit and, if it is at least half a
    sample (``MIN_DELAY_SAMPLES``), the torque shifted and fitted again (``IdentifyOptions.align_torque``)."""

    def fit_aligned(rec: Recording, plant: Plant, options: IdentifyOptions, progress=None) -> Identification:
        first = fit(rec, plant, replace(options, align_torque=False))
        delay, _ = estimate_delay(first)
        if abs(delay) < MIN_DELAY_SAMPLES * first.cond.sample_period_s:
            return first
        copt = replace(options.conditioning, torque_delay_s=options.conditioning.torque_delay_s + delay)
        return fit(rec, plant, replace(options, conditioning=copt, align_torque=False), progress=progress)

    return fit_aligned
