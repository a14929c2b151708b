"""The command line as a user runs it: help, models, demo, identify, predict, exit codes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.io.prg import read_prg
from dynid.io.rec import SIGNALS, read_rec
from dynid.io.readers import write_recording_csv
from dynid.models import Plant, make_model
from dynid.sim import SimOptions, SineMotion, simulate

from ..io.test_prg import check_prg_grammar

MIN_SCHEMA = {
    "dynid_version": str, "model": str, "config": dict, "joints": list, "parameters": dict, "friction": dict,
    "conditioning": dict, "metrics": dict,
}


def check_result_schema(d: dict, n_joints: int) -> None:
    for key, typ in MIN_SCHEMA.items():
        assert isinstance(d[key], typ), key
    for key in ("names", "values", "units", "identifiable", "std"):
        assert len(d["parameters"][key]) == len(d["parameters"]["names"])
    assert {"model", "viscous", "coulomb"} <= set(d["friction"]) and len(d["friction"]["viscous"]) == n_joints
    for key in ("sample_period_s", "cutoff_hz", "raw_length", "data_length", "velocity_threshold", "moving_samples"):
        assert key in d["conditioning"]
    for key in ("max_relative_error", "mean_relative_error", "allowed", "success", "condition_number", "diagnostics"):
        assert key in d["metrics"]
    assert all(j["type"] in ("rotary", "linear") for j in d["joints"])


@pytest.fixture(scope="module")
def crank_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    plant = Plant(make_model("rotary3"))
    theta = [0.5, 0.0, 20.0, 0.0, 0.8, 1.5]
    write_recording_csv(d / "id.csv", simulate(plant, theta, SineMotion([-2.0], [2.0], [0.5], record_s=12), SimOptions(), seed=1))
    write_recording_csv(d / "val.csv", simulate(plant, theta, SineMotion([-1.0], [1.8], [0.8], record_s=6), SimOptions(), seed=2))
    return d


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("models", "demo", "identify", "predict"):
        assert cmd in out
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2


def test_models_json_lists_every_model(capsys):
    assert main(["models", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)
    names = {m["name"] for m in models}
    assert {"rotary1", "rotary2", "rotary3", "linear1", "linear2", "linear3"} <= names
    for m in models:
        assert m["joints"] and m["parameters"] and "config_keys" in m and m["status"] in ("verified", "experimental")
        assert all({"name", "unit", "index"} <= set(p) for p in m["parameters"])
    assert main(["models", "rotary3"]) == 0
    assert "M*g*A" in capsys.readouterr().out


def test_demo_writes_the_three_outputs(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "SUCCEEDED" in text and "validation" in text
    for name in ("IDNT1.PRG", "IDNT1.REC", "result.json"):
        assert (out / name).is_file()
    check_prg_grammar((out / "IDNT1.PRG").read_text(), 4, 8, 1)
    result = json.loads((out / "result.json").read_text())
    check_result_schema(result, 4)
    assert result["model"] == "scara4" and result["element"] == "SCARA" and result["metrics"]["success"]
    assert (out / "report.html").is_file()


def test_identify_and_predict_round_trip(crank_csv, tmp_path, capsys):
    out = tmp_path / "o"
    code = main(["identify", str(crank_csv / "id.csv"), "--model", "rotary3", "--out", str(out), "--json", "--group", "3"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    check_result_schema(d, 1)
    assert d["metrics"]["success"] and d["softmc_dynamic_model"] == 3
    assert d["parameters"]["values"][0] == pytest.approx(0.5, rel=0.02)
    assert d["friction"]["viscous"][0] == pytest.approx(0.8, rel=0.02)
    prg = read_prg(out / "IDNT3.PRG")
    assert prg.viscous["A1"] == pytest.approx(-d["friction"]["viscous"][0])  # softMC sign in the PRG
    assert prg.parameters[1] == pytest.approx(d["parameters"]["values"][0], rel=1e-8)
    header, t, ch = read_rec(out / "IDNT3.REC")
    assert header["element"] == "A1" and set(ch) == set(SIGNALS) and t.size == d["conditioning"]["data_length"]
    np.testing.assert_allclose(ch["te"], ch["tcmd"] - ch["tfb"], atol=1e-6)
    assert header["raw_length"] == d["conditioning"]["raw_length"]
    pred = tmp_path / "pred.csv"
    assert main(["predict", str(out / "result.json"), str(crank_csv / "val.csv"), "--out", str(pred), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["validation"]
    assert max(v["nrmse_rms"]) < 0.02
    lines = pred.read_text().splitlines()
    assert lines[0] == "t,tau1" and len(lines) > 5000


def test_wrong_model_is_diagnosed(crank_csv, tmp_path, capsys):
    """rotary1 (no gravity) on a vertical crank arm: softMC's rule may still pass, the diagnosis says why not to trust it."""
    out = tmp_path / "w"
    code = main(["identify", str(crank_csv / "id.csv"), "--model", "rotary1", "--out", str(out), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == (0 if d["metrics"]["success"] else 1)
    hits = [x for x in d["metrics"]["diagnostics_detail"] if x["code"] == "systematic_residual"]
    assert hits and hits[0]["evidence"]["feature"] == "sin(q)" and hits[0]["evidence"]["r2"] > 0.9


def test_failed_criterion_exits_1_and_still_writes_a_failed_prg(tmp_path, capsys):
    """linear1 (no gravity) on a vertical axis: the constant weight cannot be modelled, the 50 % rule fails."""
    plant = Plant(make_model("linear2"))
    rec = simulate(plant, [10.0, 10 * 9.80665, 0.0, 20.0, 5.0], SineMotion([-0.1], [0.1], [0.4], record_s=10), seed=3)
    f = tmp_path / "vertical.csv"
    write_recording_csv(f, rec)
    out = tmp_path / "o"
    # softMC's friction model (an 'auto' offset term would carry the constant weight)
    assert main(["identify", str(f), "--model", "linear1", "--friction", "viscous+coulomb", "--out", str(out),
                 "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["metrics"]["success"] is False and max(d["metrics"]["max_relative_error"]) > 0.5
    assert any(x["code"] == "systematic_residual" and x["evidence"]["feature"] == "constant"
               for x in d["metrics"]["diagnostics_detail"])
    prg = read_prg(out / "IDNT1.PRG")
    assert prg.success is False and (out / "IDNT1.PRG").read_text().startswith("'Dynamic parameter identification for A1 failed!")


@pytest.mark.parametrize("fmt", ["json", "yaml", "toml"])
def test_config_formats(crank_csv, tmp_path, fmt, capsys):
    cfg = tmp_path / f"c.{fmt}"
    cfg.write_text({"json": '{"parameters": {"L^2": 0.25}, "joint_names": ["AX1"]}',
                    "yaml": "parameters:\n  L^2: 0.25\njoint_names: [AX1]\n",
                    "toml": 'joint_names = ["AX1"]\n[parameters]\n"L^2" = 0.25\n'}[fmt])
    out = tmp_path / "o"
    assert main(["identify", str(crank_csv / "id.csv"), "--model", "rotary3", "--config", str(cfg), "--out", str(out), "--quiet"]) == 0
    prg = (out / "IDNT1.PRG").read_text()
    assert "ATTACH AX1" in prg and "AX1.DynamicParameter[2] = 2.500000000e-01" in prg


@pytest.mark.parametrize("args,pattern", [
    (["--model", "nosuch"], "unknown model 'nosuch'"),
    (["--model", "rotary3", "--config", "{cfg}"], "unknown configuration key 'lenght'"),
    (["--model", "rotary3", "--cutoff", "-3"], "cutoff"),
    (["--model", "rotary3", "--friction", "viscous+magic"], "unknown friction term 'magic'"),
    (["--model", "rotary3", "--urdf", "x.urdf"], "does not take a URDF"),
])
def test_usage_errors_exit_2_without_files(crank_csv, tmp_path, capsys, args, pattern):
    cfg = tmp_path / "bad.json"
    cfg.write_text('{"lenght": 1}')
    out = tmp_path / "o"
    args = [a.replace("{cfg}", str(cfg)) for a in args]
    assert main(["identify", str(crank_csv / "id.csv"), *args, "--out", str(out), "--quiet"]) == 2
    assert pattern in capsys.readouterr().err
    assert not out.exists()


def test_library_hints_name_settings_and_the_command_line_names_its_flags(crank_csv, tmp_path, capsys):
    """A library error says what to do in the library's terms; only the CLI adds the flag."""
    from dynid import ConfigError, Identifier

    with pytest.raises(ConfigError) as info:
        Identifier("rotary3", urdf="x.urdf").build_model()
    assert "--" not in str(info.value) and info.value.options == ("urdf",)
    assert main(["identify", str(crank_csv / "id.csv"), "--model", "rotary3", "--urdf", "x.urdf", "--quiet"]) == 2
    assert "(--urdf)" in capsys.readouterr().err


def test_predict_without_torque_columns(crank_csv, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["identify", str(crank_csv / "id.csv"), "--model", "rotary3", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    motion = tmp_path / "motion.csv"
    t = np.arange(0, 3, 1e-3)
    motion.write_text("t,q1\n" + "\n".join(f"{a},{np.sin(a)}" for a in t))
    assert main(["predict", str(out / "result.json"), str(motion)]) == 0
    out_text = capsys.readouterr().out
    assert out_text.startswith("t,tau1\n")
