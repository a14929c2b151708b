"""Predict the torque an identified model gives for a motion (``dynid predict``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .signal.conditioning import condition, lowpass
from .io.result_json import IdentifiedModel
from .metrics import nrmse, relative_error_norm
from .recording import Recording

__all__ = ["Prediction", "predict", "SIGN_NOISE_FACTOR"]

SIGN_NOISE_FACTOR = 4.0
"""The sign of a velocity is taken as known when ``|qd|`` exceeds this many robust standard deviations
of the velocity noise (filtered noise comes in correlated bursts, so 2 would let ~5 % of a rest through)."""


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
    kinematics. The Coulomb term uses the sign of the velocity (the physical friction step) where
    that sign is known, i.e. ``|qd|`` above ``SIGN_NOISE_FACTOR`` (4) times the velocity noise,
    and 0 where it is not: a joint at rest holds an unknown static friction torque anywhere in
    ``[-Fc, Fc]``, whose best guess is 0, not ``±Fc`` chosen by the sign of noise. Coupled motors
    (``motor_coulomb``) follow the same rule on the motor velocity. Around reversals where a joint
    sticks, the friction torque passes through the static range and that sign low-pass filtered
    (the transition as the identification filter sees it) is used. Edge rows inside the filter
    transient are dropped when ``trim``.
    """
    from dataclasses import replace

    opts = replace(identified.conditioning_options(), threshold_fraction=0.0,   # threshold = velocity noise only
                   threshold_noise_factor=SIGN_NOISE_FACTOR)
    if not trim:
        opts = replace(opts, trim=0)
    cond = condition(rec, opts, identified.plant.model.joint_kinds, require_motion=False)
    known = np.abs(cond.qd) > cond.velocity_threshold
    sign = np.where(known, np.sign(cond.qd), 0.0)
    if cond.near_stuck is not None and cond.near_stuck.any():
        smooth = lowpass(sign, cond.cutoff_hz, cond.sample_period_s, opts.filter_order)
        sign = np.where(cond.near_stuck, smooth, sign)
    fr = identified.plant.friction
    motor_sign = None
    if fr.n_motor_params:
        v = fr.motor_velocities(cond.qd)
        motor_sign = np.where(np.abs(v) > fr.motor_thresholds(cond.velocity_threshold), np.sign(v), 0.0)
    tau = identified.plant.torque(identified.theta, cond.q, cond.qd, cond.qdd, sign=sign, motor_sign=motor_sign)
    rows = np.arange(cond.start, cond.start + cond.data_length)
    return Prediction(cond.t, tau, cond.tau_raw, rows)
