"""simulate(): identification runs on the closed-loop engine. The recorded torque is the plant's torque at
the central differences of the recorded positions (what identification relies on), with coupled-motor
friction, however sharp the Coulomb step; saturation and disturbances behave as documented."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ConfigError
from dynid.models import Plant, make_model
from dynid.runtime import CollisionMonitor
from dynid.sim import SimOptions, SineMotion, simulate
from dynid.sim.closed_loop import Command, DriveOptions, ExternalStep, ServoGains, run_closed_loop

FINE = {"noise": 0.0, "encoder_bits": 48, "linear_resolution": 1e-14}   # no quantisation in the differences
CRANK = Plant(make_model("rotary3"))
CRANK_THETA = np.array([0.5, 0.0, 20.0, 0.0, 0.8, 1.5])
CRANK_MOTION = SineMotion([-2.1], [2.1], [0.5], record_s=6.0, settle_s=1.0)


def _coupled_scara():
    """scara3 whose motor 2 also turns with joint 1 (u = (0.4, 1, 0)), with that motor's friction."""
    cfg = {"L1": 0.325, "L2": 0.275, "friction": "viscous+coulomb+motor_viscous+motor_coulomb",
           "transmission": {"gear_ratios": [80.0, 50.0, 30.0], "coupling": [[2, 1, 20.0]], "recorded": "joint"}}
    plant = Plant(make_model("scara3", cfg))
    theta = np.concatenate([plant.model.example_parameters(), [2.0, 3.0, 1.5, 2.0, 30.0, 10.0, 0.4, 1.2]])
    motion = SineMotion([-1.0, -1.2, 0.0], [1.5, 1.0, 0.15], [0.3, 0.41, 0.47], record_s=6.0, settle_s=1.0)
    return plant, theta, motion


def _residual(plant, theta, motion, rec, options):
    """Recorded torque minus the plant's at the central differences ``(N-2, n)``, the samples faster than
    2 % of the peak commanded speed on every joint and coupled motor (away from reversals, where the
    Coulomb step makes the robot stick), and the peak torque per joint."""
    Ts = options.sample_period
    q = rec.q
    qd = (q[2:] - q[:-2]) / (2 * Ts)
    qdd = (q[2:] - 2 * q[1:-1] + q[:-2]) / Ts**2
    v_peak = np.abs(motion.command(np.arange(int(round(motion.duration / Ts)) + 1) * Ts)[1]).max(axis=0)
    eps = options.coulomb_smoothing * v_peak
    away = np.all(np.abs(qd) > 0.02 * v_peak, axis=1)
    motor_sign = None
    if plant.friction.n_motor_params:
        v = plant.friction.motor_velocities(qd)
        motor_sign = np.tanh(v / plant.friction.motor_thresholds(eps))
        away &= np.all(np.abs(v) > 0.02 * plant.friction.motor_thresholds(v_peak), axis=1)
    tau = plant.torque(theta, q[1:-1], qd, qdd, sign=np.tanh(qd / eps), motor_sign=motor_sign)
    return rec.tau[1:-1] - tau, away, np.abs(rec.tau).max(axis=0)


@pytest.mark.parametrize("smoothing", [1e-3, 1e-5])
def test_record_is_the_plant_at_the_central_differences_with_a_coupled_motor(smoothing):
    """Semi-implicit Euler with the drive torque centred on the sample: away from friction transitions the
    record is the plant's torque to 3e-4 of the peak (the cycle mean, half a cycle late, misses that), also
    with a Coulomb step 100x sharper than the default."""
    plant, theta, motion = _coupled_scara()
    opts = SimOptions(coulomb_smoothing=smoothing, **FINE)
    rec = simulate(plant, theta, motion, opts)
    assert rec.t[0] == 0.0 and rec.t.size == 6000 and np.all(np.isfinite(rec.tau))
    r, away, peak = _residual(plant, theta, motion, rec, opts)
    assert away.mean() > 0.8
    np.testing.assert_array_less(np.sqrt(np.mean(r[away] ** 2, axis=0)), 3e-4 * peak)
    q_cmd = motion.command(rec.t + motion.settle_s)[0]
    assert np.abs(rec.q - q_cmd).max() < 2e-3                               # the servo follows


def test_a_model_that_does_not_compile_is_evaluated_at_every_step():
    """A spring axis (linear3: the force depends on the linear joint's position, so the batch regressor is
    the plant): frozen over the cycle, the spring force would lag and look like -K·h/2 of viscous damping."""
    plant = Plant(make_model("linear3"))
    theta = [8.0, 2000.0, 100.0, 30.0, 10.0]
    motion = SineMotion([-0.2], [0.2], [0.9], record_s=4.0, settle_s=1.0)
    opts = SimOptions(**FINE)
    rec = simulate(plant, theta, motion, opts)
    r, away, peak = _residual(plant, theta, motion, rec, opts)
    assert np.sqrt(np.mean(r[away] ** 2)) < 3e-4 * peak[0]


def test_a_sticking_joint_is_integrated_stably():
    """1 N m against 2 N m of Coulomb friction with no servo: the joint creeps at the velocity where
    Fc·tanh(v/ε) = 1 N m. Its transition is 500x too stiff for the explicit step (h·Fc/(ε·I) = 500), which
    would chatter across zero instead (a mean of 125 ε); the linearly-implicit step lands on it."""
    plant, eps = Plant(make_model("rotary1")), 1e-4
    t = np.arange(0.0, 1.0, 1e-3)
    z = np.zeros((t.size, 1))
    run = run_closed_loop(plant, [0.01, 0.0, 2.0], Command(t, z, z, z), ServoGains([0.0], [0.0], [0.0]),
                          DriveOptions(coulomb_smoothing=eps), external_torque=ExternalStep(0.0, 0, 1.0))
    v = np.diff(run.q[100:, 0]) / 1e-3
    np.testing.assert_allclose(v, eps * np.arctanh(0.5), rtol=1e-6)


def test_torque_limit_saturates_the_drive_and_the_record_stays_consistent():
    free = simulate(CRANK, CRANK_THETA, CRANK_MOTION, SimOptions(**FINE))
    limit = 0.7 * np.abs(free.tau).max()
    opts = SimOptions(torque_limit=[limit], **FINE)
    rec = simulate(CRANK, CRANK_THETA, CRANK_MOTION, opts)
    assert np.abs(rec.tau).max() <= limit * (1 + 1e-12)
    assert np.abs(rec.tau).max() >= limit * (1 - 1e-6)                       # it does saturate
    assert np.abs(rec.q - free.q).max() > 0.05                              # and lags the command
    r, away, peak = _residual(CRANK, CRANK_THETA, CRANK_MOTION, rec, opts)
    assert np.sqrt(np.mean(r[away] ** 2)) < 1e-3 * peak[0]


def test_external_torque_moves_the_robot_but_is_not_in_the_record():
    """A 3 N m disturbance from 2.0 to 2.5 s (recording clock): the drive supplies the load minus it."""
    opts = SimOptions(**FINE)

    def push(t):
        return np.array([3.0 if 2.0 <= t < 2.5 else 0.0])

    rec = simulate(CRANK, CRANK_THETA, CRANK_MOTION, opts, external_torque=push)
    r, away, _ = _residual(CRANK, CRANK_THETA, CRANK_MOTION, rec, opts)
    t = rec.t[1:-1]
    during = away & (t > 2.02) & (t < 2.48)
    outside = away & ((t < 1.98) | (t > 2.6))
    assert np.mean(r[during, 0]) == pytest.approx(-3.0, abs=0.02)
    assert np.abs(np.mean(r[outside, 0])) < 0.01


def test_drive_options_are_checked():
    with pytest.raises(ConfigError, match="feedback_window"):
        DriveOptions(feedback_window="late")
    with pytest.raises(ConfigError, match="plant_update"):
        DriveOptions(plant_update="never")
    with pytest.raises(ConfigError, match="coulomb_smoothing"):
        DriveOptions(coulomb_smoothing=[0.01, 0.0])
    with pytest.raises(ConfigError, match="command_delay_cycles"):
        DriveOptions(command_delay_cycles=-1)
    t = np.arange(0.0, 0.05, 1e-3)
    z = np.zeros((t.size, 1))
    with pytest.raises(ConfigError, match="feedback_window='cycle'"):
        run_closed_loop(CRANK, CRANK_THETA, Command(t, z, z, z), ServoGains([1.0], [1.0], [1.0]),
                        DriveOptions(feedback_window="centred"), monitor=CollisionMonitor([0.5], 0.25, 0.1))
