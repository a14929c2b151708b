"""Counterbalance cylinders of ``serial`` models (spec/interfaces.md §4, key ``counterbalance``).

References are independent of :mod:`dynid.models.counterbalance`: the cylinder is rebuilt here from
2-D points (base point P at distance D from the joint axis, link point Q at distance k, angle δ
between them), its stored energy is integrated from the force (gas: ``E = −c ln(1 − A s/V0)``, the
work of ``F = c A/(V0 − A s)`` over the stroke; spring: ``E = ½ k s² + F0 s``) and differentiated by
central differences; the moment arm is the cross product of the lever and the force direction; the
identification truth is Pinocchio's ``rnea`` plus that energy gradient; the KUKA case is the
authors' formula (README of the KR300 data, ``benchmarks/real_data.py``) copied verbatim.

Sign convention pinned here: the model torque is the drive torque, ``τ = … + h·F`` and ``h·F = +dE/dq_j``
(as gravity enters ``τ`` with ``+dU/dq``); the cylinder's own torque on the link is ``−dE/dq_j``.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dynid import Identifier
from dynid.errors import ConfigError
from dynid.fitted import FittedModel
from dynid.io.outputs import prg_content
from dynid.io.prg import read_prg
from dynid.models import Plant, make_model
from dynid.recording import Recording

G = 9.80665
DEG = math.pi / 180

# a 3R arm: axis 1 vertical, axes 2 and 3 horizontal (standard DH), with known inertias
DH3 = [
    {"a": 0.15, "alpha": math.pi / 2, "d": 0.45, "limits": [-2.5, 2.5]},
    {"a": 0.70, "limits": [-2.2, -0.3]},
    {"a": 0.55, "limits": [-1.5, 1.5]},
]
LINKS3 = [
    {"mass": 12.0, "com": [-0.05, -0.10, 0.02], "inertia": [0.30, 0.01, 0.0, 0.25, 0.02, 0.20]},
    {"mass": 18.0, "com": [-0.35, 0.01, 0.05], "inertia": [0.10, 0.0, 0.01, 0.80, 0.0, 0.75]},
    {"mass": 7.0, "com": [-0.25, 0.0, -0.02], "inertia": [0.03, 0.0, 0.0, 0.25, 0.0, 0.24]},
]


def gas(joint=2, D=0.5, k=0.12, offset=95 * DEG, area=8e-4, volume=6e-4):
    return {"joint": joint, "kind": "gas", "base_distance": D, "link_distance": k, "angle_offset": offset,
            "area": area, "volume": volume}


def spring(joint=2, D=0.5, k=0.12, offset=95 * DEG):
    return {"joint": joint, "kind": "spring", "base_distance": D, "link_distance": k, "angle_offset": offset}


def arm(*counterbalances, **extra):
    return make_model("serial", {"dh": DH3, "links": LINKS3, "counterbalance": list(counterbalances), **extra})


# ------------------------------------------------------------------ the independent cylinder

def points(qj, D, k, offset):
    """P (fixed to the link before j) and Q (on link j), 2-D, joint axis at the origin: δ = qj + offset."""
    delta = np.asarray(qj, dtype=float) + offset
    P = np.stack([np.full_like(delta, D), np.zeros_like(delta)], axis=-1)
    Q = k * np.stack([np.cos(delta), np.sin(delta)], axis=-1)
    return P, Q


def stroke(qj, D, k, offset):
    P, Q = points(qj, D, k, offset)
    return np.linalg.norm(Q - P, axis=-1) - (D - k)


def gas_energy(qj, c, D, k, offset, area, volume):
    """Work of F = c·A/(V0 − A s) from s = 0: ∫ c A/(V0 − A σ) dσ = −c ln(1 − A s/V0)."""
    return -c * np.log1p(-area * stroke(qj, D, k, offset) / volume)


def spring_energy(qj, ks, F0, D, k, offset):
    s = stroke(qj, D, k, offset)
    return 0.5 * ks * s**2 + F0 * s


def d_dq(energy, qj, step=1e-6):
    return (energy(qj + step) - energy(qj - step)) / (2 * step)


def spec_arm_and_force(qj, D, k, offset, force):
    """The spec's formulas, coded from the text: l, h = D k sin δ / l, s = l − (D − k), F(s)."""
    delta = qj + offset
    length = np.sqrt(D**2 + k**2 - 2 * D * k * np.cos(delta))
    return D * k * np.sin(delta) / length, force(length - (D - k))


def counterbalance_torque(model, values, q):
    """Model torque on every joint from the counterbalance parameters only (inertial parameters 0, at rest,
    less the known payload torque)."""
    p = np.zeros(model.n_params)
    for name, v in values.items():
        p[model.param_names.index(name)] = v
    zeros = np.zeros_like(q)
    return model.torque(p, q, zeros, zeros) - model.offset(q, zeros, zeros)


GEOMETRIES = [  # (D, k, δ0): D > k, D < k, offsets on both sides of the straight-line positions
    (0.5, 0.12, 95 * DEG),
    (0.8, 0.2, 10 * DEG),
    (0.3, 0.45, -40 * DEG),
    (0.25, 0.6, 200 * DEG),
]


def _q(n=41, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = np.array([-2.5, -2.2, -1.5]), np.array([2.5, -0.3, 1.5])
    return rng.uniform(lo, hi, size=(n, 3))


# ------------------------------------------------------------------ (a) torque = h F = dE/dq

@pytest.mark.parametrize("D, k, offset", GEOMETRIES)
def test_gas_torque_is_h_times_force_and_the_energy_gradient(D, k, offset):
    area, c = 6e-4, 350.0
    volume = area * 2 * k + 1e-4                                      # stroke <= 2k: positive on a whole turn
    model = arm(gas(2, D, k, offset, area, volume))
    q = _q()
    tau = counterbalance_torque(model, {"CB2.c": c}, q)
    assert np.all(tau[:, [0, 2]] == 0.0)                              # only joint 2
    h, F = spec_arm_and_force(q[:, 1], D, k, offset, lambda s: c * area / (volume - area * s))
    np.testing.assert_allclose(tau[:, 1], h * F, rtol=1e-12, atol=1e-12 * np.abs(h * F).max())
    dE = d_dq(lambda x: gas_energy(x, c, D, k, offset, area, volume), q[:, 1])
    np.testing.assert_allclose(tau[:, 1], dE, rtol=0, atol=1e-7 * np.abs(dE).max())


@pytest.mark.parametrize("D, k, offset", GEOMETRIES)
def test_spring_torque_is_h_times_force_and_the_energy_gradient(D, k, offset):
    ks, F0 = 2.5e4, -300.0
    model = arm(spring(3, D, k, offset))
    assert model.param_names[-2:] == ("CB3.k", "CB3.F0")
    q = _q(seed=1)
    tau = counterbalance_torque(model, {"CB3.k": ks, "CB3.F0": F0}, q)
    assert np.all(tau[:, :2] == 0.0)
    h, F = spec_arm_and_force(q[:, 2], D, k, offset, lambda s: ks * s + F0)
    np.testing.assert_allclose(tau[:, 2], h * F, rtol=1e-12, atol=1e-12 * np.abs(h * F).max())
    dE = d_dq(lambda x: spring_energy(x, ks, F0, D, k, offset), q[:, 2])
    np.testing.assert_allclose(tau[:, 2], dE, rtol=0, atol=1e-7 * np.abs(dE).max())


def test_torque_is_linear_in_the_counterbalance_parameters():
    model = arm(gas(2), spring(3, 0.3, 0.1, 0.4))
    q = _q(seed=2)
    a = counterbalance_torque(model, {"CB2.c": 100.0, "CB3.k": 1e3, "CB3.F0": 5.0}, q)
    b = counterbalance_torque(model, {"CB2.c": -40.0, "CB3.k": 7e2, "CB3.F0": -9.0}, q)
    ab = counterbalance_torque(model, {"CB2.c": 60.0, "CB3.k": 1.7e3, "CB3.F0": -4.0}, q)
    np.testing.assert_allclose(a + b, ab, rtol=1e-12, atol=1e-12)


def test_counterbalance_adds_to_the_rigid_body_torque_and_leaves_the_payload_alone():
    plain = make_model("serial", {"dh": DH3, "links": LINKS3, "payload": {"mass": 3.0, "inertia": 0.05},
                                  "payload_com": [0.02, 0.0, 0.01]})
    model = arm(gas(2), spring(3, 0.3, 0.1, 0.4), payload={"mass": 3.0, "inertia": 0.05},
                payload_com=[0.02, 0.0, 0.01])
    rng = np.random.default_rng(3)
    q, qd, qdd = _q(seed=3), rng.normal(size=(41, 3)), rng.normal(size=(41, 3))
    np.testing.assert_array_equal(model.offset(q, qd, qdd), plain.offset(q, qd, qdd))
    p_rigid = plain.example_parameters()
    cb = {"CB2.c": 200.0, "CB3.k": 800.0, "CB3.F0": 12.0}
    p = np.concatenate([p_rigid, [cb[n] for n in model.param_names[plain.n_params:]]])
    expected = plain.torque(p_rigid, q, qd, qdd) + counterbalance_torque(model, cb, q)
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), expected, rtol=1e-12, atol=1e-10)
    np.testing.assert_array_equal(model.regressor(q, qd, qdd)[:, :, :plain.n_params], plain.regressor(q, qd, qdd))


# ------------------------------------------------------------------ (b) the moment arm is geometric

@pytest.mark.parametrize("D, k, offset", GEOMETRIES)
def test_moment_arm_is_the_cross_product_of_lever_and_force_direction(D, k, offset):
    """h = z·(Q × u), u the unit vector from P to Q: the moment about the joint axis of a unit force
    that lengthens the cylinder; |h| is the distance from the axis to the cylinder's line."""
    model = arm(spring(2, D, k, offset))
    q = _q(seed=4)
    P, Q = points(q[:, 1], D, k, offset)
    u = (Q - P) / np.linalg.norm(Q - P, axis=1, keepdims=True)
    cross = Q[:, 0] * u[:, 1] - Q[:, 1] * u[:, 0]
    Y = model.regressor(q, np.zeros_like(q), np.zeros_like(q))
    h = Y[:, 1, model.param_names.index("CB2.F0")]                   # the F0 column is h itself
    np.testing.assert_allclose(h, cross, rtol=1e-12, atol=1e-14)
    # distance from the axis to the line through P and Q
    dist = np.abs(P[:, 0] * Q[:, 1] - P[:, 1] * Q[:, 0]) / np.linalg.norm(Q - P, axis=1)
    np.testing.assert_allclose(np.abs(h), dist, rtol=1e-12, atol=1e-14)
    # and the h*s column: s from the 2-D points
    np.testing.assert_allclose(Y[:, 1, model.param_names.index("CB2.k")], cross * stroke(q[:, 1], D, k, offset),
                               rtol=1e-11, atol=1e-14)


# ------------------------------------------------------------------ parameters, PRG slots, base parameters

def test_parameter_names_units_slots_and_roles():
    model = arm(gas(2), spring(3, 0.3, 0.1, 0.4), gas(3, 0.4, 0.1, 0.2, 1e-4, 1e-4), spring(3, 0.2, 0.3, 0.0))
    cb = model.parameters[30:]
    assert [p.name for p in cb] == ["CB2.c", "CB3a.k", "CB3a.F0", "CB3b.c", "CB3c.k", "CB3c.F0"]
    assert [p.unit for p in cb] == ["J", "N/m", "N", "J", "N/m", "N"]
    assert [p.slot for p in cb] == list(range(31, 37)) and model.n_slots == 36
    assert all(p.role == "dynamic" for p in cb)
    assert model.prior_parameters()[30:].tolist() == [0.0] * 6
    assert model.link_parameter_groups()[-1].tolist() == list(range(20, 30))
    assert model.describe()["parameters"][30]["name"] == "CB2.c"


def test_joint_given_by_name():
    model = make_model("serial", {"dh": DH3, "joint_names": ["J1", "J2", "J3"], "counterbalance": [{**gas(), "joint": "J2"}]})
    assert model.param_names[-1] == "CB2.c" and model.counterbalances[0].joint == 1


def test_spring_stiffness_on_a_gravity_axis_is_the_dependent_one():
    """½ k s² holds −k D k cos δ, a gravity-like potential of link 2. Where axes 1 (vertical) and 2
    intersect, link 2's first moments act only through that potential and the inertias absorb the rest:
    k is then structurally collinear, and the base parameters keep CB2.F0 and regroup CB2.k
    (``prefer_dependent``). With an offset a1 the first moments also act through joint 1's dynamics and
    k is (weakly) identifiable. A gas charge is never collinear."""
    from dynid.identification.base_params import structural_base

    rows = [{**DH3[0], "a": 0.0}, *DH3[1:]]
    plant = Plant(make_model("serial", {"dh": rows, "counterbalance": [spring(2), gas(3, 0.3, 0.1, 0.4, 1e-4, 1e-4)]}))
    base = structural_base(plant)
    names = [plant.param_names[i] for i in base.independent]
    assert "CB2.F0" in names and "CB3.c" in names and "CB2.k" not in names
    assert plant.model.prefer_dependent == ("CB2.k",)
    plant = Plant(arm(spring(2)))
    assert "CB2.k" in [plant.param_names[i] for i in structural_base(plant).independent]


def test_compiled_runtime_path_includes_the_counterbalance():
    """The Fourier compiler cannot represent the cylinder (not a trigonometric polynomial): its check
    sends the plant to the per-sample regressor, whose torque and bias include the cylinder."""
    from dynid.runtime._compiled import compile_dynamics

    model = arm(gas(2), spring(3, 0.3, 0.1, 0.4))
    plant = Plant(model)
    theta = np.zeros(plant.n_params)
    theta[:model.n_params] = np.concatenate([model.example_parameters()[:30], [300.0, 900.0, 15.0]])
    dyn = compile_dynamics(plant, theta)
    rng = np.random.default_rng(5)
    q, qd, qdd = _q(5, seed=5), rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    ref = model.torque(theta[:model.n_params], q, qd, qdd)
    ws, out, M, h = dyn.new_workspace(), np.empty(3), np.empty((3, 3)), np.empty(3)
    for i in range(5):
        dyn.torque_into(ws, q[i], qd[i], qdd[i], out)
        np.testing.assert_allclose(out, ref[i], rtol=1e-10, atol=1e-9)
        dyn.mass_bias_into(ws, q[i], qd[i], M, h)
        np.testing.assert_allclose(M @ qdd[i] + h, ref[i], rtol=1e-10, atol=1e-9)
    # without the cylinder's parameters the same plant compiles exactly
    theta[30:33] = 0.0
    assert compile_dynamics(plant, theta).kind == "compiled trigonometric series"


def test_symbolic_derivation_rejects_counterbalances():
    pytest.importorskip("sympy")
    from dynid.symbolic import derive

    with pytest.raises(ConfigError, match="counterbalance"):
        derive(arm(gas(2)))


# ------------------------------------------------------------------ (c) identification

pin = None


def _pin_dh_model(rows, links):
    """Pinocchio model written from the standard-DH numbers (as tests/models/test_serial.py)."""
    global pin
    pin = pytest.importorskip("pinocchio")

    def rz(a):
        return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])

    def rx(a):
        return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])

    pm = pin.Model()
    parent, prev = 0, pin.SE3.Identity()
    for i, (row, link) in enumerate(zip(rows, links)):
        c = np.array(link["com"])
        ixx, ixy, ixz, iyy, iyz, izz = link["inertia"]
        inertia = pin.Inertia(link["mass"], c, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]))
        post = pin.SE3(rz(row.get("theta_offset", 0.0)), np.zeros(3)) * pin.SE3(np.eye(3), np.array([0, 0, row.get("d", 0.0)])) \
            * pin.SE3(np.eye(3), np.array([row.get("a", 0.0), 0, 0])) * pin.SE3(rx(row.get("alpha", 0.0)), np.zeros(3))
        parent = pm.addJoint(parent, pin.JointModelRZ(), prev, f"j{i + 1}")
        pm.appendBodyToJoint(parent, post.act(inertia), pin.SE3.Identity())
        prev = post
    pm.gravity.linear = np.array([0.0, 0.0, -G])
    return pm


def _multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed):
    """Periodic multi-sine inside [lo, hi] (70 % of the range) with analytic qd, qdd."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w = 2 * np.pi * base_hz * np.asarray(harmonics, dtype=float)
    amp = rng.uniform(0.5, 1.0, (lo.size, w.size)) / w
    amp *= (0.35 * (hi - lo) / amp.sum(axis=1))[:, None]
    arg = t[:, None, None] * w + rng.uniform(0, 2 * np.pi, (lo.size, w.size))
    q = 0.5 * (lo + hi) + np.sum(amp * np.sin(arg), axis=2)
    return t, q, np.sum(amp * w * np.cos(arg), axis=2), -np.sum(amp * w**2 * np.sin(arg), axis=2)


def test_identification_recovers_the_gas_charge(tmp_path):
    """3R arm with a gas cylinder on axis 2 (c = 420 J), simulated by Pinocchio + the energy gradient,
    viscous/Coulomb friction and 0.5 % torque noise; identified with Identifier("serial"): c within 2 %;
    result.json and the PRG carry it; the fitted model rebuilds from result.json alone."""
    cyl = gas(2, 0.5, 0.12, 95 * DEG, 8e-4, 6e-4)
    c_true = 420.0
    pm = _pin_dh_model(DH3, LINKS3)
    data = pm.createData()
    lo = np.array([r["limits"][0] for r in DH3])
    hi = np.array([r["limits"][1] for r in DH3])
    rate = 500.0
    t, q, qd, qdd = _multisine(lo, hi, 0.1, [1, 2, 3, 5, 7, 9], 30.0, rate, seed=7)
    tau = np.array([pin.rnea(pm, data, q[i], qd[i], qdd[i]) for i in range(t.size)])
    tau[:, 1] += d_dq(lambda x: gas_energy(x, c_true, cyl["base_distance"], cyl["link_distance"],
                                           cyl["angle_offset"], cyl["area"], cyl["volume"]), q[:, 1])
    fv, fc = np.array([6.0, 9.0, 3.0]), np.array([5.0, 8.0, 2.5])
    tau += fv * qd + fc * np.sign(qd)
    rng = np.random.default_rng(8)
    tau += 0.005 * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)

    config = {"dh": DH3, "links": LINKS3, "counterbalance": [cyl]}
    ident = Identifier("serial", config=config).fit(Recording(t, q, tau))
    assert ident.success_
    c_fit = ident.model_.values["CB2.c"]
    assert c_fit == pytest.approx(c_true, rel=0.02)

    written = ident.write(tmp_path, report=False)
    result = json.loads(Path(written["result.json"]).read_text())
    names = result["parameters"]["names"]
    i = names.index("CB2.c")
    assert result["parameters"]["units"][i] == "J" and result["parameters"]["identifiable"][i]
    assert result["parameters"]["values"][i] == pytest.approx(c_fit, rel=1e-12)
    assert result["config"]["counterbalance"] == [cyl]
    prg = read_prg(written["IDNT1.PRG"])
    assert prg.parameters[31] == pytest.approx(c_fit, rel=1e-8)
    assert prg_content(ident.model_).parameters[31] == c_fit
    rebuilt = FittedModel.from_dict(result)
    np.testing.assert_allclose(rebuilt.torque(q[:50], qd[:50], qdd[:50]), ident.model_.torque(q[:50], qd[:50], qdd[:50]),
                               rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ (d) configuration errors

@pytest.mark.parametrize("entry, match", [
    ({**gas(), "aera": 1e-3}, "counterbalance entry 1: unknown key 'aera'"),
    ({k: v for k, v in gas().items() if k != "angle_offset"}, "missing key 'angle_offset'"),
    ({**gas(), "kind": "hydraulic"}, "kind must be 'gas' or 'spring'"),
    ({**gas(), "joint": 4}, "joint 4 is out of range: the model has joints 1..3"),
    ({**gas(), "joint": 0}, "joint 0 is out of range"),
    ({**gas(), "joint": 1.5}, "joint must be a joint number"),
    ({**gas(), "joint": "A9"}, "joint 'A9' is not a joint name"),
    ({**gas(), "base_distance": 0.0}, "base_distance must be positive"),
    ({**gas(), "link_distance": -0.1}, "link_distance must be positive"),
    ({**gas(), "base_distance": 0.2, "link_distance": 0.2}, "base_distance and link_distance must differ"),
    ({**gas(), "area": 0.0}, "area must be positive"),
    ({**gas(), "volume": -1e-4}, "volume must be positive"),
    ({k: v for k, v in gas().items() if k != "volume"}, "a gas counterbalance needs 'volume'"),
    ({**spring(), "area": 1e-3}, "'area' is for gas counterbalances only"),
    ({**gas(), "angle_offset": "95deg"}, "angle_offset must be a finite number"),
    ({**gas(), "base_distance": float("nan")}, "base_distance must be a finite number"),
    (gas(area=8e-4, volume=5e-5), r"gas volume V0 - A\*s = .* is not positive over joint 2's range"),
])
def test_bad_counterbalance_is_a_config_error(entry, match):
    with pytest.raises(ConfigError, match=match):
        arm(entry)


def test_more_config_errors():
    with pytest.raises(ConfigError, match="counterbalance must be a list"):
        make_model("serial", {"dh": DH3, "counterbalance": 3})
    with pytest.raises(ConfigError, match="entry 2 must be a mapping"):
        arm(gas(), "gas")
    with pytest.raises(ConfigError, match="joint 2 .* is linear"):
        make_model("serial", {"dh": [DH3[0], {"type": "prismatic", "limits": [0, 1]}], "counterbalance": [gas()]})
    # the gas volume is checked over the joint's range only: the same cylinder is fine on a narrower range
    tight = gas(2, 0.5, 0.12, 95 * DEG, 8e-4, 5e-5)   # A s reaches 8.7e-5 m^3 on [-2.2, -0.3]
    with pytest.raises(ConfigError, match="joint 2's range"):
        arm(tight)
    make_model("serial", {"dh": DH3, "position_limits": [[-2.5, 2.5], [-1.7, -1.5], [-1.5, 1.5]], "counterbalance": [tight]})
    # limits unknown: checked over a whole revolution, and the hint names position_limits
    rows = [{k: v for k, v in r.items() if k != "limits"} for r in DH3]
    with pytest.raises(ConfigError, match="whole revolution of joint 2") as err:
        make_model("serial", {"dh": rows, "counterbalance": [tight]})
    assert "position_limits" in err.value.options


# ------------------------------------------------------------------ (e) the KUKA KR300 case

KUKA_COUNTERBALANCE = {"joint": 2, "kind": "gas", "base_distance": 0.8, "link_distance": 0.2,
                       "angle_offset": 1.6580627893946132,                # 95 deg
                       "area": 0.0016689710972195777,                     # pi (0.055^2 - 0.030^2) / 4
                       "volume": 0.00096}                                 # 2 * 0.00048
KUKA_C = 1.01 * 296.8 * 328 * 2 * 0.0795                                 # 15633.9 J (p*V of the charge)
KUKA_DH = [  # kinematics.json of the KR300 data (standard DH, q in the model convention)
    {"a": 0.35, "alpha": math.pi / 2, "d": -0.675, "limits": [-147 * DEG, 147 * DEG]},
    {"a": 1.15, "alpha": 0.0, "d": -0.189, "limits": [-140 * DEG, -5 * DEG]},
    {"a": 0.041, "alpha": -math.pi / 2, "d": 0.189, "theta_offset": math.pi / 2, "limits": [-112 * DEG, 153 * DEG]},
    {"a": 0.0, "alpha": math.pi / 2, "d": -1.0, "limits": [-350 * DEG, 350 * DEG]},
    {"a": 0.0, "alpha": -math.pi / 2, "d": 0.0, "limits": [-122.5 * DEG, 122.5 * DEG]},
    {"a": 0.0, "alpha": math.pi, "d": -0.24, "limits": [-350 * DEG, 350 * DEG]},
]


def authors_counterbalance(q2):
    """README of the KR300 data (from the authors' hydraulic_weight_counterbalance.m), verbatim."""
    delta = q2 + np.deg2rad(95.0)
    D, k = 0.8, 0.2
    A = np.pi * (0.055**2 - 0.030**2) / 4
    dl = np.sqrt(D**2 + k**2 - 2 * D * k * np.cos(delta)) - (D - k)
    h = np.sin(delta) * D * k / (dl + D - k)
    p = (1.01 * 296.8 * 328 * 2 * 0.0795) / (2 * 0.00048 - dl * A)
    return h * p * A


def test_kuka_configuration_reproduces_the_authors_formula():
    assert KUKA_COUNTERBALANCE["angle_offset"] == pytest.approx(95 * DEG, rel=1e-15)
    assert KUKA_COUNTERBALANCE["area"] == pytest.approx(math.pi * (0.055**2 - 0.030**2) / 4, rel=1e-15)
    model = make_model("serial", {"dh": KUKA_DH, "gravity_direction": [0.0, 0.0, 1.0],
                                  "counterbalance": [KUKA_COUNTERBALANCE]})
    assert model.param_names[-1] == "CB2.c" and model.parameters[-1].slot == 61
    q2 = np.linspace(-140 * DEG, -5 * DEG, 271)
    q = np.zeros((q2.size, 6))
    q[:, 1] = q2
    Y = model.regressor(q, np.zeros_like(q), np.zeros_like(q))
    column = Y[:, 1, -1]
    expected = authors_counterbalance(q2)
    np.testing.assert_allclose(column * KUKA_C, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
    assert np.abs(expected).max() > 1e3                                    # several kN m, as the README says
    assert np.all(Y[:, [0, 2, 3, 4, 5], -1] == 0.0)
    # the benchmark's own copy of the formula, where it can be imported
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "real_data.py"
    if path.is_file():
        spec = importlib.util.spec_from_file_location("_dynid_bench_real_data", path)
        bench = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(bench)
        except ImportError:  # pragma: no cover - the benchmark needs extras
            return
        np.testing.assert_allclose(column * KUKA_C, bench.kuka_counterbalance(q2), rtol=1e-12,
                                   atol=1e-12 * np.abs(expected).max())
