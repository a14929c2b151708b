"""Closed-loop simulator, motion profiles and the settling / peak-to-peak metrics."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.models import Plant, make_model
from dynid.runtime import CollisionMonitor, FeedForward
from dynid.sim.closed_loop import (Command, DriveOptions, ExternalStep, ServoGains, joint_inertia, peak_to_peak,
                                   run_closed_loop, settling_time)
from dynid.sim.profile import line_path, scurve
from dynid.sim.scenarios import scara_ik


def test_settling_time_softmc_semantics():
    """ISSETTLED: after the profile ends, |error| <= PESETTLE continuously for TIMESETTLE."""
    t = np.arange(0.0, 1.0, 1e-3)
    e = np.where(t < 0.5, 1.0, np.exp(-(t - 0.5) / 0.05))                  # e = exp(-(t - t_end)/tau)
    assert settling_time(t, e, 0.5, 0.01, 0.0) == pytest.approx(0.05 * np.log(100), abs=1e-3)
    assert settling_time(t, e, 0.5, 0.01, 0.02) == pytest.approx(0.05 * np.log(100) + 0.02, abs=1e-3)
    # a brief dip into the window does not settle: the timer restarts when the error leaves it
    bump = e.copy()
    bump[(t > 0.74) & (t < 0.745)] = 0.5                                  # settled only at 0.765 s
    assert settling_time(t, bump, 0.5, 0.01, 0.02) == pytest.approx(0.745 - 0.5 + 0.02, abs=2e-3)
    # every joint with its own window; NaN when the data end first
    two = np.column_stack([e, 10 * e])
    assert settling_time(t, two, 0.5, [0.01, 0.1], 0.0) == pytest.approx(0.05 * np.log(100), abs=1e-3)
    assert np.isnan(settling_time(t, two, 0.5, [0.01, 1e-9], 0.0))


def test_peak_to_peak():
    t = np.arange(0, 2, 0.01)
    x = np.column_stack([np.sin(2 * np.pi * t), np.where(t < 1, 5.0, 0.0)])
    np.testing.assert_allclose(peak_to_peak(x, t, 1.0), [2.0, 0.0], atol=1e-3)


@pytest.mark.parametrize("distance,v,a,j", [(0.6, 0.9, 8.0, 160.0), (0.05, 0.9, 8.0, 160.0), (1.0, 0.5, 20.0, 50.0)])
def test_scurve_respects_its_limits(distance, v, a, j):
    dt = 1e-4
    p = scurve(distance, v, a, j, dt, t_before=0.01, t_after=0.05)
    assert p.s[-1] == distance and p.s[0] == 0.0 and p.sd[-1] == 0.0
    assert np.all(np.abs(p.sd) <= v * (1 + 1e-9)) and np.all(np.abs(p.sdd) <= a * (1 + 1e-9))
    jerk = np.diff(p.sdd) / dt
    assert np.all(np.abs(jerk) <= j * (1 + 1e-6))
    np.testing.assert_allclose(np.diff(p.s) / dt, 0.5 * (p.sd[1:] + p.sd[:-1]), atol=1e-6 * v + 1e-9)
    assert p.t_end <= p.t[-1]


def test_scara_inverse_kinematics_round_trip(rng):
    L1, L2 = 0.325, 0.275
    prof = scurve(0.6, 0.9, 8.0, 160.0, 1e-3)
    p, pd, pdd = line_path([0.42, -0.3], [0.42, 0.3], prof)
    q, qd, qdd = scara_ik(L1, L2, p, pd, pdd)
    fk = np.column_stack([L1 * np.cos(q[:, 0]) + L2 * np.cos(q[:, 0] + q[:, 1]),
                          L1 * np.sin(q[:, 0]) + L2 * np.sin(q[:, 0] + q[:, 1])])
    np.testing.assert_allclose(fk, p, atol=1e-12)
    np.testing.assert_allclose(np.gradient(q, 1e-3, axis=0)[2:-2], qd[2:-2], atol=2e-3)
    np.testing.assert_allclose(np.gradient(qd, 1e-3, axis=0)[5:-5], qdd[5:-5], atol=0.05 * np.abs(qdd).max())


def _crank():
    """Vertical crank arm (rotary3): I = 0.4 kg m², MgA = 6 N m, viscous 0.2, Coulomb 0.5."""
    plant = Plant(make_model("rotary3"))
    theta = np.array([0.4, 0.0, 6.0, 0.0, 0.2, 0.5])
    t = np.arange(0, 3.0, 1e-3)
    w = 2 * np.pi * 0.7
    cmd = Command(t, (0.3 - 0.8 * np.cos(w * t))[:, None], (0.8 * w * np.sin(w * t))[:, None],
                  (0.8 * w * w * np.cos(w * t))[:, None])                 # starts at rest, as SineWave
    gains = ServoGains.tune(joint_inertia(plant, theta, [0.3]), 25.0)
    return plant, theta, cmd, gains


def test_feedforward_through_the_matching_delay_removes_the_dynamic_error():
    """With the exact model the additive torque cuts the drive's following error; delayed by the drive's command
    delay (3 cycles: AdditiveTorqueDelay's purpose) it leaves the servo the least to correct (Tfb − Taddcmd,
    the collision monitor's error), less than any other delay."""
    plant, theta, cmd, gains = _crank()
    drive = DriveOptions(command_delay_cycles=3, encoder_resolution=2 * np.pi / 2**20 / 50)
    lag = 3
    err, fb = {}, {}
    for delay in (None, 0, 1, 2, 3, 4, 5, 6):
        ff = None if delay is None else FeedForward(plant, theta, delay_cycles=delay)
        run = run_closed_loop(plant, theta, cmd, gains, drive, feedforward=ff)
        e = run.pcmd[: -lag] - run.pfb[lag:]          # the command the drive received minus the position
        err[delay] = float(np.abs(e[500:]).max())
        fb[delay] = float(np.sqrt(np.mean((run.tfb - run.taddcmd)[500:] ** 2)))
    assert err[3] < 0.2 * err[None]
    assert min(fb, key=lambda d: fb[d] if d is not None else np.inf) == 3, fb


def test_external_step_is_detected_after_it_starts():
    plant, theta, cmd, gains = _crank()
    drive = DriveOptions(feedback_noise=0.01)
    ff = FeedForward(plant, theta, delay_cycles=3)
    mon = CollisionMonitor([0.5], 0.25, 0.1, temax_lowvel=2.0, hold_cycles=12)
    free = run_closed_loop(plant, theta, cmd, gains, drive, feedforward=ff, monitor=mon)
    assert not free.alarm.any()
    hit = run_closed_loop(plant, theta, cmd, gains, drive, feedforward=ff, monitor=mon,
                          external_torque=ExternalStep(1.2, 0, 3.0))
    first = hit.t[np.argmax(hit.alarm[:, 0])]
    assert hit.alarm.any() and 1.2 <= first <= 1.22
    assert hit.external[hit.t >= 1.2, 0].min() == 3.0


def test_saturation_limits_the_measured_torque():
    plant, theta, cmd, gains = _crank()
    run = run_closed_loop(plant, theta, cmd, gains, DriveOptions(torque_limit=4.0))
    assert np.abs(run.tfb).max() <= 4.0 + 1e-12
    assert np.abs(run.position_error).max() > 0.05                       # it can no longer follow


def test_additive_delay_is_estimated_from_a_log():
    """The drive applies the command D cycles late: in a log without feed-forward the measured torque matches
    the model of the command shifted by about D cycles (spec §3: estimate AdditiveTorqueDelay from modelled vs
    measured torque). The servo's own dynamics bias the estimate by up to one cycle."""
    from dynid.runtime import estimate_delay_cycles

    plant, theta, cmd, gains = _crank()
    ff = FeedForward(plant, theta)
    found = {}
    for D in (2, 3, 5):
        run = run_closed_loop(plant, theta, cmd, gains, DriveOptions(command_delay_cycles=D, feedback_noise=0.02))
        found[D], spread = estimate_delay_cycles(ff, run.pcmd, run.vcmd, run.acmd, run.tfb, max_delay=8)
        assert spread[found[D]] < 0.7 * min(spread[0], spread[8])
    assert all(abs(d - D) <= 1 for D, d in found.items()), found
    assert found[2] < found[3] < found[5]


def test_plot_is_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="plots need the optional matplotlib (extra 'plot')")
    from dynid.sim._plot import plot_runs

    plant, theta, cmd, gains = _crank()
    short = Command(cmd.t[:300], cmd.q[:300], cmd.qd[:300], cmd.qdd[:300], 0.2)
    runs = {"without model": run_closed_loop(plant, theta, short, gains),
            "with model": run_closed_loop(plant, theta, short, gains, feedforward=FeedForward(plant, theta))}
    png = plot_runs(runs, "crank", t_end=0.2)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_plot_without_matplotlib_names_the_extra(without_modules):
    from dynid.errors import MissingExtraError
    from dynid.sim._plot import plot_runs

    without_modules("matplotlib")
    with pytest.raises(MissingExtraError, match=r"dynid\[plot\]"):
        plot_runs({}, "x")
