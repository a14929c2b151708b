"""softMC's cutoff rule (issue 17, point 6): a user's cutoff is below 125 Hz (and the Nyquist frequency) and above
the excitation frequency of the motion; one message names the rule; the automatic choices obey it too."""

from __future__ import annotations

import numpy as np
import pytest

from dynid import ConfigError, Identifier
from dynid.cli.main import main
from dynid.identification.options import (
    SOFTMC_MAX_CUTOFF_HZ,
    check_cutoff,
    excitation_frequency,
)
from dynid.io.readers import write_recording_csv
from dynid.recording import Recording
from dynid.signal.conditioning import default_cutoff

RULE = "softMC's rule: the cutoff must be below 125 Hz and above the excitation frequency"


def crank_recording(f_hz: float = 1.5, dt: float = 1e-3, seconds: float = 12.0, seed: int = 0) -> Recording:
    """A rotary axis under one sine of ``f_hz``: tau = 0.5 qdd + 0.8 qd + 1.5 sign(qd) + 0.5 % noise."""
    t = np.arange(0.0, seconds, dt)
    w = 2 * np.pi * f_hz
    q = 1.2 * np.sin(w * t)
    qd, qdd = 1.2 * w * np.cos(w * t), -1.2 * w * w * np.sin(w * t)
    tau = 0.5 * qdd + 0.8 * qd + 1.5 * np.sign(qd)
    tau += np.random.default_rng(seed).normal(size=t.size) * 0.005 * np.abs(tau).max()
    return Recording(t, q[:, None], tau[:, None], source="crank.csv")


@pytest.fixture
def crank_csv(tmp_path):
    path = tmp_path / "run.csv"
    write_recording_csv(path, crank_recording())
    return path


def test_issue_17_cutoff_200_exits_2_naming_the_125_hz_limit(crank_csv, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["identify", str(crank_csv), "--model", "rotary1", "--cutoff", "200", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cutoff 200 Hz is too high" in err and RULE in err and "125 Hz" in err
    assert not out.exists()                                        # no partial outputs


def test_issue_17_cutoff_below_the_motion_names_the_rule_not_the_velocity_threshold(crank_csv, tmp_path, capsys):
    code = main(["identify", str(crank_csv), "--model", "rotary1", "--cutoff", "0.3", "--out", str(tmp_path / "o"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "cutoff 0.3 Hz is too low" in err and RULE in err
    assert "velocity threshold" not in err
    # the excitation frequency it quotes is the sine's (1.5 Hz; the spectrum's resolution is 1/12 s)
    quoted = float(err.split("excitation frequency (")[1].split(" Hz here")[0])
    assert quoted == pytest.approx(1.5, abs=1 / 12 + 1e-9)


def test_a_cutoff_inside_the_rule_identifies(crank_csv, tmp_path):
    assert main(["identify", str(crank_csv), "--model", "rotary1", "--cutoff", "20", "--out", str(tmp_path / "o"),
                 "--no-report", "--quiet"]) == 0


def test_the_python_api_enforces_the_same_rule():
    rec = crank_recording()
    with pytest.raises(ConfigError, match="is too high: softMC's rule"):
        Identifier("rotary1", cutoff=125.0).fit(rec)             # "below 125 Hz": 125 itself is out
    with pytest.raises(ConfigError, match="is too low") as info:
        Identifier("rotary1", cutoff=1.0).fit(rec)
    assert info.value.options == ("cutoff",) and "between" in info.value.hint
    check_cutoff(124.9, rec)                                        # inside: no error
    check_cutoff(1.7, rec)


def test_nyquist_is_the_upper_bound_of_a_slow_recording():
    """At 200 Hz sampling the Nyquist frequency (100 Hz) bounds the cutoff before 125 Hz does."""
    rec = crank_recording(dt=5e-3)
    with pytest.raises(ConfigError, match="not below this recording's Nyquist frequency") as info:
        check_cutoff(110.0, rec)
    assert RULE in str(info.value)
    check_cutoff(90.0, rec)


@pytest.mark.parametrize("f_hz", [0.3, 1.5, 4.0])
def test_excitation_frequency_is_the_sine_frequency(f_hz):
    rec = crank_recording(f_hz=f_hz, seconds=20.0)
    assert excitation_frequency(rec.q, rec.sample_period) == pytest.approx(f_hz, abs=1 / 20 + 1e-9)


@pytest.mark.parametrize("f_hz,dt", [(0.02, 1e-3), (0.3, 1e-3), (1.5, 1e-3), (4.0, 1e-3), (1.5, 5e-3), (0.7, 2.5e-4)])
def test_the_default_cutoff_obeys_the_rule(f_hz, dt):
    rec = crank_recording(f_hz=f_hz, dt=dt, seconds=max(12.0, 3 / f_hz))
    fc = default_cutoff(rec.q, dt)
    assert excitation_frequency(rec.q, dt) < fc < min(SOFTMC_MAX_CUTOFF_HZ, 0.5 / dt)
    check_cutoff(fc, rec)


def test_the_default_cutoff_stays_below_125_hz_for_a_fast_motion():
    rec = crank_recording(f_hz=20.0, dt=2.5e-4, seconds=3.0)
    assert default_cutoff(rec.q, rec.sample_period) < SOFTMC_MAX_CUTOFF_HZ


def test_auto_cutoff_obeys_the_rule_on_a_typical_motion():
    res = Identifier("rotary1").fit(crank_recording()).result_
    check_cutoff(res.cond.cutoff_hz, crank_recording())


def test_auto_cutoff_obeys_the_rule_when_4x_the_default_exceeds_125_hz():
    rec = crank_recording(f_hz=1.7)
    sel = Identifier("rotary1").fit(rec).result_.selections["selection"]
    assert all(c["cutoff_hz"] < SOFTMC_MAX_CUTOFF_HZ for c in sel["candidates"])
