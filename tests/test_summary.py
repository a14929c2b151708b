"""LogSummary: the whole-recording numbers gathered block by block equal those of the whole recording at once
(sticks and reversals that straddle a block's edge included), and equal the direct formulas."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dynid.identification.diagnostics import cycles_per_joint
from dynid.identification.summary import LogSummary
from dynid.metrics import relative_errors
from dynid.models import Plant, make_model
from dynid.signal.conditioning import ConditioningOptions, condition
from dynid.sim import SineMotion, simulate


@pytest.fixture(scope="module")
def cond_and_torque():
    plant = Plant(make_model("linear2", {"friction": "viscous+coulomb"}))
    rec = simulate(plant, [3.0, 25.0, 9.80665, 40.0, 20.0], SineMotion([-0.2], [0.2], [0.4], record_s=30), seed=3)
    cond = condition(rec, ConditioningOptions(cutoff_hz=15.0))
    assert cond.stuck.any()                          # the friction-dominated axis sticks at reversals
    rng = np.random.default_rng(0)
    tcmd = cond.tau + rng.normal(size=cond.tau.shape) * 0.05 * np.abs(cond.tau).max()
    return cond, tcmd


def _block(cond, a, b):
    rows = slice(a, b)
    return replace(cond, t=cond.t[rows], q=cond.q[rows], qd=cond.qd[rows], qdd=cond.qdd[rows], tau=cond.tau[rows],
                   q_raw=cond.q_raw[rows], tau_raw=cond.tau_raw[rows], sign=cond.sign[rows],
                   moving=cond.moving[rows], stuck=cond.stuck[rows], near_stuck=cond.near_stuck[rows])


def test_summary_of_the_whole_matches_the_direct_formulas(cond_and_torque):
    cond, tcmd = cond_and_torque
    s = LogSummary.of(cond, tcmd, decimation=3)
    e = relative_errors(tcmd, cond.tau, cond.moving)
    np.testing.assert_allclose(s.errors(0.5).max_relative, e.max_relative, rtol=1e-14)
    np.testing.assert_allclose(s.errors(0.5).mean_relative, e.mean_relative, rtol=1e-12)
    np.testing.assert_array_equal(s.cycles, cycles_per_joint(cond.qd, cond.velocity_threshold))
    assert s.fit_rows == int(cond.moving[::3].sum())
    te = tcmd - cond.tau
    np.testing.assert_allclose(s.residual_rms, np.sqrt((te[cond.moving[:, 0], 0] ** 2).mean()), rtol=1e-12)
    d = np.diff(np.concatenate([[0], cond.stuck[:, 0].astype(int), [0]]))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
    assert s.sticks[0].count == starts.size and s.sticks[0].samples == int(cond.stuck[:, 0].sum())
    assert s.sticks[0].starts == [float(cond.t[a]) for a in starts[:50]]
    assert s.sticks[0].ends == [float(cond.t[b - 1]) for b in ends[:50]]


@pytest.mark.parametrize("size", [97, 1000, 4321])
def test_summary_block_by_block_equals_the_whole(cond_and_torque, size):
    cond, tcmd = cond_and_torque
    whole = LogSummary.of(cond, tcmd, decimation=4)
    # edges inside a stick as well as anywhere else
    stuck_rows = np.flatnonzero(cond.stuck[:, 0])
    edges = sorted(set(range(0, cond.data_length, size)) | {int(stuck_rows[5]), int(stuck_rows[6]) + 1})
    parts = LogSummary(1, cond.raw_length, cond.start, 4, np.asarray(cond.velocity_threshold))
    for a, b in zip(edges, edges[1:] + [cond.data_length]):
        parts.add(_block(cond, a, b), tcmd[a:b], a)
    parts.finish()
    for name in ("moving", "fit_rows", "data_length", "reversals", "near_stuck", "err_row", "err_t", "tau_ref",
                 "q_min", "q_max", "qd_peak", "tau_raw_max"):
        np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name), err_msg=name)
    for name in ("te_sq", "tau_sq", "noise_sq", "err_sum"):
        np.testing.assert_allclose(getattr(parts, name), getattr(whole, name), rtol=1e-12, err_msg=name)
    a, b = parts.sticks[0], whole.sticks[0]
    assert (a.count, a.samples, a.starts, a.ends) == (b.count, b.samples, b.starts, b.ends)
