"""The built-in scenarios through the command line (spec/interfaces.md §5), with the issue's acceptance
criteria. Each scenario simulates an identification run, identifies it with dynid and uses that result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.models import model_names


def _simulate(capsys, *args):
    assert main(["simulate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_scara_move_settles_faster_with_the_model(capsys):
    d = _simulate(capsys, "--scenario", "scara-move")
    assert d["identification"]["success"]
    assert np.isfinite(d["settling_time_without_model_s"]) and np.isfinite(d["settling_time_with_model_s"])
    assert d["settling_time_with_model_s"] <= 0.9 * d["settling_time_without_model_s"]
    assert d["source"]["settling_time_without_model_s"] == 0.300


@pytest.mark.slow
@pytest.mark.skipif("delta3" not in model_names(), reason="delta3 is not registered in this build (feat/delta)")
def test_delta_move_settles_faster_with_the_model(capsys):
    d = _simulate(capsys, "--scenario", "delta-move")
    assert d["identification"]["success"]
    assert np.isfinite(d["settling_time_with_model_s"])
    assert d["settling_time_with_model_s"] <= 0.9 * d["settling_time_without_model_s"]


@pytest.mark.slow
def test_puma_hold_axis2_error_is_smaller_with_the_model(capsys):
    d = _simulate(capsys, "--scenario", "puma-hold")
    assert d["identification"]["success"]
    assert 0 < d["p2p_error_with_model"] < d["p2p_error_without_model"]


@pytest.mark.slow
def test_scara_collision_detected_fast_without_false_alarms_and_found_by_monitor(capsys, tmp_path):
    """20 % of the joint's peak torque detected within 20 ms; no false alarm in 60 s of collision-free
    motion; `dynid monitor` finds the same event in the recorded log with the same thresholds, which it
    derives itself from the identification record (IDNT1.REC)."""
    out = tmp_path / "sc"
    d = _simulate(capsys, "--scenario", "scara-collision", "--out", str(out))
    assert d["false_alarm_check_duration_s"] >= 60.0 - 1e-9
    assert d["false_alarms"] == 0 and d["alarms_before_collision"] == 0
    assert d["collision_torque_fraction_of_peak"] == 0.2
    assert d["detected_joint"] == d["collision_joint"]
    assert 0 < d["detection_delay_s"] <= 0.020
    t_on = d["collision_time_s"]
    assert main(["monitor", str(out / "result.json"), str(out / "collision.csv"), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose(m["thresholds"]["torque_error_max"], d["torque_error_max"], rtol=1e-5)
    # the event (and the release transient when the external torque ends), nothing outside it
    t_off = t_on + d["collision_duration_s"]
    assert m["n_detections"] >= 1
    assert all(t_on <= x["t_s"] <= t_off + 0.1 for x in m["detections"]), m["detections"]
    det = m["detections"][0]
    assert det["joint"] == d["collision_joint"]
    assert t_on <= det["t_s"] <= t_on + 0.020
    assert det["t_s"] == pytest.approx(t_on + d["detection_delay_s"] - 1e-3, abs=1.5e-3)
