"""Conditioning: zero-phase filtering, derivatives, default cutoff and threshold rules, trimming, gating."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.signal.conditioning import (ConditioningOptions, condition, default_cutoff, default_trim, lowpass,
                                motion_bandwidth)
from dynid.errors import ConfigError, InputDataError
from dynid.recording import Recording


def sine_rec(f=0.5, amp=1.0, dt=1e-3, T=20.0, noise=0.0, seed=0):
    """q = amp·sin(2π f t); tau = q (any signal works for conditioning tests)."""
    t = np.arange(0.0, T, dt)
    q = amp * np.sin(2 * np.pi * f * t)
    tau = q + np.random.default_rng(seed).normal(size=t.size) * noise
    return Recording(t, q[:, None], tau[:, None])


def test_lowpass_keeps_constants_and_delays_nothing():
    t = np.arange(0, 10, 1e-3)
    x = 3.0 + np.sin(2 * np.pi * 1.0 * t)
    y = lowpass(x[:, None], 20.0, 1e-3)[:, 0]
    mid = slice(1000, -1000)
    np.testing.assert_allclose(y[mid], x[mid], atol=1e-6)  # no phase lag, no gain change, constant kept


def test_derivatives_are_central_differences_of_the_filtered_position():
    """q = sin(w t): qd = w cos(w t), qdd = -w² sin(w t) to the 3-point truncation error."""
    rec = sine_rec(f=0.5)
    c = condition(rec, ConditioningOptions(cutoff_hz=20.0))
    w = 2 * np.pi * 0.5
    np.testing.assert_allclose(c.qd[:, 0], w * np.cos(w * c.t), atol=1e-5 * w)
    inner = slice(200, -200)  # the last samples kept still feel the filter's edge (odd extension) slightly
    np.testing.assert_allclose(c.qdd[inner, 0], -w**2 * np.sin(w * c.t[inner]), atol=1e-5 * w**2)
    np.testing.assert_allclose(c.qdd[:, 0], -w**2 * np.sin(w * c.t), atol=1e-3 * w**2)


def test_default_cutoff_is_twenty_times_the_motion_bandwidth():
    rec = sine_rec(f=0.5)
    bw = motion_bandwidth(rec.q, rec.sample_period)
    assert bw == pytest.approx(0.5, abs=0.06)
    assert default_cutoff(rec.q, rec.sample_period) == pytest.approx(20 * bw)
    fast = sine_rec(f=20.0)  # would be 400 Hz: capped below 125 Hz (softMC's rule), at 0.99 x 125 Hz
    assert default_cutoff(fast.q, fast.sample_period) == pytest.approx(0.99 * 125.0)
    slow = sine_rec(f=0.005, T=400.0, dt=1e-2)  # would be 0.1 Hz: raised to 0.5 Hz
    assert default_cutoff(slow.q, slow.sample_period) == pytest.approx(0.5)


def test_trimming_reports_both_lengths():
    rec = sine_rec()
    c = condition(rec, ConditioningOptions(cutoff_hz=10.0))
    trim = default_trim(10.0, 1e-3)
    assert trim == 202
    assert c.raw_length == rec.n_samples and c.data_length == rec.n_samples - 2 * trim and c.start == trim
    np.testing.assert_array_equal(c.q_raw, rec.q[trim:-trim])


def test_velocity_threshold_default_rule_and_gating():
    rec = sine_rec(f=0.5, amp=2.0)
    c = condition(rec)
    vmax = 2.0 * 2 * np.pi * 0.5
    assert c.velocity_threshold[0] == pytest.approx(0.01 * vmax, rel=0.02)
    assert np.array_equal(c.moving[:, 0], np.abs(c.qd[:, 0]) > c.velocity_threshold[0])
    c2 = condition(rec, ConditioningOptions(velocity_threshold=1.0, upper_velocity_threshold=5.0))
    assert np.all(np.abs(c2.qd[c2.moving]) > 1.0) and np.all(np.abs(c2.qd[c2.moving]) < 5.0)


def test_noise_raises_the_default_threshold():
    """Encoder noise: the threshold becomes twice the velocity noise (within a factor 1.5 of the true spread)."""
    t = np.arange(0, 20, 1e-3)
    w = 2 * np.pi * 0.5
    q = 0.5 * np.sin(w * t) + np.random.default_rng(1).normal(size=t.size) * 1e-3
    c = condition(Recording(t, q[:, None], q[:, None]), ConditioningOptions(cutoff_hz=40.0))
    vmax = np.abs(c.qd).max()
    true_noise = np.std(c.qd[:, 0] - 0.5 * w * np.cos(w * c.t))
    assert c.velocity_threshold[0] > 0.01 * vmax  # the noise term dominates
    assert 2 * true_noise / 1.5 < c.velocity_threshold[0] < 2 * true_noise * 1.5


def test_torque_delay_shifts_the_torque_back():
    t = np.arange(0, 10, 1e-3)
    q = np.sin(2 * np.pi * 0.5 * t)
    late = np.sin(2 * np.pi * 0.5 * (t - 0.003))  # the torque lags by 3 ms
    c = condition(Recording(t, q[:, None], late[:, None]), ConditioningOptions(cutoff_hz=20.0, torque_delay_s=0.003))
    np.testing.assert_allclose(c.tau[:, 0], c.q[:, 0], atol=1e-5)


def test_joint_that_never_moves_is_an_input_error():
    t = np.arange(0, 10, 1e-3)
    q = np.column_stack([np.sin(t), np.zeros_like(t)])
    with pytest.raises(InputDataError, match="column q2.*never moves"):
        condition(Recording(t, q, q))
    q = np.column_stack([np.sin(t), 1e-7 * np.sin(t)])  # moves, but never above the threshold
    with pytest.raises(InputDataError, match="q2"):
        condition(Recording(t, q, q), ConditioningOptions(velocity_threshold=[0.01, 0.01]))


def test_time_in_milliseconds_is_rejected():
    t = np.arange(0, 2000, 1.0)
    q = np.sin(t / 100)
    with pytest.raises(InputDataError, match="milliseconds"):
        condition(Recording(t, q[:, None], q[:, None]))


def test_bad_cutoff_is_a_config_error():
    with pytest.raises(ConfigError):
        ConditioningOptions(cutoff_hz=-1.0)
    with pytest.raises(ConfigError, match="Nyquist"):
        condition(sine_rec(), ConditioningOptions(cutoff_hz=600.0))


@pytest.mark.parametrize("options", [ConditioningOptions(cutoff_hz=8.0),
                                     ConditioningOptions(cutoff_hz=8.0, torque_delay_s=0.002, smooth_sign=False),
                                     ConditioningOptions(detect_stick=False)])
def test_conditioning_on_two_workers_gives_the_same_arrays(options):
    """With an idle worker the torque's filter and the stick detection's velocity run there: the same result,
    bit for bit (the selection and the final fit condition so)."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(4)
    t = np.arange(6000) * 1e-3
    q = np.column_stack([np.sin(2 * np.pi * 0.7 * t), 0.5 * np.sin(2 * np.pi * 1.3 * t + 1.0)])
    q[2000:2600, 0] = q[2000, 0]                                      # a stuck stretch
    tau = 3 * q + np.sign(np.gradient(q, axis=0)) + 0.01 * rng.normal(size=q.shape)
    rec = Recording(t, q, tau)
    alone = condition(rec, options)
    with ThreadPoolExecutor(1) as pool:
        split = condition(rec, options, pool=pool)
    for name in ("t", "q", "qd", "qdd", "tau", "tau_raw", "sign", "moving", "stuck", "near_stuck",
                 "velocity_threshold", "velocity_noise"):
        np.testing.assert_array_equal(getattr(split, name), getattr(alone, name), err_msg=name)
    assert split.options == alone.options and split.cutoff_hz == alone.cutoff_hz
    assert alone.stuck[:, 0].any() == options.detect_stick                # the stuck stretch is found (or not looked for)


@pytest.mark.parametrize("cutoff", [0.8, 1.0, 1.5])
def test_a_cutoff_near_the_motion_does_not_read_the_motion_as_noise(cutoff):
    """A cutoff given close to the motion's frequencies let the motion into the velocity-noise band: the
    threshold (twice the "noise") came out as large as the velocity and the run failed as if the joint did not
    move. The band then starts above twice the joint's motion bandwidth: the threshold stays the 1 % rule's."""
    rec = sine_rec(f=0.5, amp=2.0, T=12.0, noise=0.001)
    c = condition(rec, ConditioningOptions(cutoff_hz=cutoff))
    peak = np.abs(c.qd).max()
    assert c.velocity_threshold[0] < 0.02 * peak, (c.velocity_threshold, peak)
    assert c.moving_samples[0] > 0.9 * c.data_length
    default = condition(rec)                              # a cutoff well above the motion: as before
    assert default.velocity_noise[0] < 0.05 * np.sqrt(np.mean(default.qd**2))


@pytest.mark.parametrize("shape, axis", [((4999, 6), 0), ((5000, 6), 0), ((7, 301), 1), ((1000,), None), ((2,), None),
                                         ((1,), None), ((4, 5, 6), 1), ((3, 4), -1)])
def test_median_is_numpys_bit_for_bit(shape, axis):
    """dynid's median (one partition; no numpy.ma import) gives numpy's values exactly, ties included."""
    from dynid._numeric import median

    a = np.random.default_rng(7).normal(size=shape)
    for x in (a, np.round(a, 1)):
        np.testing.assert_array_equal(median(x, axis=axis), np.median(x, axis=axis))


def test_stick_detection_matches_the_rule_stretch_by_stretch():
    """The stuck stretches (all at once per joint) are the rule's, written here as a loop over the slow stretches:
    slow for longer than STICK_FACTOR x the time its deceleration implies (+ 2 samples); near: within 1/cutoff."""
    from dynid.signal.conditioning import STICK_FACTOR, _stick, _stick_velocity

    rng = np.random.default_rng(11)
    t = np.arange(9000) * 1e-3
    q = np.column_stack([np.sin(2 * np.pi * 0.7 * t), 0.5 * np.sin(2 * np.pi * 1.3 * t + 1.0)])
    for j in range(2):
        for a in rng.integers(100, 8500, 5):
            q[a:a + rng.integers(30, 400), j] = q[a, j]
    q[-600:, 0] = q[-600, 0]                                            # a stretch to the very end
    keep, cutoff, dt = slice(40, 9000 - 40), 8.0, 1e-3
    qdd = np.gradient(np.gradient(lowpass(q, cutoff, dt), dt, axis=0), dt, axis=0)
    v, thr = _stick_velocity(q, cutoff, dt, 4, keep)
    stuck, near = _stick((v, thr), qdd, keep, cutoff, dt)
    reach = int(np.ceil(1.0 / (cutoff * dt)))
    ref_stuck, ref_near = np.zeros_like(stuck), np.zeros_like(near)
    for j in range(2):
        slow = np.abs(v[:, j]) < thr[j]
        edges = np.diff(np.concatenate([[0], slow.astype(int), [0]]))
        for a, b in zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]):
            acc = np.abs(qdd[keep][a:b, j]).max()
            expected = 2.0 * thr[j] / acc if acc > 0 else np.inf
            if (b - a) * dt > STICK_FACTOR * expected + 2 * dt:
                ref_stuck[a:b, j] = True
                ref_near[max(0, a - reach):b + reach, j] = True
    assert ref_stuck.any(axis=0).all() and abs(v[-1, 0]) < thr[0]       # stretches found; one runs to the end
    np.testing.assert_array_equal(stuck, ref_stuck)
    np.testing.assert_array_equal(near, ref_near)
