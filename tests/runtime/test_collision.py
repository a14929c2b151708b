"""Collision monitor: softMC's filter and thresholds, velocity gating, replay == stepping, thresholds derived
from residuals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.errors import ConfigError
from dynid.runtime import (CollisionMonitor, DerivedThresholds, MonitorStatus, ThresholdOptions, derive_thresholds,
                           replay)

from ._alloc import worst_step_transient


def _step_all(mon, tadd, tfb, v, vcmd=None):
    s = mon.new_state()
    te, alarm, limit, status = [], [], [], []
    for k in range(tadd.shape[0]):
        status.append(mon.step(s, tadd[k], tfb[k], v[k], None if vcmd is None else vcmd[k]))
        te.append(s.te.copy())
        alarm.append(s.alarm.copy())
        limit.append(s.limit.copy())
    return np.array(te), np.array(alarm), np.array(limit), status


def test_filter_is_softmc_first_order_iir():
    """TE_k = TEF·TE_now + (1 − TEF)·TE_{k−1} from TE_{-1} = 0: a unit step gives 1 − (1 − TEF)^(k+1)."""
    mon = CollisionMonitor([10.0], 0.2, 0.0)
    n = 30
    te, alarm, _, _ = _step_all(mon, np.ones((n, 1)), np.zeros((n, 1)), np.ones((n, 1)))
    np.testing.assert_allclose(te[:, 0], 1 - 0.8 ** np.arange(1, n + 1), rtol=1e-14)
    assert not alarm.any()
    unfiltered = CollisionMonitor([0.5], 1.0, 0.0)
    te1, alarm1, _, st1 = _step_all(unfiltered, np.ones((3, 1)), np.zeros((3, 1)), np.ones((3, 1)))
    assert te1[:, 0].tolist() == [1.0, 1.0, 1.0] and alarm1.all() and st1[0] == MonitorStatus.COLLISION


def test_velocity_gate_raises_the_threshold_and_holds_it():
    """Below v_gate the low-velocity threshold applies, and for hold_cycles cycles after."""
    mon = CollisionMonitor([1.0], 1.0, v_gate=0.1, temax_lowvel=5.0, hold_cycles=2)
    v = np.array([0.0, 0.05, 0.5, 0.5, 0.5, 0.5, 0.01, 0.5])[:, None]
    err = np.full((8, 1), 2.0)
    _, alarm, limit, _ = _step_all(mon, err, np.zeros_like(err), v)
    assert limit[:, 0].tolist() == [5, 5, 5, 5, 1, 1, 5, 5]
    assert alarm[:, 0].tolist() == [False, False, False, False, True, True, False, False]
    ignore = CollisionMonitor([1.0], 1.0, v_gate=0.1, temax_lowvel=np.inf)
    _, alarm2, _, _ = _step_all(ignore, np.full((3, 1), 1e9), np.zeros((3, 1)), np.zeros((3, 1)))
    assert not alarm2.any()


def test_disabled_joint_never_alarms_and_bad_input_is_a_status():
    mon = CollisionMonitor([1.0, 1.0], 1.0, 0.0, enable=[True, False])
    s = mon.new_state()
    assert mon.step(s, np.array([5.0, 5.0]), np.zeros(2), np.ones(2)) == MonitorStatus.COLLISION
    assert s.alarm.tolist() == [True, False]
    assert mon.step(s, np.array([np.nan, 0.0]), np.zeros(2), np.ones(2)) == MonitorStatus.INVALID_INPUT


@given(seed=st.integers(0, 2**16), tef=st.floats(0.05, 1.0), hold=st.integers(0, 6))
@settings(max_examples=25, deadline=None)
def test_replay_equals_stepping(seed, tef, hold):
    rng = np.random.default_rng(seed)
    n, N = 3, 300
    mon = CollisionMonitor([1.0, 2.0, 0.5], tef, [0.2, 0.1, 0.3], [3.0, np.inf, 1.0], hold_cycles=hold)
    tadd, tfb = rng.normal(size=(2, N, n)) * 1.5
    v, vcmd = rng.normal(size=(2, N, n)) * 0.3
    te, alarm, limit, _ = _step_all(mon, tadd, tfb, v, vcmd)
    rep = replay(mon, np.arange(N) * 1e-3, tadd, tfb, v, vcmd)
    np.testing.assert_allclose(rep.te, te, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(rep.limit, limit)
    np.testing.assert_array_equal(rep.alarm, alarm)
    edges = sum(int(np.sum(np.diff(np.concatenate([[0], alarm[:, j].astype(int)])) == 1)) for j in range(n))
    assert rep.n_alarms == edges


def test_monitor_validation():
    with pytest.raises(ConfigError, match="TorqueErrorFilter"):
        CollisionMonitor([1.0], 0.0, 0.0)
    with pytest.raises(ConfigError, match="raised"):
        CollisionMonitor([2.0], 0.5, 0.1, temax_lowvel=1.0)
    with pytest.raises(ConfigError, match="positive"):
        CollisionMonitor([0.0], 0.5, 0.1)


def _residuals(rng, model_error: float, N: int = 20000):
    """Noise 0.1 + a model error proportional to a periodic torque, on a 2-joint sine motion (Ts 1 ms)."""
    t = np.arange(N) * 1e-3
    v = np.column_stack([np.sin(2 * np.pi * 0.5 * t), 0.5 * np.cos(2 * np.pi * 0.7 * t)])
    torque = np.column_stack([10 * np.sin(2 * np.pi * 0.5 * t + 1), 5 * np.cos(2 * np.pi * 0.7 * t)])
    return model_error * torque + 0.1 * rng.normal(size=(N, 2)), v


def test_thresholds_follow_the_model_quality(rng):
    """A better model (smaller residuals) gives a more sensitive detector; the derived monitor raises no alarm
    on the residuals it was derived from, and the Gaussian-tail estimate of false alarms is tiny."""
    te_good, v = _residuals(rng, 0.01)
    te_bad, _ = _residuals(rng, 0.10)
    good = derive_thresholds(te_good, v, 1e-3, [0.01, 0.01])
    bad = derive_thresholds(te_bad, v, 1e-3, [0.01, 0.01])
    assert np.all(good.monitor.temax < bad.monitor.temax)
    assert good.observed_alarms == 0 and bad.observed_alarms == 0
    assert np.all(good.expected_false_alarms_per_hour < 1e-3)
    opts = ThresholdOptions()
    # the rule: margin · max(k·rms, max|TE_f|) over the moving band
    assert np.all(good.monitor.temax >= opts.margin * opts.k_sigma * good.rms_moving - 1e-12)
    assert np.all(good.monitor.temax >= opts.margin * good.max_moving - 1e-12)
    assert np.all(good.monitor.v_gate == pytest.approx(opts.gate_factor * 0.01))
    assert np.all(good.monitor.temax_lowvel >= good.monitor.temax)


def test_thresholds_round_trip_through_json(rng):
    import json

    from dynid._json import jsonable

    te, v = _residuals(rng, 0.02, 5000)
    thr = derive_thresholds(te, v, 1e-3, [0.01, 0.01], ThresholdOptions(low_velocity="ignore"), coulomb=[0.5, 0.2])
    data = json.loads(json.dumps(jsonable(thr.to_dict())))
    mon = DerivedThresholds.monitor_from_dict(data)
    np.testing.assert_allclose(mon.temax, thr.monitor.temax)
    assert np.all(np.isinf(mon.temax_lowvel)) and mon.hold_cycles == thr.monitor.hold_cycles


def test_step_allocates_no_arrays():
    """64 joints: any temporary array would be > 500 B; the step's transient stays below that."""
    n = 64
    rng = np.random.default_rng(0)
    mon = CollisionMonitor(np.ones(n), 0.25, 0.1, 3.0, hold_cycles=5)
    s = mon.new_state()
    a, b, v, w = rng.normal(size=(4, 40, n))
    worst = worst_step_transient(mon.step, [(s, a[k], b[k], v[k], w[k]) for k in range(40)])
    assert worst < 500, worst
