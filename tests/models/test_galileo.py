"""Galileo spherical robot (experimental interpretation) against Pinocchio.

The reference is a Pinocchio serial chain built from physical bodies of the same interpretation
(yaw column, shoulder housing, balance mass, radial arm, roll flange, payload), with its own
masses, centres of mass and inertia tensors; the catalogue parameters are computed from them here.
Pinocchio's recursive Newton–Euler (``rnea``) is the reference torque.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dynid.identification.base_params import structural_base
from dynid.models import Plant, make_model, model_class

G = 9.80665


@dataclass(frozen=True)
class GalileoRobot:
    """Physical data (SI)."""

    col_inertia: float = 0.3        # yaw column about z
    col_mass: float = 8.0
    housing_axial: float = 0.25     # about the pitch axis
    housing_perp: float = 0.18      # perpendicular to the pitch axis
    housing_mass: float = 5.0
    motor1: float = 0.4             # reflected rotor inertias of axes 1 and 2
    motor2: float = 0.2
    mB: float = 11.0
    TB: float = 0.27
    arm_mass: float = 5.5
    arm_D: float = 0.31             # flange back to the arm's COM
    arm_axial: float = 0.012
    arm_perp: float = 0.19
    flange_mass: float = 0.7
    flange_c: float = 0.03          # flange COM in front of the flange point
    flange_axial: float = 0.003
    flange_perp: float = 0.002
    mP: float = 2.5
    TP: float = 0.09
    IR: float = 0.011
    payload_perp: float = 0.007

    def parameters(self) -> np.ndarray:
        a = self
        return np.array([
            a.mP, a.mB, a.TP, a.TB, a.IR,
            a.col_inertia + a.housing_perp + a.motor1,
            a.housing_axial + a.motor2,
            a.arm_mass + a.flange_mass,
            a.arm_mass * a.arm_D - a.flange_mass * a.flange_c,
            a.arm_perp + a.arm_mass * a.arm_D**2 + a.flange_perp + a.flange_mass * a.flange_c**2 + a.payload_perp,
            a.arm_axial,
            a.flange_axial,
        ])

    def pinocchio(self, with_payload: bool = True):
        import pinocchio as pin

        a = self
        m = pin.Model()
        m.gravity.linear = np.array([0.0, 0.0, -G])
        eye = pin.SE3.Identity()
        j1 = m.addJoint(0, pin.JointModelRZ(), eye, "yaw")
        m.appendBodyToJoint(j1, pin.Inertia(a.col_mass, np.array([0.0, 0.0, -0.2]),
                                            np.diag([0.2, 0.2, a.col_inertia])), eye)
        # pitch about a = (sin q1, −cos q1, 0): the −y axis of the yaw frame; positive q2 raises x
        j2 = m.addJoint(j1, pin.JointModelRevoluteUnaligned(np.array([0.0, -1.0, 0.0])), eye, "pitch")
        m.appendBodyToJoint(j2, pin.Inertia(a.housing_mass, np.zeros(3),
                                            np.diag([a.housing_perp, a.housing_axial, a.housing_perp])), eye)
        m.appendBodyToJoint(j2, pin.Inertia(a.mB, np.array([-a.TB, 0.0, 0.0]), np.zeros((3, 3))), eye)
        j3 = m.addJoint(j2, pin.JointModelPX(), eye, "radial")
        m.appendBodyToJoint(j3, pin.Inertia(a.arm_mass, np.array([-a.arm_D, 0.0, 0.0]),
                                            np.diag([a.arm_axial, a.arm_perp, a.arm_perp])), eye)
        j4 = m.addJoint(j3, pin.JointModelRX(), eye, "roll")
        m.appendBodyToJoint(j4, pin.Inertia(a.flange_mass, np.array([a.flange_c, 0.0, 0.0]),
                                            np.diag([a.flange_axial, a.flange_perp, a.flange_perp])), eye)
        if with_payload:
            m.appendBodyToJoint(j4, pin.Inertia(a.mP, np.array([a.TP, 0.0, 0.0]),
                                                np.diag([a.IR, a.payload_perp, a.payload_perp])), eye)
        m.armature = np.array([a.motor1, a.motor2, 0.0, 0.0])
        return m

    def config(self) -> dict:
        return {"parameters": {"TP": self.TP, "TB": self.TB}}


@pytest.fixture
def states(rng):
    n = 60
    q = np.column_stack([rng.uniform(-np.pi, np.pi, n), rng.uniform(-1.3, 1.3, n), rng.uniform(0.2, 1.0, n),
                         rng.uniform(-np.pi, np.pi, n)])
    return q, rng.normal(size=(n, 4)) * 1.5, rng.normal(size=(n, 4)) * 5.0


def _rnea(pmodel, q, qd, qdd):
    import pinocchio as pin

    data = pmodel.createData()
    return np.array([pin.rnea(pmodel, data, q[k], qd[k], qdd[k]).copy() for k in range(q.shape[0])])


def test_regressor_equals_pinocchio_rnea(states):
    pytest.importorskip("pinocchio")
    rb = GalileoRobot()
    q, qd, qdd = states
    ref = _rnea(rb.pinocchio(), q, qd, qdd)
    model = make_model("galileo", rb.config())
    tau = model.torque(rb.parameters(), q, qd, qdd)
    scale = np.abs(ref).max(axis=1, keepdims=True)
    assert np.abs(tau - ref).max() / scale.min() < 1e-10
    np.testing.assert_allclose(tau, ref, rtol=1e-10, atol=1e-10 * scale.max())


def test_configured_payload_equals_catalogue_payload(states):
    """The common ``payload`` key puts a known load where mP/IR sit: Pinocchio with the payload body
    equals the model with mP = IR = 0, payload {mass: mP, inertia: IR} (payload_perp in J_AF)."""
    pytest.importorskip("pinocchio")
    rb = GalileoRobot()
    q, qd, qdd = states
    ref = _rnea(rb.pinocchio(), q, qd, qdd)
    model = make_model("galileo", {**rb.config(), "payload": {"mass": rb.mP, "inertia": rb.IR}})
    p = rb.parameters()
    p[0] = p[4] = 0.0
    np.testing.assert_allclose(model.torque(p, q, qd, qdd), ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


def test_interpretation_is_declared():
    m = model_class("galileo").example()
    assert m.status == "experimental"
    assert "cut off after item 5" in m.notes
    invented = m.parameters[5:]
    assert all("INTERPRETATION" in p.description for p in invented)
    assert [p.name for p in m.parameters[:5]] == ["mP", "mB", "TP", "TB", "IR"]
    assert [p.role for p in m.parameters[:5]] == ["payload", "dynamic", "constant", "constant", "payload"]
    assert [j.kind for j in m.joints] == ["rotary", "rotary", "linear", "rotary"]
    assert m.config.parameters["TP"] == m.example_parameters()[2]


def test_base_parameters_merge_payload_and_housing_terms():
    """Structurally: mP merges with the arm (mP = M_A − TP·M_A*D_A + TP²·J_AF), IR with J_R, and the
    arm's axial inertia with the others: J_AX = J_Y + J_S − J_AF (cos² + sin² = 1)."""
    plant = Plant(model_class("galileo").example())
    base = structural_base(plant)
    names = plant.param_names
    dep = {names[j] for j in base.dependent}
    assert dep == {"mP", "IR", "J_AX", "TP", "TB"}
    ind = [names[i] for i in base.independent]
    K = {names[j]: dict(zip(ind, base.K[:, c])) for c, j in enumerate(base.dependent)}
    tp = 0.08
    assert [K["mP"][k] for k in ("M_A", "M_A*D_A", "J_AF", "mB")] == pytest.approx([1.0, -tp, tp**2, 0.0], abs=1e-9)
    assert K["IR"]["J_R"] == pytest.approx(1.0)
    assert [K["J_AX"][k] for k in ("J_Y", "J_S", "J_AF")] == pytest.approx([1.0, 1.0, -1.0])
