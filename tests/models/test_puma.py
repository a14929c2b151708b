"""The PUMA models (``puma``, ``puma-gravity``) against Pinocchio and the spec's numbers.

References: Pinocchio (``rnea``, ``computeGeneralizedGravity``, rotor inertia via ``model.armature``)
on the AKB PUMA built from physical link data, and the maps link data -> I1..I23, g1..g5 written in
``_puma_reference.py`` from spec/models.md §6-7, independently of ``dynid.models.puma``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dynid.errors import ConfigError
from dynid.models import Plant, make_model

from ._puma_reference import (AKB, G, ROTOR, akb_constants, gravity_constants, gravity_model_parameters,
                              pinocchio_gravity, pinocchio_puma, pinocchio_rnea, puma_parameters, random_links,
                              with_payload)

pin = pytest.importorskip("pinocchio")

RTOL = 1e-8  # norm-wise relative agreement with Pinocchio


def rel_dev(a, b):
    """Norm-wise relative deviation ||a - b|| / ||b|| over all samples and joints."""
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def random_states(rng, n=150, speed=2.0):
    q = rng.uniform(-np.pi, np.pi, (n, 6))          # [rad]
    qd = rng.normal(size=(n, 6)) * speed            # [rad/s]
    qdd = rng.normal(size=(n, 6)) * 3 * speed       # [rad/s^2]
    return q, qd, qdd


# ---------------------------------------------------------------------------- the spec's numbers

def test_corrected_constants_reproduce_the_spec_test_vector():
    """spec/models.md §6: I2..I23 for Corke's AKB link data, and I1 = 1.5532 (I1zz = 0.35, m1 l1y^2 = 0)."""
    spec = [1.74811, 1.60186, 0.690315, 0.372123, 0.313747, 0.298577, -0.134059, 0.023751, -0.0213473, -0.0141984,
            -0.0109569, -0.00380879, 0.00164, 0.00124733, 0.00124358, 0.00064216, 0.000432288, 0.00030216,
            -0.00020216, -0.0001, -5.8464e-05, 4e-05]
    I = akb_constants(AKB)
    np.testing.assert_allclose(I[1:], spec, rtol=5e-6)   # the vector is printed to 6 significant digits
    # I1 = 1.553261 is printed truncated (not rounded) to 1.5532: within one unit of the last digit
    assert 0 <= I[0] - 1.5532 < 1e-4
    np.testing.assert_allclose(make_model("puma").example_parameters()[:23], I, rtol=1e-9)


def test_gravity_constants_reproduce_akb_published_values():
    """AKB publish g1..g5 = -37.2, -8.44, 1.02, 0.249, -0.0282 N m.

    g1, g3, g4, g5 agree to the printed digits. g2 = -8.451 differs from -8.44 by 0.011 N m (0.13 %),
    inside what the link data's own rounding allows: l3y is printed as -0.070 m, so m3 g l3y alone is
    uncertain by 4.8 * 9.80665 * 0.0005 = 0.024 N m.
    """
    g = gravity_constants(AKB, G)
    published = np.array([-37.2, -8.44, 1.02, 0.249, -0.0282])
    half_digit = np.array([0.05, 0.005, 0.005, 0.0005, 0.00005])
    ok = np.abs(g - published) <= half_digit
    assert ok[[0, 2, 3, 4]].all(), g
    assert abs(g[1] - published[1]) <= 4.8 * G * 0.0005
    np.testing.assert_allclose(make_model("puma").example_parameters()[23:], g, rtol=1e-9)
    np.testing.assert_allclose(make_model("puma-gravity").example_parameters(), gravity_model_parameters(AKB, G),
                               rtol=1e-9)


# ---------------------------------------------------------------------------- puma vs Pinocchio

@pytest.mark.parametrize("robot", ["akb", "random1", "random2"])
def test_puma_torque_equals_pinocchio_rnea(robot):
    rng = np.random.default_rng({"akb": 1, "random1": 2, "random2": 3}[robot])
    links = AKB if robot == "akb" else random_links(rng)
    model = make_model("puma")
    p = puma_parameters(links)
    pm, pd = pinocchio_puma(links)
    q, qd, qdd = random_states(rng)
    zero = np.zeros_like(q)
    # full torque, and each part on its own: inertia matrix, velocity terms, gravity
    assert rel_dev(model.torque(p, q, qd, qdd), pinocchio_rnea(pm, pd, q, qd, qdd)) < RTOL
    gravity = pinocchio_rnea(pm, pd, q, zero, zero)
    assert rel_dev(model.torque(p, q, zero, zero), gravity) < RTOL
    assert rel_dev(model.torque(p, q, zero, qdd) - gravity, pinocchio_rnea(pm, pd, q, zero, qdd) - gravity) < RTOL
    assert rel_dev(model.torque(p, q, 5 * qd, zero) - gravity,
                   pinocchio_rnea(pm, pd, q, 5 * qd, zero) - gravity) < RTOL


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (3, 6), elements=st.floats(-6.0, 6.0)))
def test_puma_equals_pinocchio_at_arbitrary_states(x):
    """Any state (q in [-6, 6] rad, qd in [-6, 6] rad/s, qdd in [-6, 6] rad/s^2), AKB parameters."""
    pm, pd = pinocchio_puma()
    q, qd, qdd = x[0:1], x[1:2], x[2:3]
    ref = pinocchio_rnea(pm, pd, q, qd, qdd)
    tau = make_model("puma").torque(puma_parameters(), q, qd, qdd)
    np.testing.assert_allclose(tau, ref, rtol=0, atol=RTOL * max(1.0, np.abs(ref).max()))


def test_joint_sign_and_offset_match_a_pinocchio_robot_with_flipped_axes(rng):
    """Joints 2, 4 turn about -z and every joint's zero is rotated by an offset: in Pinocchio that is a
    revolute joint about (0, 0, -1) placed at MDH * RotZ(offset)."""
    sign = np.array([1, -1, 1, -1, 1, 1])
    offset = np.array([0.1, -0.4, 0.25, 0.0, 1.2, -0.3])      # [rad]
    model = make_model("puma", {"joint_sign": sign.tolist(), "joint_offset": offset.tolist()})
    ref_model = pin.Model()
    ref_model.gravity.linear = np.array([0.0, 0.0, -G])
    from ._puma_reference import MDH
    parent = 0
    for i, (alpha, a, d) in enumerate(MDH):
        c, s = np.cos(alpha), np.sin(alpha)
        co, so = np.cos(offset[i]), np.sin(offset[i])
        placement = (pin.SE3(np.array([[1, 0, 0], [0, c, -s], [0, s, c]]), np.zeros(3))
                     * pin.SE3(np.eye(3), np.array([a, 0.0, 0.0]))
                     * pin.SE3(np.eye(3), np.array([0.0, 0.0, d]))
                     * pin.SE3(np.array([[co, -so, 0], [so, co, 0], [0, 0, 1.0]]), np.zeros(3)))
        joint = pin.JointModelRZ() if sign[i] > 0 else pin.JointModelRevoluteUnaligned(np.array([0.0, 0.0, -1.0]))
        jid = ref_model.addJoint(parent, joint, placement, f"j{i + 1}")
        ref_model.appendBodyToJoint(jid, pin.Inertia(float(AKB.m[i]), AKB.r[i].copy(), np.diag(AKB.I[i])),
                                    pin.SE3.Identity())
        parent = jid
    q, qd, qdd = random_states(rng)
    ref = pinocchio_rnea(ref_model, ref_model.createData(), q, qd, qdd)
    assert rel_dev(model.torque(puma_parameters(), q, qd, qdd), ref) < RTOL


@pytest.mark.parametrize("lz", [0.0, 0.09])
def test_payload_matches_pinocchio_with_the_payload_on_link6(rng, lz):
    mass, inertia = 2.5, 0.004                               # [kg], [kg m^2] about z6
    loaded = with_payload(AKB, mass, inertia, lz)
    pm, pd = pinocchio_puma(loaded)
    q, qd, qdd = random_states(rng)
    config = {"payload": {"mass": mass, "inertia": inertia}, "payload_lz": lz}
    model = make_model("puma", config)
    assert rel_dev(model.torque(puma_parameters(AKB), q, qd, qdd), pinocchio_rnea(pm, pd, q, qd, qdd)) < RTOL
    gmodel = make_model("puma-gravity", config)
    assert rel_dev(gmodel.torque(gravity_model_parameters(AKB), q, qd, qdd), pinocchio_gravity(pm, pd, q)) < RTOL


def test_armature_columns_match_pinocchio_rotor_inertia(rng):
    """AKB rotors (Jm G^2) as Pinocchio ``model.armature``; dynid: friction block term ``armature``."""
    pm, pd = pinocchio_puma(armature=ROTOR)
    plant = Plant(make_model("puma", {"friction": "viscous+coulomb+armature"}))
    fv = np.array([5.8, 9.5, 4.0, 0.41, 0.43, 0.22])          # [N m s/rad]
    fc = np.array([24.7, 13.6, 7.1, 0.85, 0.67, 0.30])        # [N m]
    theta = np.concatenate([puma_parameters(), np.column_stack([fv, fc, ROTOR]).ravel()])
    assert plant.friction.param_names[:3] == ("A1.viscous", "A1.coulomb", "A1.armature")
    q, qd, qdd = random_states(rng)
    ref = pinocchio_rnea(pm, pd, q, qd, qdd) + fv * qd + fc * np.sign(qd)
    assert rel_dev(plant.torque(theta, q, qd, qdd), ref) < RTOL
    # without the rotors the 23 constants cannot match: joints 3..6 are far off
    no_rotor = make_model("puma").torque(puma_parameters(), q, qd, qdd) + fv * qd + fc * np.sign(qd)
    assert rel_dev(no_rotor[:, 5], ref[:, 5]) > 0.1


# ---------------------------------------------------------------------------- puma-gravity

def test_puma_gravity_equals_pinocchio_generalized_gravity(rng):
    links = random_links(rng)
    pm, pd = pinocchio_puma(links)
    q, qd, qdd = random_states(rng)
    ref = pinocchio_gravity(pm, pd, q)
    model = make_model("puma-gravity")
    assert model.param_names == ("P1", "P2", "P3", "P4", "P5")
    assert rel_dev(model.torque(gravity_model_parameters(links), q, qd, qdd), ref) < RTOL
    # softMC's four parameters: exactly the AKB g3 term (g m2 l2y sin q2 on joint 2) is missing
    four = make_model("puma-gravity", {"include_g3": False})
    expected = ref.copy()
    expected[:, 1] -= G * links.m[1] * links.r[1, 1] * np.sin(q[:, 1])
    assert rel_dev(four.torque(gravity_model_parameters(links)[:4], q, qd, qdd), expected) < RTOL


def test_softmc_numbering_and_slots():
    puma, grav = make_model("puma"), make_model("puma-gravity")
    assert (puma.softmc_model, puma.element, puma.n_joints) == (1, "PUMA", 6)
    assert [p.slot for p in puma.parameters] == list(range(1, 29))
    assert puma.param_names == tuple(f"I{k}" for k in range(1, 24)) + ("g1", "g2", "g3", "g4", "g5")
    assert {j.kind for j in puma.joints} == {"rotary"}
    assert (grav.softmc_model, grav.element, grav.n_slots, grav.upper_velocity_fraction) == (2, "PUMA", 6, 0.5)
    four = make_model("puma-gravity", {"include_g3": False})
    assert [p.slot for p in four.parameters] == [1, 2, 3, 4] and four.n_slots == 6


@pytest.mark.parametrize("config,pattern", [
    ({"joint_sign": [1, 1, 1, 1, 1]}, "list of 6"),
    ({"joint_sign": [1, 0, 1, 1, 1, 1]}, r"\+1 or -1"),
    ({"joint_sign": "+1"}, "list of 6"),
    ({"joint_offset": [0, 0, 0, 0, 0, float("nan")]}, "finite"),
    ({"payload_lz": "0.1"}, "payload_lz"),
    ({"geometry": {"d5": 0.1}}, "unknown geometry key"),
])
def test_bad_configuration_is_rejected(config, pattern):
    with pytest.raises(ConfigError, match=pattern):
        make_model("puma", config)


def test_bad_include_g3_is_rejected():
    with pytest.raises(ConfigError, match="include_g3"):
        make_model("puma-gravity", {"include_g3": "no"})


def test_configuration_round_trips_through_result_json_form(rng):
    """What result.json stores (``config.to_dict()``) rebuilds the same model."""
    config = {"joint_sign": [1, -1, -1, 1, 1, -1], "joint_offset": [0, 0.5, -0.2, 0, 0, 0.1],
              "payload": {"mass": 1.0, "inertia": 0.01}, "payload_lz": 0.05}
    for name in ("puma", "puma-gravity"):
        model = make_model(name, config)
        again = make_model(name, json.loads(json.dumps(model.config.to_dict())))
        q, qd, qdd = random_states(rng, n=20)
        p = model.example_parameters()
        np.testing.assert_array_equal(again.torque(p, q, qd, qdd), model.torque(p, q, qd, qdd))


def test_docstring_example():
    import doctest

    import dynid.models.puma as mod

    assert doctest.testmod(mod).failed == 0


# ---------------------------------------------------------------------------- end to end

FV = np.array([5.8, 9.5, 4.0, 0.41, 0.43, 0.22])   # viscous [N m s/rad] (Corke's PUMA B·G^2)
FC = np.array([24.7, 13.6, 7.1, 0.85, 0.67, 0.30])  # Coulomb [N m] (Corke's PUMA Tc·|G|)
DEG = np.pi / 180
START = np.array([-100, -170, 100, -60, -60, -100]) * DEG   # the source's PUMA SineWave program
TARGET = np.array([100, -40, 235, 60, 60, 100]) * DEG
BASE_FREQS = np.array([1.56, 1, 1.31, 1.47, 1.21, 1.17])


def sine_wave(freqs_hz, record_s, dt):
    """softMC SineWave between START and TARGET: q = c - A cos(2 pi f t) (leaves START at rest)."""
    t = np.arange(int(round(record_s / dt))) * dt
    c, a, w = (START + TARGET) / 2, (TARGET - START) / 2, 2 * np.pi * np.asarray(freqs_hz)
    return t, c - a * np.cos(w * t[:, None]), a * w * np.sin(w * t[:, None]), a * w**2 * np.cos(w * t[:, None])


def multi_sine(record_s, dt, f0, seed):
    """Sum of four sines per joint at f0 * (l + 0.13 j) Hz with random phases, inside the SineWave box."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(record_s / dt))) * dt
    q = np.tile((START + TARGET) / 2, (t.size, 1))
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    for j in range(6):
        for harmonic in range(1, 5):
            w = 2 * np.pi * f0 * (harmonic + 0.13 * j)
            a = (TARGET[j] - START[j]) / 2 / 4 * rng.uniform(0.5, 1.0)
            ph = rng.uniform(0, 2 * np.pi)
            q[:, j] += a * np.sin(w * t + ph)
            qd[:, j] += a * w * np.cos(w * t + ph)
            qdd[:, j] -= a * w**2 * np.sin(w * t + ph)
    return t, q, qd, qdd


def measured(path, motion, *, seed, armature=None, noise=0.005, counts_per_rev=2**16):
    """Pinocchio RNEA torque + viscous/Coulomb friction; 0.5 % torque noise (of each joint's peak),
    positions quantised to the encoder. Writes the CSV and returns the true torque (N, 6)."""
    from dynid.io.readers import write_recording_csv
    from dynid.recording import Recording

    t, q, qd, qdd = motion
    pm, pd = pinocchio_puma(armature=armature)
    true = pinocchio_rnea(pm, pd, q, qd, qdd) + FV * qd + FC * np.sign(qd)
    tau = true + np.random.default_rng(seed).normal(size=true.shape) * noise * np.abs(true).max(axis=0)
    res = 2 * np.pi / counts_per_rev
    write_recording_csv(path, Recording(t=t, q=np.round(q / res) * res, tau=tau),
                        meta={"source": "Pinocchio rnea, AKB PUMA 560"})
    return true


def identify_and_predict(tmp_path, capsys, model, train, valid, dt, extra=()):
    """``dynid identify`` then ``dynid predict`` in-process; NRMSE of the prediction against the true
    torque per joint, on the training and the validation motion."""
    from dynid.cli.main import main

    out = tmp_path / "out"
    status = main(["identify", str(train[0]), "--model", model, "--out", str(out), "--json", "--no-report", *extra])
    result = json.loads(capsys.readouterr().out)
    nrmse = {}
    for name, (path, true) in {"train": train, "valid": valid}.items():
        pred_csv = tmp_path / f"pred-{name}.csv"
        assert main(["predict", str(out / "result.json"), str(path), "--out", str(pred_csv)]) == 0
        capsys.readouterr()
        pred = np.loadtxt(pred_csv, delimiter=",", skiprows=1)
        rows = np.rint(pred[:, 0] / dt).astype(int)
        ref = true[rows]
        nrmse[name] = np.sqrt(np.mean((pred[:, 1:] - ref) ** 2, axis=0)) / np.sqrt(np.mean(ref**2, axis=0))
    return status, result, nrmse, out


@pytest.mark.parametrize("rotors", [False, True], ids=["links", "links+rotors"])
def test_identify_sinewave_then_predict_another_motion(tmp_path, capsys, rotors):
    """The source's PUMA SineWave program (20 s at 1 kHz) on the AKB PUMA simulated by Pinocchio;
    validation on a multi-sine motion. With rotor inertias the fit uses the armature term."""
    dt = 1e-3
    armature = ROTOR if rotors else None
    train_path, valid_path = tmp_path / "train.csv", tmp_path / "valid.csv"
    train = (train_path, measured(train_path, sine_wave(0.15 * BASE_FREQS, 20.0, dt), seed=1, armature=armature))
    valid = (valid_path, measured(valid_path, multi_sine(15.0, dt, 0.12, seed=4), seed=2, armature=armature))
    extra = ["--friction", "viscous+coulomb+armature"] if rotors else []
    status, result, nrmse, out = identify_and_predict(tmp_path, capsys, "puma", train, valid, dt, extra)
    assert status == 0 and result["metrics"]["success"] is True
    assert np.all(nrmse["train"] <= 0.03), nrmse
    assert np.all(nrmse["valid"] <= 0.03), nrmse
    prg = (out / "IDNT1.PRG").read_text()
    assert "PUMA.DynamicModel = 1" in prg and "PUMA.DynamicParameter[28]" in prg


def test_semi_static_identification_with_puma_gravity(tmp_path, capsys):
    """The source's semi-static program (SineWave at 0.02 x the base frequencies, 150 s, 250 Hz log):
    P1, P3 (the large gravity constants) within 1 %, prediction of another slow motion within 3 %."""
    dt = 4e-3
    train_path, valid_path = tmp_path / "slow.csv", tmp_path / "slow-valid.csv"
    train = (train_path, measured(train_path, sine_wave(0.02 * BASE_FREQS, 150.0, dt), seed=5))
    freqs = 0.02 * np.array([1.13, 1.41, 1.0, 1.29, 1.53, 1.07])
    valid = (valid_path, measured(valid_path, sine_wave(freqs, 120.0, dt), seed=6))
    status, result, nrmse, out = identify_and_predict(tmp_path, capsys, "puma-gravity", train, valid, dt)
    assert status == 0 and result["metrics"]["success"] is True
    P = np.array(result["parameters"]["values"])
    truth = gravity_model_parameters(AKB, G)
    np.testing.assert_allclose(P[[0, 2]], truth[[0, 2]], rtol=0.01)
    assert np.all(nrmse["valid"] <= 0.03), nrmse
    prg = (out / "IDNT1.PRG").read_text()
    assert "PUMA.DynamicModel = 2" in prg and "PUMA.DynamicParameter[6] = 0.000000000e+00" in prg
