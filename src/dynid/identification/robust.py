"""Outlier-robust identification (``estimator="irls"``): Tukey's bisquare on the raw torque, around any fit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..models.base import Plant
from ..recording import Recording
from .fit import Fit
from .options import IdentifyOptions
from .result import Identification

__all__ = ["robust", "BISQUARE_C", "OUTLIER_WINDOW"]


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


def robust(fit: Fit, max_iter: int = 10) -> Fit:
    """The outlier-robust estimator (``estimator="irls"``) around ``fit``, see :class:`IdentifyOptions`:
    the raw torque's outliers are found on the residual of the current model, replaced by the model
    before filtering, and ``fit`` (with ``wls``) repeated until the outlier set no longer changes."""

    def fit_robust(rec: Recording, plant: Plant, options: IdentifyOptions, progress=None) -> Identification:
        return _robust(fit, rec, plant, options, progress, max_iter)

    return fit_robust


def _robust(fit: Fit, rec: Recording, plant: Plant, options: IdentifyOptions, progress, max_iter: int):
    base_opts = replace(options, estimator="wls")
    work = rec
    outliers = None
    res = None
    for it in range(1, max_iter + 1):  # refits of the whole pipeline, each vectorised
        res = fit(work, plant, base_opts, progress=progress)
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
