"""Friction model selection by validation error (``friction: auto``).

Each candidate friction model is identified on one part of the recording and scored on the
held-out part, both ways round: fit on the first 70 % and validate on the last 30 %, then fit on the
last 70 % and validate on the first 30 %. The score is the torque NRMSE (RMSE / RMS of the
measured torque, per joint, averaged over joints and folds) of the model's physical torque against
the raw measured torque. Candidates are ordered from simple to rich; a richer one is chosen only if
it lowers the score by more than ``MIN_GAIN`` (2 %, relative) against the best simpler one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np

from .conditioning import condition
from .errors import DynidError
from .metrics import nrmse
from .models.base import Plant
from .recording import Recording

__all__ = ["CANDIDATES", "FrictionSelection", "select_friction", "MIN_GAIN"]

CANDIDATES = (
    "viscous+coulomb",
    "viscous+coulomb+offset",
    "viscous+coulomb+offset+armature",
    "viscous+coulomb+offset+stribeck",
    "viscous+coulomb+offset+stribeck+armature",
)
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


def select_friction(rec: Recording, plant: Plant, options, candidates: Sequence[str] = CANDIDATES,
                    progress: Callable[[str, float], None] | None = None) -> FrictionSelection:
    """Choose the friction model of ``plant`` for ``rec`` by two-fold held-out torque error."""
    from .identify import identify

    model = plant.model
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
                val = rec.slice(va, vb)
                cond = condition(val, replace(res.cond.options, velocity_threshold=None), model.joint_kinds,
                                 require_motion=False)
                pred = cand.torque(res.theta, cond.q, cond.qd, cond.qdd)
                errs.append(np.nanmean(nrmse(pred, cond.tau_raw)))
        except DynidError:
            scores[spec] = None
            continue
        scores[spec] = float(np.mean(errs))
    valid = [(s, v) for s, v in scores.items() if v is not None]
    if not valid:
        return FrictionSelection(candidates[0], scores)
    chosen, best = valid[0]
    for spec, v in valid[1:]:
        if v < (1.0 - MIN_GAIN) * best:
            chosen, best = spec, v
    return FrictionSelection(chosen, scores)
