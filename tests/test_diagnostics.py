"""Each automatic diagnosis fires on the failure it names, with its evidence, and not on a sound run."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.signal.conditioning import ConditioningOptions
from dynid.identification import IdentifyOptions, identify
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, SineMotion, simulate

CRANK = Plant(make_model("rotary3"))
THETA = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]


def codes(res):
    return {d.code for d in res.diagnostics}


def run(motion, plant=CRANK, theta=THETA, **sim):
    return identify(simulate(plant, theta, motion, SimOptions(**sim), seed=11), plant)


def test_sound_run_has_no_diagnostics():
    assert codes(run(SineMotion([-2.0], [2.0], [0.5], record_s=12))) == set()


def test_too_slow():
    res = run(SineMotion([-2.0], [2.0], [0.08], record_s=40, settle_s=0.5))
    d = [x for x in res.diagnostics if x.code == "too_slow"]
    assert d and d[0].evidence["inertial_share"] < 0.03 and d[0].joint == 1


def test_fewer_than_three_cycles():
    res = run(SineMotion([-2.0], [2.0], [0.5], record_s=4.5))
    d = [x for x in res.diagnostics if x.code == "few_cycles"]
    assert d and d[0].evidence["cycles"] < 3


def test_small_range():
    res = run(SineMotion([-0.1], [0.1], [1.5], record_s=10))
    d = [x for x in res.diagnostics if x.code == "small_range"]
    assert d and d[0].evidence["range_deg"] < 60
    limited = Plant(make_model("rotary3", {"position_limits": [[-3.0, 3.0]]}))
    res = run(SineMotion([-1.0], [1.0], [0.5], record_s=10), plant=limited)
    d = [x for x in res.diagnostics if x.code == "small_range"]
    assert d and d[0].evidence["coverage"] == pytest.approx(2.0 / 6.0, abs=0.02)


def test_saturation_plateau():
    peak = np.abs(simulate(CRANK, THETA, SineMotion([-2.0], [2.0], [0.5], record_s=12), seed=11).tau).max()
    res = run(SineMotion([-2.0], [2.0], [0.5], record_s=12), feedback_limit=[0.8 * peak])
    d = [x for x in res.diagnostics if x.code == "saturation"]
    assert d and d[0].severity == "error" and d[0].evidence["plateau_s"] > 0.05
    assert abs(d[0].evidence["level"]) == pytest.approx(0.8 * peak, rel=0.02)


def test_poorly_identified_parameter():
    """A stiff spring axis under one slow sine with 2 % torque noise: K·x and M·xdd are collinear and
    M·w² << K, so M is barely seen."""
    plant = Plant(make_model("linear3"))
    res = run(SineMotion([-0.2], [0.3], [0.3], record_s=12), plant=plant, theta=[8.0, 2000.0, 100.0, 30.0, 10.0],
              noise=0.02)
    d = [x for x in res.diagnostics if x.code == "poorly_identified"]
    assert d and any(v > 30 for v in d[0].evidence["relative_std_percent"].values())


def test_stick_slip_is_detected_and_left_out():
    """A light, friction-dominated vertical axis sticks at its reversals: reported, and the samples
    around the sticks are left out of the fit (the friction comes back right)."""
    plant = Plant(make_model("linear2"))
    theta = [1.5, 1.5 * 9.80665, 0.0, 30.0, 25.0]
    res = run(SineMotion([0.0], [0.15], [0.43], record_s=15), plant=plant, theta=theta)
    d = [x for x in res.diagnostics if x.code == "stick_slip"]
    assert d and d[0].evidence["stick_count"] >= 10 and d[0].evidence["excluded_samples"] > 0
    assert not (res.cond.moving & res.cond.near_stuck).any()
    assert res.values["A1.viscous"] == pytest.approx(30.0, rel=0.03)
    assert res.values["A1.coulomb"] == pytest.approx(25.0, rel=0.03)
    from dataclasses import replace

    blind = identify(simulate(plant, theta, SineMotion([0.0], [0.15], [0.43], record_s=15), SimOptions(), seed=11),
                     plant, IdentifyOptions(conditioning=replace(ConditioningOptions(), detect_stick=False)))
    assert abs(blind.values["A1.viscous"] / 30.0 - 1) > 3 * abs(res.values["A1.viscous"] / 30.0 - 1)


def test_no_stick_on_a_smooth_reversal():
    res = run(SineMotion([-2.0], [2.0], [0.5], record_s=12))
    assert res.cond.stuck.sum() == 0


def test_wrong_torque_sign_gives_implausible_parameters():
    from dynid.recording import Recording

    rec = simulate(CRANK, THETA, SineMotion([-2.0], [2.0], [0.5], record_s=12), seed=11)
    res = identify(Recording(rec.t, rec.q, -rec.tau), CRANK)
    assert "implausible_parameters" in codes(res)
