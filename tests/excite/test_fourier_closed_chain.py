"""Fourier excitation of closed chains (issue 17, point 1): the Delta over the source's own range.

The issue: ``dynid excite --model delta3 --start=-30,-30,-30 --target=70,70,70 --units softmc --fourier 5``
exited 2 ("actuator angles [133.1, 3.3, -32.9] rad do not assemble the Delta"): SLSQP's line search tried
coefficients far outside the range, where the Delta raised a plain ``InputDataError`` the optimiser did not
expect (it catches :class:`~dynid.models.closed_chain.KinematicsError`, what a chain that does not assemble
raises). Every trajectory here is checked independently of the optimiser: positions, finite-difference
velocities and accelerations of the written CSV against limits computed from the sine formula, assembly by
textbook trilateration (not the Delta's closed form) with the closure checked on every row, transmission
angles from the elbow geometry written out in this file, and the condition number from ``numpy.linalg.cond``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.errors import InputDataError
from dynid.excite import FourierOptions, JointLimits, optimize_fourier, plan_sine
from dynid.excite.fourier import _Problem
from dynid.excite.identifiability import plant_base
from dynid.models import Plant, make_model, model_class
from dynid.models.closed_chain import KinematicsError

from .test_cli import read_csv, run_json

DEG = np.pi / 180
SOURCE = ["--start=-30,-30,-30", "--target=70,70,70", "--units", "softmc"]     # the 4-axis Delta program's range
SOURCE_FREQS = 0.3 * np.array([1.0, 1.27, 1.43])                               # its SineWave frequencies [Hz]
SHORT = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.5}


def _sine_peaks(lo, hi, freqs):
    """Peak velocity and acceleration of q = c - A cos(2 pi f t): A w and A w^2."""
    A, w = 0.5 * (np.asarray(hi) - np.asarray(lo)), 2 * np.pi * np.asarray(freqs)
    return A * w, A * w**2


def _transmission_cos(geo: dict, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """cos of the angle between forearm i (elbow B_i to plate joint C_i) and its elbow's path dB_i/dq_i,
    written out from spec/interfaces.md §4: B_i = R u_i + L (cos q_i u_i - sin q_i e_z), C_i = p + r u_i."""
    out = np.empty(q.shape)
    ez = np.array([0.0, 0.0, 1.0])
    for i in range(3):
        phi = 2 * np.pi * i / 3
        u = np.array([np.cos(phi), np.sin(phi), 0.0])
        c, s = np.cos(q[:, i])[:, None], np.sin(q[:, i])[:, None]
        B = geo["base_radius"] * u + geo["upper_arm"] * (c * u - s * ez)
        dB = geo["upper_arm"] * (-s * u - c * ez)
        f = p + geo["platform_radius"] * u - B
        out[:, i] = np.sum(f * dB, axis=1) / (np.linalg.norm(f, axis=1) * np.linalg.norm(dB, axis=1))
    return out


def _assembled_plate(geo: dict, q: np.ndarray) -> np.ndarray:
    """Plate centre below the base by textbook trilateration (the three spheres of radius L_BC about
    B_i - r u_i; frame e_x, e_y, e_z on the first three centres), NaN where they do not meet; each row is
    then checked to close the chain: |p + r u_i - B_i| = L_BC."""
    q = q[:, :3]
    ez = np.array([0.0, 0.0, 1.0])
    S = []
    for i in range(3):
        phi = 2 * np.pi * i / 3
        u = np.array([np.cos(phi), np.sin(phi), 0.0])
        B = geo["base_radius"] * u + geo["upper_arm"] * (np.cos(q[:, i])[:, None] * u - np.sin(q[:, i])[:, None] * ez)
        S.append(B - geo["platform_radius"] * u)
    L = geo["forearm"]
    d21, d31 = S[1] - S[0], S[2] - S[0]
    d = np.linalg.norm(d21, axis=1)
    ex = d21 / d[:, None]
    i_ = np.sum(ex * d31, axis=1)
    ey = d31 - i_[:, None] * ex
    j_ = np.linalg.norm(ey, axis=1)
    ey = ey / j_[:, None]
    x = d / 2
    y = (i_**2 + j_**2) / (2 * j_) - i_ * x / j_
    with np.errstate(invalid="ignore"):
        h = np.sqrt(L**2 - x**2 - y**2)
    base = S[0] + x[:, None] * ex + y[:, None] * ey
    n = np.cross(ex, ey)
    up = np.where(n[:, 2:] > 0, 1.0, -1.0)
    p = base - up * h[:, None] * n                           # the solution below: smaller z
    ok = np.isfinite(p).all(axis=1)
    for Si in S:
        assert np.allclose(np.linalg.norm(p[ok] - Si[ok], axis=1), L, rtol=0, atol=1e-9)
    return p


def _cond(model, q, dq, ddq) -> float:
    plant = Plant(model)
    idx = plant_base(plant).independent
    W = plant.regressor(q, dq, ddq)[:, :, idx].reshape(-1, len(idx))
    return float(np.linalg.cond(W))


@pytest.fixture(scope="module")
def delta3_source(tmp_path_factory):
    """The issue's command, with the trajectory written to CSV, and the sine plan over the same range."""
    import contextlib
    import io

    from dynid.cli.main import main

    out = tmp_path_factory.mktemp("delta") / "traj.csv"
    runs = {}
    for key, extra in (("fourier", ["--fourier", "5", "--out", str(out)]), ("sine", [])):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            status = main(["excite", "--model", "delta3", *SOURCE, *extra, "--json", "--quiet"])
        runs[key] = (status, json.loads(buf.getvalue()))
    return runs, out


def test_issue_17_delta3_fourier_over_the_source_range_runs_and_beats_the_sine(delta3_source):
    runs, out = delta3_source
    status, d = runs["fourier"]
    s_status, s = runs["sine"]
    assert status == 0 and s_status == 0
    assert d["limits_ok"] is True and d["violations"] == [] and d["beats_sine"] is True
    # the same condition-number definition as the sine rating: the sine plan's own run reports the number
    assert s["rating"] == "good" and s["condition_number"] == pytest.approx(d["sine_condition_number"], rel=1e-9)
    assert d["condition_number"] < s["condition_number"]
    # and it is the condition number of the written trajectory, recomputed with numpy
    names, data = read_csv(out)
    col = lambda k: data[:, [names.index(f"{k}{j}") for j in (1, 2, 3)]]  # noqa: E731
    q, dq, ddq = col("q"), col("dq"), col("ddq")
    assert _cond(make_model("delta3", model_class("delta3").example_config), q, dq, ddq) == pytest.approx(
        d["condition_number"], rel=1e-6)


def test_delta3_fourier_trajectory_keeps_the_range_the_speeds_and_the_assembly(delta3_source):
    """Every 1 ms sample of the CSV: inside -30..70 deg, finite-difference speeds within the sine's peaks
    (the velocity/acceleration limits the design had to keep), at rest at both ends, assembled below the
    base (trilateration) and with every transmission angle inside the limit (75.5 deg)."""
    _, out = delta3_source
    names, data = read_csv(out)
    t = data[:, names.index("t")]
    col = lambda k: data[:, [names.index(f"{k}{j}") for j in (1, 2, 3)]]  # noqa: E731
    q, dq, ddq = col("q"), col("dq"), col("ddq")
    dt = float(np.median(np.diff(t)))
    assert dt == pytest.approx(1e-3) and t[-1] == pytest.approx(20.0)
    assert q.min() >= -30 * DEG - 1e-9 and q.max() <= 70 * DEG + 1e-9
    vmax, amax = _sine_peaks(np.full(3, -30 * DEG), np.full(3, 70 * DEG), SOURCE_FREQS)
    v_fd = (q[2:] - q[:-2]) / (2 * dt)
    a_fd = (q[2:] - 2 * q[1:-1] + q[:-2]) / dt**2
    assert np.all(np.abs(v_fd).max(axis=0) <= vmax * (1 + 1e-4))
    assert np.all(np.abs(a_fd).max(axis=0) <= amax * (1 + 1e-3))
    np.testing.assert_allclose(v_fd, dq[1:-1], atol=1e-5 * vmax.max())          # the dq column is the motion's
    np.testing.assert_allclose(np.r_[dq[0], dq[-1], ddq[0], ddq[-1]], 0.0, atol=1e-9)
    geo = model_class("delta3").example_config
    p = _assembled_plate(geo, q)
    assert np.all(np.isfinite(p))
    assert _transmission_cos(geo, q, p).min() >= 0.25


@pytest.mark.slow
def test_delta4_fourier_over_the_source_program_beats_the_sine(capsys, tmp_path):
    """delta4 without --start/--target: the source's 4-axis program (phi -200..200 deg)."""
    out = tmp_path / "traj.csv"
    status, d, _ = run_json(capsys, ["--model", "delta4", "--fourier", "5", "--out", str(out), "--quiet"])
    assert status == 0 and d["limits_ok"] is True and d["beats_sine"] is True
    assert d["condition_number"] < d["sine_condition_number"]
    names, data = read_csv(out)
    q = data[:, [names.index(f"q{j}") for j in (1, 2, 3, 4)]]
    lo, hi = np.array([-30, -30, -30, -200]) * DEG, np.array([70, 70, 70, 200]) * DEG
    assert np.all(q >= lo - 1e-9) and np.all(q <= hi + 1e-9)
    assert np.all(np.isfinite(_assembled_plate(model_class("delta4").example_config, q)))


def test_joint_limits_bind_the_optimiser(capsys, tmp_path):
    """Velocity and acceleration limits below the sine's peaks (--limits 60 deg/s, --acc-limits 150 deg/s^2)
    hold on the written trajectory by finite differences, and are used (not met by moving timidly)."""
    out = tmp_path / "traj.csv"
    status, d, _ = run_json(capsys, ["--model", "delta3", *SOURCE, "--fourier", "3", "--limits", "60", "--acc-limits",
                                     "150", "--restarts", "1", "--out", str(out), "--quiet"])
    assert status == 0 and d["limits_ok"] is True
    names, data = read_csv(out)
    q = data[:, [names.index(f"q{j}") for j in (1, 2, 3)]]
    dt = 1e-3
    v = np.abs((q[2:] - q[:-2]) / (2 * dt)).max(axis=0) / DEG
    a = np.abs((q[2:] - 2 * q[1:-1] + q[:-2]) / dt**2).max(axis=0) / DEG
    assert np.all(v <= 60 * (1 + 1e-4)) and np.all(a <= 150 * (1 + 1e-3))
    assert max(v.max() / 60, a.max() / 150) > 0.9
    assert q.min() >= -30 * DEG - 1e-9 and q.max() <= 70 * DEG + 1e-9


def test_delta_mechanism_limits_bind_the_optimiser(capsys, tmp_path):
    """A Delta with short forearms (0.5 m): the sine over -30..70 deg drives the elbows past 90 deg of
    transmission angle (through the serial singularity); the Fourier design keeps every 1 ms sample
    inside 75.5 deg, and the JSON says the sine left the mechanism's limits."""
    cfg = tmp_path / "short.json"
    cfg.write_text(json.dumps(SHORT))
    sine = plan_sine(np.full(3, -30 * DEG), np.full(3, 70 * DEG), [1.0, 1.27, 1.43], factor=0.3, record_s=20.0)
    _, sq, _, _ = sine.sample(1e-2)
    assert _transmission_cos(SHORT, sq, _assembled_plate(SHORT, sq)).min() < 0.0
    out = tmp_path / "traj.csv"
    status, d, _ = run_json(capsys, ["--model", "delta3", "--config", str(cfg), *SOURCE, "--fourier", "3",
                                     "--restarts", "1", "--max-iter", "30", "--out", str(out), "--quiet"])
    assert status == 0 and d["limits_ok"] is True
    names, data = read_csv(out)
    q = data[:, [names.index(f"q{j}") for j in (1, 2, 3)]]
    assert _transmission_cos(SHORT, q, _assembled_plate(SHORT, q)).min() >= 0.25
    assert d["reference"]["configuration_ok"] is False
    assert max(v for k, v in d["reference"]["configuration_usage"].items() if "transmission" in k) > 1.0
    if not d["beats_sine"]:
        assert "leaves the mechanism's limits" in d["sine_note"]


def test_a_series_too_slow_for_the_sine_says_so(capsys):
    """One 20 s period with 3 harmonics reaches 0.15 Hz, the sine runs at 0.3..0.43 Hz: the design cannot
    beat it, and the JSON says why instead of passing it off."""
    status, d, _ = run_json(capsys, ["--model", "delta3", "--start=-10,-10,-10", "--target=50,50,50", "--units",
                                     "softmc", "--fourier", "3", "--periods", "1", "--restarts", "1", "--quiet"])
    assert status == 0 and d["limits_ok"] is True
    assert d["beats_sine"] is False and d["condition_number"] > d["sine_condition_number"]
    assert "highest harmonic (0.15 Hz) is below the sine's frequencies" in d["sine_note"]


# ------------------------------------------------------------------------------------------ units

def test_issue_17_an_unassembled_delta_raises_a_kinematics_error():
    """The issue's angles: the Delta says so with the closed-chain error type (still an InputDataError)."""
    model = model_class("delta3").example()
    q = np.array([[133.1, 3.3, -32.9]])
    with pytest.raises(KinematicsError, match="do not assemble the Delta") as err:
        model.regressor(q, np.zeros_like(q), np.zeros_like(q))
    assert isinstance(err.value, InputDataError) and err.value.sample == 0


def test_an_iterate_outside_the_assembly_costs_a_penalty_not_an_exception():
    """SLSQP's line search may try coefficients whose positions do not assemble: the objective, its
    gradient and the constraints answer (a large constant, zero, infeasible) instead of raising."""
    model = model_class("delta3").example()
    plant = Plant(model)
    lo, hi = np.full(3, -30 * DEG), np.full(3, 70 * DEG)
    vmax, amax = _sine_peaks(lo, hi, SOURCE_FREQS)
    lim = JointLimits.create(3, position=np.column_stack([lo, hi]), velocity=vmax, acceleration=amax)
    prob = _Problem(plant, lim, 20 / 3, FourierOptions(harmonics=3), None, plant_base(plant).independent)
    u = prob.initial(np.random.default_rng(0))
    u[:-3] *= 1e-3
    u[-3:] = np.array([133.1, 3.3, -32.9]) / prob.sc[-3:]   # about the issue's angles [rad]
    with pytest.raises(KinematicsError):
        model.regressor(*prob.states(u))
    assert prob.fun(u) == 1e3 and not np.any(prob.grad(u))
    assert not prob.feasible(u) and np.min(prob.config_con(u)) < -1


def test_reference_start_imitates_the_sine_and_fills_the_limits():
    """Joint 1's sine (0.3 Hz) is the 2nd harmonic of a 20/3 s period: the start follows it closely; the
    others (not harmonics) still correlate; positions stay in the box and a limit is reached."""
    plant = Plant(model_class("delta3").example())
    lo, hi = np.full(3, -30 * DEG), np.full(3, 70 * DEG)
    vmax, amax = _sine_peaks(lo, hi, SOURCE_FREQS)
    lim = JointLimits.create(3, position=np.column_stack([lo, hi]), velocity=vmax, acceleration=amax)
    opts = FourierOptions(harmonics=5, periods=3)
    period = 20 / 3
    prob = _Problem(plant, lim, period, opts, None, plant_base(plant).independent)
    tr = prob.to_trajectory(prob.reference_start(SOURCE_FREQS), period)
    t = np.arange(0.0, period, 1e-3)
    q, qd, qdd = tr.evaluate(t)
    sine_q = 0.5 * (lo + hi) - 0.5 * (hi - lo) * np.cos(2 * np.pi * np.outer(t, SOURCE_FREQS))
    corr = [np.corrcoef(q[:, j], sine_q[:, j])[0, 1] for j in range(3)]
    assert corr[0] > 0.95 and min(corr) > 0.6, corr
    assert np.all(q >= lo) and np.all(q <= hi)
    c, A = 0.5 * (lo + hi), 0.5 * (hi - lo)
    use = max(np.max(np.abs(q - c).max(axis=0) / A), np.max(np.abs(qd).max(axis=0) / vmax),
              np.max(np.abs(qdd).max(axis=0) / amax))
    assert 0.97 < use <= 1.0                            # filled to the (2 % tightened) limits
    np.testing.assert_allclose(tr.evaluate([0.0])[1:], 0.0, atol=1e-12)       # starts at rest


def test_optimiser_reports_the_reference_start():
    plant = Plant(model_class("delta3").example())
    lo, hi = np.full(3, -30 * DEG), np.full(3, 70 * DEG)
    vmax, amax = _sine_peaks(lo, hi, SOURCE_FREQS)
    lim = JointLimits.create(3, position=np.column_stack([lo, hi]), velocity=vmax, acceleration=amax)
    d = optimize_fourier(plant, lim, 20.0, FourierOptions(harmonics=3, periods=3, restarts=1, max_iter=20),
                         reference_hz=SOURCE_FREQS)
    assert [r["start"] for r in d.restarts] == ["reference", 1, "polish"]
    assert d.limits_ok
