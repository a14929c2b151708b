"""``--cutoff auto``: the cutoff chosen by two-fold held-out torque error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.signal.conditioning import default_cutoff
from dynid.identification.select import select_cutoff
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.recording import Recording

I, FV, FC = 0.05, 0.4, 0.3      # kg m^2, N m s/rad, N m


def _axis_with_fast_component(seed: int = 0, duration_s: float = 20.0, rate_hz: float = 1000.0) -> Recording:
    """rotary1: q = 1.0 sin(2 pi 0.3 t) + 0.004 sin(2 pi 14 t); tau = I qdd + Fv qd + Fc sign(qd) + 1 % noise.

    The 14 Hz component holds far less than 1 % of the position power (so the default cutoff,
    20 x the 0.3 Hz bandwidth, attenuates it) but most of the inertial torque.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1.0 / rate_hz)
    w1, w2 = 2 * np.pi * 0.3, 2 * np.pi * 14.0
    q = 1.0 * np.sin(w1 * t) + 0.004 * np.sin(w2 * t)
    qd = w1 * np.cos(w1 * t) + 0.004 * w2 * np.cos(w2 * t)
    qdd = -w1**2 * np.sin(w1 * t) - 0.004 * w2**2 * np.sin(w2 * t)
    tau = I * qdd + FV * qd + FC * np.sign(qd)
    tau += 0.01 * np.sqrt(np.mean(tau**2)) * rng.standard_normal(t.size)
    return Recording(t, q, tau)


def test_a_fast_inertial_component_raises_the_cutoff():
    rec = _axis_with_fast_component()
    plant = Plant(make_model("rotary1"))
    sel = select_cutoff(rec, plant)
    base = default_cutoff(rec.q, rec.sample_period)
    assert sel.default_hz == base and base < 14.0
    assert sel.chosen_hz > 14.0, sel.note()
    assert sel.scores[sel.chosen_hz] < 0.98 * sel.scores[base]


def test_the_default_stays_when_nothing_is_clearly_better():
    t = np.arange(0.0, 16.0, 1e-3)
    w = 2 * np.pi * 0.4
    q = np.sin(w * t)
    rng = np.random.default_rng(1)
    tau = I * -w**2 * np.sin(w * t) + FV * w * np.cos(w * t) + FC * np.sign(np.cos(w * t))
    tau = tau + 0.01 * rng.standard_normal(t.size)
    sel = select_cutoff(Recording(t, q, tau), Plant(make_model("rotary1")))
    assert sel.chosen_hz == sel.default_hz, sel.note()


def test_cli_cutoff_auto_records_the_selection(tmp_path, capsys):
    write_recording_csv(tmp_path / "run.csv", _axis_with_fast_component(duration_s=12.0))
    code = main(["identify", str(tmp_path / "run.csv"), "--model", "rotary1", "--cutoff", "auto", "--out",
                 str(tmp_path / "out"), "--no-report", "--json", "--quiet"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    sel = result["selection"]
    assert result["conditioning"]["cutoff_hz"] == sel["cutoff_hz"] > sel["default_cutoff_hz"]
    assert len({c["cutoff_hz"] for c in sel["candidates"]}) >= 3
    assert all(c["held_out_nrmse"] > 0 for c in sel["candidates"])
    assert any("chosen by held-out error" in n for n in result["notes"])
    with pytest.raises(SystemExit) as exc:
        main(["identify", str(tmp_path / "run.csv"), "--model", "rotary1", "--cutoff", "fast"])
    assert exc.value.code == 2 and "expected a frequency in Hz or 'auto'" in capsys.readouterr().err
