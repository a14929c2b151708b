"""A synthetic result folder of any size (result.json + IDNT1.REC) for the report's size and speed checks.

The registered models are single-axis, so a 6-joint, 50 000-sample run is written directly in the
output format: sines with friction and noise, a few diagnostics of each kind with their evidence.
The model name is not a registered one, so the plots that need the model fall back to the
recorded signals, as they do for a result written by a newer dynid.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dynid.io.rec import format_rec


def write_synthetic_result(out: Path, n_samples: int = 50_000, n_joints: int = 6, seed: int = 0) -> Path:
    """Write ``result.json`` and ``IDNT1.REC`` of a synthetic ``n_joints`` run into ``out``; return ``out``."""
    rng = np.random.default_rng(seed)
    dt = 2e-3
    t = np.arange(n_samples) * dt
    f = 0.3 + 0.07 * np.arange(n_joints)
    amp = np.linspace(2.0, 1.0, n_joints)
    q = amp * np.sin(2 * np.pi * f * t[:, None])
    qd = amp * 2 * np.pi * f * np.cos(2 * np.pi * f * t[:, None])
    qdd = -amp * (2 * np.pi * f) ** 2 * np.sin(2 * np.pi * f * t[:, None])
    tau_model = 0.5 * qdd + 10 * np.sin(q) + 0.8 * qd + 1.5 * np.tanh(qd / 0.05)
    tau = tau_model + 0.02 * rng.standard_normal(q.shape)
    tau_raw = tau + 0.1 * rng.standard_normal(q.shape)
    ch = {"tfbRaw": tau_raw, "pfbRaw": q + 1e-5 * rng.standard_normal(q.shape), "tfb": tau, "pfb": q, "vfb": qd,
          "afb": qdd, "tcmd": tau_model, "te": tau_model - tau}
    names = [f"A{j + 1}" for j in range(n_joints)]
    thr = 0.01 * np.abs(qd).max(axis=0)
    moving = (np.abs(qd) > thr).sum(axis=0)
    header = {"element": "SYNTH", "model": "synthetic", "sample_period_s": dt, "joints": names}
    out.mkdir(parents=True, exist_ok=True)
    (out / "IDNT1.REC").write_bytes(format_rec(t, ch, header))
    pnames = [f"I{j + 1}" for j in range(n_joints)] + [f"MgA{j + 1}" for j in range(n_joints)]
    fnames = [f"{n}.{s}" for n in names for s in ("viscous", "coulomb")]
    diag = [
        {"code": "too_slow", "severity": "warning", "joint": 1, "message": "axis 1 (A1): too slow",
         "evidence": {"moving_fraction": 0.4, "velocity_threshold": float(thr[0]), "inertial_share": 0.01}},
        {"code": "saturation", "severity": "error", "joint": 2, "message": "axis 2 (A2): saturates",
         "evidence": {"level": 12.0, "plateau_s": 0.2, "t_start": 10.0, "t_end": 10.2, "model_overshoot": 1.0}},
        {"code": "systematic_residual", "severity": "warning", "joint": 3, "message": "axis 3 (A3): systematic",
         "evidence": {"feature": "sin(q)", "r2": 0.9, "error_rms": 1.0, "torque_rms": 10.0}},
        {"code": "few_cycles", "severity": "warning", "joint": 4, "message": "axis 4 (A4): few cycles",
         "evidence": {"cycles": 2.5}},
        {"code": "small_range", "severity": "warning", "joint": 5, "message": "axis 5 (A5): small range",
         "evidence": {"range": 0.5, "range_deg": 28.6}},
        {"code": "poorly_identified", "severity": "warning", "joint": None, "message": "parameters poorly identified",
         "evidence": {"relative_std_percent": {"I6": 45.0}}},
        {"code": "large_noise", "severity": "info", "joint": 6, "message": "axis 6 (A6): noisy",
         "evidence": {"noise_rms": 0.1, "torque_rms": 0.4}},
    ]
    values = list(rng.uniform(0.1, 20, 2 * n_joints))
    result = {
        "dynid_version": "0.1.0", "model": "synthetic", "model_title": "synthetic 6-axis record", "element": "SYNTH",
        "group": 1, "config": {"payload": {"mass": 0.0, "inertia": 0.0}, "friction": "viscous+coulomb",
                               "position_limits": [[-3.0, 3.0]] * n_joints},
        "joints": [{"name": n, "type": "rotary"} for n in names],
        "parameters": {"names": pnames, "values": values, "units": ["kg m^2"] * n_joints + ["N m"] * n_joints,
                       "index": list(range(1, 2 * n_joints + 1)), "identifiable": [True] * (2 * n_joints),
                       "status": ["identified"] * (2 * n_joints), "std": [0.01 * v for v in values],
                       "relative_std_percent": [1.0] * (2 * n_joints)},
        "friction": {"model": "viscous+coulomb", "viscous": [0.8] * n_joints, "coulomb": [1.5] * n_joints,
                     "std": {"viscous": [0.01] * n_joints, "coulomb": [0.02] * n_joints}, "names": fnames,
                     "values": [0.8, 1.5] * n_joints, "units": ["N m s/rad", "N m"] * n_joints,
                     "status": ["identified"] * (2 * n_joints)},
        "base_parameters": {"count": 4 * n_joints, "names": pnames + fnames, "expressions": pnames + fnames,
                            "values": values + [0.8, 1.5] * n_joints,
                            "std": [0.01 * v for v in values] + [0.01, 0.02] * n_joints,
                            "excited": [True] * (4 * n_joints)},
        "derived": {},
        "conditioning": {"sample_period_s": dt, "cutoff_hz": 5.0, "filter_order": 4, "raw_length": n_samples + 400,
                         "data_length": n_samples, "trim_samples": 200, "velocity_threshold": thr.tolist(),
                         "velocity_threshold_units": ["rad/s"] * n_joints, "upper_velocity_threshold": None,
                         "moving_samples": moving.tolist(), "smooth_sign": True, "torque_delay_s": 0.0},
        "metrics": {"max_relative_error": [0.05] * n_joints, "mean_relative_error": [0.01] * n_joints, "allowed": 0.5,
                    "success": True, "condition_number": 120.0, "condition_number_scaled": 12.0,
                    "rank": 4 * n_joints, "weights": [1.0] * n_joints, "residual_rms": [0.02] * n_joints,
                    "diagnostics": [d["message"] for d in diag], "diagnostics_detail": diag},
        "success": True, "message": "identification succeeded", "notes": [], "source": {"recording": "synthetic"},
        "created": "2026-01-01T00:00:00",
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    return out
