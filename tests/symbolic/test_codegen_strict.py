"""``dynid codegen`` refuses what would make wrong or broken code (issue 26.5).

A result with a NaN or inf parameter gave exit 0 and C returning NaN; ``--name 3dmodel`` gave C that does not
compile (include guard ``3DMODEL_H``). Now both are exit 2 naming the parameter(s) / the name, nothing written;
every accepted name is an identifier in C, IEC 61131-3 ST and Python, and the C compiles warning-free.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("sympy")

from dynid.cli.main import main  # noqa: E402
from dynid.errors import ConfigError, InputDataError  # noqa: E402
from dynid.fitted import FittedModel  # noqa: E402
from dynid.models import Plant, make_model  # noqa: E402
from dynid.symbolic import generate_code  # noqa: E402

CC = shutil.which("gcc") or shutil.which("cc")
THETA = [0.5, 0.02, 4.0, 0.3, 0.1, 0.3]             # rotary3: I, L^2, M*g*A, g*L, viscous, coulomb


def crank(theta=THETA) -> FittedModel:
    return FittedModel(Plant(make_model("rotary3")), theta, conditioning={"cutoff_hz": 10.0})


@pytest.mark.parametrize("value, text", [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("null", "nan")])
def test_issue_26_codegen_of_a_non_finite_parameter_exits_2(tmp_path, capsys, value, text):
    """``null`` is how dynid writes a NaN into result.json: it is read back as NaN, never as 0."""
    crank().save(tmp_path / "res")
    path = tmp_path / "res" / "result.json"
    data = json.loads(path.read_text())
    data["parameters"]["values"][2] = "@"
    data["friction"]["values"][1] = "@"
    path.write_text(json.dumps(data).replace('"@"', value))
    out = tmp_path / "cg"
    assert main(["codegen", str(path), "--lang", "c", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == (f"dynid: error: parameters M*g*A = {text}, A1.coulomb = {text} of the identified 'rotary3' model "
                      "are not finite numbers: the generated code would return them as torques")
    assert not out.exists()


def test_non_finite_parameter_is_refused_by_the_library():
    with pytest.raises(InputDataError, match=r"parameter I = nan of the identified 'rotary3' model is not a finite"):
        generate_code(crank([np.nan, *THETA[1:]]), "python")


@pytest.mark.parametrize("name", ["3dmodel", "my-model", "../model", "a b", "", "_model", "model_", "a__b", "for",
                                  "int", "END_IF", "function_block", "x" * 64])
def test_issue_26_a_name_that_is_no_identifier_exits_2(tmp_path, capsys, name):
    crank().save(tmp_path / "res")
    out = tmp_path / "cg"
    assert main(["codegen", str(tmp_path / "res"), "--lang", "c", "--name", name, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"dynid: error: name {name!r} ") and err[1].endswith("(--name)")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    with pytest.raises(ConfigError, match="name"):
        generate_code(crank(), "python", name=name)


@pytest.mark.skipif(CC is None, reason="no C compiler on this machine")
@pytest.mark.parametrize("name", ["m", "robot_2", "SCARA4_Model", "dynid_model", "x" * 63])
def test_accepted_names_compile_and_import(tmp_path, capsys, name):
    crank().save(tmp_path / "res")
    for lang in ("c", "st", "python"):
        assert main(["codegen", str(tmp_path / "res"), "--lang", lang, "--name", name, "--out",
                     str(tmp_path / lang)]) == 0
    capsys.readouterr()
    assert (tmp_path / "st" / f"{name}.st").is_file()
    c = tmp_path / "c" / f"{name}.c"
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(c), "-o", str(tmp_path / "x.o")],
                   check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location(name, tmp_path / "python" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    q, dq, ddq = np.array([0.3]), np.array([0.8]), np.array([1.5])
    np.testing.assert_allclose(mod.torque(q, dq, ddq), crank().torque(q[None], dq[None], ddq[None])[0], rtol=1e-12)
