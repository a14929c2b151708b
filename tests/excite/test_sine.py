"""SineWave planner: the source's rating table, repetition analysis, frequency choice, peaks vs limits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.errors import ConfigError, ShapeError
from dynid.excite import JointLimits, analyse_repetition, choose_frequencies, plan_sine, rate_frequencies, rate_plan


# ------------------------------------------------------------------ the source's table (identification.md §2)

@pytest.mark.parametrize("freqs, rating, reason", [
    ([1, 2, 1.2], "bad", "joints 1 and 2 (frequency ratio 1:2) repeat after 1 cycle of joint 1 and 2 cycles of joint 2"),
    ([1, 1.2, 1.2], "medium", "joints 2 and 3 have the same frequency: always in phase"),
    ([1.1, 1.3, 1.5], "good", "all frequencies differ"),
])
def test_source_table_examples(freqs, rating, reason):
    r = rate_frequencies(freqs, record_s=20.0)
    assert r.rating == rating
    assert any(reason in x for x in r.reasons), r.reasons
    assert r.reasons[0].startswith(reason)   # the decisive reason comes first


def test_the_good_example_repeats_only_after_11_13_15_cycles():
    rep = analyse_repetition([1.1, 1.3, 1.5], record_s=20.0)
    assert rep.repeat_period_s == pytest.approx(10.0)
    assert rep.cycles_to_repeat == (11, 13, 15)
    assert [p.cycles for p in rep.pairs] == [(11, 13), (11, 15), (13, 15)]
    np.testing.assert_allclose(rep.cycles, [22, 26, 30])


def test_the_medium_example_pairs_match_the_corrected_spec_text():
    """spec §2: j2, j3 locked in phase; j1/j2 repeat after 5 cycles of j1 and 6 of j2."""
    rep = analyse_repetition([1, 1.2, 1.2], record_s=20.0)
    pairs = {p.joints: p for p in rep.pairs}
    assert pairs[(2, 3)].same and pairs[(2, 3)].cycles == (1, 1)
    assert pairs[(1, 2)].cycles == (5, 6) and pairs[(1, 2)].repeat_period_s == pytest.approx(5.0)


def test_too_short_a_record_is_bad_with_the_record_time_needed():
    r = rate_frequencies([1.1, 1.3, 1.5], record_s=2.0)
    assert r.rating == "bad"
    assert any("joint 1 makes only 2.2 cycles" in x and "record at least 2.727 s" in x for x in r.reasons)
    assert rate_frequencies([1.1, 1.3, 1.5], record_s=2.8).rating == "good"   # 3.08 cycles of the slowest


def test_semi_static_runs_may_use_fewer_cycles():
    f = 0.02 * np.array([1.13, 1.41, 1.0, 1.29, 1.53, 1.07])
    assert rate_frequencies(f, record_s=60.0).rating == "bad"
    assert rate_frequencies(f, record_s=60.0, min_cycles=1).rating != "bad"


def test_all_equal_frequencies_are_bad():
    assert rate_frequencies([0.5, 0.5, 0.5]).rating == "bad"


def test_products_with_a_factor_are_read_as_the_decimals_meant():
    """0.3 * 1.27 is 0.38100000000000006 in floating point; the rational reading is 381/1000."""
    rep = analyse_repetition(0.3 * np.array([1, 1.27, 1.43, 1.13]), record_s=20.0)
    assert rep.cycles_to_repeat == (100, 127, 143, 113)
    assert rep.repeat_period_s == pytest.approx(1000 / 3)


def test_nearly_equal_frequencies_count_as_the_same_within_the_record():
    r = rate_frequencies([1.0, 1.3, 1.3001], record_s=20.0)   # phases drift 0.002 cycle in 20 s
    assert r.rating == "medium"
    assert any("practically the same frequency" in x for x in r.reasons)


def test_an_irrational_ratio_repeats_far_beyond_any_record():
    rep = analyse_repetition([1.0, math.sqrt(2)], record_s=20.0)
    assert rep.repeat_period_s > 1e4
    assert rate_frequencies([1.0, math.sqrt(2)], record_s=20.0).rating == "good"


def test_the_source_puma_program_has_a_4_to_3_pair():
    """0.15*{1.56, 1, 1.31, 1.47, 1.21, 1.17}: 1.56/1.17 = 4/3, so joints 1 and 6 repeat after 3 cycles of joint 6."""
    r = rate_frequencies(0.15 * np.array([1.56, 1, 1.31, 1.47, 1.21, 1.17]), record_s=20.0)
    assert r.rating == "medium"
    assert "joints 1 and 6 (frequency ratio 4:3)" in r.reasons[0]
    assert r.repetition.repeat_period_s == pytest.approx(2000 / 3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=400), min_size=2, max_size=6),
       st.sampled_from([0.01, 0.05, 0.3, 1.0]))
def test_repetition_period_is_one_over_the_gcd(ints, unit):
    """f_j = n_j * unit: T_rep = 1 / (unit * gcd(n)), joint j makes n_j / gcd(n) cycles."""
    from functools import reduce

    f = np.array(ints) * unit
    rep = analyse_repetition(f, record_s=10.0)
    g = reduce(math.gcd, ints)
    assert rep.repeat_period_s == pytest.approx(1 / (unit * g), rel=1e-9)
    assert rep.cycles_to_repeat == tuple(i // g for i in ints)


@pytest.mark.parametrize("freqs, record", [([0.0, 1.0], 20.0), ([-1.0, 1.0], 20.0), ([1.0, float("nan")], 20.0),
                                           ([1.0, 2.0], 0.0)])
def test_bad_input_is_rejected(freqs, record):
    with pytest.raises(ConfigError):
        analyse_repetition(freqs, record)


# ------------------------------------------------------------------ plan and limits

def test_plan_peaks_and_cycles_follow_the_sine_formulas():
    """q = c - A cos(2 pi f t): peak velocity A 2 pi f, peak acceleration A (2 pi f)^2."""
    p = plan_sine([-1.0, 0.2], [1.0, 0.0], [1.1, 1.3], factor=0.5, record_s=10.0)
    np.testing.assert_allclose(p.freqs_hz, [0.55, 0.65])
    np.testing.assert_allclose(p.peak_velocity, [1.0 * 2 * np.pi * 0.55, 0.1 * 2 * np.pi * 0.65])
    np.testing.assert_allclose(p.peak_acceleration, [(2 * np.pi * 0.55) ** 2, 0.1 * (2 * np.pi * 0.65) ** 2])
    t, q, qd, qdd = p.sample(1e-3)
    np.testing.assert_allclose(np.abs(qd).max(axis=0), p.peak_velocity, rtol=1e-4)
    assert t[0] == 0.0 and t[-1] == pytest.approx(10.0)
    _, q0, qd0, _ = p.sample(1e-3, include_settle=True)
    np.testing.assert_allclose(q0[0], [-1.0, 0.2])    # starts at the start point, at rest
    np.testing.assert_allclose(qd0[0], 0.0, atol=1e-12)


def test_plan_rejects_mismatched_lengths():
    with pytest.raises(ShapeError, match="target has 1 values but start has 2"):
        plan_sine([0.0, 1.0], [1.0], [1.0, 1.2])


def test_peaks_beyond_the_limits_make_the_plan_bad():
    p = plan_sine([-1.0, -1.0], [1.0, 1.0], [1.1, 1.3], record_s=10.0)
    lim = JointLimits.create(2, position=[[-2, 2], [-2, 2]], velocity=[10.0, 5.0], torque=[100.0, 1.0])
    r = rate_plan(p, lim, peak_torque=[50.0, 3.0])
    assert r.rating == "bad"
    assert any("joint 2 (A2): peak velocity 8.168 rad/s exceeds its limit 5 rad/s" in x for x in r.reasons)
    assert any("joint 2 (A2): peak torque 3 N m exceeds its limit 1 N m: the drive saturates" in x for x in r.reasons)
    assert rate_plan(p, JointLimits.create(2, velocity=[10.0, 10.0])).rating == "good"


def test_a_range_outside_the_position_limits_is_bad():
    p = plan_sine([-1.0], [3.0], [1.0], record_s=10.0)
    r = rate_plan(p, JointLimits.create(1, position=[[-2.0, 2.0]]))
    assert r.rating == "bad" and "leaves its position limits" in r.reasons[0]


def test_a_joint_that_does_not_move_is_bad():
    p = plan_sine([0.0, 1.0], [1.0, 1.0], [1.1, 1.3], record_s=10.0)
    assert rate_plan(p).rating == "bad"


# ------------------------------------------------------------------ frequency choice

def test_chosen_frequencies_follow_the_rules():
    amps = np.radians([100.0, 65.0, 67.5, 60.0, 60.0, 100.0])
    vmax = np.array([2.5, 1.5, 2.0, 3.0, 3.0, 3.0])
    c = choose_frequencies(amps, vmax, record_s=20.0, fraction=0.8)
    assert c.rating.rating == "good"
    peak = amps * 2 * np.pi * c.freqs_hz
    assert np.all(peak <= 0.8 * vmax * (1 + 1e-12))                   # never above the requested fraction
    assert np.all(peak >= 0.75 * vmax)                               # and close to it
    assert np.all(c.freqs_hz * 20.0 >= 3.0)                          # >= 3 cycles per joint
    assert c.rating.repetition.repeat_period_s > 20.0                # no repetition within the record
    np.testing.assert_allclose(c.freqs_hz, c.factor * c.base)         # factor x base ratios, as the source
    assert np.all(np.round(c.base * 100) == c.base * 100)            # two-decimal base ratios


def test_chosen_frequencies_for_identical_joints_differ():
    c = choose_frequencies([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], record_s=20.0)
    assert len(set(c.freqs_hz.tolist())) == 3 and c.rating.rating == "good"


def test_acceleration_limits_lower_the_choice():
    free = choose_frequencies([1.0], [4.0], record_s=20.0)
    slow = choose_frequencies([1.0], [4.0], record_s=20.0, acceleration_limits=[2.0])
    assert slow.freqs_hz[0] < free.freqs_hz[0]
    assert (2 * np.pi * slow.freqs_hz[0]) ** 2 <= 0.8 * 2.0 * (1 + 1e-12)


def test_a_record_too_short_for_three_cycles_says_how_long_to_record():
    with pytest.raises(ConfigError, match="cannot make 3 cycles") as e:
        choose_frequencies([1.0, 1.0], [0.5, 2.0], record_s=20.0)
    assert "record at least" in e.value.hint
