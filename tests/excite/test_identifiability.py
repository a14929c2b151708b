"""Predicted identifiability: condition numbers, expected parameter std (checked by Monte Carlo), torques, coverage."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.excite import JointLimits, condition_numbers, observation_matrix, plan_sine, predict_identifiability
from dynid.excite.identifiability import plant_base
from dynid.models import Plant, make_model


def test_condition_numbers_match_the_singular_values(rng):
    W = rng.normal(size=(300, 5)) * np.array([1.0, 10.0, 0.1, 3.0, 100.0])
    s = np.linalg.svd(W, compute_uv=False)
    Ws = W / np.linalg.norm(W, axis=0)
    s2 = np.linalg.svd(Ws, compute_uv=False)
    raw, scaled = condition_numbers(W)
    assert raw == pytest.approx(s[0] / s[-1], rel=1e-8)
    assert scaled == pytest.approx(s2[0] / s2[-1], rel=1e-8)
    assert condition_numbers(np.column_stack([W[:, 0], W[:, 0]])) == (float("inf"), float("inf"))


def test_observation_matrix_uses_the_structural_base_and_stacks_sample_major():
    plant = Plant(make_model("rotary3"))                 # L^2 and g*L are payload terms: not in the base
    q = np.linspace(-1, 1, 7)[:, None]
    W = observation_matrix(plant, q, np.ones_like(q), np.zeros_like(q))
    base = plant_base(plant)
    assert [plant.param_names[i] for i in base.independent] == ["I", "M*g*A", "A1.viscous", "A1.coulomb"]
    np.testing.assert_allclose(W[:, 1], -np.sin(q[:, 0]))
    assert W.shape == (7, 4)


def test_predicted_std_matches_monte_carlo():
    """Single rotary axis, tau = I qdd + Fv qd + Fc sign(qd), white noise of 0.5 % of the peak torque at
    1 kHz: the std predicted from a 10 ms grid equals the spread of least-squares estimates on 1 kHz data."""
    plant = Plant(make_model("rotary1"))
    theta = np.array([0.5, 0.8, 1.5])
    plan = plan_sine([-1.0], [1.0], [0.7], record_s=5.0)
    _, q, qd, qdd = plan.sample(1e-3)
    W = observation_matrix(plant, q, qd, qdd)
    tau = W @ theta
    sigma = 0.005 * np.abs(tau).max()
    rng = np.random.default_rng(3)
    est = np.array([np.linalg.lstsq(W, tau + rng.normal(size=tau.size) * sigma, rcond=None)[0] for _ in range(400)])
    _, qg, qdg, qddg = plan.sample(1e-2)
    pred = predict_identifiability(plant, qg, qdg, qddg, record_s=5.0, theta=theta, noise=0.005, sample_period_s=1e-3)
    np.testing.assert_allclose(pred.std, est.std(axis=0), rtol=0.15)
    np.testing.assert_allclose(pred.relative_std, pred.std / theta)
    assert pred.poorly_excited == ()


def test_a_barely_moving_joint_is_poorly_excited_and_saturation_is_warned():
    plant = Plant(make_model("rotary3"))
    theta = np.array([0.5, 0.36, 19.6, 5.9, 0.8, 1.5])
    plan = plan_sine([-0.01], [0.01], [0.05], record_s=20.0)       # 1 degree at 0.05 Hz: no inertia signal
    _, q, qd, qdd = plan.sample(1e-2)
    lim = JointLimits.create(1, position=[[-np.pi, np.pi]], torque=[0.1])
    pred = predict_identifiability(plant, q, qd, qdd, record_s=20.0, theta=theta, limits=lim)
    assert "I" in pred.poorly_excited
    assert pred.saturation and "exceeds its limit 0.1 N m: the drive saturates" in pred.saturation[0]
    assert pred.coverage[0] == pytest.approx(0.02 / (2 * np.pi), rel=1e-3)
    d = pred.to_dict()
    assert {"condition_number", "condition_number_scaled", "relative_std", "poorly_excited", "peak_torque",
            "saturation", "coverage"} <= set(d)


def test_without_parameter_values_only_the_conditioning_is_predicted():
    plant = Plant(make_model("rotary1"))
    plant.model.example_parameters = lambda: None                # a model with no example robot
    plan = plan_sine([-1.0], [1.0], [0.7], record_s=5.0)
    _, q, qd, qdd = plan.sample(1e-2)
    pred = predict_identifiability(plant, q, qd, qdd, record_s=5.0)
    assert pred.peak_torque is None and np.all(np.isnan(pred.std)) and np.isfinite(pred.condition_number)
