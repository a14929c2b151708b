"""Options of an identification and the status a parameter ends with."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..recording import Recording
from ..signal.conditioning import ConditioningOptions, default_cutoff, motion_bandwidth
from .consistent import ConsistentOptions

__all__ = ["IdentifyOptions", "ParameterStatus", "ESTIMATORS", "SOFTMC_MAX_CUTOFF_HZ", "excitation_frequency",
           "check_cutoff"]

ESTIMATORS = ("auto", "wls", "ols", "irls", "consistent")

SOFTMC_MAX_CUTOFF_HZ = 125.0
"""softMC's upper bound on ``IdentFilterFreq`` [Hz] (spec/identification.md §1, step 4)."""
MAX_SAMPLE_PERIOD_S = 0.05
"""Recordings sampled slower than this are rejected by the conditioning (not a controller cycle)."""


def excitation_frequency(q: np.ndarray, dt: float) -> float:
    """The excitation frequency of a motion [Hz]: the frequency below which 99 % of the detrended position
    power lies, the largest over the joints (:func:`~dynid.signal.conditioning.motion_bandwidth`, the
    quantity the default cutoff is 20 times). For softMC's SineWave it is the highest sine frequency
    (within the spectrum's resolution, ``1/T``); for a multi-harmonic motion, its highest significant
    harmonic.

    Parameters
    ----------
    q : ndarray, shape (N, n_joints)
        Positions [rad or m].
    dt : float
        Sample period [s].
    """
    return float(motion_bandwidth(np.asarray(q, dtype=float), float(dt)))


def check_cutoff(cutoff_hz: float, rec: Recording) -> None:
    """Enforce softMC's cutoff rule on a user-given cutoff: below 125 Hz (and below the recording's Nyquist
    frequency) and above the excitation frequency of the recorded motion (spec/identification.md §1, step 4:
    ``IdentFilterFreq`` "should be below 125 Hz" and "must be greater than the highest sine frequency").

    The automatic choices are not checked here: the default (20 × the excitation frequency, clipped to
    0.5 Hz .. min(125 Hz, 0.4 fs), both ends included) lies above the excitation frequency and at most at
    125 Hz; ``auto``'s candidates (0.5–4 × the default) are bounded by 0.4 fs, not by 125 Hz.

    Parameters
    ----------
    cutoff_hz : float
        The low-pass cutoff [Hz] asked for.
    rec : Recording
        The recording it will filter (SI).

    Raises
    ------
    ConfigError
        One message naming the rule and this recording's excitation frequency.
    """
    dt = float(rec.sample_period)
    if not (0 < dt <= MAX_SAMPLE_PERIOD_S):
        return          # not a controller recording: the conditioning rejects it with its own message
    check_cutoff_of(cutoff_hz, dt, excitation_frequency(rec.q, dt), default_cutoff(rec.q, dt), rec.source)


def check_cutoff_of(cutoff_hz: float, dt: float, f_exc: float, default_hz: float, source: str) -> None:
    """:func:`check_cutoff` of a recording of sample period ``dt`` [s], excitation frequency ``f_exc`` and default
    cutoff ``default_hz`` [Hz] (a recording read in blocks knows them from its first pass)."""
    fc = float(cutoff_hz)
    if not (0 < dt <= MAX_SAMPLE_PERIOD_S):
        return
    nyquist = 0.5 / dt
    upper = min(SOFTMC_MAX_CUTOFF_HZ, nyquist)
    if f_exc < fc < upper:
        return
    if fc >= SOFTMC_MAX_CUTOFF_HZ:
        why = "too high"
    elif fc >= upper:
        why = f"not below this recording's Nyquist frequency ({nyquist:.4g} Hz)"
    else:
        why = "too low (it would filter out the motion itself)"
    raise ConfigError(f"{source}: cutoff {fc:g} Hz is {why}: softMC's rule: the cutoff must be below "
                      f"{SOFTMC_MAX_CUTOFF_HZ:g} Hz and above the excitation frequency ({f_exc:.3g} Hz here)",
                      hint=f"choose a cutoff between {f_exc:.3g} Hz and {upper:.4g} Hz (the motion-based default "
                           f"is {default_hz:.3g} Hz), or 'auto'", options=("cutoff",))


class ParameterStatus:
    """Why a parameter has its value."""

    IDENTIFIED = "identified"          # estimated from the data (possibly as a base combination)
    CONFOUNDED = "confounded"          # this recording determines it only in a combination with others
    KNOWN = "known"                    # given in the configuration, held fixed
    NOT_IDENTIFIABLE = "not identifiable"  # structurally (e.g. L^2 without payload): held at the prior or 0
    NOT_EXCITED = "not excited"        # structurally identifiable, but this recording does not excite it
    DERIVED = "derived"                # filled by the model from physics (e.g. g*cos(alpha) = p2/p1)
    CONSTANT = "constant"              # a user constant of the model (never identified)


@dataclass(frozen=True)
class IdentifyOptions:
    """Options of :func:`identify`.

    conditioning : ConditioningOptions
    estimator : {"auto", "wls", "ols", "irls", "consistent"}
        ``auto`` (the default of ``dynid identify`` and :class:`dynid.Identifier`): ``wls``, and where the
        model has link-wise inertias and the least-squares estimate describes a link that is no rigid body
        (negative mass, triangle inequality), ``consistent`` instead — the run's notes say which links and
        what it cost in residual. ``wls``: per-joint weighted least squares on the filtered torque (``weighting``);
        ``ols``: ordinary least squares; ``irls``: robust to gross outliers (spikes, glitches): the
        raw torque's outliers are found with Tukey's bisquare on the residual of the current model
        minus its running median, over the gated samples (so slow model mismatch and the real
        transients at velocity reversals are not taken for outliers), replaced by model + local residual *before* filtering (the filter would smear
        them), and the fit is repeated until the outlier set no longer changes. ``consistent``: physically
        consistent link inertias (every link's pseudo-inertia positive definite, so positive masses and the
        triangle inequalities hold) by nonlinear least squares on the WLS rows, pulled toward the model's prior
        (URDF) where the data are silent (:mod:`dynid.identification.consistent`); models with link-wise standard parameters
        only (``serial``).
    consistent : ConsistentOptions
        Options of the ``consistent`` estimator (``prior_weight``, ``friction_nonnegative``).
    weighting : {"residual_std", "torque_std", "none"}
    allowed_error : float
        softMC's success threshold on the max relative torque error (0.5 = 50 %).
    structural_states : int
        Random states used for the structural base-parameter analysis.
    seed : int
        Seed of those random states.
    decimate : int, optional
        Fit on every ``decimate``-th sample (Gautier's parallel filtering + decimation): the filtered
        signals hold no information above the cutoff, so the default ``max(1, floor(fs / (10·cutoff)))``
        keeps 5 times the Nyquist rate of the filtered band and makes large recordings cheap (never a stride set
        by the recording's length, which can lock onto a periodic motion). The errors and the REC still use
        every sample.
    align_torque : bool
        Estimate the torque/kinematics delay after a first fit and, if it is at least half a
        sample, shift the torque and fit again (the shift is recorded in the conditioning options).
    select_cutoff : bool
        Choose the cutoff among 0.5, 1, 2, 4 × the default by held-out torque error
        (:func:`dynid.identification.select.select_cutoff`; ``--cutoff auto``) instead of using
        ``conditioning.cutoff_hz``.
    prior_regularization : float
        Identify the deviation from the a-priori model (URDF/configuration inertias) where the model has
        one: weighted least squares with a ridge toward the prior's base parameters in unit-column
        coordinates, of strength ``prior_regularization × s_max`` (the largest singular value of the
        weighted regressor). Directions the data determine (singular value ≫ that) keep their
        least-squares value; those it hardly sees stay near the prior. 0 (default) switches it off.
        A Bayesian reading: a Gaussian prior on the unit-column parameters.
    select_regularization : bool
        Choose ``prior_regularization`` among :data:`~dynid.identification.select.RIDGES` by held-out error
        (with the cutoff and the friction model when those are ``auto``:
        :func:`~dynid.identification.select.select_auto`).
    """

    conditioning: ConditioningOptions = field(default_factory=ConditioningOptions)
    estimator: str = "wls"
    weighting: str = "residual_std"
    allowed_error: float = 0.5
    structural_states: int = 400
    seed: int = 0
    decimate: int | None = None
    align_torque: bool = False
    consistent: ConsistentOptions = field(default_factory=ConsistentOptions)
    select_cutoff: bool = False
    prior_regularization: float = 0.0
    select_regularization: bool = False

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ConfigError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {self.estimator!r}")
        if self.decimate is not None and self.decimate < 1:
            raise ConfigError(f"decimate must be >= 1, got {self.decimate}")
        if not 0 < self.allowed_error:
            raise ConfigError(f"allowed_error must be positive, got {self.allowed_error}")
