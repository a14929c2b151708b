"""The single-sample path of the runtime equals the batch regressor (the path it replaces)."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.models import Plant, make_model, model_class
from dynid.runtime._compiled import RegressorDynamics, TrigPolyDynamics, compile_dynamics
from dynid.sim import forward_dynamics_terms

CASES = [
    ("puma", {"payload": {"mass": 1.5, "inertia": 0.01}, "payload_lz": 0.08, "joint_sign": [1, -1, 1, 1, -1, 1],
              "joint_offset": [0.1, 0.0, -0.3, 0.0, 0.2, 0.0], "friction": "viscous+coulomb+armature"}),
    ("scara4", {"L1": 0.325, "L2": 0.275, "screw_lead": 0.003, "payload": {"mass": 2.0, "inertia": 0.02}}),
    ("scara3", {"L1": 0.3, "L2": 0.25}),
    ("traverse", {"L2": 0.5, "friction": "viscous+coulomb+offset"}),
    ("rotary3", {"payload": {"mass": 1.0, "inertia": 0.1}}),
    ("linear2", {"friction": "viscous+coulomb_asym+stribeck"}),
]


def _theta(plant, rng):
    p = plant.model.example_parameters()
    p = rng.uniform(0.1, 1.0, plant.n_model) if p is None else np.asarray(p, dtype=float)
    return np.concatenate([p, rng.uniform(0.05, 0.5, plant.friction.n_params)])


@pytest.mark.parametrize("name,config", CASES, ids=[c[0] for c in CASES])
def test_compiled_single_sample_equals_batch(name, config, rng):
    plant = Plant(make_model(name, config))
    theta = _theta(plant, rng)
    dyn = compile_dynamics(plant, theta)
    assert isinstance(dyn, TrigPolyDynamics), dyn.kind
    q, qd, qdd = plant.model.sample_states(rng, 40)
    ref = plant.model.torque(theta[: plant.n_model], q, qd, qdd)           # rigid body + payload
    ws = dyn.new_workspace()
    out = np.empty(plant.n_joints)
    M, h = np.empty((plant.n_joints,) * 2), np.empty(plant.n_joints)
    scale = np.abs(ref).max()
    for k in range(q.shape[0]):
        dyn.torque_into(ws, q[k], qd[k], qdd[k], out)
        np.testing.assert_allclose(out, ref[k], rtol=0, atol=1e-10 * scale)
        # mass matrix and bias agree with the simulator's regressor-based terms (friction excluded)
        dyn.mass_bias_into(ws, q[k], qd[k], M, h)
        no_fric = Plant(plant.model, plant.friction)
        M_ref, h_ref = forward_dynamics_terms(no_fric, np.concatenate([theta[: plant.n_model],
                                                                      np.zeros(plant.friction.n_params)]), q[k], qd[k])
        np.testing.assert_allclose(M, M_ref, atol=1e-10 * scale)
        np.testing.assert_allclose(h, h_ref, atol=1e-10 * scale)


def test_puma_compiles_to_a_short_series():
    """Only q2..q5 enter the AKB model, each with degree 2: a small number of Fourier terms."""
    plant = Plant(make_model("puma"))
    dyn = compile_dynamics(plant, np.concatenate([plant.model.example_parameters(), np.zeros(12)]))
    assert dyn.degrees == (0, 2, 2, 2, 2, 0)
    assert dyn.n_terms <= 5**4 // 2 + 1


def test_delta_falls_back_to_the_batch_regressor(rng):
    """The Delta's kinematics are not trigonometric polynomials: the verification rejects the series."""
    pytest.importorskip("dynid.models.delta", reason="delta3 is not part of this build")
    plant = Plant(model_class("delta3").example())
    theta = np.concatenate([plant.model.example_parameters(), [0.5, 1.0] * 3])
    dyn = compile_dynamics(plant, theta)
    assert isinstance(dyn, RegressorDynamics)
    q, qd, qdd = plant.model.sample_states(rng, 3)
    out = np.empty(3)
    ws = dyn.new_workspace()
    dyn.torque_into(ws, q[1], qd[1], qdd[1], out)
    np.testing.assert_allclose(out, plant.model.torque(theta[: plant.n_model], q[1:2], qd[1:2], qdd[1:2])[0])
