"""Identification accuracy: exact data, noisy simulated data, calibrated uncertainty, held parameters."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.signal.conditioning import ConditioningOptions
from dynid.identification import IdentifyOptions, ParameterStatus, identify
from dynid.models import Plant, make_model
from dynid.recording import Recording
from dynid.sim import SimOptions, SineMotion, TrajectoryMotion, simulate

G = 9.80665


def two_sine(t, a=(1.2, 0.6), f=(0.37, 0.83), phase=0.3, offset=0.0):
    """q = a1 sin(w1 t) + a2 sin(w2 t + phase) + offset, with exact derivatives."""
    w1, w2 = 2 * np.pi * f[0], 2 * np.pi * f[1]
    q = a[0] * np.sin(w1 * t) + a[1] * np.sin(w2 * t + phase) + offset
    qd = a[0] * w1 * np.cos(w1 * t) + a[1] * w2 * np.cos(w2 * t + phase)
    qdd = -a[0] * w1**2 * np.sin(w1 * t) - a[1] * w2**2 * np.sin(w2 * t + phase)
    return q, qd, qdd


# Exact torques written from the catalogue equations with physical values (independent of the models)
FV, FC = 0.7, 1.2
CASES = {
    "rotary1": ({"I": 0.4}, lambda q, qd, qdd: 0.4 * qdd),
    "rotary2": ({"I": 0.4}, lambda q, qd, qdd: 0.4 * qdd),
    "rotary3": ({"I": 0.4, "M*g*A": 15.0}, lambda q, qd, qdd: 0.4 * qdd - 15.0 * np.sin(q)),
    "linear1": ({"M": 9.0}, lambda x, xd, xdd: 9.0 * xdd),
    "linear2": ({"M": 9.0, "M*g*cos(alpha)": 9.0 * G * np.cos(0.5)}, lambda x, xd, xdd: 9.0 * (xdd + G * np.cos(0.5))),
    "linear3": ({"M": 9.0, "K": 800.0, "K*X0": 800.0 * 0.05}, lambda x, xd, xdd: 9.0 * (xdd + G) + 800.0 * (x - 0.05)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_data_recovers_parameters_to_1e6(name):
    truth, rigid = CASES[name]
    t = np.arange(0.0, 20.0, 1e-3)
    scale = 1.0 if name.startswith("rotary") else 0.2
    q, qd, qdd = (x * scale for x in two_sine(t))
    tau = rigid(q, qd, qdd) + FV * qd + FC * np.sign(qd)
    plant = Plant(make_model(name))
    res = identify(Recording(t, q, tau, qd, qdd), plant)
    values = res.values
    for key, v in {**truth, "A1.viscous": FV, "A1.coulomb": FC}.items():
        assert values[key] == pytest.approx(v, rel=1e-6), key
    assert res.success


def test_positions_only_limited_by_the_central_difference():
    """Without dq/ddq columns the 3-point derivatives at 1 kHz bound the error at (w·Ts)²/6 ≈ 5e-6."""
    t = np.arange(0.0, 20.0, 1e-3)
    q, qd, qdd = two_sine(t)
    tau = 0.4 * qdd - 15.0 * np.sin(q) + FV * qd + FC * np.sign(qd)
    res = identify(Recording(t, q, tau), Plant(make_model("rotary3")))
    v = res.values
    for key, ref in {"I": 0.4, "M*g*A": 15.0, "A1.viscous": FV, "A1.coulomb": FC}.items():
        assert v[key] == pytest.approx(ref, rel=1e-5), key


SIM = {
    "rotary3": (Plant(make_model("rotary3")), [0.5, 0.0, 20.0, 0.0, 0.8, 1.5], SineMotion([-2.1], [2.1], [0.5], record_s=20)),
    "linear2": (Plant(make_model("linear2")), [12.0, 12.0 * G * np.cos(np.radians(30)), 0.0, 40.0, 15.0],
                SineMotion([-0.3], [0.4], [0.7], record_s=20)),
}


def _two_freq_motion(amp, f1, f2, duration=22.0):
    t = np.arange(0.0, duration, 1e-3)
    q, _, _ = two_sine(t, a=(amp, 0.5 * amp), f=(f1, f2), phase=0.0)
    return TrajectoryMotion(t, q, settle_s=2.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["rotary3", "linear2", "linear3"])
def test_half_percent_noise_recovers_parameters_within_1_percent(name, seed):
    if name == "linear3":  # a spring axis needs two frequencies: with one sine, K·x and M·xdd are collinear
        plant, theta, motion = Plant(make_model("linear3")), [8.0, 2000.0, 100.0, 30.0, 10.0], _two_freq_motion(0.2, 0.6, 1.7)
    else:
        plant, theta, motion = SIM[name]
    rec = simulate(plant, theta, motion, SimOptions(noise=0.005), seed=seed)
    res = identify(rec, plant)
    for i, s in enumerate(res.status):
        if s == ParameterStatus.IDENTIFIED:
            assert res.theta[i] == pytest.approx(theta[i], rel=0.01), plant.param_names[i]
    assert res.success


@pytest.mark.slow
def test_standard_deviations_are_calibrated():
    """Over seeds, (estimate - truth) / std has RMS near 1: std accounts for the filtered (correlated) residual."""
    plant, theta, motion = SIM["rotary3"]
    z = []
    for seed in range(6):
        res = identify(simulate(plant, theta, motion, SimOptions(noise=0.005), seed=seed), plant)
        idx = [i for i, s in enumerate(res.status) if s == ParameterStatus.IDENTIFIED]
        z.append((res.theta[idx] - np.asarray(theta)[idx]) / res.std[idx])
    rms = np.sqrt(np.mean(np.square(z)))
    assert 0.4 < rms < 2.0


def test_unidentifiable_columns_are_held_never_fitted_to_noise():
    plant, theta, motion = SIM["rotary3"]
    rec = simulate(plant, theta, motion, SimOptions(noise=0.005), seed=3)
    res = identify(rec, plant)
    v = res.values
    assert v["L^2"] == 0.0 and v["g*L"] == 0.0
    assert res.status[1] == ParameterStatus.NOT_IDENTIFIABLE and res.status[3] == ParameterStatus.NOT_IDENTIFIABLE
    known = Plant(make_model("rotary3", {"parameters": {"L^2": 0.36, "g*L": G * 0.6}}))
    res = identify(rec, known)
    assert res.values["L^2"] == 0.36 and res.status[1] == ParameterStatus.KNOWN
    assert res.values["I"] == pytest.approx(0.5, rel=0.01)


def test_payload_run_with_known_coefficients_recovers_the_arm():
    """With a 2 kg payload, I and L^2 share a column: the base parameter is I + 2 L^2; a known L^2 separates them."""
    mp, L = 2.0, 0.6
    truth = Plant(make_model("rotary3", {"payload": {"mass": mp}}))
    theta = [0.5, L**2, 20.0, G * L, 0.8, 1.5]
    rec = simulate(truth, theta, SineMotion([-2.1], [2.1], [0.5], record_s=20), SimOptions(noise=0.005), seed=4)
    res = identify(rec, Plant(make_model("rotary3", {"payload": {"mass": mp}})))
    expressions = dict(zip([res.plant.param_names[i] for i in res.base.independent], res.base.expressions()))
    assert expressions["I"] == "I + 2*L^2" and expressions["M*g*A"] == "M*g*A + 2*g*L"
    assert res.base_values[0] == pytest.approx(0.5 + mp * L**2, rel=0.01)
    known = Plant(make_model("rotary3", {"payload": {"mass": mp}, "parameters": {"L^2": L**2, "g*L": G * L}}))
    res = identify(rec, known)
    assert res.values["I"] == pytest.approx(0.5, rel=0.01) and res.values["M*g*A"] == pytest.approx(20.0, rel=0.01)


def test_linear2_reports_alpha_and_derives_payload_coefficient():
    plant, theta, motion = SIM["linear2"]
    res = identify(simulate(plant, theta, motion, SimOptions(noise=0.005), seed=5), plant)
    assert res.derived["alpha"]["value"] == pytest.approx(30.0, abs=0.5)
    assert res.values["g*cos(alpha)"] == pytest.approx(G * np.cos(np.radians(30)), rel=0.01)
    assert res.status[2] == ParameterStatus.DERIVED


def test_issue_torque_misaligned_by_samples_is_diagnosed_and_aligned():
    """Peers' failure: torque and kinematics shifted by a few samples silently bias friction."""
    plant, theta, motion = SIM["rotary3"]
    rec = simulate(plant, theta, motion, SimOptions(noise=0.005), seed=0)
    shifted = Recording(rec.t, rec.q, np.roll(rec.tau, 3, axis=0))
    res = identify(shifted, plant)
    diag = [d for d in res.diagnostics if d.code == "misalignment"]
    assert diag and diag[0].evidence["delay_samples"] == pytest.approx(3.0, abs=0.3)
    assert abs(res.values["A1.coulomb"] / 1.5 - 1) > 0.05  # what a peer would report
    fixed = identify(shifted, plant, IdentifyOptions(align_torque=True))
    assert fixed.values["A1.coulomb"] == pytest.approx(1.5, rel=0.01)
    assert not [d for d in fixed.diagnostics if d.code == "misalignment"]
    clean = identify(rec, plant)
    assert not [d for d in clean.diagnostics if d.code == "misalignment"]


def test_smoothed_coulomb_sign_removes_friction_bias():
    """Parallel filtering of sign(qd): without it the filtered torque's smoothed friction step biases Fc."""
    plant, theta, motion = SIM["rotary3"]
    rec = simulate(plant, theta, motion, SimOptions(noise=0.0), seed=0)
    good = identify(rec, plant)
    bad = identify(rec, plant, IdentifyOptions(conditioning=ConditioningOptions(smooth_sign=False)))
    assert good.values["A1.coulomb"] == pytest.approx(1.5, rel=0.005)
    assert abs(bad.values["A1.coulomb"] / 1.5 - 1) > 5 * abs(good.values["A1.coulomb"] / 1.5 - 1)
