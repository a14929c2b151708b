"""``dynid codegen``: the generated C (compiled with the system compiler), Structured Text (run by a small
interpreter below) and Python equal ``FittedModel.torque`` (issue 14)."""

from __future__ import annotations

import ctypes
import importlib.util
import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("sympy")

import dynid  # noqa: E402
from dynid.cli.main import main  # noqa: E402
from dynid.fitted import FittedModel  # noqa: E402
from dynid.models import Plant, make_model, model_class  # noqa: E402
from dynid.runtime import FeedForward  # noqa: E402
from dynid.symbolic import GeneratedDynamics, generate_code  # noqa: E402

from ..conftest import ROOT  # noqa: E402

UR5 = ROOT / "tests" / "data" / "ur5.urdf"
CC = shutil.which("cc") or shutil.which("gcc")


def fitted_arm():
    """A 6-joint arm (UR5 URDF) as identified: its parameters, a payload, every per-joint friction term."""
    model = make_model("serial", {"friction": "viscous+coulomb+offset+stribeck+armature",
                                  "payload": {"mass": 1.5, "inertia": 0.02}}, urdf=UR5)
    plant = Plant(model)
    rng = np.random.default_rng(0)
    return FittedModel(plant, np.concatenate([model.prior_parameters(), rng.uniform(0.1, 2.0, plant.friction.n_params)]))


def fitted_coupled():
    """The arm with a coupled wrist motor (transmission) and its friction and rotor terms."""
    model = make_model("serial", {"friction": "viscous+coulomb+motor_viscous+motor_coulomb+motor_armature",
                                  "transmission": {"gear_ratios": [50, 50, 50, 40, 40, 30], "coupling": [[6, 5, 32]],
                                                   "recorded": "motor"}}, urdf=UR5)
    plant = Plant(model)
    rng = np.random.default_rng(1)
    return FittedModel(plant, np.concatenate([model.prior_parameters(), rng.uniform(0.1, 2.0, plant.friction.n_params)]))


def fitted_scara():
    """A catalogue model: SCARA with a ball-screw spline, a payload and asymmetric Coulomb friction."""
    model = model_class("scara4")({"L1": 0.325, "L2": 0.275, "screw_lead": 0.002, "payload": {"mass": 2.0, "inertia": 0.01},
                                   "friction": "viscous+coulomb_asym"})
    plant = Plant(model)
    rng = np.random.default_rng(2)
    return FittedModel(plant, np.concatenate([rng.uniform(0.01, 1.0, model.n_params), rng.uniform(0.1, 2.0,
                                                                                                  plant.friction.n_params)]))


FITTED = {"arm": fitted_arm, "coupled": fitted_coupled, "scara": fitted_scara}


def states(n_joints, n=200, seed=5):
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2.5, 2.5, (n, n_joints)), rng.normal(size=(n, n_joints)), rng.normal(size=(n, n_joints)) * 4
    qd[::7, 0] = 0.0                     # sign(0) = 0, as FittedModel.torque's Coulomb term
    return q, qd, qdd


def compile_c(code, tmp_path):
    paths = code.write(tmp_path)
    lib = tmp_path / "lib.so"
    c = next(p for p in paths if p.suffix == ".c")
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC", str(c), "-o", str(lib),
                    "-lm"], check=True, capture_output=True)
    dll = ctypes.CDLL(str(lib))
    ptr = ctypes.POINTER(ctypes.c_double)
    dll.dynid_torque.argtypes = [ptr] * 4
    return dll


@pytest.mark.skipif(CC is None, reason="no C compiler on this machine (CI installs gcc with the Python headers)")
@pytest.mark.parametrize("which", sorted(FITTED))
def test_c_compiles_warning_free_and_equals_the_fitted_model(which, tmp_path):
    fitted = FITTED[which]()
    code = generate_code(fitted, "c")
    source = code.files["dynid_model.c"]
    assert "malloc" not in source and "static" not in source           # no allocation, no global state
    assert "void dynid_torque(const double *q, const double *dq, const double *ddq, double *tau)" in source
    dll = compile_c(code, tmp_path)
    n = fitted.model.n_joints
    q, qd, qdd = states(n)
    ref = fitted.torque(q, qd, qdd)
    out = np.empty(n)
    p = lambda a: np.ascontiguousarray(a).ctypes.data_as(ctypes.POINTER(ctypes.c_double))  # noqa: E731
    got = np.empty_like(ref)
    for k in range(q.shape[0]):
        dll.dynid_torque(p(q[k]), p(qd[k]), p(qdd[k]), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        got[k] = out
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("which", sorted(FITTED))
def test_python_module_equals_the_fitted_model(which, tmp_path):
    fitted = FITTED[which]()
    paths = generate_code(fitted, "python", name="generated").write(tmp_path)
    spec = importlib.util.spec_from_file_location("generated", paths[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    q, qd, qdd = states(fitted.model.n_joints)
    ref = fitted.torque(q, qd, qdd)
    np.testing.assert_allclose(mod.torque(q, qd, qdd), ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_allclose(mod.torque(q[3], qd[3], qdd[3]), ref[3], rtol=0, atol=1e-9 * np.abs(ref).max())


# ------------------------------------------------------------------------------- Structured Text

_ST_FUNCTIONS = {"SIN": "math.sin", "COS": "math.cos", "EXP": "math.exp", "SQRT": "math.sqrt", "ABS": "abs",
                 "EXPT": "math.pow", "TAN": "math.tan", "LN": "math.log"}


def run_st(text: str, q, qd, qdd) -> np.ndarray:
    """A small interpreter of the generated FUNCTION_BLOCK: declarations are checked, the statement part
    (assignments and IF/ELSIF/ELSE/END_IF) is translated line by line into Python and executed."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("(*")]
    assert lines[0] == "FUNCTION_BLOCK DYNID_TORQUE" and lines[-1] == "END_FUNCTION_BLOCK"
    n = len(q)
    assert f"q : ARRAY[1..{n}] OF LREAL;" in lines and f"tau : ARRAY[1..{n}] OF LREAL;" in lines
    body = lines[max(i for i, ln in enumerate(lines) if ln == "END_VAR") + 1:-1]
    declared = {ln.split(":")[0].strip() for ln in lines if ln.endswith(": LREAL;")}
    py, depth = [], 0

    def expr(e: str) -> str:
        for st, fn in _ST_FUNCTIONS.items():
            e = re.sub(rf"\b{st}\(", fn + "(", e)
        assert ":=" not in e and "**" not in e
        return e

    for ln in body:
        if ln.startswith("IF ") and ln.endswith(" THEN"):
            py.append("    " * depth + f"if {expr(ln[3:-5])}:")
            depth += 1
        elif ln.startswith("ELSIF ") and ln.endswith(" THEN"):
            py.append("    " * (depth - 1) + f"elif {expr(ln[6:-5])}:")
        elif ln == "ELSE":
            py.append("    " * (depth - 1) + "else:")
        elif ln == "END_IF;":
            depth -= 1
        else:
            target, value = ln.rstrip(";").split(":=")
            target = target.strip()
            assert target in declared or re.fullmatch(r"tau\[\d+\]", target), target
            py.append("    " * depth + f"{target} = {expr(value.strip())}")
    env = {"math": math, "q": [None, *q], "dq": [None, *qd], "ddq": [None, *qdd], "tau": [None] * (n + 1)}
    exec("\n".join(py), env)                                               # noqa: S102 - our own generated code
    return np.array(env["tau"][1:], dtype=float)


@pytest.mark.parametrize("which", ["arm", "scara"])
def test_structured_text_evaluates_to_the_fitted_model(which):
    fitted = FITTED[which]()
    text = generate_code(fitted, "st").files["dynid_model.st"]
    q, qd, qdd = states(fitted.model.n_joints, n=25)
    ref = fitted.torque(q, qd, qdd)
    got = np.array([run_st(text, q[k], qd[k], qdd[k]) for k in range(q.shape[0])])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


# ------------------------------------------------------------------------------- runtime and command

@pytest.mark.skipif(CC is None, reason="no C compiler on this machine")
def test_feedforward_per_cycle_runs_on_the_generated_c():
    fitted = fitted_arm()
    ff = FeedForward.from_result(fitted, delay_cycles=0, dynamics=GeneratedDynamics.from_fitted(fitted))
    ref = FeedForward.from_result(fitted, delay_cycles=0)
    assert ff.dynamics.kind.startswith("generated C")
    s1, s2 = ff.new_state(), ref.new_state()
    q, qd, qdd = states(6, n=30)
    for k in range(30):
        ff.step(s1, q[k], qd[k], qdd[k])
        ref.step(s2, q[k], qd[k], qdd[k])
        np.testing.assert_allclose(s1.taddcmd, s2.taddcmd, rtol=1e-10, atol=1e-9)
    M, h = np.empty((6, 6)), np.empty(6)
    M2, h2 = np.empty((6, 6)), np.empty(6)
    ff.dynamics.mass_bias_into(ff.dynamics.new_workspace(), q[0], qd[0], M, h)
    ref.dynamics.mass_bias_into(ref.dynamics.new_workspace(), q[0], qd[0], M2, h2)
    np.testing.assert_allclose(M, M2, atol=1e-9)
    np.testing.assert_allclose(h, h2, atol=1e-9)


def test_codegen_command(tmp_path, capsys):
    fitted = fitted_scara()
    fitted.save(tmp_path / "res")
    for lang, files in (("c", {"dynid_model.c", "dynid_model.h"}), ("st", {"dynid_model.st"}),
                        ("python", {"dynid_model.py"})):
        status = main(["codegen", str(tmp_path / "res" / "result.json"), "--lang", lang, "--out",
                       str(tmp_path / lang), "--json"])
        summary = json.loads(capsys.readouterr().out)
        assert status == 0 and summary["joints"] == 4 and summary["operations"] > 0
        assert {p.name for p in (tmp_path / lang).iterdir()} == files
    hexa = dynid.Identifier("6upru", config=dict(model_class("6upru").example_config)).build_model()
    FittedModel(Plant(hexa), np.zeros(Plant(hexa).n_params)).save(tmp_path / "hex")
    assert main(["codegen", str(tmp_path / "hex" / "result.json"), "--lang", "c", "--out", str(tmp_path / "x")]) == 2
    assert "no geometric derivation of model '6upru'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
