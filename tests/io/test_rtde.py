"""Universal Robots RTDE logs as recordings: record.py's space-separated and ur_rtde's comma-separated
layouts (recognised by the header), target_moment or actual_current × the configuration's torque
constants, the clear errors, and that nothing is written beside the log."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import ConfigError, FileFormatError
from dynid.io.readers import read_recording, write_recording_csv
from dynid.models import Plant, make_model
from dynid.models.config import COMMON_KEYS, ModelConfig
from dynid.recording import Recording

UR_K = np.array([0.125, 0.125, 0.125, 0.092, 0.092, 0.092])   # N m/A, one per joint (joint side)


def _log(n=300, n_joints=6, dt=0.002, t0=1234.5):
    """Controller time, positions, velocities, torques of ``q_j = sin(w_j t)``, ``tau_j = j + cos(w_j t)``."""
    t = t0 + np.arange(n) * dt
    w = 2 * np.pi * (0.4 + 0.2 * np.arange(n_joints))
    q = np.sin(w * (t[:, None] - t0))
    return t, q, w * np.cos(w * (t[:, None] - t0)), np.arange(1, n_joints + 1) + np.cos(w * (t[:, None] - t0))


def write_rtde(path, t, cols: dict[str, np.ndarray], *, sep=" ", extra=True, comments=()):
    """An RTDE log as record.py writes it: a header naming vector fields ``name_0 .. name_{n-1}``."""
    names, blocks = ["timestamp"], [t[:, None]]
    if extra:                                      # fields dynid does not use
        names += ["robot_mode", "safety_status"]
        blocks.append(np.tile([7.0, 1.0], (t.size, 1)))
    for field, a in cols.items():
        names += [f"{field}_{j}" for j in range(a.shape[1])]
        blocks.append(a)
    lines = list(comments) + [sep.join(names)]
    lines += [sep.join(repr(float(x)) for x in row) for row in np.hstack(blocks)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_record_py_log_with_target_moment_reads_as_a_recording(tmp_path):
    t, q, qd, tau = _log()
    f = write_rtde(tmp_path / "robot_data.csv", t, {"actual_q": q, "actual_qd": qd, "target_moment": tau,
                                                   "actual_current": tau / UR_K})
    rec = read_recording(f, n_joints=6, require_tau=True)
    np.testing.assert_array_equal(rec.t, t)
    np.testing.assert_array_equal(rec.q, q)
    np.testing.assert_array_equal(rec.qd, qd)
    np.testing.assert_array_equal(rec.tau, tau)           # no constants: target_moment
    assert rec.meta["format"] == "ur-rtde" and rec.meta["torque"] == "target_moment"


def test_comma_separated_log_with_currents_times_torque_constants(tmp_path):
    t, q, qd, tau = _log()
    current = tau / UR_K
    f = write_rtde(tmp_path / "ur.log", t, {"actual_current": current, "actual_q": q}, sep=",",
                   comments=["# robot: ur5e-0042"])
    rec = read_recording(f, torque_constants=UR_K, require_tau=True)
    np.testing.assert_allclose(rec.tau, current * UR_K, rtol=1e-15)
    np.testing.assert_allclose(rec.tau, tau, rtol=1e-12)
    assert rec.qd is None and rec.meta["robot"] == "ur5e-0042"
    assert rec.meta["torque"] == "actual_current x torque_constants"
    # with both columns, configured constants mean the currents are wanted
    g = write_rtde(tmp_path / "both.csv", t, {"actual_q": q, "target_moment": 2 * tau, "actual_current": current})
    np.testing.assert_allclose(read_recording(g, torque_constants=UR_K).tau, tau, rtol=1e-12)
    np.testing.assert_array_equal(read_recording(g).tau, 2 * tau)
    # one number for every joint
    np.testing.assert_allclose(read_recording(f, torque_constants=[0.1]).tau, current * 0.1, rtol=1e-15)


def test_a_log_without_torques_or_constants_is_a_clear_error(tmp_path):
    t, q, qd, tau = _log()
    f = write_rtde(tmp_path / "motion.csv", t, {"actual_q": q, "actual_qd": qd})
    assert read_recording(f).tau is None                                   # a motion to predict
    with pytest.raises(FileFormatError, match=r"motion\.csv: the log has no torques: neither target_moment_0\.\. "
                                              r"nor actual_current_0\.\."):
        read_recording(f, require_tau=True)
    g = write_rtde(tmp_path / "currents.csv", t, {"actual_q": q, "actual_current": tau / UR_K})
    assert read_recording(g).tau is None
    with pytest.raises(ConfigError, match=r"currents\.csv: the log gives motor currents .* but no torque constants; "
                                          r"set torque_constants"):
        read_recording(g, require_tau=True)
    with pytest.raises(ConfigError, match=r"torque_constants has 2 values but .*currents\.csv has 6 joints"):
        read_recording(g, torque_constants=[0.1, 0.2], require_tau=True)


def test_joint_columns_must_match_the_model_and_each_other(tmp_path):
    t, q, qd, tau = _log()
    f = write_rtde(tmp_path / "r.csv", t, {"actual_q": q, "target_moment": tau})
    with pytest.raises(FileFormatError, match=r"the log has 6 joints \(actual_q_0\.\.actual_q_5\) but the model has 4"):
        read_recording(f, n_joints=4)
    g = write_rtde(tmp_path / "short.csv", t, {"actual_q": q, "target_moment": tau[:, :5]})
    with pytest.raises(FileFormatError, match=r"columns target_moment_\* are target_moment_0, .*target_moment_4, "
                                              r"expected .*target_moment_5"):
        read_recording(g)
    h = write_rtde(tmp_path / "bad.csv", t, {"actual_q": q, "target_moment": tau})
    h.write_text(h.read_text().replace(repr(float(q[7, 2])), "nan?", 1))
    with pytest.raises(FileFormatError, match=r"bad\.csv, column actual_q_2: row 8 holds 'nan\?', not a number"):
        read_recording(h)


def test_repeated_and_out_of_order_rows_are_dropped_and_sorted(tmp_path):
    t, q, qd, tau = _log()
    rows = np.r_[np.arange(100), 99, 99, np.arange(100, 300)]
    rows[[150, 151]] = rows[[151, 150]]
    f = write_rtde(tmp_path / "r.csv", t[rows], {"actual_q": q[rows], "target_moment": tau[rows]})
    with pytest.warns(UserWarning, match=r"1 rows out of time order were sorted; 2 rows repeating a time stamp were "
                                         r"dropped"):
        rec = read_recording(f)
    np.testing.assert_array_equal(rec.t, t)
    np.testing.assert_array_equal(rec.q, q)


def test_the_header_not_the_name_makes_an_rtde_log(tmp_path):
    t, q, qd, tau = _log(n_joints=1)
    f = write_rtde(tmp_path / "log", t, {"actual_q": q, "target_moment": tau}, extra=False)
    f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())                        # a UTF-8 BOM as Windows editors write
    rec = read_recording(f, n_joints=1)
    np.testing.assert_array_equal(rec.q, q)
    # a dynid CSV with a column that happens to be called timestamp stays a dynid CSV
    g = tmp_path / "plain.csv"
    g.write_text("t,q1,tau1,timestamp\n" + "\n".join(f"{i * 0.01},{np.sin(i / 9)},{i % 7},{i}" for i in range(60)))
    assert read_recording(g).n_samples == 60


def test_torque_constants_is_a_configuration_key():
    assert "torque_constants" in COMMON_KEYS
    cfg = ModelConfig.from_dict({"torque_constants": [0.1, 0.2]})
    assert cfg.torque_constants == (0.1, 0.2)
    assert ModelConfig.from_dict(cfg.to_dict()).torque_constants == (0.1, 0.2)   # result.json round trip
    assert ModelConfig.from_dict({"torque_constants": 0.3}).torque_constants == (0.3,)
    assert "torque_constants" not in ModelConfig.from_dict({}).to_dict()
    for bad in ([0.1, 0.0], "abc", [True], []):
        with pytest.raises(ConfigError, match="torque_constants"):
            ModelConfig.from_dict({"torque_constants": bad})


# ------------------------------------------------------------------------------------------ end to end

SCARA = {"L1": 0.325, "L2": 0.275}


def _multisine(lo, hi, base_hz, harmonics, duration_s, rate_hz, seed):
    """``q = c + sum_k a_k sin(w_k t + phi_k)`` per joint, with its exact derivatives."""
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w = 2 * np.pi * base_hz * np.asarray(harmonics, float)
    ph = rng.uniform(0, 2 * np.pi, (lo.size, w.size))
    amp = 0.45 * (hi - lo)[:, None] / w.size * rng.uniform(0.6, 1.0, (lo.size, w.size))
    arg = w[None, None, :] * t[:, None, None] + ph[None]
    return (t, 0.5 * (lo + hi) + np.sum(amp * np.sin(arg), axis=2), np.sum(amp * w * np.cos(arg), axis=2),
            -np.sum(amp * w**2 * np.sin(arg), axis=2))


def test_a_current_log_identifies_like_its_torque_csv_and_writes_nothing_beside_it(tmp_path, capsys):
    """A 4-axis arm logged through RTDE at 500 Hz (currents, record.py layout): ``dynid identify`` with the
    torque constants in the configuration recovers what the same torques as a dynid CSV give, and
    predicts another motion; the log's folder is left as it was."""
    k = np.array([0.31, 0.27, 0.05, 0.11])
    plant = Plant(make_model("scara4", SCARA))
    theta = np.concatenate([plant.model.example_parameters(), np.array([[0.8, 2.5], [0.5, 1.5], [60, 12], [0.05, 0.3]]).ravel()])
    lo, hi = [-2.0, -2.2, -0.15, -2.5], [2.0, 2.2, -0.01, 2.5]
    rng = np.random.default_rng(5)
    logs = tmp_path / "logs"
    logs.mkdir()
    runs = {}
    for name, seed, base in (("id", 1, 0.1), ("other", 2, 0.13)):
        t, q, qd, qdd = _multisine(lo, hi, base, [1, 2, 3, 5, 7], 16.0, 500.0, seed)
        tau = plant.torque(theta, q, qd, qdd)
        tau = tau + 0.003 * np.sqrt(np.mean(tau**2, axis=0)) * rng.standard_normal(tau.shape)
        runs[name] = Recording(t, q, tau)
        write_rtde(logs / f"{name}_rtde.csv", 100.0 + t, {"actual_q": q, "actual_qd": qd, "actual_current": tau / k})
    write_recording_csv(tmp_path / "id.csv", Recording(runs["id"].t + 100.0, runs["id"].q, runs["id"].tau))
    (tmp_path / "cfg.json").write_text(json.dumps({**SCARA, "torque_constants": list(k)}))
    before = sorted(os.listdir(logs))
    assert main(["identify", str(logs / "id_rtde.csv"), "--model", "scara4", "--config", str(tmp_path / "cfg.json"),
                 "--friction", "viscous+coulomb", "--out", str(tmp_path / "out"), "--no-report", "--quiet",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["torque_constants"] == list(k)
    csv = dynid.Identifier("scara4", config=SCARA, friction="viscous+coulomb").fit(tmp_path / "id.csv")
    log = dynid.load(tmp_path / "out")
    # the log's velocities are used (exact), the CSV's positions are differentiated: close, not identical
    np.testing.assert_allclose(log.theta, csv.model_.theta, rtol=0.02, atol=1e-3)
    np.testing.assert_allclose(log.theta[:8], theta[:8], rtol=0.05, atol=2e-3)
    p = log.predict(dynid.Identifier("scara4", config={**SCARA, "torque_constants": list(k)}).read(
        logs / "other_rtde.csv"))
    assert p.relative_error() < 0.02, p.relative_error()
    np.testing.assert_allclose(p.measured, runs["other"].tau[p.rows], rtol=1e-12, atol=1e-12)
    assert sorted(os.listdir(logs)) == before
