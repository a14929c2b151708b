"""Drive torque units (spec/units-and-runtime.md §1–3): the spec's formulas, derived again here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynid.cli.main import main
from dynid.errors import ConfigError
from dynid.runtime import drive_units as U

positive = st.floats(min_value=1e-2, max_value=1e4, allow_nan=False, allow_infinity=False)


@given(mkt=positive, micont_ma=st.floats(100.0, 1e5), gear=st.floats(1.0, 200.0), raw=st.floats(-3000, 3000))
@settings(max_examples=60, deadline=None)
def test_rotary_factor_is_the_1e6_derivation(mkt, micont_ma, gear, raw):
    """I[A] = I_raw · 0.001 · MICONT[mA] · 0.001, joint torque = MKT · I · GR; TFb = I_raw / TFac."""
    tfac = U.torque_factor_rotary(mkt, micont_ma, gear)
    assert tfac == pytest.approx(1e6 / (mkt * micont_ma * gear), rel=1e-14)
    joint_torque = mkt * float(U.current_amps(raw, micont_ma)) * gear
    assert float(U.torque_feedback(raw, tfac)) == pytest.approx(joint_torque, rel=1e-12, abs=1e-12)
    assert float(U.torque_to_current_raw(U.torque_feedback(raw, tfac), tfac)) == pytest.approx(raw, abs=1e-9)


def test_rotary_examples_and_gear_ratio_halves_the_factor():
    """Spec: TFac = 1 000 000 / (MKT · MICONT[mA]); with gear ratio 1:2 (2 motor turns per joint turn)."""
    assert U.torque_factor_rotary(0.5, 2000.0) == 1000.0
    assert U.torque_factor_rotary(0.5, 2000.0, gear_ratio=2.0) == 500.0
    assert U.torque_factor_linear_motor(40.0, 2500.0) == 10.0          # 1e6 / (MKF · MICONT)


@given(mkt=positive, micont_ma=st.floats(100.0, 1e5), gear=st.floats(1.0, 50.0), lead_mm=st.floats(1.0, 100.0))
@settings(max_examples=60, deadline=None)
def test_screw_factor_from_first_principles(mkt, micont_ma, gear, lead_mm):
    """F[N] = I[A]·MKT·GR·2π/lead[m]: the force of I_raw = 1000 (MICONT) is the threshold 1000/TFac, and the
    seed's softMC formula is exactly 2000π times larger (the missing 2π/1000)."""
    lead = lead_mm * 1e-3
    tfac = U.torque_factor_screw(mkt, micont_ma, lead, gear)
    force_at_micont = (micont_ma * 1e-3) * mkt * gear * 2 * math.pi / lead
    assert U.torque_threshold_continuous(tfac) == pytest.approx(force_at_micont, rel=1e-12)
    with pytest.warns(U.SoftmcUnitWarning, match="2000"):
        soft = U.torque_factor_screw_softmc(mkt, micont_ma, lead_mm, gear)
    assert soft == pytest.approx(1e6 * lead_mm / (mkt * micont_ma * gear), rel=1e-14)
    assert soft / tfac == pytest.approx(U.SCREW_SOFTMC_RATIO, rel=1e-12)


def test_pulley_lead_is_the_circumference():
    assert U.pulley_lead(0.03) == pytest.approx(2 * math.pi * 0.03)
    assert U.torque_factor_screw(0.5, 2000.0, U.pulley_lead(0.01)) == pytest.approx(1e6 * 0.01 / (0.5 * 2000.0))


@given(tfac=st.floats(0.1, 1e4), micont=st.floats(0.1, 100.0), ratio=st.floats(1.0, 5.0))
@settings(max_examples=60, deadline=None)
def test_torque_thresholds(tfac, micont, ratio):
    """TorqueThreshold = 1000/TFac (MICONT) and 1000·MIPEAK/(TFac·MICONT) (MIPEAK): the torque of I_raw = 1000
    and of I_raw = 1000·MIPEAK/MICONT."""
    mipeak = ratio * micont
    assert U.torque_threshold_continuous(tfac) == pytest.approx(float(U.torque_feedback(1000.0, tfac)), rel=1e-14)
    assert U.torque_threshold_peak(tfac, mipeak, micont) == pytest.approx(
        float(U.torque_feedback(1000.0 * mipeak / micont, tfac)), rel=1e-12)
    assert U.torque_threshold_peak(tfac, mipeak, micont) == pytest.approx(ratio * U.torque_threshold_continuous(tfac))


def test_permille_of_rated_torque():
    """0x60B2 is per mille of the rated torque: rated = 1000/TFac, so per mille = T · TFac, INTEGER16."""
    tfac = U.torque_factor_rotary(0.5, 2000.0, 50.0)            # rated joint torque 50 N m
    pm, sat = U.permille_from_torque_factor([50.0, -12.5, 0.0, 2000.0], tfac)
    assert pm.tolist() == [1000, -250, 0, 32767] and sat.tolist() == [False, False, False, True]
    assert pm.dtype == np.int16
    # via the motor's rated torque 0x6076 [mN m] and the gear: the same number for the same motor
    pm2, _ = U.permille_from_rated_torque([50.0, -12.5], rated_torque_mnm=0.5 * 2.0 * 1000, gear_ratio=50.0)
    assert pm2.tolist() == [1000, -250]
    assert U.permille_to_torque(pm[:3], tfac).tolist() == [50.0, -12.5, 0.0]


@given(t=st.floats(-60.0, 60.0), tfac=st.floats(1.0, 500.0))
@settings(max_examples=80, deadline=None)
def test_permille_round_trip_within_half_a_count(t, tfac):
    pm, sat = U.permille_from_torque_factor(t, tfac)
    if not sat:
        assert abs(float(U.permille_to_torque(pm, tfac)) - t) <= 0.5 / tfac + 1e-12


@pytest.mark.parametrize("call", [
    lambda: U.torque_factor_rotary(0.0, 2000.0),
    lambda: U.torque_factor_rotary(0.5, -1.0),
    lambda: U.torque_factor_rotary(0.5, 2000.0, gear_ratio=float("nan")),
    lambda: U.torque_factor_screw(0.5, 2000.0, 0.0),
    lambda: U.torque_threshold_peak(10.0, 6.0, 0.0),
])
def test_bad_values_raise_config_error(call):
    with pytest.raises(ConfigError, match="positive"):
        call()


def test_cli_units_json(capsys):
    assert main(["units", "--mkt", "0.5", "--micont", "2000", "--mipeak", "6000", "--gear-ratio", "50",
                 "--torque", "10,-20", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kind"] == "rotary"
    assert d["torque_factor"] == pytest.approx(1e6 / (0.5 * 2000 * 50))
    assert d["torque_threshold_continuous"] == pytest.approx(50.0)
    assert d["torque_threshold_peak"] == pytest.approx(150.0)
    assert d["permille"] == [200, -400]
    assert main(["units", "screw", "--mkt", "0.5", "--micont-a", "2", "--lead-mm", "20", "--softmc", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["torque_threshold_continuous"] == pytest.approx(1.0 * 2 * math.pi / 0.02)   # 1 N m motor torque
    assert d["softmc_to_physical_ratio"] == pytest.approx(2000 * math.pi)
    assert any("2000*pi" in w for w in d["warnings"])
    assert main(["units", "--mkf", "40", "--micont", "2500", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["torque_factor"] == pytest.approx(10.0)


def test_cli_units_missing_input_is_a_usage_error(capsys):
    assert main(["units", "--mkt", "0.5"]) == 2
    assert "MICONT" in capsys.readouterr().err
