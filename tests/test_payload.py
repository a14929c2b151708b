"""Payload identification (softMC IdentPayload): the two-run method of spec/identification.md §6."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.errors import ConfigError, IdentifiabilityError
from dynid.identification import identify
from dynid.io.prg import read_prg
from dynid.io.readers import write_recording_csv
from dynid.fitted import load
from dynid.models import Plant, make_model, model_names
from dynid.io.outputs import write_outputs
from dynid.identification.payload import identify_payload
from dynid.sim import SimOptions, SineMotion, simulate

G = 9.80665
L = 0.6
KNOWN = {"parameters": {"L^2": L**2, "g*L": G * L}}  # crank geometry from the kinematics
THETA = [0.5, L**2, 20.0, G * L, 0.8, 1.5]
MOTION = SineMotion([-2.1], [2.1], [0.5], record_s=20)


def crank(config):
    return Plant(make_model("rotary3", config))


@pytest.fixture(scope="module")
def unloaded(tmp_path_factory):
    d = tmp_path_factory.mktemp("unloaded")
    rec = simulate(crank(KNOWN), THETA, MOTION, SimOptions(noise=0.005), seed=1)
    write_outputs(identify(rec, crank(KNOWN)), d)
    return load(d / "result.json")


@pytest.mark.parametrize("mass,inertia,seed", [(2.0, 0.05, 2), (5.0, 0.0, 3), (0.8, 0.01, 4)])
def test_payload_mass_within_2_percent_at_half_percent_noise(unloaded, mass, inertia, seed):
    rec = simulate(crank({**KNOWN, "payload": {"mass": mass, "inertia": inertia}}), THETA, MOTION,
                   SimOptions(noise=0.005), seed=seed)
    est = identify_payload(rec, unloaded)
    assert est.mode == "properties"
    assert est.values["mass"] == pytest.approx(mass, rel=0.02)
    assert est.values["inertia"] == pytest.approx(inertia, abs=max(0.1 * inertia, 5 * est.std["inertia"]))
    assert est.identification.success
    assert est.prg_properties()["PayloadMass"] == pytest.approx(est.values["mass"])


def test_known_payload_identifies_the_payload_coefficients(tmp_path):
    """Step 1 without L^2, g*L (not identifiable unloaded), step 2 with a known 3 kg payload finds them."""
    rec0 = simulate(crank({}), THETA, MOTION, SimOptions(noise=0.005), seed=5)
    write_outputs(identify(rec0, crank({})), tmp_path)
    idm = load(tmp_path / "result.json")
    assert idm.status[1] == "not identifiable"
    rec = simulate(crank({"payload": {"mass": 3.0}}), THETA, MOTION, SimOptions(noise=0.005), seed=6)
    est = identify_payload(rec, idm, config={"payload": {"mass": 3.0}})
    assert est.mode == "coefficients"
    assert est.values["L^2"] == pytest.approx(L**2, rel=0.02)
    assert est.values["g*L"] == pytest.approx(G * L, rel=0.02)
    # without the coefficients the payload cannot be identified: a clear error, not noise
    with pytest.raises(IdentifiabilityError, match="payload coefficients L\\^2, g\\*L are 0"):
        identify_payload(rec, idm)


def test_linear2_payload_uses_the_derived_gravity_coefficient(tmp_path):
    plant = Plant(make_model("linear2"))
    theta = [12.0, 12.0 * G * np.cos(np.radians(30)), 0.0, 40.0, 15.0]
    motion = SineMotion([-0.3], [0.4], [0.7], record_s=20)
    write_outputs(identify(simulate(plant, theta, motion, SimOptions(noise=0.005), seed=7), plant), tmp_path)
    idm = load(tmp_path / "result.json")
    loaded = Plant(make_model("linear2", {"payload": {"mass": 4.0}}))
    theta_l = [12.0, theta[1], G * np.cos(np.radians(30)), 40.0, 15.0]
    est = identify_payload(simulate(loaded, theta_l, motion, SimOptions(noise=0.005), seed=8), idm)
    assert est.values["mass"] == pytest.approx(4.0, rel=0.02) and "inertia" not in est.values


def test_cli_payload_run_writes_payload_properties(unloaded, tmp_path, capsys):
    rec = simulate(crank({**KNOWN, "payload": {"mass": 2.5}}), THETA, MOTION, SimOptions(noise=0.005), seed=9)
    f = tmp_path / "loaded.csv"
    write_recording_csv(f, rec)
    res = tmp_path / "r.json"
    res.write_text(json.dumps(unloaded.to_dict()))
    out = tmp_path / "out"
    assert main(["identify", str(f), "--model", "rotary3", "--payload-of", str(res), "--out", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["payload"]["mode"] == "properties" and d["payload"]["values"]["mass"] == pytest.approx(2.5, rel=0.02)
    prg = read_prg(out / "IDNT1.PRG")
    assert prg.properties["PayloadMass"] == pytest.approx(2.5, rel=0.02)
    assert prg.parameters[1] == pytest.approx(unloaded.theta[0], rel=1e-8)  # the step-1 parameters
    assert main(["identify", str(f), "--model", "rotary1", "--payload-of", str(res), "--out", str(out)]) == 2


def test_a_payload_run_takes_the_robot_from_a_softmc_parameter_program(tmp_path, capsys):
    """The controller's flow: the robot's IDNT1.PRG (what softMC keeps), not dynid's result.json; the PRG is read
    as the model of the run with its configuration (the geometry a PRG does not hold), its payload not."""
    step1 = tmp_path / "step1"
    rec0 = simulate(crank(KNOWN), THETA, MOTION, SimOptions(noise=0.005), seed=1)
    f0 = tmp_path / "unloaded.csv"
    write_recording_csv(f0, rec0)
    cfg = tmp_path / "crank.json"
    cfg.write_text(json.dumps(KNOWN))
    assert main(["identify", str(f0), "--model", "rotary3", "--config", str(cfg), "--out", str(step1), "--quiet"]) == 0
    capsys.readouterr()
    rec = simulate(crank({**KNOWN, "payload": {"mass": 2.5}}), THETA, MOTION, SimOptions(noise=0.005), seed=9)
    f = tmp_path / "loaded.csv"
    write_recording_csv(f, rec)
    masses = {}
    for name, robot in (("json", step1 / "result.json"), ("prg", step1 / "IDNT1.PRG")):
        out = tmp_path / f"payload_{name}"
        assert main(["identify", str(f), "--model", "rotary3", "--config", str(cfg), "--payload-of", str(robot),
                     "--out", str(out), "--json"]) == 0
        masses[name] = json.loads(capsys.readouterr().out)["payload"]["values"]["mass"]
    assert masses["prg"] == pytest.approx(2.5, rel=0.02)
    assert masses["prg"] == pytest.approx(masses["json"], rel=1e-6)     # the PRG's digits are the robot
    # a PRG needs the model of its run: without it, the usual one-line error
    assert main(["identify", str(f), "--model", "rotary1", "--payload-of", str(step1 / "IDNT1.PRG"),
                 "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


@pytest.mark.skipif("puma" not in model_names(), reason="the puma model is not part of this build")
def test_no_payload_identification_for_puma_model_1(unloaded):
    from dynid import FittedModel

    puma = Plant(make_model("puma"))
    idm = FittedModel(puma, np.zeros(puma.n_params))
    with pytest.raises(ConfigError, match="not available"):
        identify_payload(None, idm)
