"""Fourier excitation: series properties, exact gradients, the PUMA comparison with the source's sine program,
limits on the final 1 ms grid (and loud failure when they cannot hold), seeds."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ConfigError
from dynid.excite import (
    FourierOptions, FourierTrajectory, JointLimits, LimitViolationError, check_limits, optimize_fourier, plan_sine,
    predict_identifiability,
)
from dynid.excite.fourier import _Problem, _final_check
from dynid.excite.identifiability import default_theta, plant_base
from dynid.models import Plant, make_model

DEG = np.pi / 180
PUMA_START = np.array([-100, -170, 100, -60, -60, -100]) * DEG     # the source's PUMA SineWave program
PUMA_TARGET = np.array([100, -40, 235, 60, 60, 100]) * DEG
PUMA_BASE = [1.56, 1, 1.31, 1.47, 1.21, 1.17]


def test_series_derivatives_are_consistent():
    """qd and qdd of the series equal central differences of q (and of qd)."""
    rng = np.random.default_rng(0)
    tr = FourierTrajectory(8.0, [0.1, -0.2], rng.normal(size=(2, 5)), rng.normal(size=(2, 5)))
    t = np.linspace(0.0, 8.0, 4001)
    q, qd, qdd = tr.evaluate(t)
    h = t[1] - t[0]
    np.testing.assert_allclose((q[2:] - q[:-2]) / (2 * h), qd[1:-1], atol=1e-4)
    np.testing.assert_allclose((qd[2:] - qd[:-2]) / (2 * h), qdd[1:-1], atol=1e-3)
    np.testing.assert_allclose(q.mean(axis=0)[:1], [0.1], atol=1e-3)     # q0 is the mean position


@pytest.fixture(scope="module")
def crank_design():
    """Vertical crank arm (rotary3), range 0.2..1.4 rad, 1 rad/s, 3 rad/s^2, 20 N m: small and fast."""
    plant = Plant(make_model("rotary3"))
    lim = JointLimits.create(1, position=[[0.2, 1.4]], velocity=[1.0], acceleration=[3.0], torque=[20.0])
    return plant, lim, optimize_fourier(plant, lim, 10.0, FourierOptions(harmonics=5, seed=3))


def test_designed_trajectory_starts_and_ends_at_rest(crank_design):
    _, _, d = crank_design
    tr = d.trajectory
    q, qd, qdd = tr.evaluate([0.0, tr.period_s])
    np.testing.assert_allclose(q[0], q[1], atol=1e-12)
    np.testing.assert_allclose(qd, 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd, 0.0, atol=1e-12)
    assert d.limits_ok and d.success and tr.harmonics == 5 and tr.period_s == 10.0


def test_designed_trajectory_holds_every_limit_on_a_1ms_grid(crank_design):
    plant, lim, d = crank_design
    t, q, qd, qdd = d.trajectory.sample(10.0, 1e-3)
    tau = plant.torque(default_theta(plant), q, qd, qdd)
    assert q.min() >= 0.2 and q.max() <= 1.4
    assert np.abs(qd).max() <= 1.0 and np.abs(qdd).max() <= 3.0 and np.abs(tau).max() <= 20.0
    assert check_limits(lim, t, q, qd, qdd, tau).ok
    assert d.check.dt == pytest.approx(1e-3)


@pytest.mark.parametrize("objective, slow, snr", [("cond", 0.1, 0.0), ("cond_scaled", 0.0, 1.0), ("dopt", 0.0, 0.0)])
def test_objective_gradient_matches_finite_differences(objective, slow, snr):
    plant = Plant(make_model("puma"))
    lim = JointLimits.create(6, position=[[-1.0, 1.2]] * 6, velocity=[2.0] * 6, acceleration=[5.0] * 6, torque=[50.0] * 6)
    opts = FourierOptions(objective=objective, slow_fraction=slow, snr_weight=snr, grid_points=24, harmonics=3)
    prob = _Problem(plant, lim, 10.0, opts, default_theta(plant), plant_base(plant).independent)
    u = prob.initial(np.random.default_rng(1))
    h = 1e-6
    fd = np.array([(prob.fun(u + h * e) - prob.fun(u - h * e)) / (2 * h) for e in np.eye(u.size)])
    np.testing.assert_allclose(prob.grad(u), fd, atol=1e-5 * np.abs(fd).max())
    fdj = np.array([(prob.torque_con(u + h * e) - prob.torque_con(u - h * e)) / (2 * h) for e in np.eye(u.size)]).T
    np.testing.assert_allclose(prob.torque_jac(u), fdj, atol=1e-4 * np.abs(fdj).max())


@pytest.fixture(scope="module")
def puma_designs():
    """The source's PUMA program and a 5-harmonic Fourier design in its box and within its peaks."""
    plant = Plant(make_model("puma"))
    sine = plan_sine(PUMA_START, PUMA_TARGET, PUMA_BASE, factor=0.15, record_s=20.0)
    lim = JointLimits.create(6, position=np.column_stack([PUMA_START, PUMA_TARGET]), velocity=sine.peak_velocity,
                             acceleration=sine.peak_acceleration)
    return plant, sine, lim, optimize_fourier(plant, lim, 20.0, FourierOptions(harmonics=5, seed=0))


def test_puma_fourier_has_at_most_half_the_condition_number_of_the_sine_program(puma_designs):
    plant, sine, lim, d = puma_designs
    _, q, qd, qdd = sine.sample(1e-3)
    sine_cond = predict_identifiability(plant, q, qd, qdd, record_s=20.0).condition_number
    assert sine_cond == pytest.approx(409.4, rel=0.01)
    assert d.condition_number <= 0.5 * sine_cond
    t, q, qd, qdd = d.trajectory.sample(20.0, 1e-3)
    assert check_limits(lim, t, q, qd, qdd).ok and d.limits_ok
    assert predict_identifiability(plant, q, qd, qdd, record_s=20.0).condition_number == pytest.approx(d.condition_number,
                                                                                                       rel=1e-6)


def test_same_seed_same_trajectory_other_seed_other_trajectory(crank_design):
    plant, lim, d = crank_design
    again = optimize_fourier(plant, lim, 10.0, FourierOptions(harmonics=5, seed=3))
    np.testing.assert_array_equal(again.trajectory.a, d.trajectory.a)
    np.testing.assert_array_equal(again.trajectory.b, d.trajectory.b)
    other = optimize_fourier(plant, lim, 10.0, FourierOptions(harmonics=5, seed=4))
    assert not np.array_equal(other.trajectory.a, d.trajectory.a)


def test_infeasible_torque_limits_fail_loudly():
    """Gravity alone needs >= 19.6 sin(0.5) = 9.4 N m anywhere in 0.5..1.5 rad: a 5 N m limit cannot hold."""
    plant = Plant(make_model("rotary3"))
    lim = JointLimits.create(1, position=[[0.5, 1.5]], velocity=[1.0], acceleration=[3.0], torque=[5.0])
    with pytest.raises(LimitViolationError, match="torque .* exceeds its limit 5 N m"):
        optimize_fourier(plant, lim, 10.0, FourierOptions(harmonics=3, restarts=1))
    d = optimize_fourier(plant, lim, 10.0, FourierOptions(harmonics=3, restarts=1), strict=False)
    assert not d.limits_ok and not d.success and any("torque" in v for v in d.check.violations)


def test_a_peak_missed_by_the_coarse_grid_is_repaired_on_the_fine_grid():
    plant = Plant(make_model("rotary1"))
    tr = FourierTrajectory(10.0, [0.0], [[1.1, -1.1, 0.0]], [[0.0, 0.0, 0.0]])
    lim = JointLimits.create(1, position=[[-5.0, 5.0]], velocity=[1.0], acceleration=[10.0])
    _, q, qd, _ = tr.sample(10.0, 1e-3)
    assert np.abs(qd).max() > 1.0
    check, scale, fixed = _final_check(plant, tr, lim, 10.0, 1e-3, None)
    assert check.ok and scale < 1.0
    _, _, qd2, _ = fixed.sample(10.0, 1e-3)
    assert np.abs(qd2).max() == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("kw, match", [
    ({"velocity": [np.nan]}, "finite velocity limit"),
    ({"position": None}, "finite position"),
])
def test_missing_limits_are_a_configuration_error(kw, match):
    plant = Plant(make_model("rotary1"))
    base = {"position": [[-1.0, 1.0]], "velocity": [1.0], "acceleration": [2.0]}
    base.update(kw)
    with pytest.raises(ConfigError, match=match):
        optimize_fourier(plant, JointLimits.create(1, **base), 10.0)


def test_options_are_validated():
    with pytest.raises(ConfigError, match="objective"):
        FourierOptions(objective="aopt")
    with pytest.raises(ConfigError, match="harmonics"):
        FourierOptions(harmonics=0)
