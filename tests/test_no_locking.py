"""Issue 26: more data must not make the fit worse. A stride set by the recording's length (to bound the rows)
lands on a multiple of a periodic motion's period — a production log of a repeating cycle — and the fit sees a few
phases of the motion. The fit now uses every sample the band needs, and the selection's subsample cannot lock."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import dynid
from dynid.identification.options import IdentifyOptions
from dynid.identification.regression import default_decimation
from dynid.identification.select import SELECTION_SAMPLES, selection_rows
from dynid.recording import Recording


def _cond(n: int, cutoff_hz: float = 50.0, dt: float = 1e-3):
    return SimpleNamespace(data_length=n, cutoff_hz=cutoff_hz, sample_period_s=dt)


def test_the_fit_stride_is_the_bands_whatever_the_length():
    assert {default_decimation(_cond(n, 10.0)) for n in (10**4, 10**6, 10**8)} == {10}


def test_selection_rows_of_a_long_periodic_recording_see_every_phase():
    """A 1 M-row recording of a 400-sample period: a fixed stride of N/2500 = 400 rows would see one phase."""
    idx, pos = selection_rows(_cond(1_000_000), IdentifyOptions())
    assert SELECTION_SAMPLES * 0.99 <= idx.size <= SELECTION_SAMPLES
    assert np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] < 1_000_000
    assert np.unique(idx % 400).size > 350                         # (of 400 phases)
    np.testing.assert_array_equal(pos, idx / 1_000_000)
    again, _ = selection_rows(_cond(1_000_000), IdentifyOptions())
    np.testing.assert_array_equal(again, idx)                      # seeded: the same rows every run
    # spread over the whole recording (the folds are its first and last 30 %)
    assert np.histogram(pos, bins=10, range=(0, 1))[0].min() > 0.09 * idx.size


def test_selection_rows_of_a_short_recording_are_the_fit_rows():
    idx, _ = selection_rows(_cond(20_000, 10.0), IdentifyOptions())
    np.testing.assert_array_equal(idx, np.arange(0, 20_000, 10))


def _crank(n: int, f: float, seed: int = 0) -> Recording:
    t = np.arange(n) * 1e-3
    w = 2 * np.pi * f
    q = 1.5 * np.sin(w * t)
    qd, qdd = 1.5 * w * np.cos(w * t), -1.5 * w * w * np.sin(w * t)
    tau = 0.5 * qdd - 4.0 * np.sin(q) + 0.3 * qd + 0.2 * np.sign(qd)
    tau += np.random.default_rng(seed).normal(size=n) * 0.065
    q = np.round(q * 2**20 / (2 * np.pi)) * (2 * np.pi) / 2**20        # 20-bit encoder
    return Recording(t, q[:, None], tau[:, None])


@pytest.mark.slow
def test_a_long_periodic_crank_is_identified_from_every_phase():
    """250 000 samples of one 4 Hz sine (a 250-sample period): the length-based stride of 25 rows saw 10 phases and
    put M*g*A 1 % off (4.041 for 4.0); every sample the band needs puts it within 0.2 %."""
    est = dynid.Identifier("rotary3", friction="viscous+coulomb").fit(_crank(250_000, 4.0))
    v = est.model_.values
    assert est.metrics_["success"]
    assert abs(v["I"] / 0.5 - 1) < 2e-3 and abs(v["M*g*A"] / 4.0 - 1) < 2e-3
    assert est.metrics_["fit_decimation"] == default_decimation(est.result_.cond)
