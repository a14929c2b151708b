"""Automatic failure diagnosis with evidence (spec/units-and-runtime.md §7, identification.md §10).

Each check looks at one cause the source lists and returns :class:`Diagnostic` records whose
``evidence`` holds the numbers behind the verdict (the report plots them). Thresholds are module
constants so they are documented in one place:

- too slow:      moving fraction < ``MIN_MOVING_FRACTION`` (50 %) or inertial torque RMS below
                 ``MIN_INERTIAL_SHARE`` (3 %) of the measured torque RMS. An axis's inertia is not determined
                 when its acceleration torque is below the torque error level (residual or filtered noise;
                 ``MIN_ACCELERATION_SNR``) or uncertain by more than ``MAX_RELATIVE_STD`` (30 %): an error
                 when the whole motion is slow (no axis shows a determined inertial share of 3 %), else a
                 warning naming a friction/gravity-dominated axis below the share
- few cycles:    fewer than ``MIN_CYCLES`` (3) velocity reversals pairs per joint
- small range:   < ``MIN_RANGE_FRACTION`` (50 %) of the configured position limits, or, without limits,
                 a rotary joint travelling less than ``MIN_ROTARY_RANGE_DEG`` (60°); an error below
                 ``MIN_RANGE_ERROR`` (10 %) of that (6° without limits): the model would be an extrapolation
                 on any other motion
- saturation:    a torque plateau (>= 10 ms, flat) at the extreme of the measured torque while the model
                 keeps going past it
- conditioning:  scaled condition number > ``MAX_CONDITION`` (1000) or a parameter's relative std > 30 %
- wrong model / torque scale: residual explained by a simple function of the joint state
                 (R² > 0.5) and larger than noise, or physically impossible values (negative inertia)
- stick-slip:    a joint that sticks at reversals (see dynid.signal.conditioning, step 6) — reported, and
                 the samples around the sticks are left out of the fit
- misalignment:  torque and kinematics shifted in time (the peers' classic bug): refitting with the
                 torque shifted by ``|δ|`` ≥ ``REPORT_DELAY_SAMPLES`` (0.75) samples lowers the residual by
                 more than ``DELAY_GAIN`` (5 %). The refits use the Coulomb sign of the recorded velocity
                 (:func:`friction_sign`): the filtered velocity's sign switches late at the reversals of a
                 friction-dominated axis, which read as the torque leading by half a sample (issue 17's false
                 alarm on dynid's own linear2 data). Sub-sample offsets are below what a step friction model
                 pins down in 1 kHz data (the simulated catalogue gives up to ±0.6 samples without any delay):
                 ``--align`` still corrects from ``MIN_DELAY_SAMPLES`` (0.5), the diagnosis reports from 0.75.
                 A best shift within 1.5 samples of the end of the ±``DELAY_SEARCH_SAMPLES`` (8) range is no
                 resolved minimum (a semi-static run's curve just slopes): reported only with a drop over
                 ``DELAY_EDGE_GAIN`` (50 %). And the shift must move the model torque (its change per sample
                 times the delay, RMS) by at least ``MIN_SHIFT_SIGNAL`` (half) the residual RMS: in a slow motion
                 the torque hardly moves in a few samples and the curve follows model error, not time
- impossible:    a mass or an inertia about an axis (:attr:`Parameter.positive`) identified ``<= 0``
- undetermined:  the model's torque on *another* motion of the same robot is uncertain by more than
                 ``MAX_PREDICTION_UNCERTAINTY`` (5 %, one standard deviation, RMS over the motion relative to
                 the torque RMS) on an axis — parameters the recording leaves (nearly) free, confounded
                 ones included. "Another motion": :func:`reference_states`, random states over at least
                 half of each joint's range (60° for a rotary joint without limits) at the recording's
                 own speeds; the uncertainty is the fit's covariance propagated through the regressor.

The verdict (:func:`verdict`) passes a run only if softMC's rule holds and no diagnosis is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._numeric import median
from ..threads import in_background, num_threads
from .uncertainty import (ACCELERATION_ROWS, MIN_RANGE_FRACTION, MIN_ROTARY_RANGE_DEG, REFERENCE_STATES,  # noqa: F401
                          _masked_rms, _quadratic_forms, _subsample, acceleration_torque, prediction_uncertainty,
                          reference_states)
from .delay import DELAY_SEARCH_SAMPLES, MIN_DELAY_SAMPLES, estimate_delay, friction_sign  # noqa: F401 (re-exported)

__all__ = ["Diagnostic", "diagnose", "assess", "cycles_per_joint", "estimate_delay", "friction_sign", "verdict",
           "reference_states", "prediction_uncertainty", "acceleration_torque"]

MIN_MOVING_FRACTION = 0.5
MIN_INERTIAL_SHARE = 0.03
MAX_RELATIVE_STD = 0.30
MIN_ACCELERATION_SNR = 1.0
TARGET_INERTIAL_SHARE = 0.10
MAX_SPEED_FACTOR = 30.0
MIN_CYCLES = 3.0
MIN_RANGE_ERROR = 0.1
MAX_CONDITION = 1000.0
SYSTEMATIC_R2 = 0.5
REPORT_DELAY_SAMPLES = 0.75
MIN_PLATEAU_S = 0.010
DELAY_GAIN = 0.05
DELAY_EDGE_GAIN = 0.5
MIN_SHIFT_SIGNAL = 0.5
MAX_PREDICTION_UNCERTAINTY = 0.05


@dataclass(frozen=True)
class Diagnostic:
    """One finding. ``code`` is stable (tests and the report use it); ``joint`` is 1-based or None."""

    code: str
    message: str
    joint: int | None = None
    severity: str = "warning"
    evidence: dict[str, Any] = field(default_factory=dict)
    next_step: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "joint": self.joint, "message": self.message,
                "evidence": self.evidence, "next_step": self.next_step}


def verdict(errors, diagnostics) -> dict[str, Any]:
    """The run's verdict: ``passed`` only when softMC's rule holds (``errors.success``) and no diagnosis is an
    error; ``reasons`` lists what failed it (the rule's axes first)."""
    reasons = []
    if not errors.success:
        for j, e in enumerate(np.asarray(errors.max_relative, dtype=float)):
            if not e < errors.allowed:
                reasons.append({"code": "softmc_rule", "joint": j + 1,
                                "message": f"axis {j + 1}: max relative torque error {100 * e:.1f} % exceeds "
                                           f"{100 * errors.allowed:.0f} %"})
    reasons += [{"code": d.code, "joint": d.joint, "message": d.message} for d in diagnostics if d.severity == "error"]
    return {"passed": not reasons, "softmc_rule": bool(errors.success), "reasons": reasons}


def _axis(ident, j: int) -> str:
    return f"axis {j + 1} ({ident.plant.model.joints[j].name})"


def diagnose(ident) -> list[Diagnostic]:
    """Run every check on an :class:`~dynid.identification.pipeline.Identification`.

    The checks only read the identification; with more than one thread allowed, the two that refit or
    evaluate the model on many samples (too slow, misalignment) run on a second thread meanwhile. The
    findings come in the checks' order either way.
    """
    return assess(ident, with_uncertainty=False).diagnostics


def assess(ident, *, with_uncertainty: bool = True):
    """``ident`` with its :func:`prediction_uncertainty` (unless ``with_uncertainty`` is False: as it is) and its
    diagnoses (:func:`diagnose`). With more than one thread allowed the heavy checks, which do not read the
    uncertainty, start on a second thread first, and the uncertainty and the other checks run here meanwhile."""
    checks = (_too_slow, _few_cycles, _small_range, _saturation, _stick_slip, _conditioning, _misalignment,
              _systematic_residual, _implausible, _undetermined, _prior_scale, _failing_axes, _noise)
    heavy = (_too_slow, _misalignment) if num_threads() > 1 else ()
    base = ident
    aside = in_background(lambda: {c: list(c(base)) for c in heavy}) if heavy else None
    if with_uncertainty:
        ident = replace(ident, uncertainty=prediction_uncertainty(ident))
    found = {check: list(check(ident)) for check in checks if check not in heavy}
    if aside is not None:
        found.update(aside.result())
    out = [d for check in checks for d in found[check]]
    if any(d.code == "saturation" for d in out):  # clipped feedback also passes for a delay: report the cause only
        out = [d for d in out if d.code != "misalignment"]
    return replace(ident, diagnostics=tuple(out))


def cycles_per_joint(qd: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Motion cycles per joint: half the number of velocity reversals beyond ±threshold."""
    s = np.where(qd > threshold, 1, np.where(qd < -threshold, -1, 0))
    out = np.zeros(qd.shape[1])
    for j in range(qd.shape[1]):  # per joint
        nz = s[:, j][s[:, j] != 0]
        out[j] = np.count_nonzero(np.diff(nz)) / 2.0 if nz.size else 0.0
    return out


def _too_slow(ident) -> list[Diagnostic]:
    """Slow motion: few moving samples, or an acceleration torque too small to determine the inertia.

    The source's case: torques dominated by friction and gravity, the inertial terms small, a run that
    may pass softMC's rule and predict badly at speed. An axis's inertia is *not determined by the
    motion* when its acceleration torque is below the torque error level (the fit's residual or the
    filtered noise, whichever is larger; ``MIN_ACCELERATION_SNR``) — an unmodelled torque of the error's
    size, correlated with the acceleration (a single slow sine's ``qdd = −ω²(q − c)`` is correlated with
    anything that depends on position), would move the inertia by its whole value — or statistically
    uncertain by more than ``MAX_RELATIVE_STD``. When the *motion* is too slow — no axis shows a
    determined acceleration torque of ``MIN_INERTIAL_SHARE`` of its torque — every undetermined axis is
    an error (its share may even look large: an inertia the data leave free can come out inflated): on
    dynid's simulated crank arm at 0.02 Hz the inertia came out between −1.8 and 1.3 times the truth
    while softMC's rule passed. When other axes of the same motion do show their inertia, an undetermined
    axis below the share is friction- or gravity-dominated (a SCARA's vertical screw axis, a wrist): a
    warning naming it. Joints whose model torque does not depend on the acceleration (semi-static
    models) are not judged on it.
    """
    cond, summary = ident.cond, ident.summary
    out = []
    moving_samples = summary.moving
    frac = moving_samples / max(summary.data_length, 1)
    acc = acceleration_torque(ident)
    rms_tau = acc["torque_rms"]
    share = np.where(rms_tau > 0, acc["rms"] / np.where(rms_tau > 0, rms_tau, 1.0), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(acc["rms"] > 0, acc["std"] / acc["rms"], np.inf)
        snr = np.where(acc["error_rms"] > 0, acc["rms"] / acc["error_rms"], np.inf)
    inertial = acc["has_inertia"]
    determined = (snr >= MIN_ACCELERATION_SNR) & (rel <= MAX_RELATIVE_STD)
    # the motion is slow when no axis shows a determined inertial torque of MIN_INERTIAL_SHARE (an inertia the
    # data leave free can come out inflated past it and must not count)
    motion_slow = bool(inertial.any()) and not bool(np.any(inertial & determined & (share >= MIN_INERTIAL_SHARE)))
    for j in range(cond.n_joints):
        ev = {"moving_fraction": float(frac[j]), "moving_samples": int(moving_samples[j]),
              "data_length": summary.data_length, "velocity_threshold": float(cond.velocity_threshold[j]),
              "inertial_share": float(share[j]), "acceleration_torque_share": float(share[j]),
              "acceleration_torque_rms": float(acc["rms"][j]), "acceleration_torque_relative_std": float(rel[j]),
              "error_rms": float(acc["error_rms"][j]), "torque_rms": float(rms_tau[j]),
              "acceleration_to_error": float(snr[j]), "motion_slow": motion_slow}
        slow_share = bool(inertial[j]) and share[j] < MIN_INERTIAL_SHARE
        if inertial[j] and not determined[j] and (slow_share or motion_slow):
            f_exc = ev["excitation_hz"] = _excitation_hz(ident, j)
            # inertial torque ∝ frequency² at a given amplitude: the speed factor that lifts it to a tenth of
            # the torque (from the identified share, at least 3x)
            k = max(3.0, float(np.sqrt(TARGET_INERTIAL_SHARE / max(share[j], 1e-12))))
            ev["speed_factor"] = k
            if k > MAX_SPEED_FACTOR:
                step = (f"move axis {j + 1} much faster (it shows no inertial torque at {f_exc:.3g} Hz), or give its "
                        "inertia in the configuration (known parameters)")
            else:
                step = (f"record again with axis {j + 1} about {k:.0f}x faster (from {f_exc:.3g} Hz to "
                        f"{k * f_exc:.2g} Hz at the same amplitude) so that inertial torque is "
                        f"{100 * TARGET_INERTIAL_SHARE:.0f} % of its torque")
            why = (f"below the torque error level (residual or noise: {snr[j]:.2g} x it)"
                   if snr[j] < MIN_ACCELERATION_SNR else f"uncertain by {100 * rel[j]:.0f} %")
            if motion_slow:
                msg = (f"{_axis(ident, j)}: the motion is too slow to determine the inertia: the acceleration torque is "
                       f"{100 * share[j]:.2g} % of the measured torque and {why}; no axis shows its inertia, and a "
                       "model that passes here may predict badly at speed")
            else:
                msg = (f"{_axis(ident, j)}: this axis's inertia is not determined by the motion: its acceleration "
                       f"torque is {100 * share[j]:.2g} % of its torque (friction/gravity dominate) and {why}; its "
                       "inertia may be far off at higher speed")
                if k <= MAX_SPEED_FACTOR:
                    step += "; or give its inertia in the configuration (known parameters)"
            out.append(Diagnostic("too_slow", msg, j + 1, severity="error" if motion_slow else "warning", evidence=ev,
                                  next_step=step))
        elif frac[j] < MIN_MOVING_FRACTION:
            out.append(Diagnostic("too_slow", f"{_axis(ident, j)}: only {100 * frac[j]:.0f} % of the samples move faster "
                                  f"than the threshold {cond.velocity_threshold[j]:.4g}: the motion is too slow "
                                  "(torque dominated by friction/gravity); raise the speed factor", j + 1, evidence=ev))
        elif slow_share:
            out.append(Diagnostic("too_slow", f"{_axis(ident, j)}: inertial torque is only {100 * share[j]:.1f} % of the "
                                  "measured torque: the motion is too slow to identify inertia well; move faster",
                                  j + 1, evidence=ev))
    return out


def _excitation_hz(ident, j: int) -> float:
    """Joint ``j``'s excitation frequency [Hz] (99 % of its position power below it)."""
    from ..signal.conditioning import motion_bandwidth

    known = ident.summary.excitation_hz
    if known is not None:
        return float(known[j])
    return float(motion_bandwidth(ident.cond.q_raw[:, [j]], ident.cond.sample_period_s))


def _few_cycles(ident) -> list[Diagnostic]:
    cond = ident.cond
    cyc = ident.summary.cycles
    out = []
    for j in range(cond.n_joints):
        if cyc[j] < MIN_CYCLES:
            out.append(Diagnostic("few_cycles", f"{_axis(ident, j)}: only {cyc[j]:.1f} motion cycles recorded "
                                  f"(< {MIN_CYCLES:.0f}): the fit may overfit the visited region; record longer",
                                  j + 1, evidence={"cycles": float(cyc[j])}))
    return out


def _small_range(ident) -> list[Diagnostic]:
    model = ident.plant.model
    span = ident.summary.q_raw_span
    lims = model.config.position_limits
    out = []
    for j, joint in enumerate(model.joints):
        if lims is not None and len(lims) == model.n_joints:
            width = lims[j][1] - lims[j][0]
            cov = span[j] / width
            if cov < MIN_RANGE_FRACTION:
                severe = cov < MIN_RANGE_ERROR * MIN_RANGE_FRACTION
                out.append(Diagnostic("small_range", f"{_axis(ident, j)}: the motion covers {100 * cov:.0f} % of the "
                                      "joint range: the model " + ("is an extrapolation on any other motion"
                                                                  if severe else "may be poor elsewhere"),
                                      j + 1, severity="error" if severe else "warning",
                                      evidence={"range": float(span[j]), "limit_width": float(width), "coverage": float(cov)},
                                      next_step=f"move axis {j + 1} closer to both limits"))
        elif joint.kind == "rotary" and np.degrees(span[j]) < MIN_ROTARY_RANGE_DEG:
            severe = np.degrees(span[j]) < MIN_RANGE_ERROR * MIN_ROTARY_RANGE_DEG
            out.append(Diagnostic("small_range", f"{_axis(ident, j)}: the joint moves only {np.degrees(span[j]):.1f} deg: "
                                  "the model " + ("is an extrapolation on any other motion" if severe
                                                  else "may be poor elsewhere"),
                                  j + 1, severity="error" if severe else "warning",
                                  evidence={"range": float(span[j]), "range_deg": float(np.degrees(span[j]))},
                                  next_step=f"move axis {j + 1} over at least {MIN_ROTARY_RANGE_DEG:.0f} deg"))
    return out


def _runs(flag: np.ndarray) -> list[tuple[int, int]]:
    """Start/stop indices of runs of True."""
    d = np.diff(np.concatenate([[0], flag.astype(np.int8), [0]]))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def _saturation(ident) -> list[Diagnostic]:
    cond, summary = ident.cond, ident.summary
    out = []
    dt = cond.sample_period_s
    lims = ident.plant.model.config.torque_limits
    extreme = {1.0: summary.tau_raw_max, -1.0: -summary.tau_raw_min}   # of the whole recording
    peak = np.maximum(summary.tau_raw_max, -summary.tau_raw_min)
    for j in range(cond.n_joints):
        raw = cond.tau_raw[:, j]
        filt = cond.tau[:, j]
        model = ident.tcmd[:, j]
        noise = 1.4826 * median(np.abs(np.diff(raw))) / np.sqrt(2)
        found = None
        for sgn in (1.0, -1.0):
            level = extreme[sgn][j]
            if level <= 0:
                continue
            near = sgn * raw >= level - 3 * noise - 0.005 * abs(level)
            for a, b in _runs(near):
                dur = (b - a) * dt
                if b - a < 5 or dur < MIN_PLATEAU_S:
                    continue
                overshoot = np.max(sgn * model[a:b]) - level
                flat = np.ptp(filt[a:b]) < 0.3 * np.ptp(model[a:b])  # a plateau: the measurement stops moving
                if flat and overshoot > max(3 * noise, 0.02 * abs(level)):
                    if found is None or dur > found["plateau_s"]:
                        found = {"level": float(sgn * level), "plateau_s": float(dur), "t_start": float(cond.t[a]),
                                 "t_end": float(cond.t[b - 1]), "model_overshoot": float(overshoot)}
        if lims is not None and len(lims) == cond.n_joints and peak[j] >= 0.98 * lims[j]:
            if peak[j] > 1.05 * lims[j]:   # a drive cannot exceed its limit: a scale error, not saturation
                out.append(Diagnostic("torque_scale", f"{_axis(ident, j)}: the measured torque reaches "
                                      f"{peak[j]:.4g}, above the configured limit {lims[j]:.4g}: the torque "
                                      "scale (TorqueFactor, units) or the limit is wrong", j + 1, severity="error",
                                      evidence={"peak": float(peak[j]), "torque_limit": float(lims[j])},
                                      next_step="check the torque units/TorqueFactor of this axis and its limit"))
                continue
            found = found or {"level": float(peak[j]), "plateau_s": 0.0}
            found["torque_limit"] = float(lims[j])
        if found:
            out.append(Diagnostic("saturation", f"{_axis(ident, j)}: the measured torque flattens at {found['level']:.4g} "
                                  f"for {1000 * found['plateau_s']:.0f} ms while the model keeps rising: the drive "
                                  "saturates (motion too fast); lower the speed or the range", j + 1,
                                  severity="error", evidence=found,
                                  next_step="lower the speed factor or the range of this axis and record again"))
    return out


def _stick_slip(ident) -> list[Diagnostic]:
    cond, summary = ident.cond, ident.summary
    out = []
    if cond.stuck is None:
        return out
    for j in range(cond.n_joints):
        sticks = summary.sticks[j]
        if not sticks.count:
            continue
        total = sticks.samples * cond.sample_period_s
        excluded = int(summary.near_stuck[j])
        out.append(Diagnostic(
            "stick_slip", f"{_axis(ident, j)}: the joint sticks at {sticks.count} reversals ({1000 * total / sticks.count:.0f} ms "
            f"each on average): static friction holds it while the torque sweeps, which the friction model does not "
            f"describe; {excluded} samples around them are not used. A faster motion (or a stiffer servo) sticks less",
            j + 1, severity="info",
            evidence={"stick_count": sticks.count, "stick_time_s": float(total), "excluded_samples": excluded,
                      "t_start": [float(v) for v in sticks.starts], "t_end": [float(v) for v in sticks.ends]}))
    return out


def _conditioning(ident) -> list[Diagnostic]:
    out = []
    c = ident.lsq.condition_number_scaled
    if c > MAX_CONDITION:
        out.append(Diagnostic("poor_conditioning", f"the regressor is poorly conditioned (scaled condition number {c:.3g} "
                              f"> {MAX_CONDITION:.0f}): some parameters are hardly excited; use a richer motion",
                              evidence={"condition_number_scaled": c, "condition_number": ident.lsq.condition_number}))
    names = ident.plant.param_names
    bad = []
    for b, i in enumerate(ident.base.independent):
        r = _rel_std(ident, int(i))
        if ident.base_excited[b] and np.isfinite(r) and r > MAX_RELATIVE_STD:
            bad.append((names[i], float(100 * r)))
    if bad:
        listing = ", ".join(f"{n} ({p:.0f} %)" for n, p in bad)
        out.append(Diagnostic("poorly_identified", f"parameters with relative standard deviation above "
                              f"{100 * MAX_RELATIVE_STD:.0f} %: {listing}",
                              evidence={"relative_std_percent": dict(bad)}))
    for b, i in enumerate(ident.base.independent):
        if not ident.base_excited[b]:
            held = ("set by the prior within physical consistency" if ident.estimator == "consistent" else "held at 0")
            out.append(Diagnostic("not_excited", f"parameter {names[i]} is not excited by this recording; {held}",
                                  evidence={"parameter": names[i]}))
    return out


def _misalignment(ident) -> list[Diagnostic]:
    cond = ident.cond
    delta, gain, (shift_s, rel) = estimate_delay(ident, curve=True)
    samples = delta / cond.sample_period_s
    # a residual that keeps falling to the end of the search range has no minimum: the data do not resolve
    # a delay there (a slow or semi-static motion, whose model misses what the shift chases) unless the
    # drop is large, as a delay beyond the range gives
    at_edge = abs(samples) > DELAY_SEARCH_SAMPLES - 1.5       # no two samples of curve beyond the best shift
    # what the shift does to the model torque against the misfit it would explain: a slow (e.g. semi-static)
    # motion's torque hardly moves in a few samples, and its residual curve then follows model error, not time
    w = ident.lsq.weights
    both = cond.moving[1:] & cond.moving[:-1]
    step = np.diff(ident.tcmd, axis=0) * w
    resid = ident.te * w
    per_sample = float(np.sqrt(np.mean(step[both] ** 2))) if both.any() else 0.0
    misfit = float(np.sqrt(np.mean(resid[cond.moving] ** 2))) if cond.moving.any() else 0.0
    signal = abs(samples) * per_sample / misfit if misfit > 0 else np.inf
    if (abs(samples) >= REPORT_DELAY_SAMPLES and gain > (DELAY_EDGE_GAIN if at_edge else DELAY_GAIN)
            and signal >= MIN_SHIFT_SIGNAL):
        way = "lags" if delta > 0 else "leads"
        size = "at least " if abs(samples) >= DELAY_SEARCH_SAMPLES - 1e-9 else ""
        return [Diagnostic("misalignment", f"the measured torque {way} the kinematics by {size}{abs(samples):.1f} "
                           f"samples ({1000 * abs(delta):.2f} ms): shifting it would lower the residual by {100 * gain:.0f} %; "
                           "check the time stamps and the drive's torque/position delay, then align the columns",
                           severity="warning", next_step="run again with --align (or --torque-delay)", evidence={"delay_s": delta, "delay_samples": samples,
                                                       "residual_reduction": gain, "shift_to_residual": signal,
                                                       "shift_curve": {"shift_s": shift_s.tolist(),
                                                                       "residual": rel.tolist()}})]
    return []


def _features(q, qd, qdd, kind):
    f = {"sin(q)": np.sin(q), "cos(q)": np.cos(q), "q": q, "qd": qd, "sign(qd)": np.sign(qd), "qdd": qdd,
         "qd*|qd|": qd * np.abs(qd), "constant": np.ones_like(q)}
    if kind == "linear":
        del f["sin(q)"], f["cos(q)"]
    return f


_REMEDY = {
    "constant": "an asymmetric friction or a torque offset would: try --friction viscous+coulomb+offset (or auto)",
    "qdd": "a rotor inertia missing from the model would: try --friction viscous+coulomb+armature (or auto)",
    "sign(qd)": "try --friction auto (friction models chosen by validation error)",
    "qd*|qd|": "try --friction auto (friction models chosen by validation error)",
    "sin(q)": "gravity missing? choose a model with a gravity term (e.g. rotary3, linear2)",
    "cos(q)": "gravity missing? choose a model with a gravity term (e.g. rotary3, linear2)",
    "q": "a spring or gravity term missing? (e.g. linear3 for a spring-balanced axis)",
}


def _systematic_residual(ident) -> list[Diagnostic]:
    """Omitted-term test: how much of the residual would one more term of the joint's own state explain?

    Each candidate term is made orthogonal to the model's columns first (the fit has already removed
    whatever the model can express), so e.g. gravity missing from a model whose inertia absorbed part
    of it under a sine motion is still found.
    """
    cond, plant = ident.cond, ident.plant
    out = []
    idx = _subsample(ident)
    Y = None                                    # the regressor on the subsample, when an axis needs it
    kinds = plant.model.joint_kinds
    summary = ident.summary
    rms_e_all, rms_tau_all = summary.rms("te", gated=True), summary.rms("tau", gated=True)
    noise_all = summary.rms("noise", gated=True)
    rms_e_all[summary.moving == 0] = np.nan     # (a joint that never moves: skipped below)
    for j in range(cond.n_joints):
        rms_e, rms_tau = float(rms_e_all[j]), float(rms_tau_all[j])
        noise_f = float(noise_all[j]) * np.sqrt(2 * cond.cutoff_hz * cond.sample_period_s)  # what the filter leaves
        if rms_tau == 0 or not rms_e >= max(0.03 * rms_tau, 3 * noise_f):
            continue
        if Y is None:
            Y = plant.regressor(cond.q[idx], cond.qd[idx], cond.qdd[idx],
                                sign=cond.sign[idx])[..., ident.base.independent]
        m = cond.moving[idx, j]
        e = ident.te[idx, j][m]
        W = Y[m, j, :]
        W = W[:, np.linalg.norm(W, axis=0) > 0]
        Q = np.linalg.qr(W)[0] if W.shape[1] else np.zeros((e.size, 0))
        best, best_r2 = None, 0.0
        feats = _features(cond.q[idx, j][m], cond.qd[idx, j][m], cond.qdd[idx, j][m], kinds[j])
        ee = float(e @ e)
        for name, f in feats.items():
            fp = f - Q @ (Q.T @ f)
            ff = float(fp @ fp)
            if ff <= 1e-12 * float(f @ f) or ee == 0:
                continue
            r2 = float(e @ fp) ** 2 / (ee * ff)
            if r2 > best_r2:
                best, best_r2 = name, r2
        if best_r2 > SYSTEMATIC_R2:
            remedy = _REMEDY.get(best, "")
            out.append(Diagnostic(
                "systematic_residual",
                f"{_axis(ident, j)}: the torque error is systematic (error RMS {100 * rms_e / rms_tau:.1f} % of the "
                f"torque RMS; a term in {best} of this joint would explain {100 * best_r2:.0f} % of it): the model "
                f"'{plant.model.name}' misses a term for this axis (gravity? a spring? another friction law?) or the "
                "torque scale/sign (TorqueFactor) is off" + (f"; {remedy}" if remedy else ""), j + 1,
                evidence={"feature": best, "r2": best_r2, "error_rms": rms_e, "torque_rms": rms_tau}))
    return out


def _undetermined(ident) -> list[Diagnostic]:
    """Axes whose torque on another motion the fit leaves uncertain (see the module docstring)."""
    pu = ident.uncertainty or prediction_uncertainty(ident)
    names = ident.plant.param_names
    combos = {n: c.text for c in ident.confounded for n in c.parameters}
    out = []
    not_excited = [int(i) for i, s in zip(range(len(names)), ident.status) if s == "not excited"]
    for j, rel in enumerate(pu["relative"]):
        # parameters held (not excited) that move this axis on another motion: their effect is unknown
        held = [names[i] for i in not_excited if pu["column_rms"][j, i] > 1e-9 * max(pu["torque_rms"][j], 1e-300)]
        if not (rel > MAX_PREDICTION_UNCERTAINTY or held):
            continue
        top = np.argsort(pu["share"][j])[::-1][:3]
        culprits = [names[pu["excited"][b]] for b in top if pu["share"][j, b] > 0.1]
        why = "; ".join(dict.fromkeys(combos.get(n, f"{n} (std {100 * _rel_std(ident, names.index(n)):.0f} %)")
                                      for n in culprits))
        if held:
            why = (why + "; " if why else "") + "not excited at all: " + ", ".join(held)
        out.append(Diagnostic(
            "undetermined", f"{_axis(ident, j)}: the recording leaves the model undetermined — on another motion of "
            f"this robot its torque is uncertain by {100 * rel:.0f} % (one standard deviation; limit "
            f"{100 * MAX_PREDICTION_UNCERTAINTY:.0f} %)" + (f": {why}" if why else ""), j + 1, severity="error",
            evidence={"prediction_uncertainty": float(rel), "limit": MAX_PREDICTION_UNCERTAINTY,
                      "parameters": culprits, "not_excited": held},
            next_step=f"record a motion that moves axis {j + 1} over a larger range and with more than one "
                      "frequency (dynid excite plans one), or give the undetermined parameters in the "
                      "configuration (known parameters)"))
    return out


def _rel_std(ident, i: int) -> float:
    """The one relative uncertainty every output shows: the parameter's std over its |value|."""
    v, s = float(ident.theta[i]), float(ident.std[i])
    return s / abs(v) if v != 0 and np.isfinite(s) else float("inf")


def _implausible(ident) -> list[Diagnostic]:
    out = []
    plant = ident.plant
    params = plant.model.parameters
    axis_of = None
    for i, p in enumerate(params):
        if p.positive and ident.status[i] in ("identified", "confounded") and ident.theta[i] <= 0:
            if axis_of is None:
                axis_of = (ident.uncertainty or prediction_uncertainty(ident))["axis_of"]
            j = int(axis_of[i])
            out.append(Diagnostic(
                "implausible_parameters", f"{_axis(ident, j)}: parameter {p.name} = {ident.theta[i]:.4g} {p.unit} is "
                f"{'negative' if ident.theta[i] < 0 else 'zero'}, impossible for {p.description.split(' (')[0]}: the "
                "model does not describe this recording (an axis hardly moved, a wrong torque sign or scale, or "
                "the wrong model)", j + 1, severity="error",
                evidence={"parameter": p.name, "value": float(ident.theta[i]), "std": float(ident.std[i])},
                next_step=f"move axis {j + 1} over a larger range and faster; check its TorqueFactor and sign"))
    fr = plant.friction
    if "viscous" in fr.suffixes:
        visc = np.array(fr.values_by_term(ident.friction_values)["viscous"])
        std = np.array(fr.values_by_term(np.nan_to_num(ident.std[plant.n_model:]))["viscous"])
        for j in np.nonzero(visc < 0)[0]:
            if visc[j] < -3 * std[j]:
                out.append(Diagnostic("implausible_parameters", f"{_axis(ident, j)}: viscous friction {visc[j]:.4g} is "
                                      "negative (friction would push the motion): check the torque sign", j + 1,
                                      severity="error", evidence={"viscous": float(visc[j])},
                                      next_step="check the torque sign of this axis (TorqueFactor)"))
    return out


REVERSAL_WINDOW_S = 0.05
"""A sample within this time of a velocity reversal is "at a reversal"."""
PRIOR_SCALE_RANGE = (1 / 3, 3.0)
"""Measured torque / a-priori model torque outside this range (or negative) is a torque scale or sign error."""


def _failing_axes(ident) -> list[Diagnostic]:
    """Every axis that fails softMC's rule gets a diagnosis: where its max error occurs, and whether it is a
    few spikes at velocity reversals (friction the model does not describe there) or a broad mismatch."""
    cond, err = ident.cond, ident.errors
    out = []
    for j in np.nonzero(~(np.asarray(err.max_relative) < err.allowed))[0]:
        m = cond.moving[:, j]
        if not m.any():
            continue
        e = np.abs(ident.te[:, j])
        ref = ident.summary.tau_ref[j]                      # of the whole recording
        rel = np.where(m, e / ref, 0.0)
        k = int(np.argmax(rel))
        s = np.sign(cond.qd[:, j])
        rev = np.nonzero(s[1:] * s[:-1] < 0)[0]
        window = max(1, int(REVERSAL_WINDOW_S / cond.sample_period_s))
        near = np.zeros(cond.data_length, dtype=bool)
        if rev.size:
            d = np.zeros(cond.data_length + 1, dtype=int)
            np.add.at(d, np.clip(rev - window, 0, None), 1)
            np.add.at(d, np.clip(rev + window + 1, None, cond.data_length), -1)
            near = np.cumsum(d)[:-1] > 0
        high = rel > 0.5 * err.allowed
        away = np.where(m & ~near, rel, 0.0).max() if (m & ~near).any() else 0.0
        ev = {"max_relative_error": float(rel[k]), "t_max": float(cond.t[k]), "at_reversal": bool(near[k]),
              "max_error_away_from_reversals": float(away), "reversals": int(rev.size),
              "share_of_samples_above_half_the_limit": float(high[m].mean())}
        if near[k] and away < err.allowed:
            out.append(Diagnostic(
                "reversal_spikes", f"{_axis(ident, j)}: the max error ({100 * rel[k]:.0f} % at t = {cond.t[k]:.2f} s) "
                f"comes from spikes at velocity reversals ({int((high & near).sum())} samples near {rev.size} reversals); "
                f"away from them the error stays below {100 * away:.0f} %: friction at reversal (stiction, backlash, "
                "Stribeck) that the friction model does not describe", j + 1, severity="error", evidence=ev,
                next_step="raise this axis's velocity threshold (--threshold) so reversals are left out, or try "
                          "--friction auto (Stribeck); a stiffer servo or a faster motion reverses more cleanly"))
        else:
            out.append(Diagnostic(
                "large_error", f"{_axis(ident, j)}: the model misses the measured torque by up to {100 * rel[k]:.0f} % "
                f"(t = {cond.t[k]:.2f} s); {100 * high[m].mean():.1f} % of the used samples are off by more than "
                f"{50 * err.allowed:.0f} %: the model does not describe this axis", j + 1, severity="error", evidence=ev,
                next_step="see the other findings for this axis (systematic error, scale, saturation); try "
                          "--friction auto, check the torque scale and the model choice"))
    return out


def _prior_scale(ident) -> list[Diagnostic]:
    """Torque scale or sign against the a-priori model (URDF/configuration inertias), where it has one."""
    model, cond = ident.plant.model, ident.cond
    prior = model.prior_parameters()
    if prior is None:
        return []
    prior = np.asarray(prior, dtype=float)
    idx = _subsample(ident)
    q, qd, qdd = cond.q[idx], cond.qd[idx], cond.qdd[idx]
    tp = model.torque(prior, q, qd, qdd)
    out = []
    for j in range(cond.n_joints):
        m = cond.moving[idx, j]
        if m.sum() < 20:
            continue
        y = cond.tau[idx, j][m]
        # the prior's torque scaled, beside what the prior does not model: friction and the rotor's armature
        A = np.column_stack([tp[m, j], qd[m, j], np.sign(qd[m, j]), np.ones(m.sum()), qdd[m, j]])
        if np.linalg.norm(A[:, 0]) == 0:
            continue
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        r2 = 1 - np.sum((y - A @ coef) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-300)
        k = float(coef[0])
        share = np.std(A[:, 0] * k) / max(np.std(y), 1e-300)      # what the a-priori model explains of it
        if r2 < 0.9 or share < 0.3 or PRIOR_SCALE_RANGE[0] <= k <= PRIOR_SCALE_RANGE[1]:
            continue
        what = ("has the opposite sign of" if k < 0 else f"is {k:.3g} x")
        out.append(Diagnostic(
            "torque_scale", f"{_axis(ident, j)}: the measured torque {what} the a-priori model's (the URDF/configuration "
            f"inertias; fit R² {r2:.2f}): the torque scale or sign is wrong (TorqueFactor, gear ratio, current "
            "vs torque units) — a fit would absorb it into physically wrong parameters", j + 1, severity="error",
            evidence={"scale": k, "r2": float(r2)},
            next_step=f"check axis {j + 1}'s torque units and sign (TorqueFactor, transmission)"))
    return out


def _noise(ident) -> list[Diagnostic]:
    out = []
    noise_all = ident.summary.rms("noise", gated=True)
    rms_all = ident.summary.rms("tau", gated=True)
    for j, (noise, rms) in enumerate(zip(noise_all, rms_all)):
        if rms > 0 and noise / rms > 0.2:
            out.append(Diagnostic("large_noise", f"{_axis(ident, j)}: torque noise is {100 * noise / rms:.0f} % of the "
                                  "torque RMS: expect large relative errors on this axis (typical of small joints)",
                                  j + 1, severity="info", evidence={"noise_rms": float(noise), "torque_rms": float(rms)}))
    return out
