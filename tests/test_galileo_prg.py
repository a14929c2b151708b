"""Galileo PRG (issue 17.2): softMC's slots in softMC's units, what the run determines, and a re-read PRG
that predicts the simulator's torques.

The issue's run wrote slots 1–5 as 0: identified without a configuration, the model took TP = TB = 0,
which zeroes the balance mass's column (mB "not identifiable", the simulator had 12 kg) and writes the
geometry as 0. TB is geometry no run determines (only mB·TB is), so the model now requires TP and TB.
The simulator's robot: ``Galileo.example()`` (TP = 80 mm, TB = 250 mm, mB = 12 kg, no payload).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import ConfigError, FileFormatError
from dynid.fitted import FittedModel
from dynid.io.outputs import prg_content
from dynid.io.prg import format_prg, read_prg
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model, model_class
from dynid.signal.conditioning import condition
from dynid.sim import SimOptions, SineMotion, simulate

FRICTION = np.column_stack([(1.0, 1.0, 20.0, 0.1), (2.0, 2.0, 8.0, 0.3)]).ravel()
SIM = SimOptions(sample_period=2e-3, substeps=1, noise=0.005)


def truth():
    model = model_class("galileo").example()
    return Plant(model), np.concatenate([model.example_parameters(), FRICTION])


@pytest.fixture(scope="module")
def galileo_run(tmp_path_factory):
    """8 s of SineWave on all four axes (500 Hz controller, 0.5 % torque noise), identified by
    ``dynid identify`` with TP, TB."""
    d = tmp_path_factory.mktemp("galileo")
    plant, theta = truth()
    rec = simulate(plant, theta, SineMotion([-2.0, -0.8, 0.35, -2.5], [2.0, 0.9, 0.85, 2.5],
                                            [0.3, 0.381, 0.429, 0.339], record_s=8.0, settle_s=1.0),
                   SIM, seed=3)
    write_recording_csv(d / "id.csv", rec)
    (d / "galileo.json").write_text(json.dumps({"parameters": {"TP": 0.08, "TB": 0.25}}))
    assert main(["identify", str(d / "id.csv"), "--model", "galileo", "--config", str(d / "galileo.json"),
                 "--friction", "viscous+coulomb", "--out", str(d / "out"), "--no-report", "--quiet"]) in (0, 1)
    return d


def test_prg_holds_softmc_slots_in_softmc_units(galileo_run):
    prg = read_prg(galileo_run / "out" / "IDNT1.PRG")
    assert sorted(prg.parameters) == [1, 2, 3, 4, 5]                      # only softMC's slots
    p = prg.parameters
    assert p[1] == 0.0 and p[5] == 0.0                                      # no payload on the robot
    assert p[2] == pytest.approx(12.0, rel=0.02)                            # mB: the simulator's 12 kg
    assert (p[3], p[4]) == (80.0, 250.0)                                    # TP, TB in mm
    assert list(prg.extra_parameters) == ["J_Y", "J_S", "M_A", "M_A*D_A", "J_AF", "J_AX", "J_R"]
    assert prg.extra_units["M_A*D_A"] == "kg m" and prg.extra_units["J_Y"] == "kg m^2"
    text = (galileo_run / "out" / "IDNT1.PRG").read_text()
    assert "'DynamicParameter units: [1] mP kg; [2] mB kg; [3] TP mm; [4] TB mm; [5] IR kg m^2" in text
    assert not re.search(r"DynamicParameter\[(6|7|8|9|1\d)\]", text)


def test_prg_states_what_the_run_did_not_determine(galileo_run):
    notes = [ln for ln in (galileo_run / "out" / "IDNT1.PRG").read_text().splitlines()
             if ln.startswith("'Not determined") or ln.startswith("'From the configuration")]
    by = {re.match(r"'[^:]*: (\S+)", ln).group(1): ln for ln in notes}
    assert set(by) == {"mP", "IR", "TP", "TB", "J_AX"}                       # mB is determined
    assert "Not determined by this run" in by["mP"] and "second run carrying the payload" in by["mP"]
    assert "axis 3 (radial)" in by["mP"] and "axis 4 (roll)" in by["IR"]
    assert by["TP"].startswith("'From the configuration, not from the run: TP (DynamicParameter[3]) = 80 mm")
    assert "no run determines it" in by["TB"] and "= 250 mm" in by["TB"]


def test_reread_prg_predicts_the_simulator_torque(galileo_run):
    """The PRG alone (no configuration: TP and TB come from it, in mm) predicts the true robot on a motion it
    never did. Tolerance 1 % NRMSE per axis: 0.5 % torque noise over 8 s leaves parameter errors below
    ~2 % (J_AF is the worst determined), whose torque error is ~0.1 %; the re-read PRG adds 1e-9."""
    plant, theta = truth()
    val = simulate(plant, theta, SineMotion([-1.5, -0.6, 0.4, -2.0], [1.8, 0.8, 0.8, 2.0], [0.27, 0.35, 0.41, 0.31],
                                            record_s=3.0, settle_s=1.0), SIM, seed=5)
    fm = dynid.load(galileo_run / "out" / "IDNT1.PRG", "galileo")
    assert dict(fm.model.config.parameters) == {"TP": 0.08, "TB": 0.25}
    cond = condition(val, fm.conditioning_options(), fm.model.joint_kinds, require_motion=False)
    est = fm.torque(cond.q, cond.qd, cond.qdd)
    true = plant.torque(theta, cond.q, cond.qd, cond.qdd)
    nrmse = np.sqrt(np.mean((est - true) ** 2, axis=0)) / np.sqrt(np.mean(true**2, axis=0))
    assert (nrmse < 0.01).all(), nrmse
    ref = dynid.load(galileo_run / "out")
    a, b = fm.predict(val), ref.predict(val)
    assert np.abs(a.tau - b.tau).max() <= 1e-8 * np.abs(b.tau).max()


def test_issue_17_identify_without_geometry_is_a_usage_error(galileo_run, tmp_path, capsys):
    assert main(["identify", str(galileo_run / "id.csv"), "--model", "galileo", "--out", str(tmp_path / "o"),
                 "--no-report", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "needs the geometry constants TP and TB" in err and "(--config)" in err
    assert not (tmp_path / "o").exists()
    with pytest.raises(ConfigError, match="constant TB"):
        make_model("galileo", {"parameters": {"TP": 0.08}})


def test_configured_payload_goes_to_the_payload_slots(tmp_path):
    """softMC's model carries the payload in slots 1 and 5: the PRG writes mP + payload mass, IR + payload
    inertia, and the re-read model (payload 0, those slots as parameters) gives the same torques."""
    plant = Plant(make_model("galileo", {"parameters": {"TP": 0.08, "TB": 0.25}, "payload": {"mass": 2.0,
                                                                                              "inertia": 0.01}}))
    theta = np.concatenate([plant.model.example_parameters(), FRICTION])
    fm = FittedModel(plant, theta, conditioning={"cutoff_hz": 10.0}, metrics={"success": True})
    (tmp_path / "IDNT1.PRG").write_text(format_prg(prg_content(fm)))
    prg = read_prg(tmp_path / "IDNT1.PRG")
    assert prg.parameters[1] == 2.0 and prg.parameters[5] == pytest.approx(0.01, rel=1e-12)
    back = dynid.load(tmp_path / "IDNT1.PRG", "galileo")
    assert back.model.payload.is_zero and back.values["mP"] == 2.0
    q, qd, qdd = plant.model.sample_states(np.random.default_rng(1), 30)
    np.testing.assert_allclose(back.torque(q, qd, qdd), fm.torque(q, qd, qdd), rtol=1e-9, atol=1e-9)


def test_controller_galileo_prg_without_dynid_parameters_is_refused(galileo_run, tmp_path):
    text = "\n".join(ln for ln in (galileo_run / "out" / "IDNT1.PRG").read_text().splitlines()
                     if not ln.startswith("'dynid parameter"))
    (tmp_path / "IDNT1.PRG").write_text(text + "\n")
    with pytest.raises(FileFormatError, match=r"beyond softMC's 5 DynamicParameter slots \(J_Y, J_S, M_A, M_A\*D_A"):
        dynid.load(tmp_path / "IDNT1.PRG", "galileo")
