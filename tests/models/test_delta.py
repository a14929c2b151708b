"""Delta robots (``delta3``, ``delta4``) against independent computations.

References: a MuJoCo model of the real closed chain (parallelogram rod pairs on ball joints, a free
plate, loops closed by ``connect`` constraints; tests/models/_delta_reference.py) for the torques,
a numerical root finder for the kinematics, finite differences for the rates, and the spec's
rank-deficient combination (spec/models.md §5) for the base parameters.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.identification.base_params import structural_base
from dynid.errors import ConfigError, InputDataError, ShapeError
from dynid.models import Plant, make_model, model_class
from dynid.models.delta import (DeltaGeometry, cartesian_to_joint, forward_kinematics, inverse_kinematics,
                                joint_to_cartesian)

from ._delta_reference import DeltaReference, DeltaRobot, ik_reference, random_states

G = 9.80665
GEO = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}


# ------------------------------------------------------------------------------- kinematics

def test_inverse_kinematics_matches_a_numerical_root_finder(rng):
    """IK (closed form) == Brent's method on |C − B(q)| = L_BC, elbow-out root; FK inverts it."""
    model = make_model("delta3", GEO)
    p, q = model.sample_positions(rng, 40)
    q_ref = np.array([ik_reference(DeltaRobot(), pk) for pk in p])
    np.testing.assert_allclose(q, q_ref, atol=1e-12)
    np.testing.assert_allclose(forward_kinematics(model.geometry, q), p, atol=1e-13)
    np.testing.assert_allclose(inverse_kinematics(model.geometry, p), q, atol=1e-13)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-0.4, 1.0), min_size=3, max_size=3))
def test_forward_then_inverse_kinematics_is_the_identity(q):
    """For any angles in [−0.4, 1.0] rad (all assemble for this geometry) IK(FK(q)) = q, and the
    rods have their length."""
    geo = DeltaGeometry(**GEO)
    q = np.array([q])
    p = forward_kinematics(geo, q)
    np.testing.assert_allclose(inverse_kinematics(geo, p), q, atol=1e-12)
    for i, phi in enumerate(np.radians([0.0, 120.0, 240.0])):
        u = np.array([np.cos(phi), np.sin(phi), 0.0])
        B = 0.2 * u + 0.35 * (np.cos(q[0, i]) * u - np.sin(q[0, i]) * np.array([0, 0, 1.0]))
        assert np.linalg.norm(p[0] + 0.05 * u - B) == pytest.approx(0.8, abs=1e-13)


def test_home_position_is_symmetric():
    geo = DeltaGeometry(**GEO)
    q = inverse_kinematics(geo, [[0.0, 0.0, -0.7]])
    np.testing.assert_allclose(q, np.full((1, 3), q[0, 0]), atol=1e-14)
    # rod length from the elbow to the plate joint, written out for arm 1 (azimuth 0)
    B = np.array([0.2 + 0.35 * np.cos(q[0, 0]), 0.0, -0.35 * np.sin(q[0, 0])])
    C = np.array([0.05, 0.0, -0.7])
    assert np.linalg.norm(C - B) == pytest.approx(0.8, abs=1e-14)


def test_rates_match_finite_differences_of_the_position_maps(rng):
    """ṗ, p̈ from joint_to_cartesian == central differences of forward kinematics along a smooth path;
    cartesian_to_joint inverts joint_to_cartesian."""
    geo = DeltaGeometry(**GEO)
    t = np.linspace(0.0, 1.0, 11)
    h = 1e-4

    def q_of(tt):  # q(t) = q0 + a sin(w t + c), exact derivatives below
        return 0.3 + 0.25 * np.sin(np.outer(tt, [2.0, 3.0, 5.0]) + [0.1, 0.7, 1.3])

    qd = 0.25 * np.array([2.0, 3.0, 5.0]) * np.cos(np.outer(t, [2.0, 3.0, 5.0]) + [0.1, 0.7, 1.3])
    qdd = -0.25 * np.array([4.0, 9.0, 25.0]) * np.sin(np.outer(t, [2.0, 3.0, 5.0]) + [0.1, 0.7, 1.3])
    p, pd, pdd = joint_to_cartesian(geo, q_of(t), qd, qdd)
    fk = lambda tt: forward_kinematics(geo, q_of(tt))  # noqa: E731
    np.testing.assert_allclose(pd, (fk(t + h) - fk(t - h)) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(pdd, (fk(t + h) - 2 * fk(t) + fk(t - h)) / h**2, atol=2e-5)
    q2, qd2, qdd2 = cartesian_to_joint(geo, p, pd, pdd)
    np.testing.assert_allclose(q2, q_of(t), atol=1e-13)
    np.testing.assert_allclose(qd2, qd, atol=1e-12)
    np.testing.assert_allclose(qdd2, qdd, atol=1e-10)


def test_cartesian_move_550_mm_at_3_m_s():
    """The runtime scenario's move converts to joint space; the conversion is exact at every sample."""
    geo = DeltaGeometry(**GEO)
    T = 0.55 / 3.0 * 15 / 8  # quintic profile with a 3 m/s peak over 550 mm
    t = np.linspace(0.0, T, 201)
    s = t / T
    path = np.array([[-0.275, 0.0, -0.75]]) + np.outer(10 * s**3 - 15 * s**4 + 6 * s**5, [0.55, 0.0, 0.0])
    v = np.outer((30 * s**2 - 60 * s**3 + 30 * s**4) / T, [0.55, 0, 0])
    a = np.outer((60 * s - 180 * s**2 + 120 * s**3) / T**2, [0.55, 0, 0])
    assert np.abs(v[:, 0]).max() == pytest.approx(3.0)
    q, qd, qdd = cartesian_to_joint(geo, path, v, a)
    p2, v2, a2 = joint_to_cartesian(geo, q, qd, qdd)
    np.testing.assert_allclose(p2, path, atol=1e-13)
    np.testing.assert_allclose(v2, v, atol=1e-11)
    np.testing.assert_allclose(a2, a, atol=1e-8)


def test_out_of_reach_is_an_error():
    geo = DeltaGeometry(**GEO)
    with pytest.raises(InputDataError, match=r"p\[1\].*out of reach"):
        inverse_kinematics(geo, [[0, 0, -0.7], [0, 0, -3.0]])
    short = {**GEO, "forearm": 0.4}  # arms horizontal: elbows 0.5 m out, rods of 0.4 m cannot meet
    with pytest.raises(InputDataError, match="sample 1.*do not assemble"):
        forward_kinematics(DeltaGeometry(**short), [[0.9, 0.9, 0.9], [0.0, 0.0, 0.0]])
    with pytest.raises(InputDataError, match="sample 0"):
        make_model("delta3", short).regressor(np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3)))
    with pytest.raises(ShapeError, match=r"shape \(n_samples, 3\)"):
        inverse_kinematics(geo, [0.0, 0.0, -0.7])


# ------------------------------------------------------------------------------- configuration

@pytest.mark.parametrize("config, match", [
    ({}, "needs the geometry key.*base_radius, platform_radius, upper_arm, forearm"),
    ({**GEO, "forearm": None}, "needs the geometry key.*forearm"),
    ({**GEO, "upper_arm": -0.3}, "upper_arm must be positive"),
    ({**GEO, "forearm_model": "stiff"}, "'rigid' or 'lumped'"),
    ({**GEO, "elbow_mass_fraction": 0.5}, "only applies to forearm_model 'lumped'"),
    ({**GEO, "forearm_model": "lumped", "elbow_mass_fraction": 1.5}, r"in \[0, 1\]"),
    ({**GEO, "forearm": 0.05}, "cannot assemble"),
    ({**GEO, "forarm": 0.8}, "unknown configuration key 'forarm'"),
])
def test_configuration_errors(config, match):
    with pytest.raises(ConfigError, match=match):
        make_model("delta3", config)


def test_example_robot():
    m = model_class("delta4").example()
    assert m.geometry == DeltaGeometry(**GEO)
    assert m.config.parameters["L_TO"] == m.example_parameters()[8]
    assert m.with_payload(mass=1.0).geometry == m.geometry  # variants keep the geometry


def test_parameter_list_numbered_as_the_catalogue():
    for name, four in (("delta3", False), ("delta4", True)):
        m = make_model(name, GEO)
        assert m.param_names == ("Theta_AB", "g*L_AB*M_AB", "M_BC", "Theta_BC", "M_P", "M_T", "Theta_T",
                                 "Theta_Tphi", "L_TO", "L_TP", "D", "C_r", "Fr_max", "R_ext")
        assert [p.slot for p in m.parameters] == list(range(1, 15))
        roles = [p.role for p in m.parameters]
        assert roles[:5] == ["dynamic"] * 5 and roles[10:] == ["constant"] * 4
        assert roles[5:8] == (["dynamic"] * 3 if four else ["constant"] * 3)
        assert roles[8:10] == ["constant"] * 2
        assert all("undocumented" in p.description for p in m.parameters[10:])
        assert "undocumented" in m.notes and m.element == "DELTA" and m.softmc_model == 1
        assert [j.kind for j in m.joints] == ["rotary"] * (4 if four else 3)


# ------------------------------------------------------------------------------- dynamics vs MuJoCo

@pytest.fixture(scope="module", params=[("delta3", 0.0), ("delta3", 0.7), ("delta4", 0.0), ("delta4", 0.7)],
                ids=["delta3", "delta3-payload", "delta4", "delta4-payload"])
def closed_chain(request):
    """(model, robot, p, q, qd, qdd, reference torques) on 25 random states of the closed chain."""
    pytest.importorskip("mujoco")
    name, payload = request.param
    four = name == "delta4"
    rb = DeltaRobot(four_axis=four, payload_mass=payload, payload_inertia=0.004 if payload else 0.0,
                    rod_inertia=0.7 * 0.16 * 0.8**2 / 12)  # not a uniform rod: Θ ≠ m L²/12
    ref = DeltaReference(rb)
    q, qd, qdd = random_states(rb, np.random.default_rng(7), 25)
    out = [ref.torque(q[k], qd[k], qdd[k]) for k in range(len(q))]
    infos = [o[1] for o in out]
    # the reference is a consistent closed chain: loops closed, forces balanced, plate not rotating
    assert max(i["efc_pos"] for i in infos) < 1e-13
    assert max(i["residual"] for i in infos) < 1e-11
    assert max(i["plate_omega"] for i in infos) < 1e-11
    tau = np.array([o[0] for o in out])
    return make_model(name, rb.config()), rb, rb.parameters(), q, qd, qdd, tau


def _rel(a, b):
    """Max over samples of max_j |a − b| / max_j |b|."""
    return float((np.abs(a - b).max(axis=1) / np.abs(b).max(axis=1)).max())


def test_rigid_model_equals_the_closed_chain_to_1e_8(closed_chain):
    model, rb, p, q, qd, qdd, tau = closed_chain
    assert _rel(model.torque(p, q, qd, qdd), tau) < 1e-8


def test_every_parameter_matters_at_that_precision(closed_chain):
    """The 1e-8 agreement is meaningful: a 1e-4 change of any non-zero dynamic parameter (or of the
    payload) moves the torque by far more than 1e-8."""
    model, rb, p, q, qd, qdd, tau = closed_chain
    for k, par in enumerate(model.parameters):
        if par.role != "dynamic" or p[k] == 0:
            continue
        dp = p.copy()
        dp[k] *= 1 + 1e-4
        assert _rel(model.torque(dp, q, qd, qdd), tau) > 1e-7, par.name
    if rb.payload_mass:
        light = model.with_payload(mass=rb.payload_mass * (1 - 1e-4))
        assert _rel(light.torque(p, q, qd, qdd), tau) > 1e-7


def test_lumped_forearms_are_a_few_percent_off_the_rigid_robot(closed_chain):
    """Codourey's 2/3 elbow split with the same physical values is off by a few % (norm over states)."""
    model, rb, p, q, qd, qdd, tau = closed_chain
    lumped = make_model(model.name, {**rb.config(), "forearm_model": "lumped"})
    err = np.linalg.norm(lumped.torque(p, q, qd, qdd) - tau) / np.linalg.norm(tau)
    assert 0.01 < err < 0.08


def test_half_split_with_reduced_inertia_is_the_rigid_rod(rng):
    """A rod of mass m and inertia Θ has the kinetic energy of m/2 at each end plus (Θ − m L²/4)|u̇|²/2:
    the lumped model with r = 1/2 and p4 = Θ − m L_BC²/4 equals the rigid model exactly."""
    rigid = make_model("delta3", GEO)
    half = make_model("delta3", {**GEO, "forearm_model": "lumped", "elbow_mass_fraction": 0.5})
    q, qd, qdd = rigid.sample_states(rng, 30)
    p = np.array(rigid.example_parameters())
    ph = p.copy()
    ph[3] = p[3] - p[2] * 0.8**2 / 4
    np.testing.assert_allclose(half.torque(ph, q, qd, qdd), rigid.torque(p, q, qd, qdd), rtol=1e-11, atol=1e-11)


def test_payload_rides_on_the_plate(rng):
    """Payload mass m == plate mass + m; delta4 payload inertia == Theta_Tphi + I."""
    for name in ("delta3", "delta4"):
        m0 = model_class(name).example()
        m1 = m0.with_payload(mass=0.9, inertia=0.02)
        q, qd, qdd = m0.sample_states(rng, 20)
        p = np.array(m0.example_parameters())
        p2 = p.copy()
        p2[4] += 0.9
        if name == "delta4":
            p2[7] += 0.02
        np.testing.assert_allclose(m1.torque(p, q, qd, qdd), m0.torque(p2, q, qd, qdd), rtol=1e-12, atol=1e-12)


def test_constants_do_not_enter_the_torque(rng):
    m = model_class("delta4").example()
    q, qd, qdd = m.sample_states(rng, 10)
    Y = m.regressor(q, qd, qdd)
    assert not np.any(Y[:, :, 8:])
    Y3 = model_class("delta3").example().regressor(q[:, :3], qd[:, :3], qdd[:, :3])
    assert not np.any(Y3[:, :, 5:])


# ------------------------------------------------------------------------------- base parameters

@pytest.mark.parametrize("name", ["delta3", "delta4"])
def test_rigid_forearms_have_structural_rank_4_among_p1_to_p5(name):
    """The generic base-parameter analysis finds spec/models.md §5's combination
    (−L_AB²/2, −g·L_AB/2, 1, L_BC²/4, −3/2). The model holds the forearm inertia Theta_BC (its
    ``prefer_dependent``), so Theta_BC is dependent with K_k = −v_k / v_Theta_BC."""
    model = model_class(name).example()
    plant = Plant(model)
    base = structural_base(plant)
    names = plant.param_names
    dep = [names[j] for j in base.dependent]
    assert "Theta_BC" in dep and not {"Theta_AB", "g*L_AB*M_AB", "M_BC", "M_P"} & set(dep)
    col = list(base.dependent).index(names.index("Theta_BC"))
    K = dict(zip([names[i] for i in base.independent], base.K[:, col]))
    L, Lf = 0.35, 0.8
    expected = {"Theta_AB": 2 * L**2 / Lf**2, "g*L_AB*M_AB": 2 * G * L / Lf**2, "M_BC": -4 / Lf**2, "M_P": 6 / Lf**2}
    for key, v in expected.items():
        assert K[key] == pytest.approx(v, rel=1e-9), key
    assert all(abs(K[k]) < 1e-9 for k in K if k not in expected)
    # and directly: the null vector changes no torque
    q, qd, qdd = model.sample_states(np.random.default_rng(3), 50)
    null = np.zeros(model.n_params)
    null[:5] = [-L**2 / 2, -G * L / 2, 1.0, Lf**2 / 4, -1.5]
    Y = model.regressor(q, qd, qdd)
    assert np.abs(Y @ null).max() < 1e-12 * np.abs(Y[:, :, :5]).max()
    if name == "delta4":  # the telescope mass rides with the plate: same column as M_P
        assert "M_T" in dep and "Theta_T" not in dep and "Theta_Tphi" not in dep
    n_dyn = sum(1 for i in base.independent if plant.param_roles[i] == "dynamic")
    assert n_dyn == (6 if name == "delta4" else 4)


def test_lumped_model_has_the_same_rank_and_span():
    """With Codourey's split M_BC's column is a combination of the arm and plate columns; both forearm
    models span the same torques, so identification fits either equally well."""
    rigid = make_model("delta3", GEO)
    lumped = make_model("delta3", {**GEO, "forearm_model": "lumped"})
    q, qd, qdd = rigid.sample_states(np.random.default_rng(4), 200)
    Wr = rigid.regressor(q, qd, qdd)[:, :, :5].reshape(-1, 5)
    Wl = lumped.regressor(q, qd, qdd)[:, :, :5].reshape(-1, 5)
    assert np.linalg.matrix_rank(Wr) == np.linalg.matrix_rank(Wl) == 4
    assert np.linalg.matrix_rank(np.hstack([Wr, Wl])) == 4


def test_sample_states_are_valid_workspace_configurations(rng):
    for name in ("delta3", "delta4"):
        m = model_class(name).example()
        q, qd, qdd = m.sample_states(rng, 300)
        p = forward_kinematics(m.geometry, q[:, :3])
        radius, z_top, z_bot = m.workspace()
        assert np.all(np.hypot(p[:, 0], p[:, 1]) <= radius + 1e-12)
        assert np.all((p[:, 2] <= z_top + 1e-12) & (p[:, 2] >= z_bot - 1e-12))
        lo, hi = m.state_bounds()
        assert np.all(q >= lo - 1e-12) and np.all(q <= hi + 1e-12)


def test_position_limits_restrict_the_samples(rng):
    m = make_model("delta3", {**GEO, "position_limits": [[-0.2, 0.6]] * 3})
    q, _, _ = m.sample_states(rng, 100)
    assert q.min() >= -0.2 and q.max() <= 0.6


def test_corners_of_the_identification_motion_assemble():
    m = make_model("delta3", GEO)
    corners = np.array(list(itertools.product(*[(-0.1, 0.8)] * 3)))
    p = forward_kinematics(m.geometry, corners)
    assert m._valid(p, corners).all()


# ------------------------------------------------------------------------------- end to end

@pytest.mark.slow
def test_identify_delta3_end_to_end():
    """Simulate an identification run (joint sines), identify with the pipeline, validate on a
    Cartesian loop the robot never did during identification.

    One of p1..p5 is not identifiable with rigid forearms: the forearm inertia Theta_BC must come out
    as 'not identifiable' (held at 0) with the four base combinations at their true values, not as a
    noisy fifth estimate, and all four physical (positive), as a uniform-rod forearm makes them.
    The validation torque is computed exactly as the pipeline computes its own (conditioned motion,
    low-pass filtered Coulomb sign) and compared with the filtered measured torque.
    """
    from dynid.signal.conditioning import condition
    from dynid.identification import ParameterStatus, identify
    from dynid.metrics import nrmse
    from dynid.sim import SimOptions, SineMotion, TrajectoryMotion, simulate

    model = make_model("delta3", GEO)
    plant = Plant(model)
    p = np.array(model.example_parameters())
    theta = np.concatenate([p, [0.8, 1.5] * 3])                       # Fv [N m s/rad], Fc [N m]
    sim = SimOptions(substeps=1)                                       # 0.5 % torque noise, 20-bit encoders
    rec = simulate(plant, theta, SineMotion([-0.1] * 3, [0.8] * 3, [0.7, 1.1, 1.5], record_s=8.0, settle_s=1.0),
                   sim, seed=1)
    res = identify(rec, plant)
    assert res.success
    status = dict(zip(plant.param_names, res.status))
    assert status["Theta_BC"] == ParameterStatus.NOT_IDENTIFIABLE and res.values["Theta_BC"] == 0.0
    for name in ("Theta_AB", "g*L_AB*M_AB", "M_BC", "M_P"):
        assert status[name] == ParameterStatus.IDENTIFIED and res.values[name] > 0
    assert all(status[n] == ParameterStatus.CONSTANT for n in plant.param_names[5:14])
    # base combinations (spec/models.md §5) at their true values
    L, Lf, th_bc = 0.35, 0.8, p[3]
    K = {"Theta_AB": (0, 2 * L**2 / Lf**2), "g*L_AB*M_AB": (1, 2 * G * L / Lf**2), "M_BC": (2, -4 / Lf**2),
         "M_P": (4, 6 / Lf**2)}
    for name, (k, c) in K.items():
        assert res.values[name] == pytest.approx(p[k] + c * th_bc, rel=0.03), name
    assert any("Theta_BC" in e for e in res.base.expressions())
    # validation on a Cartesian loop (peak 1.8 m/s)
    t = np.arange(0.0, 7.0, 1e-3)
    w = 2 * np.pi * 0.8
    path = np.column_stack([0.2 * np.cos(w * t), 0.12 * np.sin(2 * w * t), -0.75 + 0.08 * np.sin(3 * w * t + 0.4)])
    q, _, _ = cartesian_to_joint(model.geometry, path, np.zeros_like(path), np.zeros_like(path))
    val = simulate(plant, theta, TrajectoryMotion(t, q, settle_s=1.0), sim, seed=3)
    cv = condition(val, res.cond.options, model.joint_kinds, require_motion=False)
    tau = plant.torque(res.theta, cv.q, cv.qd, cv.qdd, sign=cv.sign)
    err = nrmse(tau, cv.tau)
    assert np.all(err <= 0.03), err


def test_closed_chain_layer_reproduces_the_closed_form(rng):
    """delta3 through the generic closed-chain layer (bodies + constraint projection, no Delta formula):
    the upper arms (Theta_AB about the motor axis, first moment g*L_AB*M_AB / g along the arm), the
    forearms as rigid rods (M_BC at mid-rod, Theta_BC about it) and the plate (M_P) give the closed
    form's columns, payload column included."""
    from dynid.models.closed_chain import closed_chain_regressor
    from dynid.models.delta import DeltaChain

    model = make_model("delta3", GEO)
    q, qd, qdd = model.sample_states(rng, 300)
    L = GEO["forearm"]
    S = np.zeros((7, 10, 5))          # bodies x standard parameters x catalogue parameters p1..p5
    for i in range(3):
        S[i, 5, 0] = 1.0                                            # Theta_AB = Izz of the arm (z = motor axis)
        S[i, 6, 1] = 1.0 / G                                        # g*L_AB*M_AB = g * mx
        S[3 + i, 9, 2], S[3 + i, 8, 2] = 1.0, L / 2                 # M_BC: m, first moment at mid-rod,
        S[3 + i, 0, 2] = S[3 + i, 3, 2] = L**2 / 4                  # and its parallel-axis inertia
        S[3 + i, 0, 3] = S[3 + i, 3, 3] = 1.0                       # Theta_BC, perpendicular to the rods
    S[6, 9, 4] = 1.0                                                # M_P
    Y = closed_chain_regressor(DeltaChain(model.geometry), q, qd, qdd, np.array([0.0, 0.0, -G]), S.reshape(70, 5))
    ref = model.regressor(q, qd, qdd)[..., :5]
    np.testing.assert_allclose(Y, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
