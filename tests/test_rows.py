"""The two containers of a least-squares problem's rows give the same fit: the rows in memory (TallRows) and
the rows compressed block by block as a long recording is read (FactoredRows)."""

from __future__ import annotations

import numpy as np
import pytest

from dynid.identification.rows import FactoredRows, TallRows
from dynid.identification.solve import lstsq_rows


def _problem(rng, n=9000, k=8, n_joints=3):
    W = rng.normal(size=(n, k)) * np.logspace(-1, 1, k)
    W[:, 2] *= 0.0                                        # a column no row excites
    joint = np.sort(rng.integers(0, n_joints, n))
    # correlated noise (a filtered residual), a different level per joint, and an offset per joint
    e = np.convolve(rng.normal(size=n + 40), np.ones(41) / 41, mode="valid")[:n]
    y = W @ rng.normal(size=k) + e * np.array([0.5, 2.0, 6.0])[joint] + np.array([0.1, -0.3, 0.0])[joint]
    return W, y, joint


def _factored(W, y, joint, n_joints, block=700, stretch_every=3):
    rows = FactoredRows(n_joints, W.shape[1])
    order = np.argsort(np.arange(joint.size))         # blocks in time order, each block's rows joint-major
    for b, s in enumerate(range(0, joint.size, block)):
        sel = order[s:s + block]
        sel = sel[np.argsort(joint[sel], kind="stable")]
        rows.add(W[sel], y[sel], joint[sel])
    return rows


@pytest.mark.parametrize("weighting", ["residual_std", "torque_std", "none"])
def test_factored_rows_give_the_tall_rows_fit(rng, weighting):
    W, y, joint = _problem(rng)
    tall = TallRows(W, y, joint, 3)
    fact = _factored(W, y, joint, 3)
    assert fact.n_rows == tall.n_rows
    np.testing.assert_allclose(fact.column_norms(), tall.column_norms(), rtol=1e-12)
    x = rng.normal(size=W.shape[1])
    np.testing.assert_allclose(fact.joint_std(x), tall.joint_std(x), rtol=1e-9)
    np.testing.assert_allclose(fact.joint_std(), tall.joint_std(), rtol=1e-9)
    a = lstsq_rows(tall, weighting=weighting)
    b = lstsq_rows(fact, weighting=weighting)
    for f in ("x", "scale", "weights"):
        np.testing.assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-9, atol=1e-12, err_msg=f)
    # (an R factor is unique up to the signs of its rows)
    np.testing.assert_allclose(b.r_factor.T @ b.r_factor, a.r_factor.T @ a.r_factor, rtol=1e-9,
                               atol=1e-12 * np.abs(a.r_factor).max() ** 2)
    assert b.rank == a.rank and np.array_equal(b.excited, a.excited)
    assert np.isclose(b.sigma2, a.sigma2, rtol=1e-9)
    assert np.isclose(b.condition_number, a.condition_number, rtol=1e-9)


def test_factored_rows_with_a_ridge_toward_a_prior(rng):
    W, y, joint = _problem(rng)
    prior = rng.normal(size=W.shape[1])
    mask = np.arange(W.shape[1]) % 2 == 0
    a = lstsq_rows(TallRows(W, y, joint, 3), prior=prior, prior_mask=mask, ridge=0.05)
    b = lstsq_rows(_factored(W, y, joint, 3), prior=prior, prior_mask=mask, ridge=0.05)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-9, atol=1e-12)


def test_correlation_time_from_kept_stretches_matches_the_whole_residual(rng):
    """The residual's correlation time (the std inflation) from a few stretches of consecutive rows is the whole
    residual's within its sampling spread."""
    W, y, joint = _problem(rng, n=60000)
    tall = TallRows(W, y, joint, 3)
    fact = _factored(W, y, joint, 3)
    for j in range(3):                                  # three stretches of 2000 consecutive rows per joint
        rows = np.flatnonzero(joint == j)
        for s in (100, 8000, 15000):
            sel = rows[s:s + 2000]
            fact.keep_stretch(W[sel], y[sel], joint[sel])
    a, b = lstsq_rows(tall), lstsq_rows(fact)
    assert a.correlation_time > 10                      # correlated: the inflation matters
    assert abs(b.correlation_time / a.correlation_time - 1) < 0.2
    ok = a.excited
    np.testing.assert_allclose(b.std[ok] / a.std[ok], np.sqrt(b.correlation_time / a.correlation_time), rtol=1e-6)
