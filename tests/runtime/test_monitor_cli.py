"""`dynid monitor` on a small closed-loop log: the three sources of Taddcmd, the three sources of thresholds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.identification import identify
from dynid.io._fastcsv import format_rows
from dynid.models import Plant, make_model
from dynid.io.outputs import write_outputs
from dynid.runtime import FeedForward
from dynid.sim import SineMotion
from dynid.sim.closed_loop import Command, DriveOptions, ExternalStep, ServoGains, joint_inertia, run_closed_loop

THETA = np.array([0.4, 0.0, 6.0, 0.0, 0.2, 0.5])      # crank: I, L^2, MgA, gL, Fv, Fc


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Identify a crank from a closed-loop SineWave run; log a second motion with a collision at 2.5 s."""
    d = tmp_path_factory.mktemp("mon")
    plant = Plant(make_model("rotary3"))
    gains = ServoGains.tune(joint_inertia(plant, THETA, [0.0]), 25.0)
    drive = DriveOptions(feedback_noise=0.02, encoder_resolution=2 * np.pi / 2**20 / 50)
    t = np.arange(0, 12.0, 1e-3)
    q, qd, qdd = SineMotion([-1.2], [1.2], [0.4], record_s=12.0, settle_s=0.0).command(t)
    ident_run = run_closed_loop(plant, THETA, Command(t, q, qd, qdd), gains, drive, seed=1)
    ident = identify(ident_run.to_recording(), plant)
    write_outputs(ident, d / "id")
    t2 = np.arange(0, 4.0, 1e-3)
    q2, qd2, qdd2 = SineMotion([-0.8], [0.9], [0.6], record_s=4.0, settle_s=0.0).command(t2)
    ff = FeedForward.from_result(ident)
    run = run_closed_loop(plant, THETA, Command(t2, q2, qd2, qdd2), gains, drive, feedforward=ff,
                          external_torque=ExternalStep(2.5, 0, -3.0, 2.8), seed=2)
    names, arr = run.log_columns()
    (d / "log.csv").write_bytes((",".join(names) + "\n").encode() + format_rows(arr))
    keep = [i for i, n in enumerate(names) if not n.startswith("taddcmd")]
    (d / "cmd.csv").write_bytes((",".join(names[i] for i in keep) + "\n").encode() + format_rows(arr[:, keep]))
    keep = [i for i, n in enumerate(names) if n[:1] in "tq" and not n.startswith("taddcmd")]
    (d / "plain.csv").write_bytes((",".join(names[i] for i in keep) + "\n").encode() + format_rows(arr[:, keep]))
    return d


def _monitor(capsys, *args):
    assert main(["monitor", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("log,source", [("log.csv", "taddcmd columns"), ("cmd.csv", "feed-forward"),
                                        ("plain.csv", "model torque")])
def test_monitor_finds_the_collision_from_each_taddcmd_source(setup, capsys, log, source):
    m = _monitor(capsys, setup / "id" / "result.json", setup / log)
    assert source in m["taddcmd_source"]
    assert m["first_detection_s"] is not None and 2.5 <= m["first_detection_s"] <= 2.52, m["detections"]
    assert all(2.5 <= x["t_s"] <= 2.9 for x in m["detections"])
    assert m["thresholds"]["expected_false_alarms_per_hour"] is not None


def test_monitor_threshold_sources(setup, capsys, tmp_path):
    derived = _monitor(capsys, setup / "id" / "result.json", setup / "log.csv")
    (tmp_path / "thr.json").write_text(json.dumps({"thresholds": {
        "joints": ["A1"], "torque_error_max": [100.0], "torque_error_max_low_velocity": [None],
        "torque_error_filter": [0.25], "velocity_gate": [0.0]}}))
    loose = _monitor(capsys, setup / "id" / "result.json", setup / "log.csv", "--thresholds", tmp_path / "thr.json")
    assert loose["n_detections"] == 0
    manual = _monitor(capsys, setup / "id" / "result.json", setup / "log.csv", "--temax", "0.5")
    assert manual["thresholds"]["torque_error_max"] == [0.5] and manual["n_detections"] >= 1
    assert derived["estimated_additive_torque_delay_cycles"] == 3          # the delay the log was made with
    # without IDNT1.REC and without --thresholds/--temax: a usage error naming what to pass
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "result.json").write_bytes((setup / "id" / "result.json").read_bytes())
    assert main(["monitor", str(lone / "result.json"), str(setup / "log.csv")]) == 2
    assert "--thresholds" in capsys.readouterr().err
