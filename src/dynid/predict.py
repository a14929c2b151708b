"""Predict the torque an identified model gives for a motion (``dynid predict``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .conditioning import condition
from .io.result_json import IdentifiedModel
from .metrics import nrmse, relative_error_norm
from .recording import Recording

__all__ = ["Prediction", "predict"]


@dataclass(frozen=True)
class Prediction:
    """Model torque for a motion.

    t : (N,) ; tau : (N, n_joints) model torque incl. friction [N m or N] ;
    measured : (N, n_joints) raw measured torque at the same rows, or None ;
    rows : (N,) indices of these rows in the recording
    """

    t: np.ndarray
    tau: np.ndarray
    measured: np.ndarray | None
    rows: np.ndarray

    def nrmse(self, norm: str = "rms") -> np.ndarray | None:
        return None if self.measured is None else nrmse(self.tau, self.measured, norm=norm)

    def relative_error(self) -> float | None:
        return None if self.measured is None else relative_error_norm(self.tau, self.measured)


def predict(identified: IdentifiedModel, rec: Recording, *, trim: bool = True) -> Prediction:
    """Torque of ``identified`` for the motion in ``rec``, conditioned as in the identification.

    Positions are low-pass filtered at the identification cutoff and differentiated (or the
    recording's ``dq``/``ddq`` are filtered), so prediction and identification see the same
    kinematics. The Coulomb term uses the sign of the velocity (the physical friction step), except
    around reversals where a joint sticks: there the friction torque passes through the static range
    and the filtered sign (the transition as the identification filter sees it) is used.
    Edge rows inside the filter transient are dropped when ``trim``.
    """
    opts = identified.conditioning_options()
    if not trim:
        from dataclasses import replace

        opts = replace(opts, trim=0)
    cond = condition(rec, opts, identified.plant.model.joint_kinds, require_motion=False)
    sign = np.sign(cond.qd)
    if cond.near_stuck is not None:
        sign = np.where(cond.near_stuck, cond.sign, sign)
    tau = identified.plant.torque(identified.theta, cond.q, cond.qd, cond.qdd, sign=sign)
    rows = np.arange(cond.start, cond.start + cond.data_length)
    return Prediction(cond.t, tau, cond.tau_raw, rows)
