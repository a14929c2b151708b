"""One conformance suite over every registered model (style.md §10, sklearn's common checks).

Physics checks that hold for every Lagrangian model, whatever its parametrisation:
tau = M(q) qdd + c(q, qd) + g(q) with M symmetric, c quadratic in qd, and qd·c = ½ qd·(dM/dt) qd.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.identification.base_params import structural_base
from dynid.models import Plant, model_class, model_names


def example(name):
    model = model_class(name).example()
    p = model.example_parameters()
    if p is None:
        p = np.random.default_rng(0).uniform(0.5, 2.0, model.n_params)
    return model, np.asarray(p, dtype=float)


@pytest.fixture(params=model_names())
def name(request):
    return request.param


def states(model, n=7, seed=1):
    return model.sample_states(np.random.default_rng(seed), n)


def test_shapes_dtype_and_names(name):
    model, _ = example(name)
    q, qd, qdd = states(model)
    Y = model.regressor(q, qd, qdd)
    assert Y.shape == (7, model.n_joints, model.n_params)
    assert Y.dtype == np.float64 and np.isfinite(Y).all()
    assert len(set(model.param_names)) == model.n_params
    slots = [p.slot for p in model.parameters]
    assert len(set(slots)) == len(slots) and min(slots) >= 1
    assert model.offset(q, qd, qdd).shape == (7, model.n_joints)
    assert {j.kind for j in model.joints} <= {"rotary", "linear"}


def test_rejects_wrong_joint_count(name):
    from dynid.errors import ShapeError

    model, _ = example(name)
    q = np.zeros((3, model.n_joints + 1))
    with pytest.raises(ShapeError, match="joint"):
        model.regressor(q, q, q)


def test_affine_in_acceleration_with_symmetric_mass_matrix(name):
    model, p = example(name)
    q, qd, _ = states(model)
    n = model.n_joints
    zero = np.zeros_like(q)
    base = model.torque(p, q, qd, zero)
    for i in range(n):
        e = np.zeros_like(q)
        e[:, i] = 1.0
        col = model.torque(p, q, zero, e) - model.torque(p, q, zero, zero)
        np.testing.assert_allclose(model.torque(p, q, qd, e) - base, col, atol=1e-10, rtol=1e-10)
    for k in range(q.shape[0]):
        M = np.column_stack([model.torque(p, q[k:k + 1], zero[:1], np.eye(n)[i:i + 1])[0]
                             - model.torque(p, q[k:k + 1], zero[:1], zero[:1])[0] for i in range(n)])
        np.testing.assert_allclose(M, M.T, atol=1e-10 * max(1.0, np.abs(M).max()))


def test_velocity_terms_quadratic_and_passive(name):
    model, p = example(name)
    q, qd, _ = states(model)
    zero = np.zeros_like(q)
    g = model.torque(p, q, zero, zero)
    c = model.torque(p, q, qd, zero) - g
    np.testing.assert_allclose(model.torque(p, q, 2.5 * qd, zero) - g, 6.25 * c, atol=1e-9, rtol=1e-9)
    # qd . c(q, qd) = 1/2 qd^T (dM/dq . qd) qd, with dM/dt by central differences along qd
    n, h = model.n_joints, 1e-6

    def mass(qq):
        return np.stack([model.torque(p, qq, zero, np.broadcast_to(np.eye(n)[i], qq.shape)) - model.torque(p, qq, zero, zero)
                         for i in range(n)], axis=-1)

    Mdot = (mass(q + h * qd) - mass(q - h * qd)) / (2 * h)
    lhs = np.einsum("ki,ki->k", qd, c)
    rhs = 0.5 * np.einsum("ki,kij,kj->k", qd, Mdot, qd)
    np.testing.assert_allclose(lhs, rhs, atol=1e-6 * max(1.0, np.abs(lhs).max()), rtol=1e-6)


def test_plant_adds_friction_block_for_every_model(name):
    model, _ = example(name)
    plant = Plant(model)
    q, qd, qdd = states(model)
    Y = plant.regressor(q, qd, qdd)
    assert Y.shape[2] == model.n_params + 2 * model.n_joints
    # block-diagonal friction: joint j's columns are zero on the other joints' rows
    F = Y[:, :, model.n_params:]
    for j in range(model.n_joints):
        others = [i for i in range(model.n_joints) if i != j]
        assert np.all(F[:, others, 2 * j:2 * j + 2] == 0)


def test_structural_base_reproduces_torque(name):
    model, p = example(name)
    plant = Plant(model)
    theta = np.concatenate([p, np.full(plant.friction.n_params, 0.3)])
    base = structural_base(plant)
    beta = base.base_values(theta)
    theta_b = base.to_full(beta, np.zeros(base.dependent.size))
    q, qd, qdd = states(model, 20, seed=5)
    np.testing.assert_allclose(plant.torque(theta_b, q, qd, qdd), plant.torque(theta, q, qd, qdd), atol=1e-9, rtol=1e-9)


def test_describe_is_json_and_complete(name):
    model, _ = example(name)
    d = model.describe()
    json.dumps(d)
    assert d["name"] == name and d["status"] in ("verified", "experimental")
    assert len(d["parameters"]) == model.n_params and all(p["unit"] for p in d["parameters"])
    assert model_class(name).softmc_model >= 1


def test_example_parameters_have_the_right_length(name):
    model = model_class(name).example()
    p = model.example_parameters()
    assert p is None or len(p) == model.n_params


def test_with_payload_is_a_new_model(name):
    model, _ = example(name)
    loaded = model.with_payload(mass=2.0, inertia=0.1)
    assert type(loaded) is type(model) and loaded.payload.mass == 2.0 and model.payload.mass == 0.0
