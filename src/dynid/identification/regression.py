"""Build the regression of an identification: the stacked regressor rows of the gated samples.

Stage 3 of the pipeline (spec/identification.md §4): the conditioned signals, decimated for the fit
(Gautier's parallel filtering + decimation), give the rows ``W θ ≈ y`` of the moving samples, with
the known parameters (configuration ``parameters``, the model's constants) moved to the right-hand
side and the structural base parameters chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..models.base import Plant
from ..signal.conditioning import Conditioned
from .base_params import BaseParameters, structural_base
from .options import IdentifyOptions
from .rows import FactoredRows, TallRows

__all__ = ["Regression", "build_regression", "known_parameters", "default_decimation"]


@dataclass(frozen=True)
class Regression:
    """``W θ ≈ y`` on the moving, decimated samples.

    rows : the rows as the solvers read them (:mod:`.rows`): :class:`~dynid.identification.rows.TallRows` — the
    regressor rows (all parameter columns), joint-major (each joint's rows together, in sample order: the solvers
    read a joint's rows as a view), the torque minus the payload offset and the known parameters' torque, each row's
    0-based joint — or, for a recording read block by block, the same compressed
    (:class:`~dynid.identification.rows.FactoredRows`) ; known : {index: value} parameters held fixed ;
    theta_known : (n_params,) the known values, 0 elsewhere ; theta_hold : (n_params,) values of the
    parameters the data cannot identify (known, else the model's prior, else 0) ;
    base : structural base parameters (known ones excluded) ; decimation : fit on every k-th sample
    """

    rows: TallRows | FactoredRows
    known: dict[int, float]
    theta_known: np.ndarray
    theta_hold: np.ndarray
    base: BaseParameters
    decimation: int

    @property
    def independent(self) -> np.ndarray:
        return self.base.independent


def default_decimation(cond: Conditioned) -> int:
    """Fit every k-th sample: ``k = max(1, floor(fs / (10·cutoff)))`` (see :class:`IdentifyOptions`): 5 × the
    Nyquist rate of the filtered band — every sample the band needs, however long the recording. (A stride set by
    the recording's length instead, to bound the rows, can land on a multiple of a periodic motion's period: the
    fit then sees a few phases of the motion, and more data made the fit worse.)"""
    return max(1, int(1.0 / (10.0 * cond.cutoff_hz * cond.sample_period_s)))


def known_parameters(plant: Plant) -> dict[int, float]:
    """Parameters held fixed: the configuration's ``parameters`` and the model's constants (0 unless given)."""
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


def build_regression(cond: Conditioned, plant: Plant, options: IdentifyOptions, *, progress=None,
                     offset: int = 0, base: BaseParameters | None = None) -> Regression:
    """The regression of ``plant`` on the conditioned recording ``cond`` (``offset``: the first row on the fit's
    decimation grid — for a block of a longer recording, where the grid of the whole falls in it; ``base``: the
    structural base parameters where known, e.g. from the recording's first block)."""
    step = progress or (lambda stage, frac: None)
    step("structural analysis", 0.2)
    known = known_parameters(plant)
    if base is None:
        base = structural_base(plant, n_states=options.structural_states, seed=options.seed, exclude=list(known))
    step("regressor", 0.35)
    k = options.decimate or default_decimation(cond)
    fit = np.arange(offset, cond.data_length, k)                            # decimated samples for the fit
    args = (cond.q[fit], cond.qd[fit], cond.qdd[fit])
    blocks = plant.regressor_blocks(*args, sign=cond.sign[fit])            # (N/k, n, model | friction columns)
    off = plant.offset(*args)                                               # (N/k, n)
    theta_known = np.zeros(plant.n_params)
    for i, v in known.items():
        theta_known[i] = v
    mask = cond.moving[fit]
    counts = np.count_nonzero(mask, axis=0)
    joint = np.repeat(np.arange(plant.n_joints), counts)
    rows = np.empty((int(counts.sum()), plant.n_params))                    # (n_rows, P), joint-major
    edges = np.concatenate([[0], np.cumsum(counts)])
    cols = np.cumsum([0, *(B.shape[2] for B in blocks)])
    for j in range(plant.n_joints):                                         # per joint, not per sample
        for B, c0, c1 in zip(blocks, cols[:-1], cols[1:]):                  # (each block straight into its columns)
            np.compress(mask[:, j], B[:, j], axis=0, out=rows[edges[j]:edges[j + 1], c0:c1])
    del blocks
    y = (cond.tau[fit] - off).T[mask.T]
    if known:
        idx = np.fromiter(known, dtype=int)
        y -= rows[:, idx] @ theta_known[idx]
    # parameters the data cannot identify are held at the model's prior (e.g. a URDF's values), else 0,
    # so the full parameter set stays physical while reproducing the same torques
    theta_hold = theta_known.copy()
    prior = plant.model.prior_parameters()
    if prior is not None:
        for i in range(plant.n_model):
            if i not in known:
                theta_hold[i] = prior[i]
    return Regression(TallRows(rows, y, joint, plant.n_joints), known, theta_known, theta_hold, base, k)
