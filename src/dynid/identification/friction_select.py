"""Friction model selection by validation error (``friction: auto``).

Each candidate friction model is identified on one part of the recording and scored on the
held-out part, both ways round: fit on the first 70 % and validate on the last 30 %, then fit on the
last 70 % and validate on the first 30 %. The score is the torque NRMSE (RMSE / RMS of the
measured torque, per joint, averaged over joints and folds) of the prediction ``dynid predict``
makes for the held-out part, against the raw measured torque. The chosen model is the simplest one
(fewest friction parameters) whose score is within ``MIN_GAIN`` (2 %, relative) of the best; among
equally simple ones, the lowest score.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from ..errors import DynidError
from ..metrics import nrmse
from ..models.base import Plant
from ..recording import Recording

__all__ = ["CANDIDATES", "FrictionSelection", "select_friction", "candidates_for", "MIN_GAIN"]

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
MIN_GAIN = 0.02
FIT_SHARE = 0.7


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


def select_friction(rec: Recording, plant: Plant, options, candidates: Sequence[str] | None = None,
                    progress: Callable[[str, float], None] | None = None) -> FrictionSelection:
    """Choose the friction model of ``plant`` for ``rec`` by two-fold held-out torque error."""
    from .pipeline import identify

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
                res = identify(rec.slice(fa, fb), cand, opts)
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
