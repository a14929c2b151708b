"""A PRG read as a model is complete and unambiguous (issue 26.1, spec/interfaces.md §5 "Strict inputs").

Every ``DynamicParameter[i]`` of the model and every friction line its friction model needs, each once:
a missing line is never taken as 0 and a repeated one never resolved by its last value — both end in one
error naming the file and the line. Every PRG dynid writes (slots beyond softMC's as comment lines, friction
terms softMC has no property for, the Galileo's mm) still reads back, and so does the controller's own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import FileFormatError
from dynid.fitted import FittedModel
from dynid.io.outputs import prg_content
from dynid.io.prg import format_prg, parse_prg
from dynid.models import Plant, model_class, model_names

from .test_prg_input import CONTROLLER_PRG

GOOD = CONTROLLER_PRG.replace("\r\n", "\n")
VISCOUS = "ax1.ViscousFriction = -1.200000000e-01\n"
COULOMB = "AX1.CoulombFriction = -3.500000000e-01\n"
SLOT3 = "AX1.DynamicParameter[3] = 6.000000000e+00\n"


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


DAMAGED = {
    # name: (PRG text, message pattern)
    "no viscous line": (GOOD.replace(VISCOUS, ""),
                        r"IDNT1\.PRG: no line 'AX1\.ViscousFriction = \.\.\.': friction model 'viscous\+coulomb' needs"),
    "no coulomb line": (GOOD.replace(COULOMB, ""),
                        r"IDNT1\.PRG: no line 'ax1\.CoulombFriction = \.\.\.': friction model 'viscous\+coulomb' needs"),
    "no slot 3": (GOOD.replace(SLOT3, ""),
                  r"IDNT1\.PRG: no line 'AX1\.DynamicParameter\[3\] = \.\.\.' \(M\*g\*A of model 'rotary3'\)"),
    "slot 3 twice": (GOOD.replace(SLOT3, SLOT3 + "AX1.DynamicParameter[3] = 1.000000000e+00\n"),
                     rf"IDNT1\.PRG, line {_line(GOOD, 'DynamicParameter[3]') + 1}: AX1\.DynamicParameter\[3\] is set a "
                     rf"second time \(first on line {_line(GOOD, 'DynamicParameter[3]')}\)"),
    "viscous twice": (GOOD.replace(COULOMB, COULOMB + "AX1.VISCOUSFRICTION = -2.0\n"),
                      rf"IDNT1\.PRG, line {_line(GOOD, 'CoulombFriction') + 1}: ax1\.ViscousFriction is set a second "
                      rf"time \(first on line {_line(GOOD, 'ViscousFriction')}\)"),
    "payload twice": (GOOD.replace("AX1.PayloadMass = 2.000000000e+00\n",
                                   "AX1.PayloadMass = 2.000000000e+00\nAX1.PayloadMass = 3.0\n"),
                      r"line \d+: AX1\.PayloadMass is set a second time"),
    "model twice": (GOOD.replace("AX1.DynamicModel = 3\n", "AX1.DynamicModel = 3\nAX1.DynamicModel = 3\n"),
                    r"line \d+: AX1\.DynamicModel is set a second time"),
}


@pytest.mark.parametrize("case", list(DAMAGED))
def test_issue_26_damaged_prg_is_refused_naming_the_line(tmp_path, case):
    text, match = DAMAGED[case]
    path = tmp_path / "IDNT1.PRG"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # refused, not a warning and a zero
        with pytest.raises(FileFormatError, match=match):
            dynid.load(path, "rotary3")


@pytest.mark.parametrize("command", ["predict", "feedforward"])
@pytest.mark.parametrize("case", ["no viscous line", "no slot 3", "slot 3 twice"])
def test_issue_26_damaged_prg_exits_2_and_writes_nothing(tmp_path, capsys, command, case):
    """The issue's runs: exit 0 with a torque off by the dropped term (or the repeated slot's last value)."""
    path = tmp_path / "IDNT1.PRG"
    path.write_text(DAMAGED[case][0])
    t = np.arange(0.0, 2.0, 0.002)
    traj = tmp_path / "traj.csv"
    traj.write_text("t,q1\n" + "".join(f"{a:.17g},{np.sin(a):.17g}\n" for a in t))
    out = tmp_path / "out.csv"
    extra = ["--delay", "0", "--no-clamp"] if command == "feedforward" else []
    assert main([command, str(path), str(traj), "--model", "rotary3", *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("dynid: error: ") and lines[1].startswith("dynid: hint: ")
    assert str(path) in lines[0] and ("line" in lines[0])
    assert "Warning" not in err and "Traceback" not in err
    assert not out.exists()


def test_issue_26_coulomb_value_of_a_model_without_coulomb_is_refused(tmp_path):
    """A friction model without a Coulomb term (dynid's comment line) and a non-zero CoulombFriction: the value
    would be dropped, so the PRG is refused naming the line; with 0 (what dynid writes) it loads."""
    text = GOOD.replace("'Moving data length:", "'dynid friction model: viscous\n'Moving data length:")
    (tmp_path / "IDNT1.PRG").write_text(text)
    with pytest.raises(FileFormatError, match=rf"IDNT1\.PRG, line {_line(text, 'CoulombFriction')}: ax1\."
                                              r"CoulombFriction holds -0\.35 but friction model 'viscous' has no"):
        dynid.load(tmp_path / "IDNT1.PRG", "rotary3")
    (tmp_path / "IDNT2.PRG").write_text(text.replace(COULOMB, "AX1.CoulombFriction = 0.0\n"))
    fm = dynid.load(tmp_path / "IDNT2.PRG", "rotary3")
    assert fm.friction.spec == "viscous" and fm.values["ax1.viscous"] == pytest.approx(0.12, rel=1e-12)


def test_issue_26_friction_term_line_of_another_model_is_refused(tmp_path):
    text = GOOD.replace("'Moving data length:", "'dynid friction model: viscous+coulomb\n"
                                                 "'Friction term 'offset' (physical sign, no softMC property): "
                                                 "AX1 = 5.000000000e-01\n'Moving data length:")
    (tmp_path / "IDNT1.PRG").write_text(text)
    with pytest.raises(FileFormatError, match=rf"IDNT1\.PRG, line {_line(text, 'Friction term')}: Friction term "
                                              r"'offset' holds 0\.5 but friction model 'viscous\+coulomb' has no such"):
        dynid.load(tmp_path / "IDNT1.PRG", "rotary3")


def test_repeated_owner_in_a_friction_term_line_is_refused():
    text = GOOD.replace("'Moving data length:", "'Friction term 'offset' (physical sign, no softMC property): "
                                                 "AX1 = 0.5; AX1 = 0.7\n'Moving data length:")
    with pytest.raises(FileFormatError, match=rf"<prg>, line {_line(text, 'Friction term')}: Friction term 'offset' "
                                              "names an axis twice"):
        parse_prg(text)


def test_parse_records_the_line_of_every_value():
    c = parse_prg(GOOD)
    assert c.line_numbers["DynamicParameter[1]"] == _line(GOOD, "dynamicparameter[1]")
    assert c.line_numbers["ax1.ViscousFriction"] == _line(GOOD, "ViscousFriction")
    assert c.line_numbers["ax1.CoulombFriction"] == _line(GOOD, "CoulombFriction")


FRICTIONS = ["viscous+coulomb", "viscous", "none", "viscous+coulomb_asym+offset",
             "viscous+coulomb+offset+stribeck+armature"]


def _example(name: str, friction: str) -> FittedModel:
    model = model_class(name).example()
    model = model.with_config(friction=friction)
    plant = Plant(model)
    p = model.example_parameters()
    p = np.linspace(0.1, 1.0, model.n_params) if p is None else np.asarray(p, dtype=float)
    return FittedModel(plant, np.concatenate([p, np.linspace(0.2, 0.7, plant.friction.n_params)]),
                       conditioning={"cutoff_hz": 12.5}, metrics={"success": True})


@pytest.mark.parametrize("friction", FRICTIONS)
@pytest.mark.parametrize("name", model_names())
def test_every_prg_dynid_writes_reads_back(tmp_path, name, friction):
    """Every model and friction model: the PRG dynid writes (slots in softMC's units, parameters beyond softMC's
    slots and friction terms without a softMC property as comment lines) loads back strictly, every value to the
    PRG's %.9e."""
    fm = _example(name, friction)
    path = tmp_path / "IDNT1.PRG"
    path.write_text(format_prg(prg_content(fm)))
    config = {k: v for k, v in fm.model.config.to_dict().items() if k != "friction"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = dynid.load(path, name, config=config)
    assert back.param_names == fm.param_names and back.friction.spec == fm.friction.spec
    np.testing.assert_allclose(back.theta, fm.theta, rtol=1e-9, atol=1e-12)


def test_issue_26_payload_run_refuses_a_damaged_robot_prg(tmp_path, capsys):
    """``identify --payload-of IDNT1.PRG`` reads the PRG as the robot: a missing line ends the run before any
    output."""
    path = tmp_path / "IDNT1.PRG"
    path.write_text(DAMAGED["no slot 3"][0])
    t = np.arange(0.0, 4.0, 0.002)
    rec = tmp_path / "loaded.csv"
    rec.write_text("t,q1,tau1\n" + "".join(f"{a:.17g},{np.sin(a):.17g},{np.cos(3 * a):.17g}\n" for a in t))
    out = tmp_path / "out"
    assert main(["identify", str(rec), "--model", "rotary3", "--payload-of", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: no line 'AX1.DynamicParameter[3] = ...'" in err and "Traceback" not in err
    assert not out.exists()


def test_dynid_parameter_line_twice_is_refused_names_case_sensitively():
    extra = "'dynid parameter J_Y = 6.1e-01 kg m^2 (no softMC DynamicParameter slot)\n"
    text = GOOD.replace("'Moving data length:", extra + extra.replace("J_Y", "j_Y") + "'Moving data length:")
    assert set(parse_prg(text).extra_parameters) == {"J_Y", "j_Y"}          # dynid's names keep their case
    with pytest.raises(FileFormatError, match=rf"<prg>, line {_line(text, 'J_Y') + 2}: dynid parameter J_Y is set a "
                                              rf"second time \(first on line {_line(text, 'J_Y')}\)"):
        parse_prg(text.replace("'Moving data length:", extra + "'Moving data length:"))


def test_prg_of_coupled_motors_reads_back(tmp_path):
    """Friction terms of coupled motors (a transmission's coupling row; 'Friction term' lines per motor) and a
    URDF robot: the PRG dynid writes loads back strictly."""
    from tests.conftest import ROOT

    from dynid.models import make_model

    urdf = ROOT / "tests" / "data" / "ur5.urdf"
    transmission = {"gear_ratios": [50, 50, 50, 40, 40, 30], "coupling": [[6, 5, 32]], "recorded": "motor"}
    model = make_model("serial", {"friction": "viscous+coulomb+motor_viscous+motor_coulomb+motor_armature",
                                  "transmission": transmission}, urdf=urdf)
    plant = Plant(model)
    fm = FittedModel(plant, np.concatenate([model.prior_parameters(), np.linspace(0.1, 2.0, plant.friction.n_params)]),
                     conditioning={"cutoff_hz": 12.5}, metrics={"success": True})
    path = tmp_path / "IDNT1.PRG"
    path.write_text(format_prg(prg_content(fm)))
    assert "Friction term 'motor_viscous'" in path.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = dynid.load(path, "serial", config={"transmission": transmission}, urdf=urdf)
    assert back.friction.spec == fm.friction.spec
    np.testing.assert_allclose(back.theta, fm.theta, rtol=1e-9, atol=1e-12)
