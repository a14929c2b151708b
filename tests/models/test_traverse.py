"""Traverse-arm model against MuJoCo and the spec's derived equations (spec/models.md §3).

softMC publishes only the parameter list; the spec derives geometry and equations [DERIVED]. They
are checked here against MuJoCo inverse dynamics of a robot built from physical link data
(``_mujoco_robots.TraverseLinks``: carriage, arm + housing, quill, tool, rotor inertias as joint
``armature``), mapped to p1..p7 in that helper, and against the spec's equations written out below.
"""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ConfigError
from dynid.identification import identify
from dynid.models import Plant, make_model, model_class
from dynid.recording import Recording

from ._mujoco_robots import G, MujocoInverse, TraverseLinks, drive_record, multi_sine, sine_wave

DEG = np.pi / 180.0


def random_states(model, n, seed):
    rng = np.random.default_rng(seed)
    lo, hi = model.state_bounds()
    q = rng.uniform(lo, hi, (n, 4))
    qd = rng.normal(size=(n, 4)) * np.array([1.0, 2.0, 0.3, 6.0])
    qdd = rng.normal(size=(n, 4)) * np.array([4.0, 10.0, 2.0, 30.0])
    return q, qd, qdd


def assert_matches(tau, ref, rtol=1e-8):
    dev = np.abs(tau - ref).max(axis=0) / np.abs(ref).max(axis=0)
    assert np.all(dev <= rtol), f"max relative deviation per joint {dev}"


@pytest.mark.parametrize("payload", [None, (3.0, 0.02)], ids=["bare", "payload"])
def test_equals_mujoco_inverse_dynamics(payload):
    links = TraverseLinks()
    cfg = {"L2": links.L2}
    if payload:
        cfg["payload"] = {"mass": payload[0], "inertia": payload[1]}
    model = make_model("traverse", cfg)
    q, qd, qdd = random_states(model, 300, seed=1)
    ref = MujocoInverse(links.mjcf(payload=payload)).inverse(q, qd, qdd)
    assert_matches(model.torque(links.params(), q, qd, qdd), ref)


def test_rotor_inertias_on_x_and_theta_fold_into_p1_and_p3():
    """Armature on x / theta adds only to its own diagonal, exactly like p1 / p3; on phi like p7."""
    model = make_model("traverse", {"L2": 0.6})
    q, qd, qdd = random_states(model, 50, seed=2)
    base = TraverseLinks()
    ref = MujocoInverse(base.mjcf()).inverse(q, qd, qdd)
    Y = model.regressor(q, qd, qdd)
    for field, col, joint in (("arm_x", 0, 0), ("arm_th", 2, 1), ("arm4", 6, 3)):
        bumped = TraverseLinks(**{field: getattr(base, field) + 0.3})
        delta = MujocoInverse(bumped.mjcf()).inverse(q, qd, qdd) - ref
        expected = np.zeros_like(delta)
        expected[:, joint] = 0.3 * qdd[:, joint]
        np.testing.assert_allclose(delta, expected, atol=1e-9)
        np.testing.assert_allclose(0.3 * Y[:, :, col], expected, atol=1e-12)


def test_spec_equations(rng):
    """F1, tau2, F3, tau4 exactly as printed in spec/models.md §3."""
    L2 = 0.45
    p = rng.uniform(0.1, 3.0, 7)
    model = make_model("traverse", {"L2": L2})
    q, qd, qdd = random_states(model, 100, seed=3)
    s, c = np.sin(q[:, 1]), np.cos(q[:, 1])
    thd = qd[:, 1]
    xdd, thdd, zdd, phdd = qdd.T
    expected = np.column_stack([
        (p[0] + p[3]) * xdd - (p[1] + L2 * p[3]) * (s * thdd + c * thd**2),
        -(p[1] + L2 * p[3]) * s * xdd + (p[2] + L2**2 * p[3] + p[5]) * thdd + p[5] * phdd,
        p[3] * zdd + p[4],
        p[5] * (thdd + phdd) + p[6] * phdd,
    ])
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), expected, rtol=1e-12, atol=1e-12)


def test_description():
    m = make_model("traverse", {"L2": 0.5})
    assert (m.softmc_model, m.element, m.n_params) == (1, "TRAVERSE", 7)
    assert m.joint_kinds == ("linear", "rotary", "linear", "rotary")
    assert [p.slot for p in m.parameters] == list(range(1, 8))
    assert m.param_names == ("M1+M2", "A2*M2", "A2^2*M2+I2", "M3", "g*M3", "I4", "J4")
    assert model_class("traverse").example().L2 == 0.6  # the example robot
    p = model_class("traverse").example().example_parameters()
    assert p[4] == pytest.approx(G * p[3])


@pytest.mark.parametrize("config,match", [({}, "'L2'"), ({"L2": 0}, "'L2'"), ({"L2": "x"}, "'L2'"),
                                          ({"L2": 0.5, "L1": 0.3}, "L1")])
def test_configuration_errors_name_the_key(config, match):
    with pytest.raises(ConfigError, match=match):
        make_model("traverse", config)


FV = (60.0, 3.0, 40.0, 0.08)
FC = (25.0, 5.0, 12.0, 0.2)
SI_RANGE = (np.array([-0.4, -150 * DEG, 0.0, -300 * DEG]), np.array([0.4, 150 * DEG, 0.2, 300 * DEG]))
FREQS = tuple(0.3 * f for f in (1.0, 1.27, 1.43, 1.13))


def test_exact_data_recovers_the_parameters():
    """Exact MuJoCo torques and derivatives at 1 kHz: p to 1e-6 relative."""
    links = TraverseLinks()
    t = np.arange(0.0, 20.0, 1e-3)
    q, qd, qdd = sine_wave(*SI_RANGE, FREQS, t + 2.0)
    tau = MujocoInverse(links.mjcf()).inverse(q, qd, qdd) + np.array(FV) * qd + np.array(FC) * np.sign(qd)
    res = identify(Recording(t, q, tau, qd, qdd), Plant(make_model("traverse", {"L2": links.L2})))
    np.testing.assert_allclose(res.model_values, links.params(), rtol=1e-6)
    assert res.success


def test_noisy_recording_predicts_a_new_motion():
    """0.5 % torque noise, quantised encoders: validation NRMSE <= 3 % per joint on another motion."""
    from dynid.fitted import predict

    links = TraverseLinks()
    engine = MujocoInverse(links.mjcf())
    kinds = ("linear", "rotary", "linear", "rotary")
    t = np.arange(0.0, 20.0, 1e-3)
    rec = drive_record(engine, *sine_wave(*SI_RANGE, FREQS, t + 2.0), t, viscous=FV, coulomb=FC, kinds=kinds,
                       seed=4)
    res = identify(Recording(rec.t, rec.q, rec.tau), Plant(make_model("traverse", {"L2": links.L2})))
    assert res.success
    np.testing.assert_allclose(res.model_values, links.params(), rtol=0.02)
    tv = np.arange(0.0, 15.0, 1e-3)
    motion = multi_sine([0.05, 20 * DEG, 0.1, 0.0], [[0.2, 0.1], [100 * DEG, 40 * DEG], [0.05, 0.03], [150 * DEG, 80 * DEG]],
                        [[0.27, 0.59], [0.33, 0.71], [0.41, 0.67], [0.23, 0.53]], [[0, 1], [1, 2], [2, 0.5], [0.3, 1.1]], tv)
    val = drive_record(engine, *motion, tv, viscous=FV, coulomb=FC, kinds=kinds, noise=0.0, seed=5)
    identified = res.model
    pred = predict(identified, Recording(val.t, val.q, val.tau_true))
    truth = val.tau_true[pred.rows]
    nrmse = np.sqrt(np.mean((pred.tau - truth) ** 2, axis=0)) / np.sqrt(np.mean(truth**2, axis=0))
    assert np.all(nrmse <= 0.03), nrmse
