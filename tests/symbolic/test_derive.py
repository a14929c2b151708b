"""``dynid derive`` against the lecture (spec/lagrange-and-parallel.md §2), Pinocchio's RNEA, the trace form
and the catalogue's hand-written closed forms (issue 14)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

from dynid.cli.main import main  # noqa: E402
from dynid.models import make_model, model_class  # noqa: E402
from dynid.symbolic import derive  # noqa: E402
from dynid.symbolic.derive import substitute, trig_reduce  # noqa: E402

from ..conftest import ROOT  # noqa: E402

SPATIAL3 = ROOT / "tests" / "data" / "spatial3.urdf"
UR5 = ROOT / "tests" / "data" / "ur5.urdf"

POINT_MASS_TWO_LINK = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="link1"><inertial><origin xyz="{d1} 0 0"/><mass value="{m1}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <link name="link2"><inertial><origin xyz="{d2} 0 0"/><mass value="{m2}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/><origin xyz="{d1} 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
"""


def run_json(capsys, argv):
    status = main(argv)
    out = capsys.readouterr()
    return status, (json.loads(out.out) if out.out.strip() else None), out.err


def parse(text, names):
    return sp.sympify(text, locals={n: sp.Symbol(n, real=True) for n in names} | {"g": sp.Symbol("g", positive=True)})


# ------------------------------------------------------------------------------- the lecture

def test_lecture_two_link_coefficients():
    """(5-5): with point masses m1, m2 at the link ends d1, d2 and theta from the downward vertical (gravity
    along the links at theta = 0), every D_ij, D_ijk and D_i is the lecture's, symbolically."""
    d1, d2 = sp.Rational(7, 10), sp.Rational(2, 5)
    arm = make_model("serial", {"dh": [{"a": 0.7}, {"a": 0.4}], "gravity_direction": [1, 0, 0]})
    d = derive(arm)
    m1, m2 = sp.symbols("m1 m2", positive=True)
    # standard DH puts each link frame at its distal end: a point mass there is "m" alone
    values = {p: 0 for p in d.p} | {d.p[9]: m1, d.p[19]: m2}
    th1, th2 = d.q
    g = d.g
    c2, s2 = sp.cos(th2), sp.sin(th2)
    lecture = {
        "D": [[(m1 + m2) * d1**2 + m2 * d2**2 + 2 * m2 * d1 * d2 * c2, m2 * d2**2 + m2 * d1 * d2 * c2],
              [m2 * d2**2 + m2 * d1 * d2 * c2, m2 * d2**2]],
        "C": [[[0, -m2 * d1 * d2 * s2], [-m2 * d1 * d2 * s2, -m2 * d1 * d2 * s2]],   # D111, D112 / D121, D122
              [[m2 * d1 * d2 * s2, 0], [0, 0]]],                                      # D211, D212 / D221, D222
        "G": [(m1 + m2) * g * d1 * sp.sin(th1) + m2 * g * d2 * sp.sin(th1 + th2), m2 * g * d2 * sp.sin(th1 + th2)],
    }
    sub = lambda e: sp.sympify(e).xreplace(values)  # noqa: E731
    for i in range(2):
        assert trig_reduce(sub(d.gravity[i]) - lecture["G"][i], d.q) == 0
        for j in range(2):
            assert trig_reduce(sub(d.mass_matrix[i][j]) - lecture["D"][i][j], d.q) == 0
            for k in range(2):
                assert trig_reduce(sub(d.coriolis[i][j][k]) - lecture["C"][i][j][k], d.q) == 0


def test_table_5_1_from_a_point_mass_urdf(tmp_path, capsys):
    """The acceptance form: ``dynid derive --numeric --json`` on a URDF of the lecture's arm (d1 = d2 = 1,
    m1 = 2, m2 = 4) gives Table 5.1: D11, D12, D22, I1 = D11 and If = D11 - D12²/D22 at theta2 = 0..270°."""
    urdf = tmp_path / "two_link.urdf"
    urdf.write_text(POINT_MASS_TWO_LINK.format(d1=1, d2=1, m1=2, m2=4))
    status, d, _ = run_json(capsys, ["derive", "--urdf", str(urdf), "--numeric", "--json"])
    assert status == 0 and d["joints"] == 2 and len(d["parameters"]) == 20
    M = [[parse(e, ["q1", "q2"]) for e in row] for row in d["mass_matrix"]]
    table = {0: (18, 8, 4, 18, 2), 90: (10, 4, 4, 10, 6), 180: (2, 0, 4, 2, 2), 270: (10, 4, 4, 10, 6)}
    for deg, (D11, D12, D22, I1, If) in table.items():
        at = {sp.Symbol("q2", real=True): math.radians(deg), sp.Symbol("q1", real=True): 0.3}
        v = [[float(e.subs(at)) for e in row] for row in M]
        assert v[0][0] == pytest.approx(D11, abs=1e-12) and v[0][1] == pytest.approx(D12, abs=1e-12)
        assert v[1][0] == pytest.approx(D12, abs=1e-12) and v[1][1] == pytest.approx(D22, abs=1e-12)
        assert v[0][0] == pytest.approx(I1, abs=1e-12)
        assert v[0][0] - v[0][1] ** 2 / v[1][1] == pytest.approx(If, abs=1e-12)


# ------------------------------------------------------------------------------- two derivations

def test_lagrange_and_newton_euler_agree_symbolically():
    """A spatial 3-joint arm (DH, twisted axes) with all 30 standard parameters symbolic: the trace form
    and Newton-Euler give the same torques, mass matrix and gravity terms (difference reduced modulo
    sin² + cos² = 1 is zero)."""
    arm = make_model("serial", {"dh": [{"a": 0.1, "alpha": math.pi / 2, "d": 0.3}, {"a": 0.4},
                                       {"a": 0.05, "alpha": -math.pi / 2, "d": 0.1}]})
    ne, la = derive(arm), derive(arm, method="lagrange")
    assert ne.method == "newton-euler" and la.method == "lagrange"
    for i in range(3):
        assert trig_reduce(ne.tau[i] - la.tau[i], ne.q) == 0
        assert trig_reduce(ne.gravity[i] - la.gravity[i], ne.q) == 0
        assert trig_reduce(ne.mass_matrix[i][i] - la.mass_matrix[i][i], ne.q) == 0


def test_spatial_arm_equals_pinocchio(capsys):
    """Torques and gravity of a spatial 3-joint arm with full inertia tensors (URDF, rotated joint origins,
    centres of mass off every axis), parsed from the JSON, equal Pinocchio's RNEA to 1e-9."""
    pin = pytest.importorskip("pinocchio")
    status, d, _ = run_json(capsys, ["derive", "--urdf", str(SPATIAL3), "--numeric", "--json"])
    assert status == 0
    names = [f"{k}{i}" for k in ("q", "dq", "ddq") for i in (1, 2, 3)]
    syms = [sp.Symbol(n, real=True) for n in names] + [sp.Symbol("g", positive=True)]
    tau = sp.lambdify(syms, [parse(e, names) for e in d["tau"]])
    grav = sp.lambdify(syms, [parse(e, names) for e in d["gravity"]])
    model = pin.buildModelFromUrdf(str(SPATIAL3))
    data = model.createData()
    G = np.linalg.norm(model.gravity.linear)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-2, 2, 3), rng.normal(size=3), rng.normal(size=3) * 3
        ref = pin.rnea(model, data, q, qd, qdd)
        np.testing.assert_allclose(tau(*q, *qd, *qdd, G), ref, rtol=0, atol=1e-9 * np.abs(ref).max())
        ref_g = pin.computeGeneralizedGravity(model, data, q)
        np.testing.assert_allclose(grav(*q, *qd, *qdd, G), ref_g, rtol=0, atol=1e-9 * np.abs(ref_g).max())


def test_six_joint_arm_in_seconds_and_right():
    """A 6-joint arm (UR5 URDF) derives in a few seconds; its mass matrix is dynid's own numeric one
    (which tests/models checks against Pinocchio)."""
    arm = make_model("serial", urdf=UR5)
    d = derive(arm, numeric=True)
    assert d.time_s < 30
    rng = np.random.default_rng(0)
    p = arm.prior_parameters()
    q = rng.uniform(-2, 2, (1, 6))
    z = np.zeros((1, 6))
    ref = np.column_stack([arm.torque(p, q, z, np.eye(6)[j:j + 1])[0] - arm.torque(p, q, z, z)[0] for j in range(6)])
    at = dict(zip(d.q, q[0])) | {d.g: arm.gravity}
    M = np.array(substitute([e for row in d.mass_matrix for e in row], at), dtype=float).reshape(6, 6)
    np.testing.assert_allclose(M, ref, atol=1e-12 * np.abs(ref).max())


# ------------------------------------------------------------------------------- the catalogue

CATALOGUE = ["rotary1", "rotary2", "rotary3", "linear1", "linear2", "linear3", "traverse", "scara3", "scara4"]


@pytest.mark.parametrize("name", CATALOGUE)
@pytest.mark.parametrize("payload", [False, True])
def test_catalogue_closed_forms_rederived_from_geometry(name, payload):
    """Each catalogue model's hand-written regressor and payload offset come back from its physical chain
    (Newton-Euler on the geometry of spec/models.md, written in the catalogue's parameters)."""
    config = dict(model_class(name).example_config)
    if payload:
        config["payload"] = {"mass": 2.5, "inertia": 0.04}
        if name == "scara4":
            config["screw_lead"] = 0.01          # the ball-screw spline coupling, as a coupled chain
    model = model_class(name)(config)
    d = derive(model)
    Y = sp.lambdify([d.q, d.dq, d.ddq, d.g], d.regressor)
    tau = sp.lambdify([d.q, d.dq, d.ddq, d.g, d.p], d.tau)
    rng = np.random.default_rng(1)
    q, qd, qdd = model.sample_states(rng, 6)
    p = rng.normal(size=model.n_params)
    ref_Y = model.regressor(q, qd, qdd)
    ref_tau = model.torque(p, q, qd, qdd)
    for k in range(6):
        np.testing.assert_allclose(np.array(Y(q[k], qd[k], qdd[k], model.gravity), dtype=float), ref_Y[k],
                                   atol=1e-12 * max(1.0, np.abs(ref_Y[k]).max()))
        np.testing.assert_allclose(np.array(tau(q[k], qd[k], qdd[k], model.gravity, p), dtype=float), ref_tau[k],
                                   atol=1e-12 * max(1.0, np.abs(ref_tau[k]).max()))


def test_scara_mass_matrix_is_the_spec_closed_form():
    """SCARA (spec/models.md §4) symbolically: M11 = p1 + p2 + 2 p4 c2 + p5 (L1² + L2² + 2 L1 L2 c2) + p7, ..."""
    model = model_class("scara4").example()
    d = derive(model)
    p, c2 = d.p, sp.cos(d.q[1])
    L1, L2 = sp.Rational(str(model.L1)), sp.Rational(str(model.L2))
    M12 = p[1] + p[3] * c2 + p[4] * (L2**2 + L1 * L2 * c2) + p[6]
    expected = {(0, 0): p[0] + p[1] + 2 * p[3] * c2 + p[4] * (L1**2 + L2**2 + 2 * L1 * L2 * c2) + p[6],
                (0, 1): M12, (1, 1): p[1] + p[2] + p[4] * L2**2 + p[6], (0, 3): p[6], (2, 2): p[4],
                (3, 3): p[6] + p[7], (0, 2): 0}
    for (i, j), e in expected.items():
        assert trig_reduce(d.mass_matrix[i][j] - e, d.q) == 0
    h = p[3] + L1 * L2 * p[4]
    assert trig_reduce(d.coriolis[0][0][1] + h * sp.sin(d.q[1]), d.q) == 0     # tau1 ∋ -h s2 (2 q1d q2d)
    assert trig_reduce(d.gravity[2] - p[5], d.q) == 0


def test_base_parameters_in_symbols():
    d = derive(model_class("scara3").example())
    assert [str(b) for b in d.base_parameters][:2] == ["p1", "p2 + p7"]   # the flange inertia rides with arm 2


# ------------------------------------------------------------------------------- the command

def test_markdown_and_json_outputs(tmp_path, capsys):
    cfg = tmp_path / "scara.json"
    cfg.write_text(json.dumps({"L1": 0.325, "L2": 0.275}))
    status, d, _ = run_json(capsys, ["derive", "--model", "scara4", "--config", str(cfg), "--json",
                                     "--out", str(tmp_path / "out")])
    assert status == 0
    for key in ("joints", "parameters", "tau", "mass_matrix", "gravity", "base_parameters", "coriolis", "regressor"):
        assert key in d
    assert d["parameters"] == list(model_class("scara4").example().param_names)
    assert json.loads((tmp_path / "out" / "derivation.json").read_text())["tau"] == d["tau"]
    md = (tmp_path / "out" / "derivation.md").read_text()
    assert md.startswith("# scara4") and "$$ D_{11} =" in md and "\\cos" in md


def test_errors(tmp_path, capsys, without_modules, monkeypatch):
    status, _, err = run_json(capsys, ["derive", "--model", "delta3"])
    assert status == 2 and "no geometric derivation of model 'delta3'" in err
    status, _, err = run_json(capsys, ["derive", "--model", "scara4", "--numeric"])
    assert status == 2 and "missing: L1^2*M2+I1" in err
    import sys

    for key in [k for k in sys.modules if k.startswith("dynid.symbolic")]:   # imported afresh, as on a machine
        monkeypatch.delitem(sys.modules, key)                               # without the extra
    without_modules("sympy")
    status, _, err = run_json(capsys, ["derive", "--model", "scara4"])
    assert status == 2 and "pip install 'dynid[symbolic]'" in err
