"""softMC files in (issue 17.3, spec/interfaces.md §5): an ``IDNT<g>.PRG`` wherever a command takes RESULT.json.

One loader, ``dynid.load(path, model, config=, urdf=)``, serves predict, feedforward, monitor and codegen.
The acceptance: ``dynid predict IDNT1.PRG REC --model scara4 --config …`` equals ``dynid predict result.json
REC`` to the PRG's print precision. A PRG in the controller's own style (the spec's example layout, other
axis names, lower case, wrapped header) is checked against the crank's closed-form torque.
"""

from __future__ import annotations

import importlib.util
import json
import warnings

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import ConfigError, FileFormatError
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, model_class
from dynid.sim import SineMotion, simulate
from dynid.units import to_si

FRICTION = {"viscous": (2.0, 1.5, 30.0, 0.3), "coulomb": (3.0, 2.0, 10.0, 0.6), "offset": (0.5, -0.3, 4.0, 0.1)}


@pytest.fixture(scope="module")
def scara_run(tmp_path_factory):
    """A simulated SCARA (source program, 8 s) identified by ``dynid identify`` with the auto friction and
    cutoff choice, plus a 3 s validation motion."""
    d = tmp_path_factory.mktemp("scara")
    model = model_class("scara4").example()
    plant = Plant(model.with_config(friction="viscous+coulomb+offset"))
    kinds = model.joint_kinds
    theta = np.concatenate([model.example_parameters(), np.column_stack(list(FRICTION.values())).ravel()])
    si = lambda v: to_si(np.array(v, dtype=float), kinds, "softmc")  # noqa: E731
    rec = simulate(plant, theta, SineMotion(si([-160, -160, 0, -350]), si([160, 160, 150, 350]),
                                            [0.3, 0.381, 0.429, 0.339], record_s=8.0, settle_s=1.0), seed=1)
    val = simulate(plant, theta, SineMotion(si([-120, -140, 20, -300]), si([150, 130, 130, 300]),
                                            [0.27, 0.39, 0.33, 0.45], record_s=3.0, settle_s=1.0), seed=2)
    write_recording_csv(d / "id.csv", rec)
    write_recording_csv(d / "val.csv", val)
    (d / "scara.json").write_text(json.dumps({"L1": 0.325, "L2": 0.275}))
    assert main(["identify", str(d / "id.csv"), "--model", "scara4", "--config", str(d / "scara.json"),
                 "--out", str(d / "out"), "--no-report", "--quiet"]) in (0, 1)   # the files either way
    return d


def _csv(path):
    return np.genfromtxt(path, delimiter=",", names=True)


def test_predict_prg_equals_predict_result_json(scara_run, capsys):
    """Acceptance: the same rows and torques; the PRG's %.9e parameters (5e-10 relative) and the CSV's
    9 significant digits bound the difference at 1e-8 of each axis's peak torque."""
    d = scara_run
    assert main(["predict", str(d / "out" / "IDNT1.PRG"), str(d / "val.csv"), "--model", "scara4",
                 "--config", str(d / "scara.json"), "--out", str(d / "p_prg.csv")]) == 0
    assert main(["predict", str(d / "out" / "result.json"), str(d / "val.csv"), "--out", str(d / "p_json.csv")]) == 0
    capsys.readouterr()
    a, b = _csv(d / "p_prg.csv"), _csv(d / "p_json.csv")
    assert a.dtype.names == b.dtype.names == ("t", "tau1", "tau2", "tau3", "tau4") and a.size == b.size > 2000
    np.testing.assert_array_equal(a["t"], b["t"])
    for k in ("tau1", "tau2", "tau3", "tau4"):
        assert np.abs(a[k] - b[k]).max() <= 1e-8 * np.abs(b[k]).max(), k


def test_loaded_prg_is_the_identified_model(scara_run):
    d = scara_run
    ref = dynid.load(d / "out")                                   # interfaces.md §6 unchanged
    fm = dynid.load(d / "out" / "IDNT1.PRG", "scara4", config=d / "scara.json")
    assert isinstance(fm, dynid.FittedModel) and fm.param_names == ref.param_names
    assert fm.friction.spec == ref.friction.spec and fm.friction.spec != "viscous+coulomb"   # from the comment line
    np.testing.assert_allclose(fm.theta, ref.theta, rtol=1e-9, atol=1e-12)
    assert fm.cutoff_hz == ref.cutoff_hz and fm.filter_order == ref.filter_order             # the exact filter
    assert (fm.element, fm.group, fm.success) == ("SCARA", 1, ref.success)
    np.testing.assert_allclose(fm.metrics["max_relative_error"], ref.metrics["max_relative_error"], atol=5e-5)
    assert fm.conditioning["moving_samples"] == ref.conditioning["moving_samples"]


def test_feedforward_monitor_and_codegen_take_the_prg(scara_run, tmp_path, capsys):
    d = scara_run
    prg = ["--model", "scara4", "--config", str(d / "scara.json")]
    for src, extra, out in ((d / "out" / "IDNT1.PRG", prg, tmp_path / "ff_prg.csv"),
                            (d / "out" / "result.json", [], tmp_path / "ff_json.csv")):
        assert main(["feedforward", str(src), str(d / "val.csv"), *extra, "--delay", "0", "--no-clamp",
                     "--out", str(out)]) == 0
    a, b = _csv(tmp_path / "ff_prg.csv"), _csv(tmp_path / "ff_json.csv")
    for k in ("taddcmd1", "taddcmd2", "taddcmd3", "taddcmd4"):
        assert np.abs(a[k] - b[k]).max() <= 1e-8 * np.abs(b[k]).max(), k
    capsys.readouterr()
    # monitor: thresholds derived from the IDNT1.REC beside the PRG, as beside result.json
    runs = []
    for src, extra in ((d / "out" / "IDNT1.PRG", prg), (d / "out" / "result.json", [])):
        assert main(["monitor", str(src), str(d / "val.csv"), *extra, "--json"]) == 0
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0]["n_detections"] == runs[1]["n_detections"]
    np.testing.assert_allclose(runs[0]["max_abs_te"], runs[1]["max_abs_te"], rtol=1e-6)
    np.testing.assert_allclose(runs[0]["thresholds"]["torque_error_max"], runs[1]["thresholds"]["torque_error_max"],
                               rtol=1e-6)
    pytest.importorskip("sympy")
    assert main(["codegen", str(d / "out" / "IDNT1.PRG"), *prg, "--lang", "python", "--out", str(tmp_path / "cg"),
                 "--json"]) == 0
    capsys.readouterr()
    spec = importlib.util.spec_from_file_location("dynid_model_prg", tmp_path / "cg" / "dynid_model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ref = dynid.load(d / "out")
    q, qd, qdd = ref.model.sample_states(np.random.default_rng(3), 40)
    np.testing.assert_allclose(mod.torque(q, qd, qdd), ref.torque(q, qd, qdd), rtol=1e-8, atol=1e-8)


# A softMC program in the controller's style (spec/files.md §1 layout; other axis name, lower case,
# a wrapped header, CRLF): rotary crank, DynamicModel 3, friction in softMC's sign, a payload run.
CONTROLLER_PRG = """'Dynamic parameter identification for AX1 succeeded!
'Identification date and time: 29/03/17 08:17:08
'Max relative torque error: axis 1 = 3.86 %; (maximal allowed = 50.00 %)
'Mean relative torque error: axis 1 = 1.18 %;
'Signal filter cutoff frequency = 20.000 Hz
'Signal data length = 49876 samples (raw record length = 50000 samples)
'Moving data length:
' axis 1 = 35998 samples (threshold = 0.038770 rad/s);

PROGRAM CONTINUE
ATTACH AX1

ax1.dynamicparameter[1]  =  4.500000000e-01
AX1.DynamicParameter[2] = 2.500000000e-01
AX1.DynamicParameter[3] = 6.000000000e+00
AX1.DynamicParameter[4] = 1.961330000e+00

ax1.ViscousFriction = -1.200000000e-01
AX1.CoulombFriction = -3.500000000e-01

AX1.PayloadMass = 2.000000000e+00
AX1.PayloadInertia = 1.000000000e-02

AX1.DynamicModel = 3

DETACH AX1
TERMINATE PROGRAM
""".replace("\n", "\r\n")


def test_controller_prg_gives_the_closed_form_torque(tmp_path):
    """rotary3 with payload M_p, I_p: T = (I + I_p + L²·M_p)·qdd − (MgA + M_p·gL)·sin q, plus physical friction
    Fv·qd + Fc·sign(qd) = −(softMC's values)."""
    path = tmp_path / "IDNT2.PRG"
    path.write_bytes(CONTROLLER_PRG.encode())
    fm = dynid.load(path, "rotary3")
    assert fm.element == "AX1" and fm.group == 2 and fm.model.joints[0].name == "ax1"
    assert (fm.model.payload.mass, fm.model.payload.inertia) == (2.0, 0.01)
    q, qd, qdd = np.array([[0.3], [-1.1], [2.0]]), np.array([[0.8], [-0.5], [0.0]]), np.array([[2.0], [-3.0], [1.0]])
    I, L2, MgA, gL, Fv, Fc, Mp, Ip = 0.45, 0.25, 6.0, 1.96133, 0.12, 0.35, 2.0, 0.01
    expect = (I + Ip + L2 * Mp) * qdd - (MgA + Mp * gL) * np.sin(q) + Fv * qd + Fc * np.sign(qd)
    np.testing.assert_allclose(fm.torque(q, qd, qdd), expect, rtol=1e-12, atol=1e-12)
    assert fm.cutoff_hz == 20.0 and fm.conditioning["moving_samples"] == [35998]


def test_spec_puma_example_loads_into_the_semi_static_model(tmp_path):
    """The spec's PUMA example (DynamicModel 2, six slots of which [5], [6] = 0)."""
    from tests.io.test_prg import EXAMPLE
    from dynid.io.prg import format_prg

    (tmp_path / "IDNT1.PRG").write_text(format_prg(EXAMPLE))
    fm = dynid.load(tmp_path / "IDNT1.PRG", "puma-gravity")
    assert fm.values["P1"] == 87.59309007 and fm.values["A1.viscous"] == pytest.approx(154.7427791)
    assert fm.values["A6.coulomb"] == pytest.approx(0.9724658207) and fm.metrics["max_relative_error"][5] == 0.4385


@pytest.mark.parametrize("argv, match", [
    (["predict", "{prg}", "{rec}"], "names only its element"),
    (["predict", "{prg}", "{rec}", "--model", "rotary3"], "4 axes"),
    (["predict", "{prg}", "{rec}", "--model", "scara4"], "needs the configuration key 'L1'"),
    (["predict", "{json}", "{rec}", "--config", "{cfg}"], "carries its model's configuration"),
    (["predict", "{json}", "{rec}", "--model", "scara3"], "holds model 'scara4'"),
    (["predict", "{prg}", "{rec}", "--model", "scara4", "--config", "{cfg}", "--report", "{tmp}/r.html"],
     "--report"),
    (["feedforward", "{prg}", "{rec}", "--model", "scara3", "--config", "{cfg}"], "4 axes"),
])
def test_bad_model_source_is_a_usage_error(scara_run, tmp_path, capsys, argv, match):
    d = scara_run
    names = {"prg": d / "out" / "IDNT1.PRG", "json": d / "out" / "result.json", "rec": d / "val.csv",
             "cfg": d / "scara.json", "tmp": tmp_path}
    assert main([a.format(**names) for a in argv]) == 2
    assert match in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_python_api_errors(scara_run, tmp_path):
    d = scara_run
    with pytest.raises(ConfigError, match="names only its element") as err:
        dynid.load(d / "out" / "IDNT1.PRG")
    assert err.value.options == ("model", "config")
    text = (d / "out" / "IDNT1.PRG").read_text().replace("SCARA.DynamicModel = 1", "SCARA.DynamicModel = 2")
    (tmp_path / "IDNT1.PRG").write_text(text)
    with pytest.raises(FileFormatError, match="DynamicModel = 2 but model 'scara4' is softMC DynamicModel 1"):
        dynid.load(tmp_path / "IDNT1.PRG", "scara4", config=d / "scara.json")
    text = (d / "out" / "IDNT1.PRG").read_text().replace("SCARA.DynamicParameter[8] =", "SCARA.DynamicParameter[9] =")
    (tmp_path / "IDNT1.PRG").write_text(text)
    with warnings.catch_warnings(record=True), pytest.raises(FileFormatError, match=r"DynamicParameter\[9\]"):
        warnings.simplefilter("always")
        dynid.load(tmp_path / "IDNT1.PRG", "scara4", config={"L1": 0.325, "L2": 0.275})


def test_dynid_lines_round_trip_through_format_and_parse():
    """What softMC has no line for (comment lines) and TorqueThreshold survive format -> parse."""
    from dataclasses import replace

    from dynid.io.prg import format_prg, parse_prg
    from tests.io.test_prg import EXAMPLE, check_prg_grammar

    c = replace(EXAMPLE, torque_thresholds={"A1": 200.0, "A6": 12.5}, extra_parameters={"J_Y": 0.61, "M_A*D_A": 1.5},
                extra_units={"J_Y": "kg m^2", "M_A*D_A": "kg m"}, friction_model="viscous+coulomb+offset+stribeck",
                stribeck_velocity=0.05, friction_terms={"offset": {"A1": 0.5, "A2": -0.25}},
                exact_cutoff_hz=19.999999999997, filter_order=4, comments=("Not determined by this run: x",))
    text = format_prg(c)
    check_prg_grammar(text, 6, 6, 2)
    back = parse_prg(text)
    assert back.torque_thresholds == {"A1": 200.0, "A6": 12.5}
    assert back.extra_parameters == {"J_Y": 0.61, "M_A*D_A": 1.5} and back.extra_units == c.extra_units
    assert (back.friction_model, back.stribeck_velocity) == ("viscous+coulomb+offset+stribeck", 0.05)
    assert back.friction_terms == {"offset": {"A1": 0.5, "A2": -0.25}}
    assert (back.exact_cutoff_hz, back.filter_order, back.cutoff_hz) == (19.999999999997, 4, 20.0)
    assert back.moving_samples == EXAMPLE.moving_samples and back.parameters == EXAMPLE.parameters


def test_prg_values_the_model_would_ignore_are_refused(tmp_path):
    """A delta4 PRG whose DynamicParameter[11] (D, no published meaning) is not 0: loading it is a file error
    naming the file and the slot, not a model that silently drops the value; the same PRG with 0 loads."""
    from dynid.fitted import FittedModel
    from dynid.io.outputs import prg_content
    from dynid.io.prg import format_prg
    from dynid.models import make_model

    model = make_model("delta4", model_class("delta4").example().config.to_dict())
    theta = np.concatenate([model.example_parameters(), np.full(Plant(model).friction.n_params, 0.1)])
    fm = FittedModel(Plant(model), theta)
    good = tmp_path / "IDNT1.PRG"
    good.write_text(format_prg(prg_content(fm)))
    cfg = model.config.to_dict()
    assert dynid.load(good, "delta4", config=cfg).values["D"] == 0.0
    lines = good.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if "DynamicParameter[11]" in line)
    lines[k] = lines[k].split("=")[0] + "= 2.5"
    bad = tmp_path / "IDNT2.PRG"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(FileFormatError, match=r"IDNT2\.PRG: model 'delta4': parameter D \(DynamicParameter\[11\]\) = 2\.5"):
        dynid.load(bad, "delta4", config=cfg)
