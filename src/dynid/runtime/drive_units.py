"""Drive torque units (spec/units-and-runtime.md §1–3): TorqueFactor, TorqueThreshold, DS402 per-mille.

A CDHD drive reports current, not torque: ``I`` (DS402 0x6078) in units of 0.001·MICONT. softMC
turns it into joint torque with ``TorqueFactor`` (TFac): ``Tfb = I / TFac``. The 1 000 000 of the
formulas comes from::

    I[A] = I_raw · 0.001 · MICONT[mA] · 0.001      ⇒   T = MKT · I[A] = I_raw · MKT · MICONT[mA] · 1e-6

so ``TFac = I_raw / T = 1e6 / (MKT · MICONT[mA])`` [raw current units per N m], times the gear ratio
for joint-side torque. Consequently ``1000 / TFac`` is the joint torque at MICONT (rated) and a
torque ``T`` is ``T · TFac`` per mille of it — exactly what DS402 0x60B2 (torque offset) expects,
in per mille of the rated torque 0x6076.

Linear axes driven by a rotary motor through a screw or belt (pulley) are computed from first
principles, ``F[N] = I[A] · MKT · GR · 2π / lead[m]`` (``lead`` = travel per revolution of the
screw/pulley, ``GR`` = motor turns per screw turn). The seed's formula
``1e6 · SL[mm/rev] / (MKT · MICONT · GR)`` is offered as "softMC-compatible" with a
:class:`SoftmcUnitWarning`: read literally it is ``2000·π`` times the physical factor (with SL in mm
the constant 2π/1000 [rad/rev · m/mm] is missing), i.e. ``Tfb`` would be in N/(2000π), not N.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError

__all__ = [
    "SoftmcUnitWarning", "current_amps", "torque_factor_rotary", "torque_factor_linear_motor",
    "torque_factor_screw", "torque_factor_screw_softmc", "pulley_lead", "torque_threshold_continuous",
    "torque_threshold_peak", "torque_feedback", "torque_to_current_raw", "permille_from_torque_factor",
    "permille_from_rated_torque", "permille_to_torque", "SCREW_SOFTMC_RATIO", "INT16_RANGE",
]

SCREW_SOFTMC_RATIO = 2000.0 * math.pi
"""``torque_factor_screw_softmc / torque_factor_screw`` for the same drive and a lead SL[mm] = 1000·lead[m]."""

INT16_RANGE = (-32768, 32767)
"""Range of the DS402 torque objects (0x6071, 0x60B2: INTEGER16, per mille)."""


class SoftmcUnitWarning(UserWarning):
    """A softMC-compatible formula whose literal units are inconsistent (see the module docstring)."""


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
    return v


def current_amps(current_raw: npt.ArrayLike, micont_ma: float) -> np.ndarray:
    """Drive current in A from the raw ``I`` (0x6078), which counts 0.001·MICONT.

    >>> float(current_amps(1000, 3000.0))   # I = 1000 is MICONT = 3 A
    3.0
    """
    return np.asarray(current_raw, dtype=float) * 0.001 * _positive("micont_ma", micont_ma) * 0.001


def torque_factor_rotary(mkt: float, micont_ma: float, gear_ratio: float = 1.0) -> float:
    """TorqueFactor of a rotary motor, joint side: ``1e6 / (MKT · MICONT[mA] · GR)``.

    Parameters
    ----------
    mkt : float
        Torque constant MKT (0x2039) [N m/A].
    micont_ma : float
        Continuous current MICONT (0x6075) [mA].
    gear_ratio : float
        Motor turns per joint turn (GR >= 1 for a reducer).

    Returns
    -------
    float
        [raw current units per N m]: ``Tfb[N m] = I / TFac``.

    Examples
    --------
    >>> torque_factor_rotary(0.5, 2000.0)   # 1e6 / (0.5 · 2000)
    1000.0
    >>> torque_factor_rotary(0.5, 2000.0, gear_ratio=2.0)
    500.0
    """
    return 1e6 / (_positive("mkt", mkt) * _positive("micont_ma", micont_ma) * _positive("gear_ratio", gear_ratio))


def torque_factor_linear_motor(mkf: float, micont_ma: float) -> float:
    """TorqueFactor of a linear motor: ``1e6 / (MKF · MICONT[mA])`` [raw units per N].

    ``mkf`` is the force constant MKF (0x2038) [N/A].

    >>> torque_factor_linear_motor(40.0, 2500.0)
    10.0
    """
    return 1e6 / (_positive("mkf", mkf) * _positive("micont_ma", micont_ma))


def pulley_lead(radius_m: float) -> float:
    """Travel per pulley revolution ``2π r`` [m/rev] of a belt axis with pulley radius ``r`` [m]."""
    return 2.0 * math.pi * _positive("radius_m", radius_m)


def torque_factor_screw(mkt: float, micont_ma: float, lead_m: float, gear_ratio: float = 1.0) -> float:
    """TorqueFactor of a rotary motor driving a linear axis (screw or pulley), from first principles.

    ``F[N] = I[A] · MKT · GR · 2π / lead[m]`` with ``I[A] = I_raw · MICONT[mA] · 1e-6``, so
    ``TFac = I_raw / F = 1e6 · lead / (2π · MKT · MICONT · GR)`` [raw units per N].

    Parameters
    ----------
    mkt : float
        [N m/A].
    micont_ma : float
        [mA].
    lead_m : float
        Linear travel per screw (or pulley, :func:`pulley_lead`) revolution [m/rev].
    gear_ratio : float
        Motor turns per screw turn.

    Examples
    --------
    >>> round(torque_factor_screw(0.5, 2000.0, 0.02 * math.pi), 9)   # lead 2π·10 mm
    10.0
    """
    return 1e6 * _positive("lead_m", lead_m) / (
        2.0 * math.pi * _positive("mkt", mkt) * _positive("micont_ma", micont_ma) * _positive("gear_ratio", gear_ratio))


def torque_factor_screw_softmc(mkt: float, micont_ma: float, sl_mm: float, gear_ratio: float = 1.0) -> float:
    """The seed's softMC-compatible formula ``1e6 · SL[mm/rev] / (MKT · MICONT[mA] · GR)``.

    Emits :class:`SoftmcUnitWarning`: read literally this is :data:`SCREW_SOFTMC_RATIO` (2000π) times
    :func:`torque_factor_screw` for ``lead_m = SL/1000``; check the drive's force reading before use.
    """
    warnings.warn("softMC-compatible screw TorqueFactor 1e6*SL/(MKT*MICONT*GR): with SL in mm/rev it is "
                  f"2000*pi = {SCREW_SOFTMC_RATIO:.1f} times the first-principles factor (F = T*2*pi/lead); "
                  "the feedback is then not in N. Prefer the first-principles factor (torque_factor_screw)",
                  SoftmcUnitWarning, stacklevel=2)
    return 1e6 * _positive("sl_mm", sl_mm) / (
        _positive("mkt", mkt) * _positive("micont_ma", micont_ma) * _positive("gear_ratio", gear_ratio))


def torque_threshold_continuous(tfac: float) -> float:
    """``TorqueThreshold`` matching MICONT: ``1000 / TFac`` [N m or N] (the rated joint torque).

    >>> torque_threshold_continuous(1000.0)
    1.0
    """
    return 1000.0 / _positive("tfac", tfac)


def torque_threshold_peak(tfac: float, mipeak: float, micont: float) -> float:
    """``TorqueThreshold`` matching MIPEAK: ``1000 · MIPEAK / (TFac · MICONT)`` [N m or N].

    ``mipeak`` and ``micont`` in the same unit (both A or both mA).

    >>> torque_threshold_peak(1000.0, 6.0, 2.0)
    3.0
    """
    return 1000.0 * _positive("mipeak", mipeak) / (_positive("tfac", tfac) * _positive("micont", micont))


def torque_feedback(current_raw: npt.ArrayLike, tfac: float) -> np.ndarray:
    """``TorqueFeedback = CurrentActualValue / TFac`` [N m or N]."""
    return np.asarray(current_raw, dtype=float) / _positive("tfac", tfac)


def torque_to_current_raw(torque: npt.ArrayLike, tfac: float) -> np.ndarray:
    """Inverse of :func:`torque_feedback`: the raw current (0.001·MICONT units) of a torque."""
    return np.asarray(torque, dtype=float) * _positive("tfac", tfac)


def _int16(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.rint(x)
    sat = (r < INT16_RANGE[0]) | (r > INT16_RANGE[1])
    return np.clip(r, *INT16_RANGE).astype(np.int16), sat


def permille_from_torque_factor(taddcmd: npt.ArrayLike, tfac: float) -> tuple[np.ndarray, np.ndarray]:
    """Additive torque [N m or N] as DS402 0x60B2 torque offset, per mille of the rated torque.

    The rated joint torque is ``1000 / TFac`` (:func:`torque_threshold_continuous`), so the
    per-mille value is ``Taddcmd · TFac``, rounded to the INTEGER16 of the object.

    Returns
    -------
    permille : ndarray of int16, same shape as ``taddcmd``
    saturated : ndarray of bool
        Values outside the INTEGER16 range (clipped).

    Examples
    --------
    >>> permille_from_torque_factor([0.5, -1.25], 1000.0)[0].tolist()   # rated torque 1 N m
    [500, -1250]
    """
    return _int16(np.asarray(taddcmd, dtype=float) * _positive("tfac", tfac))


def permille_from_rated_torque(taddcmd: npt.ArrayLike, rated_torque_mnm: float,
                               gear_ratio: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Additive joint torque [N m] as per mille of the motor rated torque 0x6076 [mN m].

    The motor supplies ``Taddcmd / GR``: ``permille = 1000 · (Taddcmd / GR) / (0x6076 / 1000)``.

    >>> permille_from_rated_torque([10.0], 1000.0, gear_ratio=50.0)[0].tolist()   # 0.2 N m of 1 N m
    [200]
    """
    rated_nm = _positive("rated_torque_mnm", rated_torque_mnm) * 1e-3
    return _int16(1000.0 * np.asarray(taddcmd, dtype=float) / (_positive("gear_ratio", gear_ratio) * rated_nm))


def permille_to_torque(permille: npt.ArrayLike, tfac: float) -> np.ndarray:
    """Inverse of :func:`permille_from_torque_factor` [N m or N]."""
    return np.asarray(permille, dtype=float) / _positive("tfac", tfac)
