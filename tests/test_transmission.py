"""Drive-side transmissions: conversion, coupled-motor friction terms, motor-side identification.

The coupled-wrist robot is the Stäubli TX40 of the real-data folder: gear ratios
N = [32, 32, 45, -48, 45, 32] and motor 6 turning with joints 5 and 6 (R[5, 4] = N[5]).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.models.config import ModelConfig
from dynid.errors import ConfigError
from dynid.io.readers import read_recording, write_recording_csv
from dynid.models import Plant, make_model
from dynid.models.base import Joint
from dynid.models.friction import FrictionModel
from dynid.recording import Recording
from dynid.models.transmission import Transmission

N = [32.0, 32.0, 45.0, -48.0, 45.0, 32.0]
TX40 = {"gear_ratios": N, "coupling": [[6, 5, 32.0]], "offsets": [0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0],
        "recorded": "motor"}
MOTOR_TERMS = "motor_viscous+motor_coulomb+motor_armature"


def _random_recording(rng, n=6, samples=200, with_derivatives=True):
    t = np.arange(samples) * 1e-3
    q = rng.uniform(-2, 2, (samples, n))
    tau = rng.normal(size=(samples, n))
    qd = rng.normal(size=(samples, n)) if with_derivatives else None
    qdd = rng.normal(size=(samples, n)) if with_derivatives else None
    return Recording(t, q, tau, qd, qdd)


def test_matrix_of_the_tx40_wrist():
    R = Transmission.from_dict(TX40).matrix
    expected = np.diag(N)
    expected[5, 4] = N[5]
    np.testing.assert_array_equal(R, expected)
    assert Transmission.from_dict(TX40).coupled_motors == (5,)


def test_conversion_round_trip(rng):
    tr = Transmission.from_dict(TX40)
    rec = _random_recording(rng)
    back = tr.to_joint(tr.to_motor(rec))
    for name in ("q", "qd", "qdd", "tau"):
        np.testing.assert_allclose(getattr(back, name), getattr(rec, name), rtol=0, atol=1e-12)


def test_conversion_matches_the_readme_formulas(rng):
    """q_joint = R^-1 q_motor, then joints 2 and 3 shifted by -pi/2 and +pi/2; tau_joint = T tau_motor with
    T = diag(N), T[4, 5] = N[5] (the FIGAROH glue, written independently)."""
    qm = rng.uniform(-50, 50, (100, 6))
    taum = rng.normal(size=(100, 6))
    R = np.diag(N)
    R[5, 4] = N[5]
    qj = np.linalg.solve(R, qm.T).T
    qj[:, 1] -= np.pi / 2
    qj[:, 2] += np.pi / 2
    T = np.diag(N)
    T[4, 5] = N[5]
    rec = Transmission.from_dict(TX40).to_joint(Recording(np.arange(100) * 1e-3, qm, taum))
    np.testing.assert_allclose(rec.q, qj, atol=1e-12)
    np.testing.assert_allclose(rec.tau, taum @ T.T, atol=1e-12)


def test_power_is_conserved(rng):
    """tau_motor . qd_motor == tau_joint . qd_joint sample by sample (ideal gears)."""
    tr = Transmission.from_dict(TX40)
    rec = _random_recording(rng)
    motor = tr.to_motor(rec)
    np.testing.assert_allclose(np.sum(motor.tau * motor.qd, axis=1), np.sum(rec.tau * rec.qd, axis=1), rtol=1e-12)


def test_mixed_sides_convert_only_the_motor_side(rng):
    tr = Transmission.from_dict({**TX40, "recorded": {"position": "joint", "torque": "motor"}})
    rec = _random_recording(rng)
    out = tr.to_joint(rec)
    np.testing.assert_array_equal(out.q, rec.q)
    np.testing.assert_allclose(out.tau, rec.tau @ tr.matrix)


def test_config_records_the_transmission_and_rebuilds_it():
    cfg = ModelConfig.from_dict({"friction": "viscous", "transmission": TX40})
    again = ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again.transmission == cfg.transmission
    assert cfg.to_dict()["transmission"]["coupling"] == [[6, 5, 32.0]]


@pytest.mark.parametrize("bad, match", [
    ({"gear_ratios": [1, 2]}, "needs 'recorded'"),
    ({"gear_ratios": [1, 0], "recorded": "motor"}, r"gear_ratios\[2\]"),
    ({"gear_ratios": [1, 2], "coupling": [[1, 1, 3]], "recorded": "motor"}, "on the diagonal"),
    ({"gear_ratios": [1, 2], "coupling": [[3, 1, 3]], "recorded": "motor"}, "outside 1..2"),
    ({"gear_ratios": [1, 2], "recorded": "gearbox"}, "'motor' or 'joint'"),
    ({"gear_ratios": [1, 2], "offsets": [0], "recorded": "motor"}, "offsets has 1"),
    ({"gear_ratios": [1, 1], "coupling": [[1, 2, 1], [2, 1, 1]], "recorded": "motor"}, "singular"),
    ({"gear_ratios": [1, 2], "ratio": 3, "recorded": "motor"}, "unknown transmission key 'ratio'"),
])
def test_invalid_transmissions_are_config_errors(bad, match):
    with pytest.raises(ConfigError, match=match):
        ModelConfig.from_dict({"transmission": bad})


def test_motor_terms_need_a_coupled_motor():
    joints = [Joint("A1", "rotary"), Joint("A2", "rotary")]
    with pytest.raises(ConfigError, match="needs a transmission with a coupled motor"):
        FrictionModel("viscous+motor_viscous", joints)
    with pytest.raises(ConfigError, match="needs a transmission with a coupled motor"):
        FrictionModel("motor_coulomb", joints, transmission=Transmission((10.0, 20.0), position="motor", torque="motor"))
    with pytest.raises(ConfigError, match="has 2 values but the model has 3"):
        FrictionModel("viscous", joints + [Joint("A3", "rotary")], transmission=Transmission((1.0, 2.0)))


def test_motor_terms_equal_the_coupled_drive_torques(rng):
    """Columns @ coefficients == R^T (b w_m + c sign(w_m) + J dw_m) for the coupled motor, w_m = R[m] qd,
    with joint-side coefficients b N^2, c |N|, J N^2 (motor 6 of the TX40, and a negative-ratio variant)."""
    joints = [Joint(f"A{j + 1}", "rotary") for j in range(6)]
    for ratios, coupling in ((N, 32.0), ([*N[:5], -32.0], -32.0)):
        tr = Transmission(tuple(ratios), ((5, 4, coupling),), position="motor", torque="motor")
        fr = FrictionModel(MOTOR_TERMS, joints, transmission=tr)
        assert fr.param_names == ("motor6.viscous", "motor6.coulomb", "motor6.armature")
        b, c, J = 2.3e-4, 0.061, 9.4e-6                           # motor side: N m s/rad, N m, kg m^2
        qd = rng.normal(size=(500, 6))
        qdd = rng.normal(size=(500, 6))
        R = tr.matrix
        w, dw = qd @ R[5], qdd @ R[5]                              # motor 6 velocity, acceleration [rad/s, rad/s^2]
        tau_m = np.zeros((500, 6))
        tau_m[:, 5] = b * w + c * np.sign(w) + J * dw
        expected = tau_m @ R                                        # R^T tau_motor, sample by sample
        n6 = ratios[5]
        coef = np.array([b * n6**2, c * abs(n6), J * n6**2])
        np.testing.assert_allclose(fr.columns(qd, qdd) @ coef, expected, rtol=1e-12, atol=1e-12)


def test_reader_converts_a_motor_side_file(tmp_path, rng):
    tr = Transmission.from_dict(TX40)
    rec = _random_recording(rng, with_derivatives=False)
    write_recording_csv(tmp_path / "m.csv", tr.to_motor(rec))
    back = read_recording(tmp_path / "m.csv", n_joints=6, joint_kinds=["rotary"] * 6, transmission=tr)
    np.testing.assert_allclose(back.q, rec.q, atol=1e-9)
    np.testing.assert_allclose(back.tau, rec.tau, atol=1e-9)
    # softMC units: motor positions in motor degrees
    motor = tr.to_motor(rec)
    write_recording_csv(tmp_path / "deg.csv", Recording(motor.t, np.rad2deg(motor.q), motor.tau))
    back = read_recording(tmp_path / "deg.csv", n_joints=6, joint_kinds=["rotary"] * 6, units="softmc",
                          transmission=tr)
    np.testing.assert_allclose(back.q, rec.q, atol=1e-9)


# ---------------------------------------------------------------------- identification from motor-side data

pin = pytest.importorskip("pinocchio")
G = 9.80665
FV = np.array([8.0, 5.5, 2.0, 1.1, 1.9, 0.65])      # joint-side viscous [N m s/rad], of the README's order
FC = np.array([7.0, 8.0, 6.0, 2.5, 3.0, 0.3])       # joint-side Coulomb [N m]
IA = np.array([0.36, 0.36, 0.1, 0.03, 0.047, 0.0])  # joint-side armature [kg m^2]
IAM6, FVM6, FSM6 = 0.00964, 0.616, 1.95             # coupled motor 6, joint-side units (FIGAROH's values)
NOISE = 0.005                                       # Gaussian torque noise, fraction of each joint's RMS


def _simulate_motor_side(urdf, seed, duration_s=12.0, rate_hz=500.0):
    """Pinocchio rnea + joint friction + armature + motor-6 terms computed on the motor side, mapped by R^T,
    plus 0.5 % torque noise; returns the motor-side recording (positions, velocities, accelerations in motor
    rad, motor torques) and the joint-side one."""
    model = pin.buildModelFromUrdf(str(urdf))
    model.gravity.linear = np.array([0.0, 0.0, -G])
    data = model.createData()
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    w = 2 * np.pi * 0.25 * np.array([1, 2, 3, 5, 7])
    amp = rng.uniform(0.5, 1.0, (6, w.size)) / w
    amp *= (0.3 * (hi - lo) / amp.sum(axis=1))[:, None]
    ph = rng.uniform(0, 2 * np.pi, (6, w.size))
    arg = t[:, None, None] * w + ph[None]
    q = 0.5 * (lo + hi) + np.sum(amp * np.sin(arg), axis=2)
    qd = np.sum(amp * w * np.cos(arg), axis=2)
    qdd = -np.sum(amp * w**2 * np.sin(arg), axis=2)
    tau = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(t.size)])
    tau += FV * qd + FC * np.sign(qd) + IA * qdd
    tr = Transmission.from_dict(TX40)
    R = tr.matrix
    w6, dw6 = qd @ R[5], qdd @ R[5]                     # motor 6 velocity, acceleration (motor side)
    tau_m6 = FVM6 / N[5] ** 2 * w6 + FSM6 / N[5] * np.sign(w6) + IAM6 / N[5] ** 2 * dw6
    tau += np.outer(tau_m6, R[5])                       # R^T applied to motor 6's torque
    tau += NOISE * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
    joint = Recording(t, q, tau, qd, qdd)
    return tr.to_motor(joint), joint


def test_coupled_wrist_identified_from_motor_side_data(real_data, tmp_path, capsys):
    """A Pinocchio-simulated TX40 with a coupled wrist, recorded on the motor side (motor positions,
    velocities and torques) and identified through the command line, recovers Iam6, fvm6, fsm6 (the command
    line smooths the coupled motor's Coulomb sign like the torque; without that fsm6 came out ~8 % low)."""
    from dynid.cli.main import main

    urdf = real_data / "staubli_tx40_figaroh/tx40.urdf"
    motor, joint = _simulate_motor_side(urdf, seed=3)
    write_recording_csv(tmp_path / "motor.csv", motor)
    config = {"friction": "viscous+coulomb+armature+" + MOTOR_TERMS, "transmission": TX40}
    (tmp_path / "cfg.json").write_text(json.dumps(config))
    code = main(["identify", str(tmp_path / "motor.csv"), "--model", "serial", "--urdf", str(urdf), "--config",
                 str(tmp_path / "cfg.json"), "--out", str(tmp_path / "out"), "--no-report", "--json", "--quiet",
                 "--cutoff", "20"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    fr = result["friction"]
    assert result["config"]["transmission"]["coupling"] == [[6, 5, 32.0]]
    np.testing.assert_allclose(fr["motor_armature"], [IAM6], rtol=0.03)
    np.testing.assert_allclose(fr["motor_viscous"], [FVM6], rtol=0.03)
    np.testing.assert_allclose(fr["motor_coulomb"], [FSM6], rtol=0.03)
    np.testing.assert_allclose(fr["viscous"], FV, rtol=0.03)
    np.testing.assert_allclose(fr["coulomb"], FC, rtol=0.03)
    # predict reads the motor-side recording through the transmission stored in result.json
    code = main(["predict", str(tmp_path / "out" / "result.json"), str(tmp_path / "motor.csv"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert np.all(np.array(report["validation"]["nrmse_rms"]) < 0.02), report["validation"]["nrmse_rms"]


def test_without_the_coupling_terms_joint_5_cannot_be_fitted(real_data):
    """The motor-6 friction is invisible to per-joint columns: leaving out the motor terms costs joint 5."""
    from dynid.signal.conditioning import ConditioningOptions
    from dynid.identification import IdentifyOptions, identify

    urdf = real_data / "staubli_tx40_figaroh/tx40.urdf"
    _, joint = _simulate_motor_side(urdf, seed=4, duration_s=8.0)
    errors = {}
    for spec in ("viscous+coulomb+armature", "viscous+coulomb+armature+" + MOTOR_TERMS):
        plant = Plant(make_model("serial", {"friction": spec, "transmission": {**TX40, "recorded": "joint"}}, urdf=urdf))
        opts = IdentifyOptions(conditioning=ConditioningOptions(cutoff_hz=20.0,
                                                                sign_directions=plant.friction.sign_directions))
        res = identify(joint, plant, opts)
        errors[spec] = np.sqrt(np.mean(res.te[res.cond.moving[:, 4], 4] ** 2))
    with_terms, without = errors["viscous+coulomb+armature+" + MOTOR_TERMS], errors["viscous+coulomb+armature"]
    assert with_terms < 0.2 * without, errors


def test_conditioning_smooths_the_coupled_motor_sign_like_the_joints(rng):
    """The extra sign column of a direction u equals the joints' treatment applied to u·qd."""
    from dynid.signal.conditioning import ConditioningOptions, condition

    t = np.arange(4000) * 1e-3
    q = np.column_stack([np.sin(2 * np.pi * 0.7 * t), np.sin(2 * np.pi * 1.1 * t + 1.0)])
    rec = Recording(t, q, np.zeros_like(q))
    u = (1.0, 1.0)
    cond = condition(rec, ConditioningOptions(cutoff_hz=10.0, sign_directions=(u,), trim=0, detect_stick=False))
    assert cond.sign.shape == (4000, 3)
    joint_like = condition(Recording(t, q @ np.array([u]).T, np.zeros((4000, 1))),
                           ConditioningOptions(cutoff_hz=10.0, trim=0, detect_stick=False))
    np.testing.assert_allclose(cond.sign[:, 2], joint_like.sign[:, 0], atol=1e-12)
    v = cond.qd @ np.array(u)
    far = np.abs(v) > 0.5 * np.abs(v).max()                         # far from the motor's reversals
    far[:300] = far[-300:] = False                                   # and from the filter's edge transients
    np.testing.assert_allclose(cond.sign[far, 2], np.sign(v[far]), atol=0.1)


def test_selection_scores_a_candidate_alike_with_and_without_coupled_motor_candidates(real_data):
    """The friction selection scores each candidate from its own columns: with a coupled-motor candidate beside
    them (every joint's row then carries the union's columns), the others score as on their own (where each
    joint's row carries only its own few)."""
    from dynid.identification import IdentifyOptions
    from dynid.identification.select import select_auto
    from dynid.signal.conditioning import ConditioningOptions

    urdf = real_data / "staubli_tx40_figaroh/tx40.urdf"
    _, joint = _simulate_motor_side(urdf, seed=4, duration_s=6.0)
    plant = Plant(make_model("serial", {"friction": "auto", "transmission": {**TX40, "recorded": "joint"}}, urdf=urdf))
    plain = ["viscous+coulomb", "viscous+coulomb+armature"]
    opts = IdentifyOptions(conditioning=ConditioningOptions(cutoff_hz=20.0))
    alone = select_auto(joint, plant, opts, cutoff=False, ridge=False, candidates=plain)
    mixed = select_auto(joint, plant, opts, cutoff=False, ridge=False,
                        candidates=plain + ["viscous+coulomb+armature+" + MOTOR_TERMS])
    assert len(mixed.scores) == 3 and len(alone.scores) == 2
    for key, value in alone.scores.items():
        np.testing.assert_allclose(mixed.scores[key], value, rtol=1e-9)
    # the coupled motor's friction is in the data: its candidate scores best
    assert mixed.friction.endswith(MOTOR_TERMS)


def test_an_unconverted_in_memory_recording_with_a_motor_side_configuration_warns(rng, tmp_path):
    """Identifier takes an in-memory Recording as joint side; where the configuration says recordings are motor
    side and this one was not converted (no 'transmission' metadata), it says so — a motor-side recording taken
    as joint side gives plausible-looking, wrong numbers. Converted, or read from a file, no warning."""
    import warnings

    from dynid import Identifier

    cfg = {"transmission": {"gear_ratios": [10.0], "recorded": "motor"}}
    est = Identifier("rotary1", config=cfg)
    t = np.arange(300) * 1e-3
    raw = Recording(t, 10.0 * np.sin(t)[:, None], 0.1 * np.cos(t)[:, None])
    with pytest.warns(UserWarning, match="taken as joint side.*to_joint"):
        assert est.read(raw) is raw
    converted = est.build_model().config.transmission.to_joint(raw)
    write_recording_csv(tmp_path / "motor.csv", raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert est.read(converted) is converted
        np.testing.assert_allclose(est.read(tmp_path / "motor.csv").q, converted.q)
        Identifier("rotary1").read(raw)                         # no transmission: nothing to say
