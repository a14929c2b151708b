"""Physically consistent identification (``estimator="consistent"``, :mod:`dynid.identification.consistent`).

Simulated robots: the PUMA 560 kinematics (standard DH) with links modelled as solid boxes, so every
link is physically consistent with a margin; torques from the model's Newton–Euler regressor (checked
against Pinocchio in tests/models/test_serial.py) plus viscous and Coulomb friction and Gaussian noise;
prescribed multi-sine motions with analytic derivatives.
"""

from __future__ import annotations

import doctest
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dynid.identification.consistent as consistent
from dynid.cli.main import main
from dynid.identification.consistent import (
    ConsistentOptions, log_cholesky_to_standard, physical_consistency, pseudo_inertia, standard_from_pseudo,
    standard_to_log_cholesky,
)
from dynid.errors import ConfigError
from dynid.identification import ESTIMATORS, IdentifyOptions, identify
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.models.serial import PUMA560_DH
from dynid.recording import Recording

FV = np.array([4.0, 3.5, 2.0, 0.3, 0.3, 0.2])    # N m s/rad
FC = np.array([6.0, 5.0, 3.0, 0.4, 0.5, 0.3])    # N m


def box(mass, com, size):
    """Solid box of ``size`` (a, b, c) [m] centred at ``com``: I_c = m/12 diag(b²+c², a²+c², a²+b²)."""
    a, b, c = size
    return {"mass": mass, "com": list(com),
            "inertia": [mass / 12 * (b * b + c * c), 0, 0, mass / 12 * (a * a + c * c), 0, mass / 12 * (a * a + b * b)]}


BOXES = [box(3.0, [0, 0.05, 0], [0.2, 0.3, 0.2]), box(17.4, [-0.3638, 0.006, 0.2275], [0.5, 0.15, 0.15]),
         box(4.8, [-0.0203, -0.0141, 0.070], [0.15, 0.15, 0.45]), box(0.82, [0, 0.019, 0], [0.08, 0.1, 0.08]),
         box(0.8, [0, 0, 0], [0.1, 0.1, 0.1]), box(0.5, [0, 0, 0.04], [0.1, 0.1, 0.08])]


def arm(links=BOXES, friction="viscous+coulomb"):
    """PUMA 560 kinematics; ``links`` are the model's prior (what a URDF would give)."""
    cfg = {"dh": [dict(d) for d in PUMA560_DH], "friction": friction}
    if links is not None:
        cfg["links"] = links
    return Plant(make_model("serial", cfg))


def multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed, share):
    """q(t) = centre + Σ a sin(w t + φ), a sum of harmonics spanning ``share`` of [lo, hi]; analytic qd, qdd."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w = 2 * np.pi * base_hz * np.asarray(harmonics, dtype=float)
    amp = rng.uniform(0.5, 1.0, (lo.size, w.size)) / w
    amp *= (share * (hi - lo) / amp.sum(axis=1))[:, None]
    arg = t[:, None, None] * w + rng.uniform(0, 2 * np.pi, (lo.size, w.size))
    centre = 0.5 * (lo + hi) + rng.uniform(-0.1, 0.1, lo.size) * (hi - lo)
    return (t, centre + np.sum(amp * np.sin(arg), axis=2), np.sum(amp * w * np.cos(arg), axis=2),
            -np.sum(amp * w**2 * np.sin(arg), axis=2))


def simulate(plant, theta, *, seed, base_hz, harmonics, duration_s, share, noise, rate_hz=500.0):
    """Recording with torque = model torque + noise (``noise`` × RMS torque per joint), and the exact signals."""
    lo, hi = plant.model.state_bounds()
    t, q, qd, qdd = multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed, share)
    tau = plant.torque(theta, q, qd, qdd)
    rng = np.random.default_rng(seed + 100)
    noisy = tau + noise * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
    return Recording(t, q, noisy), (q, qd, qdd, tau)


def validation_error(plant, theta, exact):
    """Mean over joints of the RMS error against the exact torque / RMS torque."""
    q, qd, qdd, tau = exact
    pred = plant.torque(theta, q, qd, qdd)
    return float(np.mean(np.sqrt(np.mean((pred - tau) ** 2, axis=0)) / np.sqrt(np.mean(tau**2, axis=0))))


def links_of(plant, theta):
    return np.asarray(theta)[: plant.n_model].reshape(-1, 10)


def assert_consistent(pi):
    """Every link: pseudo-inertia positive semidefinite, mass > 0, triangle inequalities at the COM."""
    pi = np.asarray(pi).reshape(-1, 10)
    for p in pi:
        J = pseudo_inertia(p)
        eig = np.linalg.eigvalsh(J)
        assert eig[0] >= -1e-12 * eig[-1], eig
        m, c = p[9], p[6:9] / p[9]
        assert m > 0
        I_o = np.array([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]])
        I_c = I_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        lam = np.linalg.eigvalsh(I_c)
        tol = 1e-12 * lam.sum()
        assert lam[0] + lam[1] >= lam[2] - tol and lam[0] >= -tol, lam


# ------------------------------------------------------------------ the parametrisation


def test_pseudo_inertia_of_a_point_mass_is_m_p_pT():
    """A point mass m at p: Σ = m p pᵀ, h = m p, and I about the origin = m(|p|² 1 − p pᵀ)."""
    m, p = 2.0, np.array([0.3, -0.2, 0.5])
    I_o = m * (p @ p * np.eye(3) - np.outer(p, p))
    pi = [I_o[0, 0], I_o[0, 1], I_o[0, 2], I_o[1, 1], I_o[1, 2], I_o[2, 2], *(m * p), m]
    J = pseudo_inertia(pi)
    np.testing.assert_allclose(J[:3, :3], m * np.outer(p, p), atol=1e-15)
    np.testing.assert_allclose(J[:3, 3], m * p)
    np.testing.assert_allclose(standard_from_pseudo(J), pi, atol=1e-15)
    assert np.linalg.eigvalsh(J)[0] == pytest.approx(0.0, abs=1e-14)   # a point is on the boundary


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=20, max_size=20))
def test_log_cholesky_gives_consistent_bodies_and_round_trips(values):
    theta = np.array(values).reshape(2, 10)
    pi = log_cholesky_to_standard(theta)
    assert_consistent(pi)
    np.testing.assert_allclose(standard_to_log_cholesky(pi), theta, rtol=1e-6, atol=1e-6)


def test_log_cholesky_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    theta = rng.normal(scale=0.7, size=(3, 10))
    _, G = log_cholesky_to_standard(theta, jacobian=True)
    H = consistent._log_cholesky_hessian(theta)
    eps = 1e-6
    for k in range(10):
        e = np.zeros(10)
        e[k] = eps
        d1 = (log_cholesky_to_standard(theta + e) - log_cholesky_to_standard(theta - e)) / (2 * eps)
        np.testing.assert_allclose(G[:, :, k], d1, rtol=1e-6, atol=1e-7)
        _, Gp = log_cholesky_to_standard(theta + e, jacobian=True)
        _, Gm = log_cholesky_to_standard(theta - e, jacobian=True)
        np.testing.assert_allclose(H[:, :, :, k], (Gp - Gm) / (2 * eps), rtol=1e-6, atol=1e-7)


def test_physical_consistency_flags_each_kind_of_violation():
    good = consistent.standard_from_pseudo(np.diag([0.01, 0.02, 0.03, 1.0]))
    neg_mass = good.copy()
    neg_mass[9] = -1.0
    triangle = np.array([0.1, 0, 0, 0.1, 0, 0.5, 0, 0, 0, 1.0])       # Izz > Ixx + Iyy
    far_com = good.copy()
    far_com[6] = 1.0                                                  # |c| = 1 m but Σxx = 0.01 kg m²
    rep = physical_consistency([good, neg_mass, triangle, far_com], ["good", "neg", "tri", "com"])
    assert rep.violations == ("neg", "tri", "com")
    assert rep.triangle_margin[0] > 0 and rep.triangle_margin[2] < 0 and rep.min_eigenvalue[3] < 0


def test_module_docstring_examples():
    assert doctest.testmod(consistent, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).failed == 0


# ------------------------------------------------------------------ the estimator on simulated robots


def perturbed_truth(plant, seed, scale=1.0):
    """True links: the prior's bodies moved at random in log-Cholesky coordinates (masses ±15 %,
    second moments ±20 %, COM and products a few cm), so the prior is CAD-like but wrong."""
    rng = np.random.default_rng(seed)
    th = standard_to_log_cholesky(np.asarray(plant.model.prior_parameters()).reshape(-1, 10))
    L = th.shape[0]
    th[:, 0] += scale * 0.15 * rng.standard_normal(L)
    th[:, 1:4] += scale * 0.2 * rng.standard_normal((L, 3))
    th[:, 4:] += scale * 0.05 * rng.standard_normal((L, 6))
    return np.concatenate([log_cholesky_to_standard(th).ravel(), np.column_stack([FV, FC]).ravel()])


@pytest.fixture(scope="module")
def weak_run():
    """6 s, joints over 10 % of their range, 2 % torque noise: base parameters poorly excited."""
    plant = arm()
    theta = perturbed_truth(plant, seed=7)
    rec, _ = simulate(plant, theta, seed=1, base_hz=0.25, harmonics=[1, 2, 3], duration_s=6.0, share=0.1, noise=0.02)
    _, exact = simulate(plant, theta, seed=2, base_hz=0.1, harmonics=[1, 2, 3, 5, 7], duration_s=20.0, share=0.3,
                        noise=0.0)
    wls = identify(rec, plant)
    cons = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    return plant, theta, exact, wls, cons


def test_weak_excitation_least_squares_is_inconsistent_consistent_fit_is_not_and_validates_better(weak_run):
    plant, theta, exact, wls, cons = weak_run
    assert_consistent(links_of(plant, theta))                    # the truth and the prior are physical
    assert_consistent(links_of(plant, plant.model.prior_parameters()))
    lin = physical_consistency(links_of(plant, wls.theta))
    assert len(lin.violations) >= 2, lin.violations              # plain LS: links with no physical body
    assert_consistent(links_of(plant, cons.theta))
    assert cons.consistent.consistency.consistent and cons.consistent.linear_consistency.violations == lin.violations
    e_wls, e_cons = validation_error(plant, wls.theta, exact), validation_error(plant, cons.theta, exact)
    print(f"validation NRMSE: wls {100 * e_wls:.3f} %, consistent {100 * e_cons:.3f} %; "
          f"violations of wls: {lin.violations}")
    assert e_cons <= e_wls
    assert cons.estimator == "consistent" and any("physically consistent fit" in n for n in cons.notes)


@pytest.mark.parametrize("truth", ["prior", "away from the prior"])
def test_when_least_squares_is_already_feasible_both_estimators_agree_within_noise(truth):
    """Rich motion, 0.5 % noise. Truth = prior: the least-squares standard parameters (dependent ones held
    at the prior) are themselves consistent. Truth away from the prior: they are not (the held values are
    wrong), but the least-squares *base* parameters are feasible — the consistent truth reproduces them
    within noise. Either way the consistent estimator must return the least-squares base parameters."""
    plant = arm()
    if truth == "prior":
        theta = np.concatenate([plant.model.prior_parameters(), np.column_stack([FV, FC]).ravel()])
    else:
        theta = perturbed_truth(plant, seed=12)
    rec, exact = simulate(plant, theta, seed=3, base_hz=0.1, harmonics=[1, 2, 3, 5, 7], duration_s=20.0, share=0.3,
                          noise=0.005)
    wls = identify(rec, plant)
    ok = wls.base_excited
    if truth == "prior":                                                    # preconditions of this test
        assert physical_consistency(links_of(plant, wls.theta)).consistent
    else:
        assert not physical_consistency(links_of(plant, wls.theta)).consistent
        assert np.all(np.abs(wls.base.base_values(theta) - wls.base_values)[ok] < 4 * wls.base_std[ok])
    cons = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    z = (cons.base_values - wls.base_values)[ok] / wls.base_std[ok]
    print(f"|base difference| / std: max {np.abs(z).max():.4f}, median {np.median(np.abs(z)):.4f}; "
          f"residual ratio {cons.consistent.residual_ratio:.6f}")
    assert np.abs(z).max() < 0.1
    assert cons.consistent.residual_ratio < 1.001
    np.testing.assert_allclose(cons.base_std[ok], wls.base_std[ok], rtol=0.1)
    assert validation_error(plant, cons.theta, exact) <= 1.01 * validation_error(plant, wls.theta, exact)


@pytest.mark.slow
def test_standard_deviations_match_the_scatter_over_noise_realisations():
    """The weak-excitation motion with 20 noise draws: the reported base-parameter standard deviations
    (Laplace approximation) against the empirical scatter of the estimates."""
    plant = arm()
    theta = perturbed_truth(plant, seed=7)
    lo, hi = plant.model.state_bounds()
    t, q, qd, qdd = multisine(lo, hi, 0.25, [1, 2, 3], 6.0, 500.0, 1, 0.1)
    tau = plant.torque(theta, q, qd, qdd)
    values, stds = [], []
    for k in range(20):
        rng = np.random.default_rng(5000 + k)
        rec = Recording(t, q, tau + 0.02 * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape))
        res = identify(rec, plant, IdentifyOptions(estimator="consistent"))
        values.append(res.base_values)
        stds.append(res.base_std)
    ratio = np.std(values, axis=0, ddof=1) / np.nanmean(stds, axis=0)
    ratio = ratio[np.isfinite(ratio)]
    print(f"empirical / reported std: median {np.median(ratio):.2f}, 10-90 % {np.quantile(ratio, 0.1):.2f}"
          f"-{np.quantile(ratio, 0.9):.2f}")
    assert 0.7 < np.median(ratio) < 1.4


def test_the_two_solvers_reach_the_same_minimum():
    """Damped Newton in the standard parameters and trust-region Newton in log-Cholesky coordinates,
    on the first three PUMA joints under weak excitation (the least-squares solution is inconsistent)."""
    plant = Plant(make_model("serial", {"dh": [dict(d) for d in PUMA560_DH[:3]], "links": BOXES[:3],
                                        "friction": "viscous+coulomb"}))
    theta = np.concatenate([perturbed_truth(plant, seed=7)[:30], np.column_stack([FV[:3], FC[:3]]).ravel()])
    rec, _ = simulate(plant, theta, seed=1, base_hz=0.25, harmonics=[1, 2, 3], duration_s=6.0, share=0.1, noise=0.02)
    assert not physical_consistency(links_of(plant, identify(rec, plant).theta)).consistent
    newton = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    other = identify(rec, plant, IdentifyOptions(estimator="consistent",
                                                 consistent=ConsistentOptions(solver="trust-region", max_iterations=3000)))
    assert other.consistent.solver == "trust-region" and other.consistent.converged and newton.consistent.converged
    print(f"iterations: newton {newton.consistent.iterations}, trust-region {other.consistent.iterations}")
    ok = newton.base_excited
    z = (other.base_values - newton.base_values)[ok] / newton.base_std[ok]
    assert np.abs(z).max() < 1e-3, np.abs(z).max()
    np.testing.assert_allclose(links_of(plant, other.theta), links_of(plant, newton.theta), rtol=1e-3,
                               atol=1e-5 * np.abs(links_of(plant, newton.theta)).max())


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 3), seed=st.integers(0, 10_000), noise=st.sampled_from([0.0, 0.01, 0.05]),
       prior=st.sampled_from(["truth", "wrong", "none"]), weight=st.sampled_from([1e-3, 1e-2, 1.0]))
def test_output_is_consistent_for_random_robots_and_data(n, seed, noise, prior, weight):
    rng = np.random.default_rng(seed)
    dh = [{"a": float(rng.uniform(0, 0.5)), "alpha": float(rng.choice([0, np.pi / 2, -np.pi / 2])),
           "d": float(rng.uniform(0, 0.3))} for _ in range(n)]
    truth = log_cholesky_to_standard(rng.normal([0.5, -2, -2, -2, 0, 0, 0, 0, 0, 0], 0.7, size=(n, 10)))
    if prior == "truth":
        links_prior = truth
    else:
        links_prior = log_cholesky_to_standard(rng.normal([0.5, -2, -2, -2, 0, 0, 0, 0, 0, 0], 0.7, size=(n, 10)))
    cfg = {"dh": dh, "friction": "viscous+coulomb+offset", "gravity_direction": [0, -1, 0]}
    if prior != "none":
        links = []
        for p in links_prior:   # the DH 'links' priors are mass, COM and inertia about the COM
            m, c = p[9], p[6:9] / p[9]
            I_o = np.array([[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]])
            I_c = I_o - m * (c @ c * np.eye(3) - np.outer(c, c))
            links.append({"mass": m, "com": c.tolist(), "inertia": [I_c[0, 0], I_c[0, 1], I_c[0, 2], I_c[1, 1], I_c[1, 2], I_c[2, 2]]})
        cfg["links"] = links
    plant = Plant(make_model("serial", cfg))
    theta = np.concatenate([truth.ravel(), np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n),
                                                            rng.uniform(-0.2, 0.2, n)]).ravel()])
    rec, _ = simulate(plant, theta, seed=seed, base_hz=0.2, harmonics=[1, 2, 3], duration_s=5.0,
                      share=float(rng.uniform(0.05, 0.3)), noise=noise, rate_hz=200.0)
    res = identify(rec, plant, IdentifyOptions(estimator="consistent", consistent=ConsistentOptions(prior_weight=weight)))
    assert_consistent(links_of(plant, res.theta))
    assert res.consistent.consistency.consistent and res.consistent.converged
    fr = res.plant.friction.values_by_term(res.friction_values)
    assert min(fr["viscous"]) >= 0 and min(fr["coulomb"]) >= 0
    np.testing.assert_allclose(res.base.base_values(res.theta), res.base_values, rtol=1e-9, atol=1e-12)


def test_friction_bounds_hold_a_coefficient_the_noise_pushes_negative():
    """Joint 6 has no viscous friction; with noise the unconstrained fit makes it negative."""
    plant = arm()
    theta = perturbed_truth(plant, seed=7)
    theta[plant.n_model + 10] = 0.0                                    # A6.viscous
    rec, _ = simulate(plant, theta, seed=5, base_hz=0.1, harmonics=[1, 2, 3, 5], duration_s=10.0, share=0.2, noise=0.05)
    wls = identify(rec, plant)
    name = "A6.viscous"
    assert wls.values[name] < 0                                        # precondition: LS wants it negative
    cons = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    assert cons.values[name] == 0.0 and name in cons.consistent.active_bounds and np.isnan(cons.std[plant.param_names.index(name)])
    assert any(name in n and "bound 0" in n for n in cons.notes)
    free = identify(rec, plant, IdentifyOptions(estimator="consistent", consistent=ConsistentOptions(friction_nonnegative=False)))
    assert free.values[name] < 0 and not free.consistent.active_bounds


def test_models_without_link_inertias_are_refused_with_the_estimators_they_can_use():
    plant = Plant(make_model("rotary3"))
    rec = Recording(np.arange(100) * 1e-3, np.zeros((100, 1)), np.zeros((100, 1)))
    with pytest.raises(ConfigError, match="'rotary3'") as err:
        identify(rec, plant, IdentifyOptions(estimator="consistent"))
    assert all(e in str(err.value) for e in ESTIMATORS if e != "consistent")


def test_option_errors():
    with pytest.raises(ConfigError, match="prior_weight"):
        ConsistentOptions(prior_weight=0.0)
    with pytest.raises(ConfigError, match="solver"):
        ConsistentOptions(solver="cvxpy")
    plant = arm()
    plant = Plant(plant.model.with_config(parameters={"link2.m": 17.0}))
    rec, _ = simulate(plant, np.concatenate([plant.model.prior_parameters(), np.column_stack([FV, FC]).ravel()]),
                      seed=1, base_hz=0.25, harmonics=[1, 2], duration_s=3.0, share=0.1, noise=0.01)
    with pytest.raises(ConfigError, match="link2.m"):
        identify(rec, plant, IdentifyOptions(estimator="consistent"))


def test_cli_writes_the_consistency_report(tmp_path, capsys, weak_run):
    plant, theta, *_ = weak_run
    rec, _ = simulate(plant, theta, seed=1, base_hz=0.25, harmonics=[1, 2, 3], duration_s=6.0, share=0.1, noise=0.02)
    write_recording_csv(tmp_path / "run.csv", rec)
    (tmp_path / "arm.json").write_text(json.dumps({"dh": [dict(d) for d in PUMA560_DH], "links": BOXES}))
    code = main(["identify", str(tmp_path / "run.csv"), "--model", "serial", "--config", str(tmp_path / "arm.json"),
                 "--estimator", "consistent", "--prior-weight", "0.1", "--out", str(tmp_path / "out"), "--no-report",
                 "--json", "--quiet"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["metrics"]["estimator"] == "consistent"
    pc = result["physical_consistency"]
    assert pc["consistency"]["consistent"] is True and pc["prior_weight"] == 0.1 and pc["linear_consistency"]["violations"]
    assert_consistent(np.array(result["parameters"]["values"]).reshape(-1, 10))
    code = main(["predict", str(tmp_path / "out" / "result.json"), str(tmp_path / "run.csv"), "--json"])
    assert code == 0 and len(json.loads(capsys.readouterr().out)["validation"]["nrmse_rms"]) == 6


def test_panda_recording_gives_consistent_links(real_data):
    """Gaz et al. (2019) Panda recording, URDF prior: every link of the estimate is physically consistent
    while plain least squares is not (benchmarks/consistent_panda.py prints the error table)."""
    folder = real_data / "panda_gaz2019"
    q = np.loadtxt(folder / "exciting_traj_positions.txt").reshape(-1, 7)
    rec = Recording(np.arange(q.shape[0]) * 1e-3, q, np.loadtxt(folder / "exciting_traj_torques.txt").reshape(-1, 7),
                    np.loadtxt(folder / "exciting_traj_velocity.txt").reshape(-1, 7))
    plant = Plant(make_model("serial", {"friction": "viscous+coulomb+offset"}, urdf=folder / "panda.urdf"))
    res = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    assert_consistent(links_of(plant, res.theta))
    assert res.consistent.converged and res.consistent.linear_consistency.violations
    fr = plant.friction.values_by_term(res.friction_values)
    assert min(fr["viscous"]) >= 0 and min(fr["coulomb"]) >= 0
    err = np.linalg.norm(res.tcmd - res.cond.tau) / np.linalg.norm(res.cond.tau)
    print(f"Panda full-record fit relative error, consistent: {100 * err:.3f} % (Gaz et al. classical LS: 1.41 %)")
