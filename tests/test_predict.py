"""Prediction: the identified model's torque for a new motion, conditioned as in the identification."""

from __future__ import annotations

import numpy as np

from dynid.identification import identify
from dynid.models import Plant, make_model
from dynid.fitted import predict
from dynid.sim import SimOptions, SineMotion, simulate


def test_stick_aware_prediction_follows_the_static_friction_sweep():
    """On an axis that sticks at its reversals, the prediction uses the filtered friction transition
    around the sticks (the torque passes through the static range there) and is closer to the
    measured torque than the sharp step; elsewhere both are the same."""
    plant = Plant(make_model("linear2"))
    theta = [1.5, 1.5 * 9.80665, 0.0, 30.0, 25.0]
    res = identify(simulate(plant, theta, SineMotion([0.0], [0.15], [0.43], record_s=15), SimOptions(), seed=1), plant)
    val = simulate(plant, theta, SineMotion([0.02], [0.13], [0.37], record_s=10), SimOptions(), seed=2)
    idm = res.model
    pred = predict(idm, val)
    meas = pred.measured
    from dynid.signal.conditioning import condition

    c = condition(val, idm.conditioning_options(), require_motion=False)
    assert c.stuck.any()
    sharp = res.plant.torque(res.theta, c.q, c.qd, c.qdd)
    err = lambda x: np.sqrt(np.mean((x - meas) ** 2))  # noqa: E731
    assert err(pred.tau) < 0.8 * err(sharp)
    np.testing.assert_allclose(pred.tau[~c.near_stuck], sharp[~c.near_stuck])


def test_at_rest_the_coulomb_term_is_zero_not_the_sign_of_noise():
    """A joint at rest holds an unknown static friction torque in [-Fc, Fc]: the prediction gives the
    Coulomb term 0 there (the best guess) instead of +-Fc chosen by the sign of velocity noise; while
    moving, the physical step sign(qd) applies."""
    rng = np.random.default_rng(3)
    I, FV, FC = 0.05, 0.4, 0.3
    t = np.arange(0.0, 12.0, 1e-3)
    w = 2 * np.pi * 0.5
    moving = t < 8.0
    q = np.where(moving, np.sin(w * t), np.sin(w * 8.0))
    q = q + 1e-6 * rng.standard_normal(t.size)                      # encoder noise: the sign of qd at rest is noise
    tau = np.where(moving, I * -w**2 * np.sin(w * t) + FV * w * np.cos(w * t) + FC * np.sign(np.cos(w * t)),
                   0.5 * FC)                                         # held by static friction
    from dynid.recording import Recording

    rec = Recording(t, q, tau)
    plant = Plant(make_model("rotary1", {"friction": "viscous+coulomb"}))
    res = identify(rec.slice(0, 8000), plant)
    idm = res.model
    pred = predict(idm, rec)
    rest = pred.t > 9.0
    assert np.abs(pred.tau[rest]).max() < 0.02 * FC
    fast = np.abs(np.cos(w * pred.t)) > 0.3
    fast &= pred.t < 7.5
    np.testing.assert_allclose(pred.tau[fast, 0], tau[pred.rows][fast], atol=0.05 * FC)
