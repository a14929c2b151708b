"""``serial`` without a robot description (issue 26.4).

``--model serial`` without ``--urdf`` or a ``dh`` table used to identify a built-in PUMA 560 silently — whatever
robot the recording came from. Now every place that builds a model from its name refuses: the library with a
``ConfigError`` naming ``urdf``, the command line with exit 2 and ``(--urdf, --config)``, nothing written. The
PUMA 560 stays as the explicit example (``Serial.example()``, ``dynid models``).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import ConfigError
from dynid.models import make_model, model_class
from dynid.recording import Recording

NEEDS = "model 'serial' needs the robot: a URDF file or a DH table ('dh' in the configuration)"


@pytest.mark.parametrize("config", [None, {}, {"friction": "none", "payload": {"mass": 1.0}}])
def test_issue_26_make_model_serial_without_a_robot_is_a_config_error(config):
    with pytest.raises(ConfigError, match=r"needs the robot") as err:
        make_model("serial", config)
    assert err.value.message.startswith(NEEDS) and "urdf" in err.value.options


def test_the_puma560_is_the_explicit_example():
    from dynid.models.serial import PUMA560_CONFIG

    ex = model_class("serial").example()
    assert ex.n_joints == 6 and ex.chain["robot"] == "puma560 (built-in example)"
    same = make_model("serial", PUMA560_CONFIG)
    q = np.random.default_rng(0).uniform(-1, 1, (5, 6))
    np.testing.assert_array_equal(same.regressor(q, q, q), ex.regressor(q, q, q))


def _six_joint_csv(path):
    t = np.arange(0.0, 4.0, 0.002)
    q = 0.5 * np.sin(np.outer(t, np.arange(1, 7) * 0.7))
    tau = np.cos(np.outer(t, np.arange(1, 7) * 0.9))
    cols = ["t"] + [f"q{j}" for j in range(1, 7)] + [f"tau{j}" for j in range(1, 7)]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(cols), comments="", fmt="%.10g")
    return path


def _argv(kind, tmp_path):
    rec = str(_six_joint_csv(tmp_path / "run.csv"))
    out = str(tmp_path / "out")
    return {
        "identify": ["identify", rec, "--model", "serial", "--out", out, "--no-report"],
        "batch": ["batch", rec, "--model", "serial", "--out", out],
        "excite": ["excite", "--model", "serial", "--start=0,0,0,0,0,0", "--target=1,1,1,1,1,1",
                   "--freqs", "0.1,0.2,0.3,0.4,0.5,0.6", "--factor", "1", "--record-s", "10", "--json"],
        "excite-fourier": ["excite", "--model", "serial", "--fourier", "3", "--start=0,0,0,0,0,0",
                           "--target=1,1,1,1,1,1", "--record-s", "10", "--out", str(tmp_path / "out.csv"), "--json"],
        "derive": ["derive", "--model", "serial", "--json"],
    }[kind]


@pytest.mark.parametrize("kind", ["identify", "batch", "excite", "excite-fourier", "derive"])
def test_issue_26_model_serial_without_a_robot_exits_2(tmp_path, capsys, kind):
    if kind == "derive" and importlib.util.find_spec("sympy") is None:
        pytest.skip("needs the extra 'symbolic'")
    before = set(tmp_path.iterdir()) | {tmp_path / "run.csv"}
    assert main(_argv(kind, tmp_path)) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[0] == f"dynid: error: {NEEDS}; none was given"
    assert err[1].endswith("(--urdf, --config)") and captured.out == ""
    assert set(tmp_path.iterdir()) == before          # no output written


def test_issue_26_identifier_serial_without_a_robot(tmp_path):
    t = np.arange(0.0, 2.0, 0.002)
    rec = Recording(t, np.sin(np.outer(t, np.ones(6))), np.cos(np.outer(t, np.ones(6))))
    with pytest.raises(ConfigError, match="needs the robot"):
        dynid.Identifier("serial").fit(rec)


def test_issue_26_prg_of_serial_without_a_robot_names_the_urdf(tmp_path):
    """A PRG read as ``serial`` without the URDF: the missing robot, not the example's six axes, is the message."""
    from tests.io.test_prg_input import CONTROLLER_PRG

    (tmp_path / "IDNT1.PRG").write_text(CONTROLLER_PRG)
    with pytest.raises(ConfigError, match="needs the robot"):
        dynid.load(tmp_path / "IDNT1.PRG", "serial")
