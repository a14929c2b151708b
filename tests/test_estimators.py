"""Estimators: OLS, per-joint WLS, and IRLS against gross outliers."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.signal.conditioning import condition
from dynid.errors import ConfigError
from dynid.identification import IdentifyOptions, identify
from dynid.models import Plant, make_model
from dynid.recording import Recording
from dynid.sim import SimOptions, SineMotion, simulate

PLANT = Plant(make_model("rotary3"))
THETA = np.array([0.5, 0.0, 20.0, 0.0, 0.8, 1.5])


def model_error(res, val):
    """NRMSE of the identified model against the TRUE model on the validation kinematics (noise-free)."""
    cond = condition(val, res.cond.options, require_motion=False)
    pred = res.plant.torque(res.theta, cond.q, cond.qd, cond.qdd)
    true = PLANT.torque(THETA, cond.q, cond.qd, cond.qdd)
    return float(np.sqrt(np.mean((pred - true) ** 2)) / np.sqrt(np.mean(true**2)))


@pytest.fixture(scope="module")
def runs():
    rec = simulate(PLANT, THETA, SineMotion([-2.1], [2.1], [0.5], record_s=20), SimOptions(noise=0.005), seed=1)
    val = simulate(PLANT, THETA, SineMotion([-1.0], [1.8], [0.8], record_s=10), SimOptions(noise=0.0), seed=2)
    rng = np.random.default_rng(0)
    tau = rec.tau.copy()
    k = rng.choice(rec.n_samples, int(0.05 * rec.n_samples), replace=False)  # 5 % gross outliers
    tau[k, 0] += rng.choice([-1, 1], k.size) * rng.uniform(0.3, 1.0, k.size) * np.abs(rec.tau).max()
    return rec, Recording(rec.t, rec.q, tau), val


def test_irls_keeps_the_error_within_1_5x_of_clean_with_5_percent_outliers(runs):
    rec, bad, val = runs
    clean = model_error(identify(rec, PLANT), val)
    wls = model_error(identify(bad, PLANT), val)
    irls = identify(bad, PLANT, IdentifyOptions(estimator="irls"))
    robust = model_error(irls, val)
    assert robust <= 1.5 * clean, (robust, clean)
    assert wls > 2 * robust  # the outliers really hurt a plain least-squares fit
    assert any("rejected as outliers" in n for n in irls.notes)  # the spikes were found
    assert irls.estimator == "irls" and np.array_equal(irls.cond.tau_raw, bad.tau[irls.cond.start:irls.cond.start + irls.cond.data_length])
    assert irls.values["A1.coulomb"] == pytest.approx(1.5, rel=0.01)


def test_irls_on_clean_data_matches_least_squares(runs):
    rec, _, _ = runs
    a = identify(rec, PLANT)
    b = identify(rec, PLANT, IdentifyOptions(estimator="irls"))
    np.testing.assert_allclose(b.theta, a.theta, rtol=0.01, atol=1e-9)


def test_ols_equals_wls_for_one_joint_and_unknown_estimator_rejected(runs):
    rec, _, _ = runs
    np.testing.assert_allclose(identify(rec, PLANT, IdentifyOptions(estimator="ols")).theta,
                               identify(rec, PLANT).theta, rtol=1e-10)
    with pytest.raises(ConfigError, match="estimator"):
        IdentifyOptions(estimator="magic")
