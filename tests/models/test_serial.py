"""Model ``serial``: URDF/DH chains, the batched Newton–Euler regressor, base parameters.

References are independent: Pinocchio (``rnea``, ``computeJointTorqueRegressor``, its own URDF
parser) and hand derivations (planar 2R arm). Pinocchio's regressor uses, per joint, the
parameters ``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` with the inertia about the joint-frame
origin; ours orders them ``[..., Ixx, Ixy, Ixz, Iyy, Iyz, Izz]``: :data:`PIN_ORDER` maps them.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from dynid.identification.base_params import structural_base
from dynid.errors import ConfigError, FileFormatError
from dynid.models import Plant, make_model, model_class
from dynid.models.serial import PUMA560_CONFIG

pin = pytest.importorskip("pinocchio")

G = 9.80665
PIN_ORDER = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]   # our column k <- Pinocchio column PIN_ORDER[k]
TOL = 1e-10


@pytest.fixture(params=["kernel", "numpy"])
def backend_path(request, monkeypatch):
    """Run a test on the compiled regressor kernel and on the numpy path (both must match the
    references). The kernel is an optional build: skipped where it was not built, unless
    DYNID_REQUIRE_KERNEL=1 (CI), where a missing kernel fails."""
    from dynid.models import _rnea

    if request.param == "numpy":
        monkeypatch.setattr(_rnea, "_load_kernel", lambda: None)
    elif not _rnea.kernel_available():
        if os.environ.get("DYNID_REQUIRE_KERNEL") == "1":
            pytest.fail("the compiled regressor kernel dynid.models._rnea_kernel was not built")
        pytest.skip("compiled regressor kernel not built (numpy path tested)")
    return request.param


def _pin_columns(n_bodies):
    return [10 * b + k for b in range(n_bodies) for k in PIN_ORDER]


def _pin_q(model, q):
    """Pinocchio configuration of joint angles ``q`` (n_joints,): continuous joints use (cos, sin)."""
    out = np.zeros(model.nq)
    for jid in range(1, model.njoints):
        j = model.joints[jid]
        x = q[j.idx_v]
        if j.nq == 2:
            out[j.idx_q:j.idx_q + 2] = (math.cos(x), math.sin(x))
        else:
            out[j.idx_q] = x
    return out


def _pin_reference(model, q, qd, qdd):
    """Per-sample Pinocchio torques and regressors, (N, nv) and (N, nv, 10 nv)."""
    data = model.createData()
    tau, Y = [], []
    for k in range(q.shape[0]):
        qq = _pin_q(model, q[k])
        tau.append(pin.rnea(model, data, qq, qd[k], qdd[k]).copy())
        Y.append(pin.computeJointTorqueRegressor(model, data, qq, qd[k], qdd[k]).copy())
    return np.array(tau), np.array(Y)


def _states(n, n_samples=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.5, 2.5, (n_samples, n)), rng.normal(size=(n_samples, n)) * 2, rng.normal(size=(n_samples, n)) * 5


def _check_against_pinocchio(model, pmodel, p=None, seed=0):
    """Regressor columns and Y @ p equal Pinocchio to TOL (relative to the largest entry)."""
    pmodel.gravity.linear = model._gravity_vec
    q, qd, qdd = _states(model.n_joints, seed=seed)
    tau_ref, Y_ref = _pin_reference(pmodel, q, qd, qdd)
    Y = model.regressor(q, qd, qdd)
    Y_ref = Y_ref[:, :, _pin_columns(model.n_joints)]
    scale = max(1.0, np.abs(Y_ref).max())
    assert np.abs(Y - Y_ref).max() <= TOL * scale
    p = model.example_parameters() if p is None else p
    np.testing.assert_allclose(Y @ p, tau_ref, rtol=0, atol=TOL * max(1.0, np.abs(tau_ref).max()))
    # the torque alone (the kernel's fused Y @ p, without storing Y; the numpy path otherwise)
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), tau_ref, rtol=0, atol=TOL * max(1.0, np.abs(tau_ref).max()))
    return np.abs(Y - Y_ref).max() / scale


# ---------------------------------------------------------------------------- real URDFs

@pytest.mark.parametrize("robot", ["staubli_tx40_figaroh/tx40.urdf", "panda_gaz2019/panda.urdf"])
def test_real_urdf_matches_pinocchio(real_data, robot, backend_path):
    path = real_data / robot
    model = make_model("serial", urdf=path)
    _check_against_pinocchio(model, pin.buildModelFromUrdf(str(path)))


def test_panda_matches_mujoco_inverse_dynamics(real_data):
    """A second engine: MuJoCo compiles the same URDF (static bodies fused) and ``mj_inverse`` gives the
    rigid-body torque once joint damping, armature and limit constraints are switched off."""
    mujoco = pytest.importorskip("mujoco")
    path = real_data / "panda_gaz2019/panda.urdf"
    xml = path.read_text()
    head = xml.index(">", xml.index("<robot")) + 1
    xml = xml[:head] + '<mujoco><compiler discardvisual="true" fusestatic="true" balanceinertia="false"/></mujoco>' + xml[head:]
    mj = mujoco.MjModel.from_xml_string(xml)
    model = make_model("serial", urdf=path)
    mj.opt.gravity[:] = model._gravity_vec
    mj.dof_damping[:] = 0.0
    mj.dof_armature[:] = 0.0
    mj.dof_frictionloss[:] = 0.0
    mj.jnt_limited[:] = 0
    data = mujoco.MjData(mj)
    lo, hi = model.state_bounds()
    rng = np.random.default_rng(13)
    q = rng.uniform(lo, hi, (8, 7))
    qd, qdd = rng.normal(size=(8, 7)), rng.normal(size=(8, 7)) * 3
    ref = []
    for k in range(8):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[k], qd[k], qdd[k]
        mujoco.mj_inverse(mj, data)
        ref.append(data.qfrc_inverse.copy())
    ref = np.array(ref)
    np.testing.assert_allclose(model.torque(model.example_parameters(), q, qd, qdd), ref, rtol=0,
                               atol=TOL * np.abs(ref).max())


def test_panda_fixed_hand_is_lumped_into_link7(real_data):
    """panda_link8, hand and fingers hang on fixed joints: their 0.76 kg join panda_link7."""
    model = make_model("serial", urdf=real_data / "panda_gaz2019/panda.urdf")
    assert model.n_joints == 7 and model.link_names[-1] == "panda_link7"
    p = dict(zip(model.param_names, model.example_parameters()))
    assert p["panda_link7.m"] == pytest.approx(0.735522 + 0.73 + 2 * 0.015, rel=1e-12)


def test_tx40_limits_and_names(real_data):
    model = make_model("serial", urdf=real_data / "staubli_tx40_figaroh/tx40.urdf")
    lo, hi = model.state_bounds()
    np.testing.assert_allclose(lo, [-3.14, -2.18, -2.40, -4.71, -2.09, -4.71])
    np.testing.assert_allclose(hi, [3.14, 2.18, 2.40, 4.71, 2.33, 4.71])
    assert model.param_names[:10] == tuple(f"link_1.{n}" for n in ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz", "mx", "my",
                                                                    "mz", "m"))
    assert [j.name for j in model.joints] == ["A1", "A2", "A3", "A4", "A5", "A6"]


# ---------------------------------------------------------------------------- synthetic URDFs

MIXED_URDF = """<?xml version="1.0"?>
<robot name="mixed">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.02 0.01 0.1" rpy="0.1 0.2 0.3"/><mass value="3.0"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0.002" iyy="0.04" iyz="0.003" izz="0.03"/></inertial></link>
  <link name="bracket"><inertial><origin xyz="0.1 0 0.05" rpy="0 0.4 0"/><mass value="0.7"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.001"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.2 0.0 0.01"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0.0 0.05 0.1" rpy="0.3 0 0.1"/><mass value="1.2"/>
    <inertia ixx="0.006" ixy="0.0005" ixz="0" iyy="0.005" iyz="0" izz="0.004"/></inertial></link>
  <link name="l4"><inertial><origin xyz="0.01 0.0 0.05"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.0005"/></inertial></link>
  <link name="tool"><inertial><origin xyz="0 0 0.03"/><mass value="0.3"/>
    <inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0002" iyz="0" izz="0.0001"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3" rpy="0 0 0.2"/><axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="fix_bracket" type="fixed"><parent link="l1"/><child link="bracket"/><origin xyz="0.05 0 0.2" rpy="0.5 0 0"/></joint>
  <joint name="j2" type="continuous"><parent link="bracket"/><child link="l2"/>
    <origin xyz="0 0.1 0.05" rpy="-1.2 0.3 0"/><axis xyz="0 0.6 0.8"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/>
    <origin xyz="0.4 0 0" rpy="0 0 0.5"/><axis xyz="1 0 0"/><limit lower="-0.2" upper="0.3" effort="1" velocity="1"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/>
    <origin xyz="0 0 0.2" rpy="0 1.5707963 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="fix_tool" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0 0 0.1" rpy="0 0 0.3"/></joint>
</robot>
"""


@pytest.fixture
def mixed_urdf(tmp_path):
    path = tmp_path / "mixed.urdf"
    path.write_text(MIXED_URDF)
    return path


@pytest.mark.parametrize("backend", ["xml", "yourdfpy", "pinocchio"])
def test_fixed_continuous_prismatic_and_unaligned_axes_match_pinocchio(mixed_urdf, backend, backend_path):
    if backend == "yourdfpy":
        pytest.importorskip("yourdfpy")
    from dynid.models._urdf import read_urdf

    chain = read_urdf(mixed_urdf, backend=backend)
    model = make_model("serial", {"chain": chain})
    assert model.joint_kinds == ("rotary", "rotary", "linear", "rotary")
    assert [link["type"] for link in chain["links"]] == ["revolute", "continuous", "prismatic", "revolute"]
    assert chain["links"][1]["limits"] is None            # continuous: no limits
    _check_against_pinocchio(model, pin.buildModelFromXML(MIXED_URDF))


@pytest.mark.parametrize("name", ["staubli_tx40_figaroh/tx40.urdf", "panda_gaz2019/panda.urdf"])
def test_builtin_urdf_reader_gives_pinocchios_chain(real_data, name):
    """dynid's own XML reader (the default, no dependency) against Pinocchio's parser: same links,
    joint frames, axes, limits and inertias."""
    from dynid.models._urdf import read_urdf

    a, b = read_urdf(real_data / name), read_urdf(real_data / name, backend="pinocchio")
    assert [la["name"] for la in a["links"]] == [lb["name"] for lb in b["links"]]
    for la, lb in zip(a["links"], b["links"]):
        assert la["type"] == lb["type"] and la["limits"] == pytest.approx(lb["limits"]) if lb["limits"] else True
        np.testing.assert_allclose(la["pre"], lb["pre"], atol=1e-12)
        np.testing.assert_allclose(la["axis"], lb["axis"], atol=1e-12)
        np.testing.assert_allclose(la["inertia"], lb["inertia"], atol=1e-12)


def test_builtin_urdf_reader_errors_name_the_file(tmp_path):
    from dynid.errors import FileFormatError
    from dynid.models._urdf import read_urdf

    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'><joint name='j' type='revolute'><parent link='a'/></joint></robot>")
    with pytest.raises(FileFormatError, match="bad.urdf.*joint 'j'.*child"):
        read_urdf(bad)
    bad.write_text("<robot><link name='a'/>")
    with pytest.raises(FileFormatError, match="bad.urdf: not a readable URDF"):
        read_urdf(bad)


def test_both_urdf_readers_agree(mixed_urdf):
    pytest.importorskip("yourdfpy")
    from dynid.models._urdf import read_urdf

    a, b = read_urdf(mixed_urdf, backend="yourdfpy"), read_urdf(mixed_urdf, backend="pinocchio")
    for la, lb in zip(a["links"], b["links"]):
        assert la["name"] == lb["name"] and la["type"] == lb["type"]
        np.testing.assert_allclose(la["pre"], lb["pre"], atol=1e-12)
        np.testing.assert_allclose(la["inertia"], lb["inertia"], atol=1e-12)


MIMIC_URDF = """<?xml version="1.0"?>
<robot name="mimic">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0.02 0"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.05 0 0.01"/><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.25 0 0"/><axis xyz="0 1 0"/>
    <mimic joint="j2" multiplier="-0.5" offset="0.2"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
"""


def test_mimic_joint_follows_its_master(tmp_path):
    """Independent reference: Pinocchio without the mimic constraint, q3 = -0.5 q2 + 0.2 imposed and
    the mimic torque mapped onto the master by the chain rule (tau2 += -0.5 tau3)."""
    pytest.importorskip("yourdfpy")
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_URDF)
    model = make_model("serial", urdf=path)
    assert model.n_joints == 2 and model.n_params == 30
    pm = pin.buildModelFromXML(MIMIC_URDF)   # mimic ignored: three independent joints
    pm.gravity.linear = model._gravity_vec
    q, qd, qdd = _states(2, seed=3)
    lift = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -0.5]])
    tau3, _ = _pin_reference(pm, q @ lift.T + [0, 0, 0.2], qd @ lift.T, qdd @ lift.T)
    expected = tau3 @ lift
    np.testing.assert_allclose(model.torque(model.example_parameters(), q, qd, qdd), expected, rtol=0,
                               atol=TOL * np.abs(expected).max())


def test_pinocchio_reader_rejects_mimic_joints_clearly(tmp_path):
    from dynid.models._urdf import read_urdf

    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_URDF)
    with pytest.raises(FileFormatError, match="'j3' is a mimic joint") as err:
        read_urdf(path, backend="pinocchio")
    assert "mimic.urdf" in str(err.value) and "dynid[urdf]" in err.value.hint


# ---------------------------------------------------------------------------- DH tables

def _rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


DH_ROWS = [
    {"a": 0.05, "alpha": math.pi / 2, "d": 0.4, "theta_offset": 0.1},
    {"a": 0.45, "alpha": 0.0, "d": 0.0, "theta_offset": -0.3},
    {"a": 0.0, "alpha": 0.0, "d": 0.2, "type": "prismatic", "theta_offset": 0.4},
    {"a": 0.02, "alpha": -math.pi / 2, "d": 0.35},
    {"a": 0.0, "alpha": math.pi / 2, "d": 0.0, "theta_offset": 0.7},
    {"a": 0.0, "alpha": 0.3, "d": 0.08},
]


def _random_links(n, seed):
    rng = np.random.default_rng(seed)
    links = []
    for _ in range(n):
        A = rng.normal(size=(3, 3)) * 0.05
        links.append({"mass": float(rng.uniform(0.5, 5)), "com": rng.uniform(-0.2, 0.2, 3).tolist(),
                      "inertia": (A @ A.T + 0.01 * np.eye(3)).tolist()})
    return links


def _pin_dh_model(rows, links, convention):
    """Pinocchio model written directly from the DH numbers (not through dynid's chain)."""
    pm = pin.Model()
    parent, prev_post = 0, pin.SE3.Identity()
    for k, (row, link) in enumerate(zip(rows, links)):
        a, alpha, d, th = (row.get(x, 0.0) for x in ("a", "alpha", "d", "theta_offset"))
        prismatic = row.get("type") == "prismatic"
        joint = pin.JointModelPZ() if prismatic else pin.JointModelRZ()
        inertia = pin.Inertia(link["mass"], np.array(link["com"]), np.array(link["inertia"]))
        if convention == "standard":
            # joint k turns about z_{k-1}; body k's DH frame = joint frame * Rz(th) Tz(d) Tx(a) Rx(alpha)
            post = pin.SE3(_rz(th), np.zeros(3)) * pin.SE3(np.eye(3), np.array([0, 0, d])) \
                * pin.SE3(np.eye(3), np.array([a, 0, 0])) * pin.SE3(_rx(alpha), np.zeros(3))
            placement, body = prev_post, post.act(inertia)
            prev_post = post
        else:
            placement = pin.SE3(_rx(alpha), np.zeros(3)) * pin.SE3(np.eye(3), np.array([a, 0, 0])) \
                * pin.SE3(_rz(th), np.zeros(3)) * pin.SE3(np.eye(3), np.array([0, 0, d]))
            body = inertia
        parent = pm.addJoint(parent, joint, placement, f"j{k + 1}")
        pm.appendBodyToJoint(parent, body, pin.SE3.Identity())
    return pm


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_dh_chain_torque_matches_pinocchio(convention, backend_path):
    """Torques for random inertias; for standard DH the regressor is compared after mapping our
    DH-frame parameters to Pinocchio's joint-frame ones (a linear map, built from physical samples)."""
    links = _random_links(len(DH_ROWS), seed=4)
    model = make_model("serial", {"dh": DH_ROWS, "convention": convention, "links": links})
    pm = _pin_dh_model(DH_ROWS, links, convention)
    if convention == "modified":
        _check_against_pinocchio(model, pm)
        return
    pm.gravity.linear = model._gravity_vec
    q, qd, qdd = _states(6, seed=5)
    tau_ref, Y_ref = _pin_reference(pm, q, qd, qdd)
    Y = model.regressor(q, qd, qdd)
    np.testing.assert_allclose(Y @ model.example_parameters(), tau_ref, rtol=0, atol=TOL * np.abs(tau_ref).max())
    np.testing.assert_allclose(model.torque(model.example_parameters(), q, qd, qdd), tau_ref, rtol=0,
                               atol=TOL * np.abs(tau_ref).max())
    # parameters of body k in its DH frame -> in Pinocchio's joint frame: pi_joint = L_k pi_dh
    rng = np.random.default_rng(6)
    Yp = Y_ref[:, :, _pin_columns(6)]
    for k, row in enumerate(DH_ROWS):
        a, alpha, d, th = (row.get(x, 0.0) for x in ("a", "alpha", "d", "theta_offset"))
        T = pin.SE3(_rz(th), np.zeros(3)) * pin.SE3(np.eye(3), np.array([0, 0, d])) \
            * pin.SE3(np.eye(3), np.array([a, 0, 0])) * pin.SE3(_rx(alpha), np.zeros(3))
        samples = []
        for _ in range(10):
            A = rng.normal(size=(3, 3))
            samples.append(pin.Inertia(rng.uniform(1, 2), rng.normal(size=3), A @ A.T + np.eye(3)))
        ours = np.array([s.toDynamicParameters()[PIN_ORDER] for s in samples]).T
        theirs = np.array([T.act(s).toDynamicParameters()[PIN_ORDER] for s in samples]).T
        L = theirs @ np.linalg.inv(ours)
        block = slice(10 * k, 10 * k + 10)
        np.testing.assert_allclose(Y[:, :, block], Yp[:, :, block] @ L, rtol=0, atol=1e-9 * np.abs(Yp).max())


def test_planar_2r_matches_the_textbook_equations(backend_path):
    """Two-link planar arm, point masses at the link ends, gravity along -y (Spong, Hutchinson &
    Vidyasagar, Robot Modeling and Control, §7.3 with lc = l and I = 0)."""
    l1, l2, m1, m2 = 0.7, 0.5, 3.0, 2.0
    model = make_model("serial", {"dh": [{"a": l1}, {"a": l2}], "gravity_direction": [0, -1, 0], "friction": "none",
                                  "links": [{"mass": m1}, {"mass": m2}]})  # standard DH: COM at the frame origin
    q, qd, qdd = _states(2, seed=7)
    tau = model.torque(model.example_parameters(), q, qd, qdd)
    c2, s2 = np.cos(q[:, 1]), np.sin(q[:, 1])
    d11 = m1 * l1**2 + m2 * (l1**2 + l2**2 + 2 * l1 * l2 * c2)
    d12 = m2 * (l2**2 + l1 * l2 * c2)
    d22 = m2 * l2**2
    h = -m2 * l1 * l2 * s2
    g1 = (m1 + m2) * l1 * G * np.cos(q[:, 0]) + m2 * l2 * G * np.cos(q[:, 0] + q[:, 1])
    g2 = m2 * l2 * G * np.cos(q[:, 0] + q[:, 1])
    tau1 = d11 * qdd[:, 0] + d12 * qdd[:, 1] + h * qd[:, 1] ** 2 + 2 * h * qd[:, 0] * qd[:, 1] + g1
    tau2 = d12 * qdd[:, 0] + d22 * qdd[:, 1] - h * qd[:, 0] ** 2 + g2
    np.testing.assert_allclose(tau, np.column_stack([tau1, tau2]), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- payload, rebuild, hypothesis

def test_payload_is_known_extra_inertia_on_the_last_link(real_data):
    path = real_data / "staubli_tx40_figaroh/tx40.urdf"
    com = [0.01, -0.02, 0.08]
    model = make_model("serial", {"payload": {"mass": 1.5, "inertia": 0.004}, "payload_com": com}, urdf=path)
    pm = pin.buildModelFromUrdf(str(path))
    pm.gravity.linear = model._gravity_vec
    axis = np.array([0.0, 0.0, 1.0])                    # TX40 joint 6 turns about its z axis
    pm.inertias[6] = pm.inertias[6] + pin.Inertia(1.5, np.array(com), 0.004 * np.outer(axis, axis))
    q, qd, qdd = _states(6, seed=8)
    tau_ref, _ = _pin_reference(pm, q, qd, qdd)
    np.testing.assert_allclose(model.torque(model.example_parameters(), q, qd, qdd), tau_ref, rtol=0,
                               atol=TOL * np.abs(tau_ref).max())


def test_rebuilt_from_its_json_config_without_any_urdf_parser(real_data, without_modules):
    path = real_data / "panda_gaz2019/panda.urdf"
    model = make_model("serial", urdf=path)
    config = json.loads(json.dumps(model.config.to_dict()))
    assert config["chain"]["source"]["urdf"].endswith("panda.urdf") and len(config["chain"]["source"]["sha256"]) == 64
    without_modules("yourdfpy", "pinocchio")    # parsers unavailable: the chain is enough
    rebuilt = make_model("serial", config)
    q, qd, qdd = _states(7, seed=9)
    assert rebuilt.param_names == model.param_names
    np.testing.assert_array_equal(rebuilt.regressor(q, qd, qdd), model.regressor(q, qd, qdd))
    np.testing.assert_array_equal(rebuilt.state_bounds()[0], model.state_bounds()[0])


def test_urdf_reads_without_any_parser_installed(real_data, without_modules):
    """The built-in reader needs neither yourdfpy nor Pinocchio (a plain ``pip install .`` reads URDFs);
    asking for a missing one names its extra."""
    from dynid.errors import MissingExtraError
    from dynid.models._urdf import read_urdf

    without_modules("yourdfpy", "pinocchio")
    model = make_model("serial", urdf=real_data / "panda_gaz2019/panda.urdf")
    assert model.n_joints == 7
    with pytest.raises(MissingExtraError, match="yourdfpy") as err:
        read_urdf(real_data / "panda_gaz2019/panda.urdf", backend="yourdfpy")
    assert "dynid[urdf]" in err.value.hint


def test_chunked_evaluation_equals_single_samples(backend_path):
    """The chunked batch gives the same rows as one sample at a time (N spans several chunks); BLAS
    kernels of different block sizes may differ in the last bit."""
    from dynid.models import _rnea

    model = model_class("serial").example()
    q, qd, qdd = _states(6, n_samples=2 * _rnea._CHUNK + 37, seed=10)
    Y = model.regressor(q, qd, qdd)
    for k in (0, _rnea._CHUNK - 1, _rnea._CHUNK, 2 * _rnea._CHUNK + 36):
        np.testing.assert_allclose(Y[k], model.regressor(q[k:k + 1], qd[k:k + 1], qdd[k:k + 1])[0], rtol=1e-13,
                                   atol=1e-13 * np.abs(Y[k]).max())


def test_kernel_threads_split_the_samples_without_seams(monkeypatch):
    """The compiled kernel splits the samples over threads: the result does not depend on the split
    and equals the numpy path (odd N, so the pieces have different lengths)."""
    from dynid.models import _rnea

    if not _rnea.kernel_available():
        pytest.skip("compiled regressor kernel not built")
    model = model_class("serial").example()
    q, qd, qdd = _states(6, n_samples=3 * _rnea._MIN_SAMPLES_PER_THREAD + 7, seed=11)
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("DYNID_NUM_THREADS", threads)
        results.append(model.regressor(q, qd, qdd))
    monkeypatch.setattr(_rnea, "_load_kernel", lambda: None)
    reference = model.regressor(q, qd, qdd)
    for Y in results:
        np.testing.assert_array_equal(Y, results[0])
        np.testing.assert_allclose(Y, reference, rtol=0, atol=1e-12 * np.abs(reference).max())

hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (3, 2, 6), elements=st.floats(-3, 3)), arrays(np.float64, 60, elements=st.floats(-2, 2)),
       arrays(np.float64, 60, elements=st.floats(-2, 2)), st.floats(-3, 3))
def test_regressor_is_linear_in_the_parameters(states, p1, p2, a):
    model = model_class("serial").example()
    q, qd, qdd = states
    Y = model.regressor(q, qd, qdd)
    np.testing.assert_allclose(Y @ (p1 + a * p2), Y @ p1 + a * (Y @ p2), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------- base parameters

def _base(model):
    return structural_base(Plant(model))


@pytest.mark.parametrize("gravity, count, expected", [
    # horizontal arm (gravity along the joint axes): tau involves Izz1 + l1^2 m2, Izz2, mx2, my2
    ([0, 0, -1], 4, {"link1.Izz + 1/4*link2.m", "link2.mx", "link2.my", "link2.Izz"}),
    # vertical plane: the gravity moments mx1 + l1 m2 and my1 appear too
    ([0, -1, 0], 6, {"link1.mx + 1/2*link2.m", "link1.my", "link1.Izz + 1/4*link2.m", "link2.mx", "link2.my",
                     "link2.Izz"}),
])
def test_planar_2r_base_parameters_by_hand(gravity, count, expected):
    """Modified DH, l1 = 0.5 m: the classical 2R result (e.g. Khalil & Dombre 2002, §9.5 example)."""
    model = make_model("serial", {"dh": [{}, {"a": 0.5}], "convention": "modified", "gravity_direction": gravity,
                                  "friction": "none"})
    base = _base(model)
    assert base.n_base == count
    assert set(base.expressions()) == expected


def _pin_rank(pmodel, n_samples=60, seed=0):
    q, qd, qdd = _states(pmodel.nv, n_samples=n_samples, seed=seed)
    _, Y = _pin_reference(pmodel, q, qd, qdd)
    W = Y.reshape(-1, Y.shape[2])
    norms = np.linalg.norm(W, axis=0)
    keep = norms > 1e-9 * norms.max()        # columns that are zero up to round-off carry no rank
    return int(np.linalg.matrix_rank(W[:, keep] / norms[keep]))


def test_puma560_has_36_base_inertial_parameters():
    """PUMA 560 (standard DH, joint 1 vertical, no friction or rotor inertia): 36 base parameters.

    Khalil & Dombre (Modeling, Identification and Control of Robots, 2002, ch. 9; Gautier & Khalil,
    IEEE TRA 6(3) 1990) for a 6R arm whose first axis is parallel to gravity: link 1 keeps only
    ZZ1R and every other revolute link keeps 7 of its 10 parameters (YY, MZ, M are regrouped),
    1 + 5 x 7 = 36. Checked here also against the rank of Pinocchio's regressor.
    """
    model = make_model("serial", {**PUMA560_CONFIG, "friction": "none"})
    base = _base(model)
    assert base.n_base == 36
    links = [{"mass": float(m), "com": c, "inertia": i} for m, c, i in
             zip([1.0, 17.4, 4.8, 0.82, 0.34, 0.09], [[0, 0, 0]] * 6, [np.eye(3).tolist()] * 6)]
    from dynid.models.serial import PUMA560_DH

    rows = [{k: v for k, v in r.items() if k != "limits"} for r in PUMA560_DH]
    pm = _pin_dh_model(rows, links, "standard")
    pm.gravity.linear = model._gravity_vec
    assert _pin_rank(pm) == 36


@pytest.mark.parametrize("robot", ["staubli_tx40_figaroh/tx40.urdf", "panda_gaz2019/panda.urdf"])
def test_urdf_base_count_equals_pinocchio_rank(real_data, robot):
    path = real_data / robot
    model = make_model("serial", {"friction": "none"}, urdf=path)
    pm = pin.buildModelFromUrdf(str(path))
    pm.gravity.linear = model._gravity_vec
    assert _base(model).n_base == _pin_rank(pm)


def test_base_expressions_are_readable(real_data):
    """Khalil & Dombre's grouping rules (2002, §9.5) for frames on the joint axes (URDF, modified DH):
    XX_jR = XX_j - YY_j, ZZ_jR = ZZ_j + YY_{j+1} ..., here with the TX40's link names."""
    tx40 = make_model("serial", {"friction": "none"}, urdf=real_data / "staubli_tx40_figaroh/tx40.urdf")
    exprs = _base(tx40).expressions()
    for expected in ("link_4.Izz + link_5.Iyy", "link_4.Ixx - link_4.Iyy + link_5.Iyy", "link_5.Izz + link_6.Iyy",
                     "link_6.Ixx - link_6.Iyy", "link_6.Izz", "link_2.mx + 9/40*link_3.m + 9/40*link_4.m "
                     "+ 9/40*link_5.m + 9/40*link_6.m"):  # 9/40 = a3 = 0.225 m
        assert expected in exprs
    # standard DH PUMA: link 1 turns about its own y axis; a2^2 = 0.4318^2 = 0.186451 m^2
    puma = _base(make_model("serial", {**PUMA560_CONFIG, "friction": "none"}))
    assert puma.expressions()[0].startswith("link1.Iyy + link2.Iyy - 0.186451*link2.m + link3.Izz")
    assert np.abs(puma.K).max() <= 1.0 + 1e-9      # coefficients are products of DH lengths


def test_tx40_with_drive_terms_matches_the_peer_baseline_count(real_data):
    """shared/data/real/staubli_tx40_figaroh/README.md: 10 inertial parameters per link plus viscous,
    Coulomb, offset and armature per joint, 84 columns -> 58 base parameters (FIGAROH and a Pinocchio
    least-squares baseline)."""
    model = make_model("serial", {"friction": "viscous+coulomb+offset+armature"},
                       urdf=real_data / "staubli_tx40_figaroh/tx40.urdf")
    plant = Plant(model)
    assert plant.n_params == 84 and structural_base(plant).n_base == 58


# ---------------------------------------------------------------------------- errors

@pytest.mark.parametrize("text, match", [
    ("<robot name='x'><link name='a'/><joint", "not a readable URDF"),
    ("""<robot name="x"><link name="w"/><link name="a"/>
        <joint name="float" type="floating"><parent link="w"/><child link="a"/></joint></robot>""", "'float' is floating"),
    ("""<robot name="x"><link name="w"/><link name="a"/><link name="b"/>
        <joint name="j1" type="revolute"><parent link="w"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
        <joint name="j2" type="revolute"><parent link="w"/><child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
        </robot>""", "branches off link"),
    ("""<robot name="x"><link name="w"/><link name="a"/>
        <joint name="j1" type="fixed"><parent link="w"/><child link="a"/></joint></robot>""", "no revolute"),
])
@pytest.mark.parametrize("backend", ["yourdfpy", "pinocchio"])
def test_bad_urdf_is_a_file_format_error_naming_file_and_element(tmp_path, text, match, backend):
    if backend == "yourdfpy":
        pytest.importorskip("yourdfpy")
    from dynid.models._urdf import read_urdf

    path = tmp_path / "bad.urdf"
    path.write_text(text)
    if backend == "pinocchio" and match in ("'float' is floating", "branches off link"):
        match = "branches|degrees of freedom"  # the Pinocchio reader words these differently
    with pytest.raises(FileFormatError, match=match) as err:
        read_urdf(path, backend=backend)
    assert "bad.urdf" in str(err.value)


def test_missing_urdf_file(tmp_path):
    with pytest.raises(FileFormatError, match="not found"):
        make_model("serial", urdf=tmp_path / "nope.urdf")


@pytest.mark.parametrize("config, match", [
    ({"dh": [{"a": "x"}]}, "dh row 1: a must be a finite number"),
    ({"dh": [{"a": 1, "twist": 0}]}, "unknown key 'twist'"),
    ({"dh": [{"type": "spherical"}]}, "type must be 'revolute' or 'prismatic'"),
    ({"dh": [{}], "convention": "craig"}, "convention must be"),
    ({"dh": [{}], "links": [{}, {}]}, "links has 2 entries"),
    ({"convention": "modified"}, "needs a 'dh' table"),
    ({"dh": [{}], "chain": {"links": []}}, "not both"),
    ({"dh": [{}], "gravity_direction": [0, 0, 0]}, "gravity_direction must be a non-zero"),
    ({"chain": {"links": [{"name": "a"}]}}, "has no 'joint'"),
])
def test_bad_configuration_is_a_config_error(config, match):
    with pytest.raises(ConfigError, match=match):
        make_model("serial", config)


def test_torque_with_payload_and_counterbalance_is_the_regressor_times_the_parameters(backend_path):
    """The fused torque adds the payload to the last body and the cylinder's columns as the regressor and the
    offset do (both paths; the regressor itself is checked against Pinocchio above)."""
    links = _random_links(len(DH_ROWS), seed=8)
    cb = {"joint": 2, "kind": "gas", "base_distance": 0.8, "link_distance": 0.2, "angle_offset": 1.66,
          "area": 0.0017, "volume": 0.00096}
    model = make_model("serial", {"dh": DH_ROWS, "links": links, "counterbalance": [cb],
                                  "payload": {"mass": 3.0, "inertia": 0.02}, "payload_com": [0.01, 0.0, 0.05]})
    q, qd, qdd = _states(6, n_samples=5000, seed=9)
    p = np.concatenate([model.example_parameters()[:-1], [1.5e4]])
    want = model.regressor(q, qd, qdd) @ p + model.offset(q, qd, qdd)
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), want, rtol=0, atol=1e-12 * np.abs(want).max())
