"""Delta parameters 11–14 and the other values the torque does not read (issue 17, point 5).

spec/models.md §5 names p11..p14 (D, C_r, Fr_max, R_ext) but gives them no equation ("undocumented"), so
dynid gives them none; a value that would change nothing must be rejected, not stored. The same holds for
the 4-axis parameters on a 3-axis Delta, and for L_TO/L_TP (p9, p10) given as values that differ from the
configured telescope geometry (the torque reads the configuration). Reference: the MuJoCo closed chain of
tests/models/_delta_reference.py (a real parallelogram Delta built from physical data).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.errors import ConfigError
from dynid.models import make_model, model_class

from ._delta_reference import DeltaReference, DeltaRobot, random_states

GEO = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}
UNDOCUMENTED = [("D", 11), ("C_r", 12), ("Fr_max", 13), ("R_ext", 14)]


@pytest.fixture(scope="module")
def mujoco_delta4():
    """(robot, q, qd, qdd, MuJoCo torques) of a 4-axis Delta with its telescope at L_TO 0.05, L_TP 0.08 m."""
    pytest.importorskip("mujoco")
    rb = DeltaRobot(four_axis=True)
    ref = DeltaReference(rb)
    q, qd, qdd = random_states(rb, np.random.default_rng(11), 8)
    return rb, q, qd, qdd, np.array([ref.torque(q[k], qd[k], qdd[k])[0] for k in range(len(q))])


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("name", ["delta3", "delta4"])
@pytest.mark.parametrize("param, slot", UNDOCUMENTED)
def test_undocumented_parameters_are_rejected_in_the_configuration(name, param, slot):
    with pytest.raises(ConfigError, match=rf"parameter {param} \(DynamicParameter\[{slot}\]\) = 0\.5, but it has no "
                                          "published meaning.*silently ignored"):
        make_model(name, {**GEO, "parameters": {param: 0.5}})
    assert make_model(name, {**GEO, "parameters": {param: 0.0}}).n_params == 14     # 0 is what the torque means


@pytest.mark.parametrize("param", ["M_T", "Theta_T", "Theta_Tphi", "L_TO", "L_TP"])
def test_four_axis_parameters_are_rejected_on_delta3(param):
    with pytest.raises(ConfigError, match=rf"model 'delta3': parameter {param} .* belongs to the 4th axis"):
        make_model("delta3", {**GEO, "parameters": {param: 0.1}})
    make_model("delta4", {**GEO, "parameters": {param: 0.1}})                          # a 4-axis Delta uses it


def test_undocumented_columns_are_zero_so_a_value_would_be_ignored(mujoco_delta4):
    """Why they are rejected: with p11..p14 = 0 the model is the MuJoCo robot to 1e-8; their columns are
    identically zero, so any other value would give the very same torques."""
    rb, q, qd, qdd, tau = mujoco_delta4
    model = make_model("delta4", rb.config())
    p = rb.parameters()
    assert _rel(model.torque(p, q, qd, qdd), tau) < 1e-8
    assert not np.any(model.regressor(q, qd, qdd)[..., 10:14])
    model.check_parameters(p)                                              # the physical vector is accepted
    for k, (param, slot) in enumerate(UNDOCUMENTED):
        bad = p.copy()
        bad[10 + k] = 3.0
        np.testing.assert_array_equal(model.torque(bad, q, qd, qdd), model.torque(p, q, qd, qdd))
        with pytest.raises(ConfigError, match=rf"{param} \(DynamicParameter\[{slot}\]\) = 3"):
            model.check_parameters(bad)
        with pytest.raises(ConfigError, match=param):
            model.check_parameters(dict(zip(model.param_names, bad)))


def test_telescope_geometry_in_the_values_must_match_the_configuration(mujoco_delta4):
    """A softMC PRG carries L_TO/L_TP among the parameter values, but the torque takes them from the
    configuration: a model configured without them is wrong against MuJoCo while its regressor ignores
    the values, so such values are rejected; with the geometry configured they agree (also after the
    PRG's 4 significant digits)."""
    rb, q, qd, qdd, tau = mujoco_delta4
    p = rb.parameters()                                          # p9, p10 = 0.05, 0.08 m
    unconfigured = make_model("delta4", {k: v for k, v in rb.config().items() if k != "parameters"})
    assert _rel(unconfigured.torque(p, q, qd, qdd), tau) > 1e-4
    with pytest.raises(ConfigError, match=r"L_TO \(DynamicParameter\[9\]\) = 0\.05 m, but the model is configured "
                                          r"with L_TO = 0 m.*parameters: \{L_TO: 0\.05\}"):
        unconfigured.check_parameters(p)
    configured = make_model("delta4", rb.config())
    configured.check_parameters(p)
    configured.check_parameters(np.array([float(f"{x:.3e}") for x in p]))   # PRG print precision
    off = p.copy()
    off[9] *= 1.01
    with pytest.raises(ConfigError, match="L_TP"):
        configured.check_parameters(off)


def test_check_parameters_validates_its_input():
    model = model_class("delta3").example()
    model.check_parameters(model.example_parameters())
    model.check_parameters({"Theta_AB": 0.1, "D": 0.0})
    with pytest.raises(Exception, match="14 parameters, got 3"):
        model.check_parameters([1.0, 2.0, 3.0])


def test_the_command_line_rejects_them_with_exit_2(tmp_path, capsys):
    cfg = tmp_path / "delta.json"
    cfg.write_text(json.dumps({**GEO, "parameters": {"Fr_max": 120.0}}))
    status = main(["excite", "--model", "delta3", "--config", str(cfg), "--json"])
    err = capsys.readouterr().err
    assert status == 2
    assert "Fr_max (DynamicParameter[13]) = 120" in err and "set Fr_max to 0" in err
