"""Cutoff selection by validation error (``dynid identify --cutoff auto``).

The default cutoff (20 × the motion bandwidth, :func:`dynid.signal.conditioning.default_cutoff`) looks
only at the positions. How much of the torque above it the model explains depends on the robot:
link-side torque sensors on a light arm see elastic vibrations the rigid model lacks (a lower
cutoff is better), while motor torques and motor encoders of a heavy geared robot carry the rotor
inertia's response to fast motor accelerations (a higher one is better). So the cutoff can be
chosen by the data, the way ``friction: auto`` chooses the friction model: each candidate
``factor × default`` (0.5, 1, 2, 4; below 0.4 fs) is identified on one part of the recording and
scored on the held-out part, both ways round (first 70 % / last 30 %, then last 70 % / first
30 %). The score is the torque NRMSE (RMSE / RMS of the measured torque, per joint, averaged over
joints and folds) of :func:`dynid.predict.predict`, i.e. the model's physical torque against the
raw measured torque. The default is kept unless another candidate lowers the score by more than
``MIN_GAIN`` (2 %, relative); then the best candidate is chosen.

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

from ..signal.conditioning import default_cutoff
from ..errors import DynidError
from ..models.base import Plant
from ..recording import Recording

__all__ = ["CutoffSelection", "select_cutoff", "FACTORS", "MIN_GAIN"]

FACTORS = (0.5, 1.0, 2.0, 4.0)
MIN_GAIN = 0.02
FIT_SHARE = 0.7


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


def select_cutoff(rec: Recording, plant: Plant, options=None, factors: Sequence[float] = FACTORS,
                  progress: Callable[[str, float], None] | None = None) -> CutoffSelection:
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
    from .pipeline import IdentifyOptions, identify

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
                res = identify(rec.slice(fa, fb), plant, opts)
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
