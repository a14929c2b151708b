"""``dynid excite`` as the acceptance checks call it (spec/interfaces.md §5), in-process."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main

PUMA = ["--start=-100,-170,100,-60,-60,-100", "--target=100,-40,235,60,60,100"]


def read_csv(path):
    """Header and data of a CSV with leading ``#`` lines."""
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if not ln.startswith("#"))
    return lines[k].split(","), np.loadtxt(path, delimiter=",", skiprows=k + 1)


def run_json(capsys, argv):
    status = main(["excite", *argv, "--json"])
    out = capsys.readouterr()
    return status, (json.loads(out.out) if out.out.strip() else None), out.err


@pytest.mark.parametrize("freqs, rating, reason", [
    ("1,2,1.2", "bad", "frequency ratio 1:2"),
    ("1,1.2,1.2", "medium", "joints 2 and 3 have the same frequency: always in phase"),
    ("1.1,1.3,1.5", "good", "all frequencies differ"),
])
@pytest.mark.parametrize("record", [[], ["--record-s", "3"]])
def test_rating_only(capsys, freqs, rating, reason, record):
    status, d, _ = run_json(capsys, ["--freqs", freqs, *record])
    assert status == 0
    assert d["rating"] == rating and any(reason in r for r in d["reasons"])
    for key in ("rating", "reasons", "repeat_period_s", "cycles", "peak_velocity", "condition_number"):
        assert key in d
    assert len(d["cycles"]) == 3 and d["peak_velocity"] is None and d["condition_number"] is None


def test_rating_text_output(capsys):
    assert main(["excite", "--freqs", "1,1.2,1.2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rating: medium") and "joints 2 and 3 have the same frequency: always in phase" in out


def test_model_form_adds_condition_number_and_peaks(capsys):
    status, d, _ = run_json(capsys, ["--model", "puma", *PUMA, "--units", "softmc", "--freqs", "1.56,1,1.31,1.47,1.21,1.17",
                                     "--factor", "0.15", "--record-s", "20"])
    assert status == 0
    assert d["condition_number"] == pytest.approx(409.4, rel=0.01)
    for key in ("peak_velocity", "peak_torque", "peak_acceleration"):
        assert len(d[key]) == 6 and all(np.isfinite(d[key]))
    assert d["peak_velocity"][0] == pytest.approx(np.radians(100) * 2 * np.pi * 0.234)   # SI: rad/s
    assert d["freqs_hz"][0] == pytest.approx(0.234) and d["rating"] in ("bad", "medium", "good")
    assert "poorly_excited" in d["identifiability"]


def test_velocity_limits_in_softmc_units_rate_a_too_fast_plan_bad(capsys):
    status, d, _ = run_json(capsys, ["--model", "scara4", "--units", "softmc", "--start=-160,-160,0,-350",
                             "--target=160,160,150,350", "--freqs", "1,1.27,1.43,1.13", "--factor", "0.3",
                             "--limits", "200,500,1000,2000"])
    assert status == 0 and d["rating"] == "bad"
    assert any("joint 1 (A1): peak velocity" in r and "exceeds its limit 3.491 rad/s" in r for r in d["reasons"])


def test_source_scara_program_by_default(tmp_path, capsys):
    prg = tmp_path / "IDENT.PRG"
    status, d, _ = run_json(capsys, ["--model", "scara4", "--mcbasic", str(prg)])
    assert status == 0 and d["files"]["mcbasic"] == str(prg)
    lines = [ln.strip() for ln in prg.read_text().splitlines()]
    for x in ("startPoint = {-160,-160,0,-350}", "sineTarget = {160,160,150,350}", "SWfreq = 0.3*{1,1.27,1.43,1.13}",
              "SCARA.DynamicModel = 1", "Move startPoint Abs = 1", "SineWave sineTarget SineWaveFreq = SWfreq",
              "sleep 2000", "IdentificationStart IdentFilterFreq = 80", "sleep 20000", "IdentificationFinish"):
        assert x in lines
    explicit = tmp_path / "explicit.prg"
    assert main(["excite", "--model", "scara4", "--units", "softmc", "--start=-160,-160,0,-350",
                 "--target=160,160,150,350", "--freqs", "1,1.27,1.43,1.13", "--factor", "0.3", "--record-s", "20",
                 "--mcbasic", str(explicit), "--quiet"]) == 0
    capsys.readouterr()
    assert explicit.read_text() == prg.read_text()


@pytest.mark.slow
def test_puma_fourier_halves_the_sine_condition_number_within_limits(tmp_path, capsys):
    out = tmp_path / "traj.csv"
    status, d, _ = run_json(capsys, ["--model", "puma", "--fourier", "5", *PUMA, "--units", "softmc", "--record-s", "20",
                                     "--seed", "1", "--out", str(out)])
    assert status == 0 and d["limits_ok"] is True
    assert d["condition_number"] <= 0.5 * d["sine_condition_number"]
    assert d["sine_condition_number"] == pytest.approx(409.4, rel=0.01)        # the source's 0.15*{...} program
    # independent check of the written trajectory (1 ms) against the box and the limits in the JSON
    header, data = read_csv(out)
    assert header[:2] == ["t", "q1"] and header[7] == "dq1"
    t, q, qd = data[:, 0], data[:, 1:7], data[:, 7:13]
    assert np.allclose(np.diff(t), 1e-3) and t[-1] == pytest.approx(20.0)
    lo, hi = np.radians([-100, -170, 100, -60, -60, -100]), np.radians([100, -40, 235, 60, 60, 100])
    assert np.all(q >= lo - 1e-9) and np.all(q <= hi + 1e-9)
    assert np.all(np.abs(qd).max(axis=0) <= np.array(d["limits"]["velocity"]) * (1 + 1e-6))
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-7)


def test_infeasible_fourier_request_exits_1_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "traj.csv"
    status, d, err = run_json(capsys, ["--model", "rotary3", "--fourier", "3", "--start=0.5", "--target=1.5",
                                       "--limits", "1", "--acc-limits", "3", "--torque-limits", "5", "--restarts", "1",
                                       "--record-s", "10", "--out", str(out)])
    assert status == 1 and d["limits_ok"] is False and d["violations"]
    assert "violates joint limits" in err and not out.exists()


@pytest.mark.parametrize("argv, match", [
    (["--fourier", "5", "--freqs", "1,2"], "--fourier needs --model"),
    (["--freqs", "1,2", "--start=1,2"], "give both --start and --target"),
    (["--model", "puma", "--freqs", "1,2"], "--freqs has 2 values"),
    (["--freqs", "1,x"], "--freqs must be comma-separated numbers"),
    ([], "give --freqs"),
    (["--model", "nope", "--freqs", "1"], "unknown model"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, match):
    assert main(["excite", *argv]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_degrees_without_units_are_noted_and_read_as_softmc(capsys):
    status, d, err = run_json(capsys, ["--model", "puma", *PUMA, "--freqs", "1.56,1,1.31,1.47,1.21,1.17",
                                       "--factor", "0.15"])
    assert status == 0 and d["units"] == "softmc" and "read as softMC units" in err
    assert d["start"][0] == pytest.approx(np.radians(-100))


def test_plot_and_csv_of_the_sine_plan(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png, csv = tmp_path / "plan.png", tmp_path / "plan.csv"
    status, d, _ = run_json(capsys, ["--model", "scara4", "--plot", str(png), "--out", str(csv), "--dt", "0.01"])
    assert status == 0 and png.read_bytes()[:4] == b"\x89PNG"
    header, data = read_csv(csv)
    assert header[0] == "t" and data.shape[1] == 13 and data[0, 0] == 0.0


def test_choose_proposes_a_good_set_within_the_velocity_limits(capsys):
    status, d, _ = run_json(capsys, ["--model", "scara4", "--units", "softmc", "--start=-160,-160,0,-350",
                                     "--target=160,160,150,350", "--limits", "200,300,500,600", "--choose",
                                     "--record-s", "20"])
    assert status == 0 and d["rating"] == "good"
    assert np.all(np.array(d["choice"]["utilisation"]) <= 1.0)
    v = np.array(d["peak_velocity"]) / np.array([np.pi / 180, np.pi / 180, 1e-3, np.pi / 180])   # back to deg/s, mm/s
    assert np.all(v <= 0.8 * np.array([200, 300, 500, 600]) * (1 + 1e-9))
    np.testing.assert_allclose(d["freqs_hz"], np.array(d["choice"]["base"]) * d["choice"]["factor"])
