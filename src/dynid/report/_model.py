"""Quantities that need the identified model itself, rebuilt from ``result.json`` (no other file).

Used by two evidence plots, each computed as the diagnosis computes it: the inertial torque of a
too-slow motion and the omitted term of a systematic residual; and by the a-priori table, which
needs the model's prior values (a URDF's inertias). When the model cannot be rebuilt (a model this
dynid does not know, a URDF that moved), they return None and the report falls back to a plot of
the recorded signals alone, or leaves the table out.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from ..errors import DynidError
from ._data import ReportData

__all__ = ["identified_model", "inertial_torque", "missing_term", "PriorRow", "prior_comparison"]

logger = logging.getLogger(__name__)


def identified_model(data: ReportData):
    """The :class:`~dynid.fitted.FittedModel` of ``data.result_path``, or None."""
    from ..fitted import load

    try:
        ident = load(data.result_path)
    except (DynidError, TypeError, ValueError, KeyError, OSError) as err:
        logger.info("report: cannot rebuild the model from %s (%s)", data.result_path, err)
        return None
    if ident.plant.n_joints != data.n_joints:
        return None
    return ident


def inertial_torque(data: ReportData) -> np.ndarray | None:
    """``M(q) qdd`` of the identified rigid-body model on the REC samples ``(N, n_joints)``, or None."""
    ident = identified_model(data)
    if ident is None or not data.has_signals:
        return None
    s = data.signals
    model = ident.plant.model
    p = ident.theta[: ident.plant.n_model]
    zeros = np.zeros_like(s["vfb"])
    return model.torque(p, s["pfb"], zeros, s["afb"]) - model.torque(p, s["pfb"], zeros, zeros)


def missing_term(data: ReportData, j: int, feature: np.ndarray, max_rows: int = 20000
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The part of joint ``j``'s error that one more term in ``feature`` would explain (omitted-term test).

    As the diagnosis does, the feature is first made orthogonal to the identified (base) columns of
    the model on the used samples, since the fit has already absorbed what the model can express;
    then ``te ≈ c · feature⊥`` by least squares.

    Parameters
    ----------
    j : int
        Joint index (0-based).
    feature : ndarray, shape (N,)
        The candidate term on the REC samples (e.g. ``sin(pfb)``).

    Returns
    -------
    (t, te, term) : ndarray, shape (M,)
        Time [s], error and fitted term on the used samples of a subsample (at most ``max_rows``
        regressor rows); None without a model.
    """
    ident = identified_model(data)
    if ident is None or not data.has_signals:
        return None
    s = data.signals
    N, n = s["pfb"].shape
    step = max(1, int(np.ceil(N * n / max_rows)))
    idx = np.arange(0, N, step)
    idx = idx[data.used()[idx, j]]
    if idx.size < 3:
        return None
    names = list(ident.plant.param_names)
    base = (data.result.get("base_parameters") or {}).get("names") or names
    cols = [names.index(b) for b in base if b in names]
    W = ident.plant.regressor(s["pfb"][idx], s["vfb"][idx], s["afb"][idx])[:, j, cols]
    W = W[:, np.linalg.norm(W, axis=0) > 0]
    f = np.asarray(feature, dtype=float)[idx]
    if W.shape[1]:
        Q = np.linalg.qr(W)[0]
        f = f - Q @ (Q.T @ f)
    fp = f
    ff = float(fp @ fp)
    if ff <= 0.0:
        return None
    e = s["te"][idx, j]
    return data.t[idx], e, fp * float(e @ fp) / ff


@dataclass(frozen=True)
class PriorRow:
    """One identified quantity against its a-priori value.

    name : the parameter, or the base combination's expression ; prior, value : a-priori and
    identified value ; std : standard deviation of the identified value (NaN: not estimated)
    """

    name: str
    prior: float
    value: float
    std: float

    @property
    def change(self) -> float:
        """``(value - prior) / std``: how many standard deviations the data moved the prior (NaN without std)."""
        return (self.value - self.prior) / self.std if self.std > 0 else math.nan


def prior_comparison(data: ReportData) -> list[PriorRow] | None:
    """A-priori against identified values of the excited base parameters, or None when the model has no
    a-priori values (result.json ``base_parameters.prior``, computed by the identification; combinations
    with friction, which has no prior, are left out)."""
    base = data.result.get("base_parameters") or {}
    prior = base.get("prior")
    if prior is None:
        return None
    n = len(prior)
    rows = []
    for name, value, std, excited, pv in zip(base["expressions"], base["values"], base.get("std") or [None] * n,
                                             base.get("excited") or [True] * n, prior):
        if excited and value is not None and pv is not None and math.isfinite(pv):
            rows.append(PriorRow(str(name), float(pv), float(value), math.nan if std is None else float(std)))
    return rows
