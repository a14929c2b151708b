"""Excitation of the 6-UPRU hexapod: leg-space plans under the mechanism's own limits (issue 13)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.excite import FourierOptions, JointLimits, optimize_fourier, plan_sine
from dynid.models import Plant
from dynid.models.hexapod import EXAMPLE_GEOMETRY, Hexapod

from .test_cli import read_csv, run_json


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("hexapod") / "hexapod.json"
    path.write_text(json.dumps(EXAMPLE_GEOMETRY))
    return path


def _range(half=0.05):
    home = Hexapod.example().home_positions()
    return home - half, home + half


def _csv(v):
    return ",".join(f"{x:.6f}" for x in v)


@pytest.mark.slow
def test_fourier_over_home_plus_minus_5cm_beats_the_sine_and_keeps_every_limit(tmp_path, capsys, config):
    """The acceptance form: ``--fourier 5`` over leg lengths home ± 5 cm keeps every limit on the 1 ms grid
    (joint limits and the mechanism's: U-joint angles, Jacobian condition, assembly), stays in range,
    and has a lower condition number than the sine program over the same range."""
    lo, hi = _range()
    out = tmp_path / "traj.csv"
    status, d, _ = run_json(capsys, ["--model", "6upru", "--config", str(config), "--fourier", "5",
                                     f"--start={_csv(lo)}", f"--target={_csv(hi)}", "--record-s", "20",
                                     "--out", str(out)])
    assert status == 0 and d["limits_ok"] is True and d["violations"] == []
    assert d["condition_number"] < d["sine_condition_number"]
    names, data = read_csv(out)
    q = data[:, [names.index(f"q{j}") for j in range(1, 7)]]
    assert np.all(q >= lo - 1e-9) and np.all(q <= hi + 1e-9)
    assert d["periods"] > 1                                   # a ±5 cm stroke wants several periods in 20 s
    # the sine program over the same range, as `dynid excite` plans it, has the number the JSON compares with
    status, s, _ = run_json(capsys, ["--model", "6upru", "--config", str(config), f"--start={_csv(lo)}",
                                     f"--target={_csv(hi)}", "--record-s", "20"])
    assert status == 0 and s["condition_number"] == pytest.approx(d["sine_condition_number"], rel=1e-9)


def test_mechanism_limits_bind_the_optimiser():
    """With a tight U-joint limit (a sine program over the same strokes exceeds it) the Fourier design stays
    inside it on the 1 ms grid: the mechanism's limits are constraints of the optimisation, not just a check."""
    lo, hi = _range(0.03)
    tight = Hexapod({**EXAMPLE_GEOMETRY, "u_joint_limit": 0.03})
    sine = plan_sine(lo, hi, np.array([1.0, 1.27, 1.43, 1.13, 1.37, 1.19]), factor=0.5, record_s=4.0)
    _, q, _, _ = sine.sample(1e-2)
    assert tight.configuration_check(q).values[:, :12].max() > 0.03          # the sine leaves the limit
    lim = JointLimits.create(6, position=np.column_stack([lo, hi]), velocity=sine.peak_velocity,
                             acceleration=sine.peak_acceleration)
    design = optimize_fourier(Plant(tight), lim, 4.0, FourierOptions(harmonics=3, periods=2, restarts=1, max_iter=15,
                                                                      dopt_weight=0.0), strict=False)
    assert design.limits_ok, design.check.violations
    assert max(v for k, v in design.check.configuration_usage.items() if "U-joint" in k) <= 1.0


def test_sine_plan_defaults_to_dynids_program_about_home(capsys, config):
    """Without --start/--target the hexapod gets dynid's program (home ± 50 mm; the source has none),
    and the sine plan reports its condition number and the mechanism's peak forces."""
    status, d, _ = run_json(capsys, ["--model", "6upru", "--config", str(config)])
    assert status == 0 and "dynid's default program" in d["defaults"]
    lo, hi = _range()
    np.testing.assert_allclose(d["start"], lo, atol=1e-6)
    np.testing.assert_allclose(d["target"], hi, atol=1e-6)
    assert np.isfinite(d["condition_number"]) and len(d["peak_torque"]) == 6


def test_mcbasic_program_in_mm(tmp_path, capsys, config):
    path = tmp_path / "IDENT.PRG"
    assert main(["excite", "--model", "6upru", "--config", str(config), "--mcbasic", str(path)]) == 0
    capsys.readouterr()
    text = path.read_text()
    lo, hi = _range()
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("startPoint = {"))
    np.testing.assert_allclose([float(x) for x in line.split("{")[1].rstrip("}").split(",")], 1000 * lo, atol=1e-5)
    assert "Attach HEXAPOD" in text and "SineWave sineTarget SineWaveFreq = SWfreq" in text
