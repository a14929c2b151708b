"""Step 0 of the conditioning: rows that repeat a controller cycle or skip cycles are put back on the cycle grid
(dynid.signal.time_base); clean recordings are left bit for bit as they were."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dynid.recording import Recording
from dynid.signal.conditioning import ConditioningOptions, condition
from dynid.signal.time_base import find_time_base, repeated_steps

T = 1e-3
W = 2 * np.pi * np.array([0.31, 0.53, 0.87])
AMP = np.array([0.8, 0.6, 0.4])


def motion(cycles: np.ndarray):
    """q, qd, qdd of three joints at controller cycles ``cycles`` (1 kHz), q printed to 1e-6 rad like a log."""
    t = np.asarray(cycles, dtype=float)[:, None] * T
    q = AMP * np.sin(W * t + [0.0, 1.0, 2.0])
    qd = AMP * W * np.cos(W * t + [0.0, 1.0, 2.0])
    qdd = -AMP * W**2 * np.sin(W * t + [0.0, 1.0, 2.0])
    return np.round(q, 6), qd, qdd


def paused(cycles: np.ndarray, start: int, stop: int, ramp: int = 100) -> np.ndarray:
    """Motion time that decelerates to rest over ``ramp`` cycles, rests from ``start`` to ``stop`` and starts again."""
    c = np.asarray(cycles, dtype=float)
    x = np.clip((c - (start - ramp)) / ramp, 0, 1) - np.clip((c - stop) / ramp, 0, 1)
    rate = 1.0 - 0.5 * (1.0 - np.cos(np.pi * x))
    return np.concatenate([[0.0], np.cumsum(rate[1:] * np.diff(c))]) + c[0]


def logged(n_cycles=12000, repeat=0.05, skip=0.05, seed=0, jitter=True):
    """An asynchronous logger: ``skip`` of the cycles never logged, ``repeat`` of the rows logged twice, time
    stamps of the logger's clock (jittering 0..0.8 ms late; a repeat 0.05-0.1 ms after the row it repeats)."""
    rng = np.random.default_rng(seed)
    cycles = np.arange(n_cycles)
    kept = cycles[np.r_[True, rng.random(n_cycles - 2) >= skip, True]]
    twice = rng.random(kept.size) < repeat
    twice[[0, -1]] = False
    rows = np.repeat(kept, np.where(twice, 2, 1))
    dup = np.r_[False, np.diff(rows) == 0]
    t = rows * T + (rng.uniform(0.0, 0.8 * T, rows.size) if jitter else 0.0)
    t[dup] = t[np.nonzero(dup)[0] - 1] + rng.uniform(0.05 * T, 0.1 * T, dup.sum())
    q, qd, qdd = motion(rows)
    tau = 2.0 * qdd + 0.5 * qd                       # any smooth torque
    return Recording(t, q, tau), rows, qd, qdd


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def assert_same(a, b):
    """Two Conditioned records identical bit for bit (every array field)."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif f.name not in ("options", "time_base"):
            assert x == y, f.name


OFF = ConditioningOptions(repair_time_base=False)


def test_repeats_and_skips_are_found_from_the_positions_alone():
    rec, rows, _, _ = logged()
    tb, _ = find_time_base(rec.t, rec.q)
    assert tb is not None and tb.method == "positions"
    np.testing.assert_array_equal(tb.tick, rows - rows[0])             # every row on its true cycle
    np.testing.assert_array_equal(tb.node, np.r_[True, np.diff(rows) > 0])
    s = tb.summary()
    assert s["repeated_rows"] == int((np.diff(rows) == 0).sum()) > 400
    assert s["skipped_cycles"] == int(np.maximum(np.diff(rows) - 1, 0).sum()) > 400
    assert tb.period == pytest.approx(T, rel=2e-3)                      # the logger's time per cycle
    assert "repeated rows" in s["note"] and "skipped cycles" in s["note"]


def test_repaired_time_base_gives_the_true_velocity_and_acceleration():
    rec, rows, qd, qdd = logged()
    c = condition(rec, ConditioningOptions(cutoff_hz=10.0))
    off = condition(rec, dataclasses.replace(OFF, cutoff_hz=10.0))
    k, ko = slice(c.start, c.start + c.data_length), slice(off.start, off.start + off.data_length)
    inner = slice(300, -300)
    e_qd = rms(c.qd[inner] - qd[k][inner]) / rms(qd)
    e_qdd = rms(c.qdd[inner] - qdd[k][inner]) / rms(qdd)
    e_qd_off = rms(off.qd[inner] - qd[ko][inner]) / rms(qd)
    e_qdd_off = rms(off.qdd[inner] - qdd[ko][inner]) / rms(qdd)
    assert e_qd < 2e-4 and e_qdd < 3e-3, (e_qd, e_qdd)                  # 0.02 %, 0.3 % of the RMS
    assert e_qd_off > 0.03 and e_qdd_off > 0.3, (e_qd_off, e_qdd_off)  # as recorded: 3 %, 30 % and more
    assert c.time_base["repaired"] and c.time_base["method"] == "positions"
    assert c.sample_period_s == pytest.approx(T, rel=2e-3)
    np.testing.assert_array_equal(c.q_raw, rec.q[k])                    # the rows stay the recorded rows
    np.testing.assert_array_equal(c.tau_raw, rec.tau[k])
    np.testing.assert_array_equal(c.t, rec.t[k])


def test_skipped_cycles_in_controller_time_stamps_are_read_from_the_time_stamps():
    rec, rows, qd, qdd = logged(repeat=0.0, skip=0.05, jitter=False)
    tb, _ = find_time_base(rec.t, rec.q)
    assert tb.method == "time stamps" and tb.period == pytest.approx(T)
    np.testing.assert_array_equal(tb.tick, rows - rows[0])
    c = condition(rec, ConditioningOptions(cutoff_hz=10.0))
    k, inner = slice(c.start, c.start + c.data_length), slice(300, -300)
    assert rms(c.qd[inner] - qd[k][inner]) / rms(qd) < 2e-4
    assert rms(c.qdd[inner] - qdd[k][inner]) / rms(qdd) < 3e-3


def test_clean_uniform_recording_is_left_bit_for_bit():
    cycles = np.arange(8000)
    q, _, _ = motion(paused(cycles, 5000, 5200))                        # the whole robot rests 0.2 s
    q[:, 1] = motion(paused(paused(cycles, 5000, 5200), 2000, 3000))[0][:, 1]   # joint 2 also rests 1 s
    assert np.all(np.diff(q[5000:5200], axis=0) == 0) and np.all(np.diff(q[2000:3000, 1]) == 0)
    rec = Recording(cycles * T, q, q * 3.0)
    c, off = condition(rec), condition(rec, OFF)
    assert_same(c, off)
    assert c.time_base["repaired"] is False and c.time_base["reason"] == "uniform"
    assert c.time_base["repeated_rows"] == 0 and c.time_base["skipped_cycles"] == 0
    assert off.time_base["reason"].startswith("switched off")


def test_clean_recording_with_jittery_time_stamps_is_left_bit_for_bit():
    """The logger's clock jitters but every cycle is logged once: nothing to repair."""
    rec, rows, _, _ = logged(repeat=0.0, skip=0.0)
    assert np.all(np.diff(rows) == 1)
    c, off = condition(rec), condition(rec, OFF)
    assert_same(c, off)
    assert c.time_base["repaired"] is False


def test_joint_at_rest_and_robot_at_rest_are_not_repeats():
    """Equal rows are repeats only when all joints are equal while the motion runs through them."""
    cycles = np.arange(4000)
    q, _, _ = motion(cycles)
    q[1000:1500, 0] = q[1000, 0]                     # one joint at rest while the others move
    assert not repeated_steps(q[1000:1500]).any()
    stop, _, _ = motion(paused(cycles, 2000, 2300))  # the robot decelerates to rest and starts again
    assert np.all(np.diff(stop[2000:2300], axis=0) == 0) and not repeated_steps(stop).any()
    slow = np.zeros((3000, 2))
    slow[:, 0] = np.round(np.arange(3000) * 0.6e-6, 6)   # 0.6 quanta per cycle: zero steps are genuine
    assert not repeated_steps(slow).any()
    rest, _, _ = motion(paused(cycles, 0, 300))      # the robot at rest before it starts to move
    assert np.all(np.diff(rest[:300], axis=0) == 0) and not repeated_steps(rest).any()


def test_a_short_stop_in_mid_motion_is_a_repeat():
    cycles = np.arange(3000)
    q, _, _ = motion(cycles)
    q2 = np.insert(q, 1500, q[1499], axis=0)         # row 1499 logged twice
    rep = repeated_steps(q2)
    assert np.nonzero(rep)[0].tolist() == [1499]


def test_truly_irregular_sampling_is_not_mistaken_for_skipped_cycles():
    """Positions sampled at the jittered instants themselves: steps are not whole cycles, nothing is repaired."""
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.uniform(0.5 * T, 2.2 * T, 6000))
    q = AMP * np.sin(W * t[:, None])
    tb, reason = find_time_base(t, q)
    assert tb is None and reason.startswith("irregular")
    rec = Recording(t, q, q)
    assert_same(condition(rec), condition(rec, OFF))


def test_logger_faster_than_the_controller():
    """Every 1-ms cycle logged twice at 0.5 ms: half the rows repeat, the cycle is 1 ms, not the median step."""
    rng = np.random.default_rng(1)
    rows = np.repeat(np.arange(6000), 2)
    t = np.arange(rows.size) * 0.5 * T + rng.uniform(0, 0.2 * T, rows.size)   # the logger's clock jitters
    q, qd, _ = motion(rows)
    tb, _ = find_time_base(t, q)
    assert tb.method == "positions"
    assert tb.summary()["repeated_rows"] == 6000
    np.testing.assert_array_equal(tb.tick, rows)
    assert tb.period == pytest.approx(T, rel=1e-3)
    c = condition(Recording(t, q, q), ConditioningOptions(cutoff_hz=10.0))
    k, inner = slice(c.start, c.start + c.data_length), slice(300, -300)
    assert rms(c.qd[inner] - qd[k][inner]) / rms(qd) < 2e-4
    # the same rows with time stamps on the 0.5-ms grid: they are the clock, the stale rows are interpolated
    tb, _ = find_time_base(np.arange(rows.size) * 0.5 * T, q)
    assert tb.method == "time stamps" and tb.period == pytest.approx(0.5 * T)
    c = condition(Recording(np.arange(rows.size) * 0.5 * T, q, q), ConditioningOptions(cutoff_hz=10.0))
    k = slice(c.start, c.start + c.data_length)
    assert rms(c.qd[inner] - qd[k][inner]) / rms(qd) < 2e-3


def test_panda_positions_only_held_out_error(real_data):
    """The Panda log (Gaz et al. 2019), positions only (no dq column), t as recorded: the repaired time base
    predicts the held-out last 30 % within 5.4 % (7.2 % when the rows are taken as equally spaced)."""
    from dynid.fitted import predict
    from dynid.identification import identify
    from dynid.models import Plant, make_model

    d = real_data / "panda_gaz2019"
    t = np.loadtxt(d / "exciting_traj_time.txt")
    q = np.loadtxt(d / "exciting_traj_positions.txt").reshape(-1, 7)
    tau = np.loadtxt(d / "exciting_traj_torques.txt").reshape(-1, 7)
    rec = Recording(t, q, tau, source="panda_gaz2019")
    cut = int(0.7 * rec.n_samples)
    plant = Plant(make_model("serial", {"friction": "viscous+coulomb+offset"}, urdf=d / "panda.urdf"))
    res = identify(rec.slice(0, cut), plant)
    tb = res.cond.time_base
    assert tb["repaired"] and tb["method"] == "positions"
    assert 800 < tb["repeated_rows"] < 950 and 1000 < tb["skipped_cycles"] < 1200     # 869 and 1094
    assert tb["period_s"] == pytest.approx(1e-3, rel=1e-3)
    pred = predict(res.model, rec.slice(cut, rec.n_samples), trim=False)
    assert pred.tau.shape == (rec.n_samples - cut, 7)
    assert pred.relative_error() <= 0.054, pred.relative_error()
