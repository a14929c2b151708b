"""Automatic failure diagnosis with evidence (spec/units-and-runtime.md §7, identification.md §10).

Each check looks at one cause the source lists and returns :class:`Diagnostic` records whose
``evidence`` holds the numbers behind the verdict (the report plots them). Thresholds are module
constants so they are documented in one place:

- too slow:      moving fraction < ``MIN_MOVING_FRACTION`` (50 %) or inertial torque RMS below
                 ``MIN_INERTIAL_SHARE`` (3 %) of the measured torque RMS
- few cycles:    fewer than ``MIN_CYCLES`` (3) velocity reversals pairs per joint
- small range:   < ``MIN_RANGE_FRACTION`` (50 %) of the configured position limits, or, without limits,
                 a rotary joint travelling less than ``MIN_ROTARY_RANGE_DEG`` (60°)
- saturation:    a torque plateau (>= 10 ms, flat) at the extreme of the measured torque while the model
                 keeps going past it
- conditioning:  scaled condition number > ``MAX_CONDITION`` (1000) or a parameter's relative std > 30 %
- wrong model / torque scale: residual explained by a simple function of the joint state
                 (R² > 0.5) and larger than noise, or physically impossible values (negative inertia)
- stick-slip:    a joint that sticks at reversals (see dynid.signal.conditioning, step 6) — reported, and
                 the samples around the sticks are left out of the fit
- misalignment:  torque and kinematics shifted in time (the peers' classic bug): refitting with the
                 torque shifted by ``|δ|`` ≥ ``MIN_DELAY_SAMPLES`` (0.5) samples lowers the residual by more
                 than ``DELAY_GAIN`` (5 %)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Diagnostic", "diagnose", "cycles_per_joint", "estimate_delay"]

MIN_MOVING_FRACTION = 0.5
MIN_INERTIAL_SHARE = 0.03
MIN_CYCLES = 3.0
MIN_RANGE_FRACTION = 0.5
MIN_ROTARY_RANGE_DEG = 60.0
MAX_CONDITION = 1000.0
MAX_RELATIVE_STD = 0.30
SYSTEMATIC_R2 = 0.5
MIN_DELAY_SAMPLES = 0.5
MIN_PLATEAU_S = 0.010
DELAY_GAIN = 0.05


@dataclass(frozen=True)
class Diagnostic:
    """One finding. ``code`` is stable (tests and the report use it); ``joint`` is 1-based or None."""

    code: str
    message: str
    joint: int | None = None
    severity: str = "warning"
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "joint": self.joint, "message": self.message,
                "evidence": self.evidence}


def _axis(ident, j: int) -> str:
    return f"axis {j + 1} ({ident.plant.model.joints[j].name})"


def diagnose(ident) -> list[Diagnostic]:
    """Run every check on an :class:`~dynid.identification.pipeline.Identification`."""
    out: list[Diagnostic] = []
    for check in (_too_slow, _few_cycles, _small_range, _saturation, _stick_slip, _conditioning, _misalignment,
                  _systematic_residual, _implausible, _noise):
        out.extend(check(ident))
    if any(d.code == "saturation" for d in out):  # clipped feedback also passes for a delay: report the cause only
        out = [d for d in out if d.code != "misalignment"]
    return out


def cycles_per_joint(qd: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Motion cycles per joint: half the number of velocity reversals beyond ±threshold."""
    s = np.where(qd > threshold, 1, np.where(qd < -threshold, -1, 0))
    out = np.zeros(qd.shape[1])
    for j in range(qd.shape[1]):  # per joint
        nz = s[:, j][s[:, j] != 0]
        out[j] = np.count_nonzero(np.diff(nz)) / 2.0 if nz.size else 0.0
    return out


def _too_slow(ident) -> list[Diagnostic]:
    cond, plant = ident.cond, ident.plant
    out = []
    frac = cond.moving_samples / cond.data_length
    p = ident.model_values
    idx = _subsample(ident)  # an RMS share: a subsample of the smooth signals is enough
    q, qdd = cond.q[idx], cond.qdd[idx]
    zeros = np.zeros_like(q)
    inertial = plant.model.torque(p, q, zeros, qdd) - plant.model.torque(p, q, zeros, zeros)
    rms_in = np.sqrt(np.mean(inertial**2, axis=0))
    rms_tau = np.sqrt(np.mean(cond.tau[idx] ** 2, axis=0))
    share = rms_in / np.where(rms_tau > 0, rms_tau, np.inf)
    for j in range(cond.n_joints):
        ev = {"moving_fraction": float(frac[j]), "moving_samples": int(cond.moving_samples[j]),
              "data_length": cond.data_length, "velocity_threshold": float(cond.velocity_threshold[j]),
              "inertial_share": float(share[j])}
        if frac[j] < MIN_MOVING_FRACTION:
            out.append(Diagnostic("too_slow", f"{_axis(ident, j)}: only {100 * frac[j]:.0f} % of the samples move faster "
                                  f"than the threshold {cond.velocity_threshold[j]:.4g}: the motion is too slow "
                                  "(torque dominated by friction/gravity); raise the speed factor", j + 1, evidence=ev))
        elif share[j] < MIN_INERTIAL_SHARE:
            out.append(Diagnostic("too_slow", f"{_axis(ident, j)}: inertial torque is only {100 * share[j]:.1f} % of the "
                                  "measured torque: the motion is too slow to identify inertia well; move faster",
                                  j + 1, evidence=ev))
    return out


def _few_cycles(ident) -> list[Diagnostic]:
    cond = ident.cond
    cyc = cycles_per_joint(cond.qd, cond.velocity_threshold)
    out = []
    for j in range(cond.n_joints):
        if cyc[j] < MIN_CYCLES:
            out.append(Diagnostic("few_cycles", f"{_axis(ident, j)}: only {cyc[j]:.1f} motion cycles recorded "
                                  f"(< {MIN_CYCLES:.0f}): the fit may overfit the visited region; record longer",
                                  j + 1, evidence={"cycles": float(cyc[j])}))
    return out


def _small_range(ident) -> list[Diagnostic]:
    cond, model = ident.cond, ident.plant.model
    span = np.ptp(cond.q_raw, axis=0)
    lims = model.config.position_limits
    out = []
    for j, joint in enumerate(model.joints):
        if lims is not None and len(lims) == model.n_joints:
            width = lims[j][1] - lims[j][0]
            cov = span[j] / width
            if cov < MIN_RANGE_FRACTION:
                out.append(Diagnostic("small_range", f"{_axis(ident, j)}: the motion covers {100 * cov:.0f} % of the "
                                      "joint range: the model may be poor elsewhere; move closer to both limits",
                                      j + 1, evidence={"range": float(span[j]), "limit_width": float(width),
                                                       "coverage": float(cov)}))
        elif joint.kind == "rotary" and np.degrees(span[j]) < MIN_ROTARY_RANGE_DEG:
            out.append(Diagnostic("small_range", f"{_axis(ident, j)}: the joint moves only {np.degrees(span[j]):.1f} deg: "
                                  "the model may be poor elsewhere; move over a larger range",
                                  j + 1, evidence={"range": float(span[j]), "range_deg": float(np.degrees(span[j]))}))
    return out


def _runs(flag: np.ndarray) -> list[tuple[int, int]]:
    """Start/stop indices of runs of True."""
    d = np.diff(np.concatenate([[0], flag.astype(np.int8), [0]]))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def _saturation(ident) -> list[Diagnostic]:
    cond = ident.cond
    out = []
    dt = cond.sample_period_s
    lims = ident.plant.model.config.torque_limits
    for j in range(cond.n_joints):
        raw = cond.tau_raw[:, j]
        filt = cond.tau[:, j]
        model = ident.tcmd[:, j]
        noise = 1.4826 * np.median(np.abs(np.diff(raw))) / np.sqrt(2)
        found = None
        for sgn in (1.0, -1.0):
            level = np.max(sgn * raw)
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
        if lims is not None and len(lims) == cond.n_joints and np.max(np.abs(raw)) >= 0.98 * lims[j]:
            found = found or {"level": float(np.max(np.abs(raw))), "plateau_s": 0.0}
            found["torque_limit"] = float(lims[j])
        if found:
            out.append(Diagnostic("saturation", f"{_axis(ident, j)}: the measured torque flattens at {found['level']:.4g} "
                                  f"for {1000 * found['plateau_s']:.0f} ms while the model keeps rising: the drive "
                                  "saturates (motion too fast); lower the speed or the range", j + 1,
                                  severity="error", evidence=found))
    return out


def _stick_slip(ident) -> list[Diagnostic]:
    cond = ident.cond
    out = []
    if cond.stuck is None:
        return out
    for j in range(cond.n_joints):
        runs = _runs(cond.stuck[:, j])
        if not runs:
            continue
        total = sum(b - a for a, b in runs) * cond.sample_period_s
        excluded = int(cond.near_stuck[:, j].sum())
        out.append(Diagnostic(
            "stick_slip", f"{_axis(ident, j)}: the joint sticks at {len(runs)} reversals ({1000 * total / len(runs):.0f} ms "
            f"each on average): static friction holds it while the torque sweeps, which the friction model does not "
            f"describe; {excluded} samples around them are not used. A faster motion (or a stiffer servo) sticks less",
            j + 1, severity="info",
            evidence={"stick_count": len(runs), "stick_time_s": float(total), "excluded_samples": excluded,
                      "t_start": [float(cond.t[a]) for a, _ in runs[:50]],
                      "t_end": [float(cond.t[b - 1]) for _, b in runs[:50]]}))
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
        v, s = ident.base_values[b], ident.base_std[b]
        if ident.base_excited[b] and np.isfinite(s) and abs(v) > 0 and s / abs(v) > MAX_RELATIVE_STD:
            bad.append((names[i], float(100 * s / abs(v))))
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


def estimate_delay(ident, max_shift: int = 8, max_rows: int = 6000, *, curve: bool = False):
    """Time shift of the measured torque against the kinematics that fits the model best.

    Refits the base parameters with the torque shifted by ``-max_shift..max_shift`` samples (on a
    subsample of at most ``max_rows`` rows) and returns ``(delay_s, gain)``: the shift of least
    residual (parabolic interpolation; positive = torque lags) and the relative residual reduction
    against no shift. A fit absorbs much of a misalignment into friction and inertia, which is why the
    residual of the unshifted fit alone cannot reveal it.
    """
    cond, plant = ident.cond, ident.plant
    N, n = cond.q.shape
    step = max(1, int(np.ceil((N - 2 * max_shift) * n / max_rows)))
    idx = np.arange(max_shift, N - max_shift, step)
    # rows near each joint's torque extremes are left out: a clipped (saturated) feedback there would
    # otherwise pass for a delay
    peak = np.abs(cond.tau).max(axis=0)
    mask = cond.moving[idx] & (np.abs(cond.tau[idx]) < 0.95 * peak)
    Y = plant.regressor(cond.q[idx], cond.qd[idx], cond.qdd[idx], sign=cond.sign[idx])
    known = ident.theta.copy()
    known[ident.base.independent] = 0.0
    base_known = Y @ known + plant.offset(cond.q[idx], cond.qd[idx], cond.qdd[idx])
    W = Y[..., ident.base.independent][mask]
    W = W[:, ident.base_excited] if W.shape[1] == ident.base_excited.size else W
    scale = np.linalg.norm(W, axis=0)
    scale[scale == 0] = 1.0
    Q, _ = np.linalg.qr(W / scale)
    w = ident.lsq.weights[np.nonzero(mask)[1]]
    shifts = np.arange(-max_shift, max_shift + 1)
    ssr = np.empty(shifts.size)
    for i, sh in enumerate(shifts):  # 2*max_shift+1 small refits
        y = (cond.tau[idx + sh] - base_known)[mask]
        r = y - Q @ (Q.T @ y)
        ssr[i] = float(np.sum((w * r) ** 2))
    k = int(np.argmin(ssr))
    best = float(shifts[k])
    if 0 < k < shifts.size - 1:
        a, b, c = ssr[k - 1], ssr[k], ssr[k + 1]
        den = a - 2 * b + c
        if den > 0:
            best += 0.5 * (a - c) / den
    s0 = ssr[max_shift]
    gain = 1.0 - float(ssr[k]) / s0 if s0 > 0 else 0.0
    # tau[k + shift] matches the kinematics at k: the torque lags by `shift` samples
    if curve:
        rel = ssr / s0 if s0 > 0 else np.ones_like(ssr)
        return best * cond.sample_period_s, gain, (shifts * cond.sample_period_s, rel)
    return best * cond.sample_period_s, gain


def _misalignment(ident) -> list[Diagnostic]:
    cond = ident.cond
    delta, gain, (shift_s, rel) = estimate_delay(ident, curve=True)
    samples = delta / cond.sample_period_s
    if abs(samples) >= MIN_DELAY_SAMPLES and gain > DELAY_GAIN:
        way = "lags" if delta > 0 else "leads"
        return [Diagnostic("misalignment", f"the measured torque {way} the kinematics by {abs(samples):.1f} samples "
                           f"({1000 * abs(delta):.2f} ms): shifting it would lower the residual by {100 * gain:.0f} %; "
                           "check the time stamps and the drive's torque/position delay, then align the columns",
                           severity="error", evidence={"delay_s": delta, "delay_samples": samples,
                                                       "residual_reduction": gain,
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


def _subsample(ident, max_rows: int = 20000) -> np.ndarray:
    N = ident.cond.data_length
    step = max(1, int(np.ceil(N * ident.cond.n_joints / max_rows)))
    return np.arange(0, N, step)


def _systematic_residual(ident) -> list[Diagnostic]:
    """Omitted-term test: how much of the residual would one more term of the joint's own state explain?

    Each candidate term is made orthogonal to the model's columns first (the fit has already removed
    whatever the model can express), so e.g. gravity missing from a model whose inertia absorbed part
    of it under a sine motion is still found.
    """
    cond, plant = ident.cond, ident.plant
    out = []
    idx = _subsample(ident)
    Y = plant.regressor(cond.q[idx], cond.qd[idx], cond.qdd[idx], sign=cond.sign[idx])[..., ident.base.independent]
    kinds = plant.model.joint_kinds
    for j in range(cond.n_joints):
        m_full = cond.moving[:, j]
        e_full = ident.te[m_full, j]
        tau_full = cond.tau[m_full, j]
        rms_e = float(np.sqrt(np.mean(e_full**2)))
        rms_tau = float(np.sqrt(np.mean(tau_full**2)))
        noise = float(np.sqrt(np.mean((cond.tau_raw[m_full, j] - tau_full) ** 2)))
        noise_f = noise * np.sqrt(2 * cond.cutoff_hz * cond.sample_period_s)  # what the filter leaves of it
        if rms_tau == 0 or rms_e < max(0.03 * rms_tau, 3 * noise_f):
            continue
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


def _implausible(ident) -> list[Diagnostic]:
    out = []
    values = ident.values
    for p in ident.plant.model.parameters:
        if p.role == "dynamic" and p.name in ("I", "M") and values[p.name] <= 0:
            out.append(Diagnostic("implausible_parameters", f"parameter {p.name} = {values[p.name]:.4g} {p.unit} is not "
                                  "positive: the torque sign or scale (TorqueFactor) is probably wrong, or the model "
                                  "does not fit the robot", severity="error",
                                  evidence={"parameter": p.name, "value": values[p.name]}))
    fr = ident.plant.friction
    if "viscous" in fr.suffixes:
        visc = np.array(fr.values_by_term(ident.friction_values)["viscous"])
        neg = np.nonzero(visc < 0)[0]
        std = np.array(fr.values_by_term(np.nan_to_num(ident.std[ident.plant.n_model:]))["viscous"])
        for j in neg:
            if visc[j] < -3 * std[j]:
                out.append(Diagnostic("implausible_parameters", f"{_axis(ident, j)}: viscous friction {visc[j]:.4g} is "
                                      "negative (friction would push the motion): check the torque sign", j + 1,
                                      evidence={"viscous": float(visc[j])}))
    return out


def _noise(ident) -> list[Diagnostic]:
    cond = ident.cond
    out = []
    for j in range(cond.n_joints):
        m = cond.moving[:, j]
        tau = cond.tau[m, j]
        noise = np.sqrt(np.mean((cond.tau_raw[m, j] - tau) ** 2))
        rms = np.sqrt(np.mean(tau**2))
        if rms > 0 and noise / rms > 0.2:
            out.append(Diagnostic("large_noise", f"{_axis(ident, j)}: torque noise is {100 * noise / rms:.0f} % of the "
                                  "torque RMS: expect large relative errors on this axis (typical of small joints)",
                                  j + 1, severity="info", evidence={"noise_rms": float(noise), "torque_rms": float(rms)}))
    return out
