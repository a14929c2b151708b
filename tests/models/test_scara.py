"""SCARA models (scara4, scara3) against MuJoCo, the catalogue equations, and an identification run.

References (style.md §11): MuJoCo inverse dynamics of robots built from physical link data
(``_mujoco_robots.py``: masses, COMs, full inertia tensors, rotor inertias as joint ``armature``,
the ball-screw spline as a tendon transmission), mapped to p with spec/models.md §4 written in
that helper; and the spec's printed M11/M12/M22/h equations written out below. Nothing is compared
with earlier output of dynid.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from dynid.errors import ConfigError
from dynid.identification import ParameterStatus, identify
from dynid.models import Plant, make_model, model_class
from dynid.models.scara import (IDENT_FILTER_HZ, IDENT_FREQS_HZ, IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_START,
                                IDENT_TARGET)
from dynid.recording import Recording

from ._mujoco_robots import G, MujocoInverse, ScaraLinks, drive_record, multi_sine, sine_wave

LEAD_20MM = 0.020 / (2 * np.pi)  # [m/rad] a 20 mm/rev ball-screw spline
DEG = np.pi / 180.0
SOFTMC_TO_SI = np.array([DEG, DEG, 1e-3, DEG])  # deg, deg, mm, deg -> rad, rad, m, rad
KINDS = ("rotary", "rotary", "linear", "rotary")


def random_states(model, n, seed):
    rng = np.random.default_rng(seed)
    lo, hi = model.state_bounds()
    q = rng.uniform(lo, hi, (n, model.n_joints))
    qd = rng.normal(size=(n, model.n_joints)) * np.array([2.0, 3.0, 0.3, 8.0])[: model.n_joints]
    qdd = rng.normal(size=(n, model.n_joints)) * np.array([8.0, 12.0, 2.0, 30.0])[: model.n_joints]
    return q, qd, qdd


def assert_matches(tau, ref, rtol=1e-8):
    """Per joint: max |tau - ref| <= rtol * max |ref| (relative to the joint's torque scale)."""
    scale = np.abs(ref).max(axis=0)
    dev = np.abs(tau - ref).max(axis=0) / scale
    assert np.all(dev <= rtol), f"max relative deviation per joint {dev}"


# ---------------------------------------------------------------------------- against MuJoCo

@pytest.mark.parametrize("lead", [0.0, LEAD_20MM, -0.5 * LEAD_20MM], ids=["uncoupled", "lead+20mm", "lead-10mm"])
def test_scara4_equals_mujoco_inverse_dynamics(lead):
    links = ScaraLinks(lead=lead)
    engine = MujocoInverse(links.mjcf())
    model = make_model("scara4", {"L1": links.L1, "L2": links.L2, "screw_lead": lead})
    q, qd, qdd = random_states(model, 300, seed=1)
    assert_matches(model.torque(links.params(), q, qd, qdd), engine.inverse(q, qd, qdd))


@pytest.mark.parametrize("lead", [0.0, LEAD_20MM], ids=["uncoupled", "coupled"])
def test_scara4_payload_equals_mujoco(lead):
    """A payload body (mass, inertia about the tool axis) below the flange = the configured payload."""
    links = ScaraLinks(lead=lead)
    mp, ip = 2.5, 0.012
    engine = MujocoInverse(links.mjcf(payload=(mp, ip)))
    model = make_model("scara4", {"L1": links.L1, "L2": links.L2, "screw_lead": lead,
                                  "payload": {"mass": mp, "inertia": ip}})
    q, qd, qdd = random_states(model, 200, seed=2)
    assert_matches(model.torque(links.params(), q, qd, qdd), engine.inverse(q, qd, qdd))


def test_scara3_equals_mujoco_inverse_dynamics():
    """3 axes: the flange turns with link 2, so I4 multiplies q1dd + q2dd; J4 (slot 8) is 0."""
    links = ScaraLinks()
    engine = MujocoInverse(links.mjcf(n_axes=3))
    p = links.params()
    p[7] = 0.0
    for payload in (None, (1.5, 0.01)):
        cfg = {"L1": links.L1, "L2": links.L2}
        if payload:
            cfg["payload"] = {"mass": payload[0], "inertia": payload[1]}
            engine = MujocoInverse(links.mjcf(payload=payload, n_axes=3))
        model = make_model("scara3", cfg)
        q, qd, qdd = random_states(model, 200, seed=3)
        assert_matches(model.torque(p, q, qd, qdd), engine.inverse(q, qd, qdd))


def test_j2_j4_are_the_engines_armature_on_their_own_diagonal_only():
    """MuJoCo armature on q2/q4 adds J*qdd to that joint only, and so do p3 (J2) and p8 (J4).

    Motor 1's armature is part of p1 (motor 1 sits on the base: q1 is its only motion)."""
    model = make_model("scara4", {"L1": 0.325, "L2": 0.275, "screw_lead": LEAD_20MM})
    q, qd, qdd = random_states(model, 50, seed=4)
    base = ScaraLinks(lead=LEAD_20MM)
    ref = MujocoInverse(base.mjcf()).inverse(q, qd, qdd)
    Y = model.regressor(q, qd, qdd)
    for field, col, joint in (("arm2", 2, 1), ("arm4", 7, 3), ("arm1", 0, 0)):
        bumped = ScaraLinks(lead=LEAD_20MM, **{field: getattr(base, field) + 0.05})
        delta = MujocoInverse(bumped.mjcf()).inverse(q, qd, qdd) - ref
        expected = np.zeros_like(delta)
        expected[:, joint] = 0.05 * qdd[:, joint]
        np.testing.assert_allclose(delta, expected, atol=1e-10)
        np.testing.assert_allclose(0.05 * Y[:, :, col], expected, atol=1e-12)


def test_uncoupled_model_misses_the_screw_coupling():
    """softMC's note "coupled joints may have large errors": ignoring a 20 mm lead drops exactly the
    shaft's extra acceleration l*q4dd on axis 3 and the screw reaction l*F3 on axis 4."""
    links = ScaraLinks(lead=LEAD_20MM)
    model = make_model("scara4", {"L1": links.L1, "L2": links.L2})
    q, qd, qdd = random_states(model, 200, seed=5)
    ref = MujocoInverse(links.mjcf()).inverse(q, qd, qdd)
    diff = model.torque(links.params(), q, qd, qdd) - ref
    m3 = links.ms + links.mt
    scale = np.abs(ref).max(axis=0)
    np.testing.assert_allclose(diff[:, :2] / scale[:2], 0.0, atol=1e-12)
    np.testing.assert_allclose(diff[:, 2], -m3 * LEAD_20MM * qdd[:, 3], atol=1e-8 * scale[2])
    np.testing.assert_allclose(diff[:, 3], -LEAD_20MM * ref[:, 2], atol=1e-8 * scale[3])
    assert np.abs(diff[:, 3]).max() > 0.05 * scale[3]  # not a small effect on the tool axis


# ---------------------------------------------------------------------------- catalogue equations

def test_catalogue_equations_with_coupling(rng):
    """spec/models.md §4 as printed (M11, M12, M22, h), plus z = q3 + l*q4 and tau4 += l*F3."""
    L1, L2, lead = 0.4, 0.25, 0.004
    p = rng.uniform(0.1, 2.0, 8)
    model = make_model("scara4", {"L1": L1, "L2": L2, "screw_lead": lead})
    q, qd, qdd = random_states(model, 100, seed=6)
    c2, s2 = np.cos(q[:, 1]), np.sin(q[:, 1])
    h = p[3] + L1 * L2 * p[4]
    M11 = p[0] + p[1] + 2 * p[3] * c2 + p[4] * (L1**2 + L2**2 + 2 * L1 * L2 * c2) + p[6]
    M12 = p[1] + p[3] * c2 + p[4] * (L2**2 + L1 * L2 * c2) + p[6]
    M22 = p[1] + p[2] + p[4] * L2**2 + p[6]
    a1, a2, a3, a4 = qdd.T
    v1, v2 = qd[:, 0], qd[:, 1]
    F3 = p[4] * (a3 + lead * a4) + p[5]
    expected = np.column_stack([
        M11 * a1 + M12 * a2 + p[6] * a4 - h * s2 * (2 * v1 * v2 + v2**2),
        M12 * a1 + M22 * a2 + p[6] * a4 + h * s2 * v1**2,
        F3,
        p[6] * (a1 + a2) + (p[6] + p[7]) * a4 + lead * F3,
    ])
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), expected, rtol=1e-12, atol=1e-12)


def test_payload_offset_follows_the_catalogue_rule(rng):
    """M_p adds to p5 in inertial terms, g*M_p to p6, I_p to p7 (spec/models.md §4)."""
    mp, ip = 3.0, 0.02
    cfg = {"L1": 0.3, "L2": 0.3, "screw_lead": 0.002}
    loaded = make_model("scara4", {**cfg, "payload": {"mass": mp, "inertia": ip}})
    bare = make_model("scara4", cfg)
    p = rng.uniform(0.1, 2.0, 8)
    q, qd, qdd = random_states(bare, 50, seed=7)
    shifted = p + np.array([0, 0, 0, 0, mp, G * mp, ip, 0])
    np.testing.assert_allclose(loaded.torque(p, q, qd, qdd), bare.torque(shifted, q, qd, qdd), rtol=1e-12, atol=1e-12)
    assert not np.any(loaded.regressor(q, qd, qdd) - bare.regressor(q, qd, qdd))


# ---------------------------------------------------------------------------- description and configuration

def test_catalogue_numbering_and_description():
    for name, n in (("scara4", 4), ("scara3", 3)):
        m = make_model(name, {"L1": 0.3, "L2": 0.25})
        assert m.softmc_model == 1 and m.element == "SCARA" and m.n_joints == n
        assert [p.slot for p in m.parameters] == list(range(1, 9))
        assert m.param_names == ("L1^2*M2+I1", "A2^2*M2+I2", "J2", "L1*A2*M2", "M3", "g*M3", "I4", "J4")
        assert m.joint_kinds == KINDS[:n]
    assert [p.role for p in make_model("scara3", {"L1": 0.3, "L2": 0.2}).parameters][7] == "constant"
    assert set(model_class("scara4").example().describe()["model_config_keys"]) == {"L1", "L2", "screw_lead"}


@pytest.mark.parametrize("name,config,match", [
    ("scara4", {}, "'L1'"),
    ("scara4", {"L1": 0.3}, "'L2'"),
    ("scara3", {"L2": 0.3}, "'L1'"),
    ("scara4", {"L1": -0.3, "L2": 0.3}, "'L1'"),
    ("scara4", {"L1": 0.3, "L2": "0.3"}, "'L2'"),
    ("scara4", {"L1": 0.3, "L2": float("nan")}, "'L2'"),
    ("scara4", {"L1": 0.3, "L2": 0.3, "screw_lead": "20mm"}, "screw_lead"),
    ("scara4", {"L1": 0.3, "L2": 0.3, "screw_lead": True}, "screw_lead"),
    ("scara3", {"L1": 0.3, "L2": 0.3, "screw_lead": 0.003}, "screw_lead"),
    ("scara4", {"L1": 0.3, "L2": 0.3, "L3": 0.1}, "L3"),
])
def test_configuration_errors_name_the_key(name, config, match):
    with pytest.raises(ConfigError, match=match):
        make_model(name, config)


def test_example_robot():
    m = model_class("scara4").example()
    assert (m.L1, m.L2, m.screw_lead) == (0.325, 0.275, 0.0)
    assert m.with_payload(mass=1.0).L1 == 0.325
    p = np.asarray(m.example_parameters())
    assert p[5] == pytest.approx(G * p[4]) and np.all(p > 0)


def test_identification_program_constants():
    """identification.md §1: SCARA {-160,-160,0,-350} -> {160,160,150,350}, 0.3*{1,1.27,1.43,1.13} Hz."""
    assert IDENT_START == (-160.0, -160.0, 0.0, -350.0)
    assert IDENT_TARGET == (160.0, 160.0, 150.0, 350.0)
    np.testing.assert_allclose(IDENT_FREQS_HZ, [0.3, 0.381, 0.429, 0.339], rtol=1e-12)
    assert (IDENT_RECORD_S, IDENT_SETTLE_S, IDENT_FILTER_HZ) == (20.0, 2.0, 80.0)
    assert len(set(IDENT_FREQS_HZ)) == 4 and min(IDENT_FREQS_HZ) * IDENT_RECORD_S >= 3  # >= 3 cycles each


# ---------------------------------------------------------------------------- identification

def _program_motion(n_axes=4, dt=1e-3):
    """The source's SCARA program in SI: start/target converted from deg/mm, after the settle time."""
    t = np.arange(0.0, IDENT_RECORD_S, dt)
    start = np.array(IDENT_START[:n_axes]) * SOFTMC_TO_SI[:n_axes]
    target = np.array(IDENT_TARGET[:n_axes]) * SOFTMC_TO_SI[:n_axes]
    return (t, *sine_wave(start, target, IDENT_FREQS_HZ[:n_axes], t + IDENT_SETTLE_S))


@pytest.mark.parametrize("name,lead", [("scara4", 0.0), ("scara4", LEAD_20MM), ("scara3", 0.0)])
def test_exact_data_recovers_the_parameters(name, lead):
    """MuJoCo torques of the program motion with exact derivatives: p (base) to 1e-6 relative.

    scara3: I4 cannot be told from I2 (both turn with link 2): p2 carries p2 + p7, p7 is held at 0
    (not identifiable) and J4 is a constant at 0."""
    n = 4 if name == "scara4" else 3
    links = ScaraLinks(lead=lead)
    t, q, qd, qdd = _program_motion(n, dt=2e-3)
    tau = MujocoInverse(links.mjcf(n_axes=n)).inverse(q, qd, qdd)
    fv, fc = np.array([1.5, 0.8, 40.0, 0.05])[:n], np.array([4.0, 2.0, 10.0, 0.15])[:n]
    tau = tau + fv * qd + fc * np.sign(qd)
    plant = Plant(make_model(name, {"L1": links.L1, "L2": links.L2, **({"screw_lead": lead} if lead else {})}))
    res = identify(Recording(t, q, tau, qd, qdd), plant)
    p_true = links.params()
    if name == "scara3":
        p_true[1] += p_true[6]
        p_true[6] = p_true[7] = 0.0
        assert res.status[6] == ParameterStatus.NOT_IDENTIFIABLE and res.status[7] == ParameterStatus.CONSTANT
    np.testing.assert_allclose(res.model_values, p_true, rtol=1e-6)
    np.testing.assert_allclose(res.friction_values, np.column_stack([fv, fc]).ravel(), rtol=1e-6)
    assert res.success


# Friction of the simulated robot (physical sign: motor torque = rigid body + Fv qd + Fc sign(qd))
FV = (1.5, 0.8, 40.0, 0.05)     # [N m s/rad, N m s/rad, N s/m, N m s/rad]
FC = (4.0, 2.0, 10.0, 0.15)     # [N m, N m, N, N m]


def _validation_motion(t):
    """A multi-sine motion unlike the program (other frequencies, ranges and phases), SI."""
    centre = [10 * DEG, -20 * DEG, 0.07, 30 * DEG]
    amps = [[100 * DEG, 40 * DEG], [90 * DEG, 45 * DEG], [0.04, 0.025], [200 * DEG, 90 * DEG]]
    freqs = [[0.23, 0.61], [0.31, 0.53], [0.37, 0.71], [0.27, 0.49]]
    phases = [[0.0, 1.0], [0.5, 2.0], [1.0, 0.3], [2.0, 1.5]]
    return multi_sine(centre, amps, freqs, phases, t)


def _write_softmc_csv(path, data):
    from dynid.io.readers import write_recording_csv

    write_recording_csv(path, Recording(data.t, data.q / SOFTMC_TO_SI, data.tau),
                        meta={"units": "softmc", "position_units": "deg, deg, mm, deg"})


def _cli(argv):
    from dynid.cli.main import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    return code, json.loads(buf.getvalue())


def _identify_and_validate(tmp_path, links, config):
    """MuJoCo recording of the program (noise, quantisation) -> dynid identify -> predict a new motion.

    Returns (identify JSON, per-joint NRMSE = RMSE / RMS(true torque) on the validation motion)."""
    engine = MujocoInverse(links.mjcf())
    t, q, qd, qdd = _program_motion()
    rec = drive_record(engine, q, qd, qdd, t, viscous=FV, coulomb=FC, kinds=KINDS, noise=0.005, seed=11)
    _write_softmc_csv(tmp_path / "program.csv", rec)
    tv = np.arange(0.0, 15.0, 1e-3)
    val = drive_record(engine, *_validation_motion(tv), tv, viscous=FV, coulomb=FC, kinds=KINDS, noise=0.0, seed=12)
    _write_softmc_csv(tmp_path / "validation.csv", val)
    (tmp_path / "scara.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    code, result = _cli(["identify", str(tmp_path / "program.csv"), "--model", "scara4", "--config",
                         str(tmp_path / "scara.json"), "--units", "softmc", "--out", str(out), "--json", "--quiet"])
    assert code == (0 if result["metrics"]["success"] else 1)
    pred_csv = tmp_path / "pred.csv"
    code, _ = _cli(["predict", str(out / "result.json"), str(tmp_path / "validation.csv"), "--units", "softmc",
                    "--out", str(pred_csv), "--json"])
    assert code == 0
    pred = np.loadtxt(pred_csv, delimiter=",", skiprows=1)
    rows = np.rint(pred[:, 0] / 1e-3).astype(int)
    np.testing.assert_allclose(val.t[rows], pred[:, 0], atol=1e-9)
    truth = val.tau_true[rows]
    nrmse = np.sqrt(np.mean((pred[:, 1:] - truth) ** 2, axis=0)) / np.sqrt(np.mean(truth**2, axis=0))
    return result, nrmse


def test_identify_program_recording_and_predict_new_motion(tmp_path):
    """Acceptance-style run: 4-axis SCARA in MuJoCo (rotor inertia on axes 1, 2, 4), the source's
    program in deg/mm, 0.5 % torque noise, 20-bit encoders / 1 µm: success and NRMSE <= 3 % per joint."""
    links = ScaraLinks()
    result, nrmse = _identify_and_validate(tmp_path, links, {"L1": links.L1, "L2": links.L2})
    assert result["metrics"]["success"] is True
    assert np.all(nrmse <= 0.03), f"validation NRMSE per joint {nrmse}"
    p = np.array(result["parameters"]["values"])
    np.testing.assert_allclose(p, links.params(), rtol=0.01)
    np.testing.assert_allclose(result["friction"]["viscous"], FV, rtol=0.01)
    np.testing.assert_allclose(result["friction"]["coulomb"], FC, rtol=0.01)


def test_coupled_robot_needs_screw_lead(tmp_path):
    """Ball-screw spline robot (20 mm lead): with screw_lead the same bar holds; without it (softMC's
    model) axis 4 misses l*(M3 z'' + g M3) and fails the 3 % bar on the validation motion."""
    links = ScaraLinks(lead=LEAD_20MM)
    result, nrmse = _identify_and_validate(tmp_path / "coupled", links,
                                           {"L1": links.L1, "L2": links.L2, "screw_lead": LEAD_20MM})
    assert result["metrics"]["success"] is True and np.all(nrmse <= 0.03), nrmse
    np.testing.assert_allclose(result["parameters"]["values"], links.params(), rtol=0.01)
    # softMC's model with softMC's friction (an 'auto' offset would carry the constant part l*g*M3)
    _, nrmse_softmc = _identify_and_validate(tmp_path / "softmc", links, {"L1": links.L1, "L2": links.L2,
                                                                         "friction": "viscous+coulomb"})
    assert nrmse_softmc[3] > 0.05, nrmse_softmc
